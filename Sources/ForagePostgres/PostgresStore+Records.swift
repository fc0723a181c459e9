#if Postgres
import Foundation
import ForageStore
import ForageSupport

extension PostgresStore {
  /// One statement and its `$1`… parameters.
  typealias Statement = (sql: String, params: [PostgresValue])

  // MARK: Commit

  /// Commits fetched pages in one transaction: for each page its frontier
  /// entry's new state, page row, records (with a change, and outbox rows,
  /// for each new, changed or restored one) and discovered links, up to the
  /// crawl's `maxPages`. On any failure nothing of the batch is written.
  ///
  /// A page whose claim this worker no longer holds (its lease passed and
  /// another worker took it, or it was already committed) is left out
  /// whole: the worker holding it commits it, so nothing is written twice.
  ///
  /// - Throws: `StoreError` when a statement fails, or of kind `.notFound`
  ///   when a page's frontier entry or crawl does not exist.
  public func commit(_ pages: [PageCommit]) async throws -> CommitResult {
    guard !pages.isEmpty else { return CommitResult() }
    // The batch's claims (the table is shared with claims in flight).
    let owners = self.owners.withLock { held in
      var owners: [Int64: String] = [:]
      for page in pages { owners[page.item.id] = held[page.item.id] }
      return owners
    }
    // Two or three round trips (see `pipelinedCommit`) when every claim is
    // still held; else, or for a batch naming an entry twice, a statement at a time.
    if Set(pages.map(\.item.id)).count == pages.count {
      do {
        let result = try await run { db in try Self.pipelinedCommit(db, pages, owners: owners) }
        forget(pages)
        if let newest = result.changes.last?.id { changeBell.ring(latest: newest) }
        return result
      } catch is PipelinedCommitDeclined {}
    }
    let result = try await run { db in
      var result = CommitResult()
      try Self.holdChangeOrder(db)
      let held = try Self.updateFrontierStates(db, pages, owners: owners)
      let heldPages = pages.filter { held.contains($0.item.id) }
      try Self.writeRecords(db, heldPages, into: &result)
      // Page rows, "kept" marks and links go in once for the batch: pages of
      // one site share most links, and each page's statements waited for
      // the server in turn.
      var pageRows: [PageRecord] = []
      var kept: [Int64: [UInt64]] = [:]
      var links: [Int64: (seeds: [FrontierSeed], cap: Int?)] = [:]
      for page in heldPages {
        if let record = page.page { pageRows.append(record) }
        if page.keepsRecords { kept[page.item.crawl, default: []].append(page.item.fingerprint) }
        if !page.discovered.isEmpty { links[page.item.crawl, default: ([], page.maxPages)].seeds += page.discovered }
      }
      try Self.upsertPages(db, pageRows)
      for (crawl, fingerprints) in kept.sorted(by: { $0.key < $1.key }) {
        let statement = Self.keptStatement(fingerprints, crawl: crawl)
        try db.query(statement.sql, statement.params)
      }
      try Self.markLostPages(db, heldPages)
      // The crawl's running coverage, written by every worker of the crawl,
      // goes in late for the same reason as the links below.
      try Self.writeCoverage(db, heldPages)
      // Last, in crawl id order (every worker takes them in the same order,
      // so commits never deadlock on them): the crawl row is locked from
      // its links' insert to the commit, not for the whole transaction.
      for (crawl, batch) in links.sorted(by: { $0.key < $1.key }) {
        result.linksAdded += try Self.insertLinks(db, batch.seeds, crawl: crawl, cap: batch.cap)
      }
      return result
    }
    forget(pages)
    if let newest = result.changes.last?.id { changeBell.ring(latest: newest) }
    return result
  }

  /// Drops the claims of `pages`, committed, from ``owners``.
  private nonisolated func forget(_ pages: [PageCommit]) {
    owners.withLock { owners in
      for page in pages { owners[page.item.id] = nil }
    }
  }

  /// Reads the stored rows of the records `pages` give (locked) and whether
  /// their sources completed a crawl, in one statement; plans them
  /// (`RecordRules`); writes the plan with one statement per kind of row.
  ///
  /// Two workers committing the same record at once are ordered by its row
  /// lock, so the second plans against the first's fields. Two committing
  /// the same new record: both read no row, one insert wins, and the other
  /// (its insert ignored once the first commits) reads the row and plans
  /// again.
  private static func writeRecords(
    _ db: PostgresConnection, _ pages: [PageCommit], into result: inout CommitResult
  ) throws {
    let keys = RecordRules.keys(of: pages)
    guard !keys.isEmpty else { return }
    var sources: [String] = []
    for page in pages where page.router != nil {
      for record in page.records where !sources.contains(record.source) { sources.append(record.source) }
    }
    var (stored, completed) = try storedRecords(db, keys, completedCrawlOf: sources)
    var plan = RecordRules.plan(pages, stored: stored)
    let missed = try insertRecords(db, plan.inserts)
    if !missed.isEmpty {
      stored.merge(try storedRecords(db, missed, completedCrawlOf: []).rows) { $1 }
      plan = RecordRules.plan(pages, stored: stored)
    }
    result.held += try holdFieldLosses(db, pages, plan: &plan, stored: stored)
    try updateRecords(db, plan.updates)
    try plan.route { source in
      if let known = completed[source] { return !known }
      return try !sourceHasCompletedCrawl(db, source)
    }
    let changes = try writeChanges(db, plan.changes.map(\.change))
    result.notifications += try writeOutbox(db, zip(changes, plan.changes).map { ($0, $1.channels) })
    result.changes += changes
    result.newRecords += plan.newRecords
    result.changedRecords += plan.changedRecords
    result.unchangedRecords += plan.unchangedRecords
    result.restoredRecords += plan.restoredRecords
  }

  /// The stored rows of the records of `keys`, locked in id order, and for
  /// each of `sources` whether it has a completed crawl: one statement.
  private static func storedRecords(
    _ db: PostgresConnection, _ keys: [RecordKey], completedCrawlOf sources: [String]
  ) throws -> (rows: [RecordKey: StoredRecordRow], completed: [String: Bool]) {
    let statement = storedRecordsStatement(keys, completedCrawlOf: sources)
    return storedRecords(try db.query(statement.sql, statement.params))
  }

  /// The statement of ``storedRecords(_:_:completedCrawlOf:)``.
  static func storedRecordsStatement(_ keys: [RecordKey], completedCrawlOf sources: [String]) -> Statement {
    (
      """
      WITH locked AS (
        SELECT r.id, r.content_hash, r.fields, r.removed_at, r.source, r.key
        FROM records r JOIN unnest($1::text[], $2::text[]) AS u (source, key) ON r.source = u.source AND r.key = u.key
        ORDER BY r.id
        FOR UPDATE OF r)
      SELECT source, key, id, content_hash, fields, removed_at IS NOT NULL FROM locked
      UNION ALL
      SELECT s.source, NULL, NULL, NULL, NULL,
        EXISTS (SELECT 1 FROM crawls c WHERE c.source = s.source AND c.completed_at IS NOT NULL)
      FROM unnest($3::text[]) AS s (source)
      """,
      [
        .text(arrayLiteral(keys.map { quoted(String($0.source.text)) })),
        .text(arrayLiteral(keys.map { quoted(String($0.key.text)) })),
        .text(arrayLiteral(sources.map(quoted))),
      ]
    )
  }

  /// What ``storedRecordsStatement(_:completedCrawlOf:)`` read.
  static func storedRecords(_ rows: PostgresResult) -> (rows: [RecordKey: StoredRecordRow], completed: [String: Bool]) {
    var found: [RecordKey: StoredRecordRow] = [:]
    var completed: [String: Bool] = [:]
    for row in 0..<rows.count {
      if rows.isNull(row, 1) {
        completed[rows.string(row, 0)] = rows.bool(row, 5)
      } else {
        found[RecordKey(source: rows.string(row, 0), key: rows.string(row, 1))] = StoredRecordRow(
          id: rows.int64(row, 2), contentHash: rows.uint64(row, 3), fields: rows.string(row, 4),
          removed: rows.bool(row, 5))
      }
    }
    return (found, completed)
  }

  /// Inserts the rows of `inserts` in one statement; returns the keys of
  /// those the store had after all (another worker's commit inserted them).
  private static func insertRecords(_ db: PostgresConnection, _ inserts: [RecordPlan.Insert]) throws -> [RecordKey] {
    guard !inserts.isEmpty else { return [] }
    let statement = insertRecordsStatement(inserts, skippingStored: true)
    let written = try db.query(statement.sql, statement.params)
    guard written.count < inserts.count else { return [] }
    let added = Set((0..<written.count).map { RecordKey(source: written.string($0, 0), key: written.string($0, 1)) })
    return inserts.map { RecordKey($0.record) }.filter { !added.contains($0) }
  }

  /// The insert of `inserts`; a row the store has already is skipped when
  /// `skippingStored`, and fails the statement (a unique violation) when not.
  static func insertRecordsStatement(_ inserts: [RecordPlan.Insert], skippingStored: Bool) -> Statement {
    func column(_ value: (RecordPlan.Insert) -> String) -> PostgresValue { .text(arrayLiteral(inserts.map(value))) }
    return (
      """
      INSERT INTO records (source, key, url, fields, content_hash, first_seen, last_seen, page, seen_crawl)
      SELECT u.source, u.key, u.url, u.fields, u.hash, u.first, u.last, u.page, u.crawl
      FROM unnest(
          $1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[],
          $9::bigint[])
        WITH ORDINALITY AS u (source, key, url, fields, hash, first, last, page, crawl, n)
      ORDER BY u.n
      \(skippingStored ? "ON CONFLICT (source, key) DO NOTHING" : "")
      RETURNING source, key
      """,
      [
        column { quoted($0.record.source) }, column { quoted($0.record.key) }, column { quoted($0.record.url) },
        column { quoted($0.record.fieldsJSON) }, column { String(Int64(bitPattern: $0.record.contentHash)) },
        column { String(milliseconds($0.firstSeen)) }, column { String(milliseconds($0.lastSeen)) },
        column { String(Int64(bitPattern: $0.page)) }, column { String($0.crawl) },
      ]
    )
  }

  /// Writes the stored rows' updates in one statement: each one's sighting,
  /// and its new fields where it has them (which also clears a removal; a
  /// row only seen again was not removed).
  private static func updateRecords(_ db: PostgresConnection, _ updates: [RecordPlan.Update]) throws {
    guard !updates.isEmpty else { return }
    let statement = updateRecordsStatement(updates)
    try db.query(statement.sql, statement.params)
  }

  /// The statement of ``updateRecords(_:_:)``.
  static func updateRecordsStatement(_ updates: [RecordPlan.Update]) -> Statement {
    func column(_ value: (RecordPlan.Update) -> String) -> PostgresValue { .text(arrayLiteral(updates.map(value))) }
    return (
      """
      UPDATE records r SET url = u.url, last_seen = u.at, page = u.page, seen_crawl = u.crawl,
        fields = COALESCE(u.fields, r.fields), content_hash = u.hash, removed_at = NULL
      FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::bigint[])
        AS u (id, url, at, page, crawl, fields, hash)
      WHERE r.id = u.id
      """,
      [
        column { String($0.id) }, column { quoted($0.url) }, column { String(milliseconds($0.lastSeen)) },
        column { String(Int64(bitPattern: $0.page)) }, column { String($0.crawl) },
        column { $0.fieldsJSON.map(quoted) ?? "NULL" }, column { String(Int64(bitPattern: $0.contentHash)) },
      ]
    )
  }

  /// Writes `changes` in one statement, in order; returns them with their
  /// ids (and their dates as stored, to the millisecond).
  static func writeChanges(_ db: PostgresConnection, _ changes: [RecordChange]) throws -> [RecordChange] {
    guard !changes.isEmpty else { return [] }
    let statement = changesStatement(changes)
    return try written(changes, try db.query(statement.sql, statement.params))
  }

  /// The insert of ``writeChanges(_:_:)``.
  static func changesStatement(_ changes: [RecordChange]) -> Statement {
    func column(_ value: (RecordChange) -> String) -> PostgresValue { .text(arrayLiteral(changes.map(value))) }
    return (
      """
      INSERT INTO changes (source, key, kind, url, before, after, at, run, changed_fields)
      SELECT u.source, u.key, u.kind, u.url, u.before, u.after, u.at, u.run, u.changed_fields
      FROM unnest(
        $1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::text[])
        WITH ORDINALITY AS u (source, key, kind, url, before, after, at, run, changed_fields, n)
      ORDER BY u.n
      RETURNING id
      """,
      [
        column { quoted($0.source) }, column { quoted($0.key) }, column { $0.kind.rawValue }, column { quoted($0.url) },
        column { $0.beforeJSON.map(quoted) ?? "NULL" }, column { $0.afterJSON.map(quoted) ?? "NULL" },
        column { String(milliseconds($0.at)) }, column { $0.run.map { String($0) } ?? "NULL" },
        column { quoted(ChangedFields.encode($0.changedFields)) },
      ]
    )
  }

  /// `changes` with the ids that ``changesStatement(_:)`` returned.
  static func written(_ changes: [RecordChange], _ written: PostgresResult) throws -> [RecordChange] {
    // Ids come from the sequence in insertion order, which is `n`'s.
    let ids = (0..<written.count).map { written.int64($0, 0) }.sorted()
    guard ids.count == changes.count else { throw StoreError.notFound("the ids of a commit's changes") }
    return zip(changes, ids).map { change, id in
      var written = change
      written.id = id
      written.at = date(milliseconds(change.at))
      return written
    }
  }

  /// Writes one pending notification per channel of each change, in one
  /// statement; returns how many.
  static func writeOutbox(_ db: PostgresConnection, _ routed: [(change: RecordChange, channels: [String])]) throws
    -> Int
  {
    guard let statement = outboxStatement(routed) else { return 0 }
    try db.query(statement.sql, statement.params)
    return statement.rows
  }

  /// The insert of ``writeOutbox(_:_:)`` and how many rows it writes; nil when none.
  static func outboxStatement(_ routed: [(change: RecordChange, channels: [String])])
    -> (sql: String, params: [PostgresValue], rows: Int)?
  {
    let rows = routed.flatMap { item in item.channels.map { (item.change, $0) } }
    guard !rows.isEmpty else { return nil }
    return (
      """
      INSERT INTO outbox (change, channel, message_id, next_at, created_at)
      SELECT u.change, u.channel, u.message, u.at, u.at
      FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]) AS u (change, channel, message, at)
      """,
      [
        .text(arrayLiteral(rows.map { String($0.0.id) })), .text(arrayLiteral(rows.map { quoted($0.1) })),
        .text(arrayLiteral(rows.map { _ in SQLiteStore.newMessageID() })),
        .text(arrayLiteral(rows.map { String(milliseconds($0.0.at)) })),
      ],
      rows.count
    )
  }

  /// Adds the links whose fingerprints `crawl` lacks while its frontier has
  /// fewer than `cap` entries, in the page's order; a link to an entry still
  /// queued at a greater depth lowers that depth (see `SQLiteStore`). Returns
  /// how many were added. Three round trips for a batch's links, whatever
  /// their number: one lookup of them all, one update of the depths lowered,
  /// one insert of the new ones (a link seen twice counts once, at its least
  /// depth, where it first appeared).
  ///
  /// The insert locks the crawl's row, reads its frontier size, inserts
  /// what the cap leaves room for and adds what it inserted to the size,
  /// all in one statement: two workers' commits keep the cap exact, and the
  /// lock is held from that statement to the commit, not for the whole
  /// transaction.
  ///
  /// - Throws: `StoreError.notFound` when the crawl does not exist.
  private static func insertLinks(
    _ db: PostgresConnection, _ links: [FrontierSeed], crawl: Int64, cap: Int?
  ) throws -> Int {
    var batch = LinkBatch(links, crawl: crawl, cap: cap)
    let lookup = batch.lookup
    let statements = batch.writes(existing: try db.query(lookup.sql, lookup.params))
    var added: PostgresResult?
    for statement in statements { added = try db.query(statement.sql, statement.params) }
    return try batch.added(added)
  }

  /// The links of one crawl in a commit: the lookup of those it has, then
  /// the update of depths lowered and the insert of the new ones (see
  /// ``insertLinks(_:_:crawl:cap:)``, which runs them one after another; a
  /// pipelined commit sends the lookup with its first statements and the
  /// writes with its last).
  struct LinkBatch {
    let crawl: Int64
    let cap: Int?
    /// Fingerprints in the order first seen, and each one's link at its least depth.
    private var order: [UInt64] = []
    private var shortest: [UInt64: FrontierSeed] = [:]
    private var inserting = false

    init(_ links: [FrontierSeed], crawl: Int64, cap: Int?) {
      self.crawl = crawl
      self.cap = cap
      for link in links {
        if let known = shortest[link.fingerprint] {
          if link.depth < known.depth { shortest[link.fingerprint] = link }
        } else {
          order.append(link.fingerprint)
          shortest[link.fingerprint] = link
        }
      }
    }

    /// The lookup of the links' fingerprints the crawl has, with their depths:
    /// one probe of the `(crawl, fingerprint)` key per link.
    ///
    /// Not `fingerprint = ANY($2)`: a connection keeps the generic plan its
    /// statement got in a new store's first commits, when the frontier held
    /// a few rows, until autovacuum analyzes the table (not within a crawl
    /// of seconds or a minute), and for `= ANY($2)` that plan scans the
    /// crawl's whole frontier and compares each row with every element of
    /// the array: 15–40 ms a commit at 6,000–9,000 rows, half the server's
    /// CPU in the fleet benchmark's first crawl of 10,000 products, growing
    /// with the square of the crawl. A subquery with `LIMIT` is not
    /// flattened into a join, so each link is one index probe whatever the
    /// statistics say. ``PostgresStore/pages(fingerprints:)`` does the same.
    var lookup: Statement {
      (
        """
        SELECT f.fingerprint, f.depth FROM unnest($2::bigint[]) AS u (fingerprint)
        CROSS JOIN LATERAL (
          SELECT fingerprint, depth FROM frontier WHERE crawl = $1 AND fingerprint = u.fingerprint LIMIT 1) AS f
        """,
        [.int(crawl), .text(PostgresStore.arrayLiteral(order.map { String(Int64(bitPattern: $0)) }))]
      )
    }

    /// The writes, given what `lookup` found: the depths lowered, then the
    /// new links' insert (the last statement, when there are new links).
    mutating func writes(existing: PostgresResult) -> [Statement] {
      var depths: [UInt64: Int] = [:]
      for row in 0..<existing.count { depths[existing.uint64(row, 0)] = existing.int(row, 1) }
      var fresh: [FrontierSeed] = []
      var lowered: [FrontierSeed] = []
      for fingerprint in order {
        let link = shortest[fingerprint]!
        if let depth = depths[fingerprint] {
          if link.depth < depth { lowered.append(link) }
        } else {
          fresh.append(link)
        }
      }
      var statements: [Statement] = []
      if !lowered.isEmpty { statements.append(PostgresStore.lowerDepthsStatement(lowered, crawl: crawl)) }
      inserting = !fresh.isEmpty
      if inserting { statements.append(PostgresStore.insertLinksStatement(fresh, crawl: crawl, cap: cap)) }
      return statements
    }

    /// How many links the insert added, from the last write's result.
    ///
    /// - Throws: `StoreError.notFound` when the crawl does not exist.
    func added(_ last: PostgresResult?) throws -> Int {
      guard inserting, let last else { return 0 }
      guard last.count > 0 else { throw StoreError.notFound("crawl with id \(crawl)") }
      return last.int(0, 0)
    }
  }

  /// Lowers the depth of the crawl's queued entries that `lowered` reaches sooner.
  static func lowerDepthsStatement(_ lowered: [FrontierSeed], crawl: Int64) -> Statement {
    (
      """
      UPDATE frontier f SET depth = u.depth
      FROM unnest($2::bigint[], $3::integer[]) AS u (fingerprint, depth)
      WHERE f.crawl = $1 AND f.fingerprint = u.fingerprint AND f.state = 'queued' AND f.depth > u.depth
      """,
      [
        .int(crawl), .text(arrayLiteral(lowered.map { String(Int64(bitPattern: $0.fingerprint)) })),
        .text(arrayLiteral(lowered.map { String($0.depth) })),
      ]
    )
  }

  /// Inserts `fresh` while the crawl's frontier is under `cap`, and adds to its size what it inserted.
  static func insertLinksStatement(_ fresh: [FrontierSeed], crawl: Int64, cap: Int?) -> Statement {
    (
      """
      WITH crawl AS (SELECT frontier_size FROM crawls WHERE id = $1 FOR UPDATE),
      added AS (
        INSERT INTO frontier (crawl, url, fingerprint, depth, lastmod)
        SELECT $1, u.url, u.fingerprint, u.depth, u.lastmod
        FROM unnest($2::text[], $3::bigint[], $4::integer[], $5::bigint[]) WITH ORDINALITY
          AS u (url, fingerprint, depth, lastmod, n)
        WHERE u.n <= (SELECT $6::bigint - frontier_size FROM crawl)
        ORDER BY u.n
        ON CONFLICT (crawl, fingerprint) DO NOTHING
        RETURNING 1)
      UPDATE crawls SET frontier_size = frontier_size + (SELECT count(*) FROM added) WHERE id = $1
      RETURNING (SELECT count(*) FROM added)
      """,
      [
        .int(crawl), .text(arrayLiteral(fresh.map { quoted($0.url) })),
        .text(arrayLiteral(fresh.map { String(Int64(bitPattern: $0.fingerprint)) })),
        .text(arrayLiteral(fresh.map { String($0.depth) })),
        .text(arrayLiteral(fresh.map { $0.lastModified.map { String(milliseconds($0)) } ?? "NULL" })),
        .int(cap.map(Int64.init) ?? Int64.max),
      ]
    )
  }

  /// Marks the pages of `fingerprints` as keeping their records in `crawl`.
  static func keptStatement(_ fingerprints: [UInt64], crawl: Int64) -> Statement {
    (
      "UPDATE pages SET kept_crawl = $1 WHERE fingerprint = ANY($2::bigint[])",
      [.int(crawl), .text(arrayLiteral(fingerprints.map { String(Int64(bitPattern: $0)) }))]
    )
  }

  /// A PostgreSQL array literal of already formatted elements: `{a,b}`.
  static func arrayLiteral(_ elements: [String]) -> String {
    "{" + elements.joined(separator: ",") + "}"
  }

  /// A text element of an array literal, quoted and escaped.
  /// One pass over the UTF-8 bytes: Foundation's `replacingOccurrences` (bridged
  /// through NSString) was a fifth of a PostgreSQL worker's CPU.
  static func quoted(_ text: String) -> String {
    let utf8 = text.utf8
    guard utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") }) else {
      return "\"" + text + "\""
    }
    var out: [UInt8] = []
    out.reserveCapacity(utf8.count + 8)
    out.append(UInt8(ascii: "\""))
    for byte in utf8 {
      if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { out.append(UInt8(ascii: "\\")) }
      out.append(byte)
    }
    out.append(UInt8(ascii: "\""))
    return String(decoding: out, as: UTF8.self)
  }

  /// Writes a claimed entry's new state. Returns false when `owner` (the
  /// worker that claimed it through this store) no longer holds the claim;
  /// with no owner known, the entry is updated whatever its claim.
  private static func updateFrontierState(
    _ db: PostgresConnection, _ item: FrontierItem, _ outcome: FrontierOutcome, owner: String?
  ) throws -> Bool {
    let held = owner == nil ? "" : " AND state = 'claimed' AND owner = $2"
    var params: [PostgresValue] = [.int(item.id)]
    if let owner { params.append(.text(owner)) }
    let next = params.count + 1
    let sql: String
    switch outcome {
    case .done:
      sql = "UPDATE frontier SET state = 'done', owner = NULL, lease_until = NULL WHERE id = $1\(held)"
    case .failed(let permanent, let maxAttempts):
      sql = """
        UPDATE frontier SET
          state = CASE WHEN $\(next)::boolean OR attempts + 1 >= $\(next + 1)::integer THEN 'failed' ELSE 'queued' END,
          attempts = attempts + 1, owner = NULL, lease_until = NULL
        WHERE id = $1\(held)
        """
      params += [.bool(permanent), .int(maxAttempts)]
    case .deferred:
      sql = "UPDATE frontier SET state = 'queued', owner = NULL, lease_until = NULL WHERE id = $1\(held)"
    }
    if try db.query(sql, params).affected > 0 { return true }
    let exists = try db.query("SELECT 1 FROM frontier WHERE id = $1", [.int(item.id)])
    if exists.count == 0 { throw StoreError.notFound("frontier entry with id \(item.id)") }
    return false
  }

  /// Writes the new frontier state of every page of a batch in one
  /// statement; returns the ids of the entries written (each page's claim
  /// still held, see `updateFrontierState`). A batch that names an entry
  /// twice is written page by page, in order, as before.
  ///
  /// - Throws: `StoreError.notFound` when an entry does not exist.
  private static func updateFrontierStates(
    _ db: PostgresConnection, _ pages: [PageCommit], owners: [Int64: String]
  ) throws -> Set<Int64> {
    let ids = pages.map(\.item.id)
    guard Set(ids).count == ids.count else {
      var held = Set<Int64>()
      for page in pages where try updateFrontierState(db, page.item, page.outcome, owner: owners[page.item.id]) {
        held.insert(page.item.id)
      }
      return held
    }
    let statement = frontierStatesStatement(pages, owners: owners)
    let written = try db.query(statement.sql, statement.params)
    let held = Set((0..<written.count).map { written.int64($0, 0) })
    let missing = ids.filter { !held.contains($0) }
    if !missing.isEmpty {
      let found = try db.query(
        "SELECT id FROM frontier WHERE id = ANY($1::bigint[])", [.text(arrayLiteral(missing.map { String($0) }))])
      let present = Set((0..<found.count).map { found.int64($0, 0) })
      if let absent = missing.first(where: { !present.contains($0) }) {
        throw StoreError.notFound("frontier entry with id \(absent)")
      }
    }
    return held
  }

  /// The update of ``updateFrontierStates(_:_:owners:)`` for a batch that
  /// names each entry once; it returns the ids of the entries written.
  static func frontierStatesStatement(_ pages: [PageCommit], owners: [Int64: String]) -> Statement {
    func column(_ value: (PageCommit) -> String) -> PostgresValue { .text(arrayLiteral(pages.map(value))) }
    return (
      """
      UPDATE frontier f SET
        state = CASE u.kind
          WHEN 'done' THEN 'done'
          WHEN 'deferred' THEN 'queued'
          ELSE CASE WHEN u.permanent OR f.attempts + 1 >= u.max_attempts THEN 'failed' ELSE 'queued' END
        END,
        attempts = f.attempts + CASE WHEN u.kind = 'failed' THEN 1 ELSE 0 END,
        owner = NULL, lease_until = NULL
      FROM unnest($1::bigint[], $2::text[], $3::boolean[], $4::integer[], $5::text[])
        AS u (id, kind, permanent, max_attempts, owner)
      WHERE f.id = u.id AND (u.owner IS NULL OR (f.state = 'claimed' AND f.owner = u.owner))
      RETURNING f.id
      """,
      [
        column { String($0.item.id) },
        column {
          switch $0.outcome {
          case .done: "done"
          case .deferred: "deferred"
          case .failed: "failed"
          }
        },
        column { if case .failed(let permanent, _) = $0.outcome { permanent ? "true" : "false" } else { "false" } },
        column { if case .failed(_, let maxAttempts) = $0.outcome { String(maxAttempts) } else { "0" } },
        column { owners[$0.item.id].map(quoted) ?? "NULL" },
      ]
    )
  }

  /// Inserts or updates the rows of `pages` in one statement; of two rows
  /// of one page the later wins (an upsert may not touch a row twice).
  private static func upsertPages(_ db: PostgresConnection, _ pages: [PageRecord]) throws {
    guard !pages.isEmpty else { return }
    var last: [UInt64: Int] = [:]
    for (i, page) in pages.enumerated() { last[page.fingerprint] = i }
    let statement = upsertPagesStatement(pages.indices.filter { last[pages[$0].fingerprint] == $0 }.map { pages[$0] })
    try db.query(statement.sql, statement.params)
  }

  /// The upsert of ``upsertPages(_:_:)``, of rows with distinct fingerprints.
  static func upsertPagesStatement(_ rows: [PageRecord]) -> Statement {
    func column(_ value: (PageRecord) -> String?) -> PostgresValue {
      .text(arrayLiteral(rows.map { value($0).map(quoted) ?? "NULL" }))
    }
    return (
      """
      INSERT INTO pages (
        fingerprint, url, status, etag, last_modified, content_hash, fetched_at, links, encoding, record_count)
      SELECT * FROM unnest(
        $1::bigint[], $2::text[], $3::integer[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[],
        $9::text[], $10::integer[])
      ON CONFLICT (fingerprint) DO UPDATE SET
        url = excluded.url, status = excluded.status, etag = excluded.etag,
        last_modified = excluded.last_modified, content_hash = excluded.content_hash,
        fetched_at = excluded.fetched_at, links = excluded.links, encoding = excluded.encoding,
        record_count = excluded.record_count
      """,
      [
        column { String(Int64(bitPattern: $0.fingerprint)) }, column { $0.url }, column { String($0.status) },
        column { $0.etag }, column { $0.lastModified },
        column { $0.contentHash.map { String(Int64(bitPattern: $0)) } },
        column { String(milliseconds($0.fetchedAt)) }, column { LinkList.encode($0.links, pageURL: $0.url) },
        column { $0.encoding }, column { String($0.recordCount) },
      ]
    )
  }

  // MARK: Reading pages, records and changes

  static let pageColumns = "fingerprint, url, status, etag, last_modified, content_hash, fetched_at, links, encoding, record_count"

  /// The page of `row` whose ``pageColumns`` start at column `offset`.
  static func page(_ r: PostgresResult, _ row: Int, offset o: Int = 0) -> PageRecord {
    let url = r.string(row, o + 1)
    return PageRecord(
      url: url, fingerprint: r.uint64(row, o), status: r.int(row, o + 2), etag: r.optionalString(row, o + 3),
      lastModified: r.optionalString(row, o + 4), contentHash: r.optionalUInt64(row, o + 5),
      fetchedAt: r.date(row, o + 6), links: LinkList.decode(r.string(row, o + 7), pageURL: url),
      encoding: r.optionalString(row, o + 8), recordCount: r.int(row, o + 9))
  }

  /// The last stored fetch of the page with this fingerprint, or nil.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func page(fingerprint: UInt64) async throws -> PageRecord? {
    try await pages(fingerprints: [fingerprint])[fingerprint]
  }

  /// The stored page whose fingerprint is `fingerprint` (an SQL expression),
  /// as a subquery to join `LATERAL`: one probe of the key, whatever the
  /// statistics say (a subquery with `LIMIT` is not flattened into a join;
  /// see `LinkBatch.lookup`).
  static func pageProbe(_ fingerprint: String) -> String {
    "(SELECT \(pageColumns) FROM pages WHERE fingerprint = \(fingerprint) LIMIT 1)"
  }

  /// The stored pages among the fingerprints `$1` (a `bigint[]`), a probe each.
  static let pagesLookupSQL = """
    SELECT p.* FROM unnest($1::bigint[]) AS u (fingerprint) CROSS JOIN LATERAL \(pageProbe("u.fingerprint")) AS p
    """

  /// The stored pages among `fingerprints`, keyed by fingerprint (one query).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public nonisolated func pages(fingerprints: [UInt64]) async throws -> [UInt64: PageRecord] {
    guard !fingerprints.isEmpty else { return [:] }
    let list = "{" + fingerprints.map { String(Int64(bitPattern: $0)) }.joined(separator: ",") + "}"
    // On the second connection, with the claims: a job looks its claimed
    // pages up while a commit may hold the store's connection.
    return try await side.perform(transaction: false) { db in
      let result = try db.query(Self.pagesLookupSQL, [.text(list)])
      var found: [UInt64: PageRecord] = [:]
      for row in 0..<result.count {
        let page = Self.page(result, row)
        found[page.fingerprint] = page
      }
      return found
    }
  }

  /// Up to `limit` records with an id above `afterID`, in insertion order,
  /// of `source` or of every source when nil.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func records(source: String?, afterID: Int64, limit: Int) async throws -> [StoredRecord] {
    try await run(transaction: false) { db in
      let result = try db.query(
        """
        SELECT id, source, key, url, fields, content_hash, first_seen, last_seen, removed_at FROM records
        WHERE ($1::text IS NULL OR source = $1) AND id > $2 ORDER BY id LIMIT $3
        """, [.string(source), .int(afterID), .int(max(0, limit))])
      return result.rows {
        StoredRecord(
          id: result.int64($0, 0), source: result.string($0, 1), key: result.string($0, 2), url: result.string($0, 3),
          fieldsJSON: result.string($0, 4), contentHash: result.uint64($0, 5), firstSeen: result.date($0, 6),
          lastSeen: result.date($0, 7), removedAt: result.optionalDate($0, 8))
      }
    }
  }

  static let changeColumns = "id, source, key, kind, url, before, after, at, run, changed_fields"

  static func change(_ r: PostgresResult, _ row: Int, offset: Int = 0) -> RecordChange {
    RecordChange(
      id: r.int64(row, offset), source: r.string(row, offset + 1), key: r.string(row, offset + 2),
      kind: ChangeKind(rawValue: r.string(row, offset + 3)) ?? .changed, url: r.string(row, offset + 4),
      beforeJSON: r.optionalString(row, offset + 5), afterJSON: r.optionalString(row, offset + 6),
      at: r.date(row, offset + 7), run: r.optionalInt64(row, offset + 8),
      changedFields: r.optionalString(row, offset + 9).flatMap(ChangedFields.decode))
  }

  /// Up to `limit` changes with an id above `afterID`, oldest first, of
  /// `source` or of every source when nil.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func changes(source: String?, afterID: Int64, limit: Int) async throws -> [RecordChange] {
    try await run { db in
      // After every transaction writing changes has ended (see `waitForChangeWriters`).
      let result = try db.pipelineCommitting { p in
        Self.waitForChangeWriters(p)
        p.send(Self.changesAfterSQL, [.string(source), .int(afterID), .int(max(0, limit))])
      }[1]
      return result.rows { Self.change(result, $0) }
    }
  }

  /// Changes matching `query`, newest first.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func changes(matching query: ChangeQuery) async throws -> [RecordChange] {
    let kinds = ChangeKind.allCases.filter(query.kinds.contains).map(\.rawValue)
    let kindList = "{" + kinds.joined(separator: ",") + "}"
    return try await run(transaction: false) { db in
      let result = try db.query(
        """
        SELECT \(Self.changeColumns) FROM changes
        WHERE ($1::text IS NULL OR source = $1) AND ($2::text[] = '{}' OR kind = ANY($2::text[]))
          AND ($3::bigint IS NULL OR at >= $3) AND ($4::bigint IS NULL OR id < $4)
        ORDER BY id DESC LIMIT $5
        """,
        [.string(query.source), .text(kindList), .date(query.since), .int(query.beforeID), .int(max(0, query.limit))])
      return result.rows { Self.change(result, $0) }
    }
  }

  /// Drops changes past each named source's retention, except those with a
  /// pending notification and those a record sink delivered to within the
  /// retention's `sinkHold` has not applied yet (see `Store.pruneHistory`).
  ///
  /// - Throws: `StoreError` when a statement fails (nothing is dropped then).
  public func pruneHistory(_ retention: [String: HistoryRetention], now: Date) async throws -> Int {
    let nowMS = Self.milliseconds(now)
    // Only settled changes go: a mark above a change still being written
    // would tell its readers it was pruned.
    let settled = try await run(transaction: false) { db in try Self.settledChangeID(db) }
    return try await run { db in
      var dropped = 0
      let keepPending = "AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.change = changes.id AND o.state = 'pending')"
      let keepUnapplied =
        "AND id <= (SELECT coalesce(min(change), 9223372036854775807) FROM sink_cursors WHERE updated_at >= $3) "
        + "AND id <= $4"
      for (source, rule) in retention.sorted(by: { $0.key < $1.key }) {
        let holdCutoff = PostgresValue.int(rule.sinkHoldCutoff(nowMS: nowMS))
        if let maxAge = rule.maxAge {
          let cutoff = nowMS - maxAge.milliseconds
          dropped += try Self.pruned(
            db, "DELETE FROM changes WHERE source = $1 AND at < $2 \(keepPending) \(keepUnapplied)",
            [.text(source), .int(cutoff), holdCutoff, .int(settled)])
        }
        if let keep = rule.keep {
          dropped += try Self.pruned(
            db,
            """
            DELETE FROM changes WHERE id IN (
              SELECT id FROM (
                SELECT id, row_number() OVER (PARTITION BY key ORDER BY id DESC) AS newer
                FROM changes WHERE source = $1) ranked
              WHERE newer > $2)
            \(keepPending) \(keepUnapplied)
            """, [.text(source), .int(keep), holdCutoff, .int(settled)])
        }
      }
      return dropped
    }
  }

  /// Runs `delete` (a DELETE of the changes of source `$1`) and, in the same
  /// statement, raises the source's pruned mark (`history_pruned`) to the
  /// highest id it dropped; returns how many it dropped.
  private static func pruned(_ db: PostgresConnection, _ delete: String, _ params: [PostgresValue]) throws -> Int {
    let result = try db.query(
      """
      WITH gone AS (\(delete) RETURNING id),
      mark AS (
        INSERT INTO history_pruned (source, through) SELECT $1::text, max(id) FROM gone HAVING count(*) > 0
        ON CONFLICT (source) DO UPDATE SET through = greatest(history_pruned.through, excluded.through))
      SELECT count(*) FROM gone
      """, params)
    return result.int(0, 0)
  }
}
#endif
