#if Postgres
import Foundation
import ForageStore
import ForageSupport

extension PostgresStore {
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
    let owners = self.owners
    let result = try await run { db in
      var result = CommitResult()
      var firstCrawl: [String: Bool] = [:]
      // Crawls whose frontier grows are locked first, in id order (every
      // worker takes them in the same order, so commits never deadlock on
      // them), and their sizes written back once.
      let growing = Set(pages.filter { !$0.discovered.isEmpty }.map(\.item.crawl)).sorted()
      var sizes: [Int64: (size: Int, original: Int)] = [:]
      for crawl in growing {
        let row = try db.query("SELECT frontier_size FROM crawls WHERE id = $1 FOR UPDATE", [.int(crawl)])
        guard row.count > 0 else { throw StoreError.notFound("crawl with id \(crawl)") }
        sizes[crawl] = (row.int(0, 0), row.int(0, 0))
      }
      // The batch's links, per crawl in page order, go in with two round
      // trips per crawl (one lookup, one insert) rather than two per page:
      // pages of one site share most links, and each page's pair waited for
      // the server in turn.
      var links: [Int64: (seeds: [FrontierSeed], cap: Int)] = [:]
      // Page rows and "kept" marks likewise go in once for the batch.
      var pageRows: [PageRecord] = []
      var kept: [Int64: [UInt64]] = [:]
      let held = try Self.updateFrontierStates(db, pages, owners: owners)
      let heldPages = pages.filter { held.contains($0.item.id) }
      // Records: the new ones inserted by one statement, their changes (and
      // those of changed records) written by one more, in page order. A batch
      // that gives one record twice goes record by record, so the second
      // sees the first.
      var keys = Set<RecordKey>()
      let distinct = heldPages.allSatisfy { page in page.records.allSatisfy { keys.insert(RecordKey($0)).inserted } }
      var batched = distinct ? try Self.insertNewRecords(db, heldPages) : nil
      for page in heldPages {
        if let record = page.page { pageRows.append(record) }
        for record in page.records {
          if batched != nil {
            try Self.stageRecord(db, record, of: page, batch: &batched!, into: &result)
          } else {
            try Self.upsertRecord(db, record, of: page, firstCrawl: &firstCrawl, into: &result)
          }
        }
        if page.keepsRecords { kept[page.item.crawl, default: []].append(page.item.fingerprint) }
        if !page.discovered.isEmpty, sizes[page.item.crawl] != nil {
          links[page.item.crawl, default: ([], page.maxPages ?? .max)].seeds += page.discovered
        }
      }
      if let batched {
        try Self.writeSeen(db, batched.seen ?? [])
        try Self.writeChanges(db, batched, firstCrawl: &firstCrawl, into: &result)
      }
      try Self.upsertPages(db, pageRows)
      for (crawl, fingerprints) in kept.sorted(by: { $0.key < $1.key }) {
        try db.query(
          "UPDATE pages SET kept_crawl = $1 WHERE fingerprint = ANY($2::bigint[])",
          [.int(crawl), .text(Self.arrayLiteral(fingerprints.map { String(Int64(bitPattern: $0)) }))])
      }
      for (crawl, batch) in links.sorted(by: { $0.key < $1.key }) {
        guard var entry = sizes[crawl] else { continue }
        result.linksAdded += try Self.insertLinks(db, batch.seeds, crawl: crawl, size: &entry.size, cap: batch.cap)
        sizes[crawl] = entry
      }
      for (crawl, entry) in sizes where entry.size != entry.original {
        try db.query("UPDATE crawls SET frontier_size = $1 WHERE id = $2", [.int(entry.size), .int(crawl)])
      }
      return result
    }
    for page in pages { self.owners[page.item.id] = nil }
    return result
  }

  /// Adds the links whose fingerprints `crawl` lacks while its frontier has
  /// fewer than `cap` entries, in the page's order; a link to an entry still
  /// queued at a greater depth lowers that depth (see `SQLiteStore`). Returns
  /// how many were added. Two round trips for a batch's links, whatever their
  /// number: one lookup of them all, one insert of the new ones (a link
  /// seen twice counts once, at its least depth, where it first appeared).
  private static func insertLinks(
    _ db: PostgresConnection, _ links: [FrontierSeed], crawl: Int64, size: inout Int, cap: Int
  ) throws -> Int {
    var order: [UInt64] = []
    var shortest: [UInt64: FrontierSeed] = [:]
    for link in links {
      if let known = shortest[link.fingerprint] {
        if link.depth < known.depth { shortest[link.fingerprint] = link }
      } else {
        order.append(link.fingerprint)
        shortest[link.fingerprint] = link
      }
    }
    let existing = try db.query(
      "SELECT fingerprint, depth FROM frontier WHERE crawl = $1 AND fingerprint = ANY($2::bigint[])",
      [.int(crawl), .text(arrayLiteral(order.map { String(Int64(bitPattern: $0)) }))])
    var depths: [UInt64: Int] = [:]
    for row in 0..<existing.count { depths[existing.uint64(row, 0)] = existing.int(row, 1) }
    var fresh: [FrontierSeed] = []
    for fingerprint in order {
      let link = shortest[fingerprint]!
      if let depth = depths[fingerprint] {
        if link.depth < depth {
          try db.query(
            "UPDATE frontier SET depth = $3 WHERE crawl = $1 AND fingerprint = $2 AND state = 'queued' AND depth > $3",
            [.int(crawl), .bits(fingerprint), .int(link.depth)])
        }
      } else if size + fresh.count < cap {
        fresh.append(link)
      }
    }
    guard !fresh.isEmpty else { return 0 }
    let added = try db.query(
      """
      INSERT INTO frontier (crawl, url, fingerprint, depth, lastmod)
      SELECT $1, u.url, u.fingerprint, u.depth, u.lastmod
      FROM unnest($2::text[], $3::bigint[], $4::integer[], $5::bigint[]) WITH ORDINALITY
        AS u (url, fingerprint, depth, lastmod, n)
      ORDER BY u.n
      ON CONFLICT (crawl, fingerprint) DO NOTHING
      """,
      [
        .int(crawl), .text(arrayLiteral(fresh.map { quoted($0.url) })),
        .text(arrayLiteral(fresh.map { String(Int64(bitPattern: $0.fingerprint)) })),
        .text(arrayLiteral(fresh.map { String($0.depth) })),
        .text(arrayLiteral(fresh.map { $0.lastModified.map { String(milliseconds($0)) } ?? "NULL" })),
      ]
    ).affected
    size += added
    return added
  }

  /// A PostgreSQL array literal of already formatted elements: `{a,b}`.
  static func arrayLiteral(_ elements: [String]) -> String {
    "{" + elements.joined(separator: ",") + "}"
  }

  /// A text element of an array literal, quoted and escaped.
  static func quoted(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
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
    func column(_ value: (PageCommit) -> String) -> PostgresValue { .text(arrayLiteral(pages.map(value))) }
    let written = try db.query(
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
      ])
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

  /// Inserts or updates the rows of `pages` in one statement; of two rows
  /// of one page the later wins (an upsert may not touch a row twice).
  private static func upsertPages(_ db: PostgresConnection, _ pages: [PageRecord]) throws {
    guard !pages.isEmpty else { return }
    var last: [UInt64: Int] = [:]
    for (i, page) in pages.enumerated() { last[page.fingerprint] = i }
    let rows = pages.indices.filter { last[pages[$0].fingerprint] == $0 }.map { pages[$0] }
    func column(_ value: (PageRecord) -> String?) -> PostgresValue {
      .text(arrayLiteral(rows.map { value($0).map(quoted) ?? "NULL" }))
    }
    try db.query(
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
      ])
  }

  /// Updates a stored record from `record` (locking its row): nil when its
  /// fields are unchanged (only when it was seen is written), else the kind
  /// of change and the fields before. Counts it into `result`.
  private static func updateExistingRecord(
    _ db: PostgresConnection, _ record: RecordInput, of page: PageCommit, into result: inout CommitResult
  ) throws -> (kind: ChangeKind, before: String)? {
    let row = try db.query(
      "SELECT id, content_hash, fields, removed_at FROM records WHERE source = $1 AND key = $2 FOR UPDATE",
      [.text(record.source), .text(record.key)])
    guard row.count > 0 else { throw StoreError.notFound("record \(record.key) of \(record.source)") }
    let stored = ExistingRecord(
      id: row.int64(0, 0), contentHash: row.uint64(0, 1), fields: row.string(0, 2), removed: row.optionalInt64(0, 3) != nil)
    var seenNow: [SeenRecord]? = nil
    return try update(db, stored, from: record, of: page, seen: &seenNow, into: &result)
  }

  /// A stored record's row as a commit compares it.
  struct ExistingRecord {
    var id: Int64
    var contentHash: UInt64
    var fields: String
    var removed: Bool
  }

  /// A record given again unchanged: only when and where it was seen is written.
  struct SeenRecord {
    var id: Int64
    var url: String
    var at: Int64
    var page: UInt64
    var crawl: Int64
  }

  /// Updates `stored` from `record`: nil when its fields are unchanged (the
  /// sighting goes to `seen` when given, to be written with the batch's
  /// others, else is written now), else the kind of change and the fields
  /// before. Counts it into `result`.
  private static func update(
    _ db: PostgresConnection, _ stored: ExistingRecord, from record: RecordInput, of page: PageCommit,
    seen: inout [SeenRecord]?, into result: inout CommitResult
  ) throws -> (kind: ChangeKind, before: String)? {
    let nowMS = milliseconds(page.now)
    let crawl = page.item.crawl
    let id = stored.id
    let removed = stored.removed
    if stored.contentHash == record.contentHash && !removed {
      let sighting = SeenRecord(id: id, url: record.url, at: nowMS, page: page.item.fingerprint, crawl: crawl)
      if seen != nil {
        seen!.append(sighting)
      } else {
        try writeSeen(db, [sighting])
      }
      result.unchangedRecords += 1
      return nil
    }
    try db.query(
      """
      UPDATE records SET url = $1, fields = $2, content_hash = $3, last_seen = $4, page = $5, seen_crawl = $6,
        removed_at = NULL
      WHERE id = $7
      """,
      [
        .text(record.url), .text(record.fieldsJSON), .bits(record.contentHash), .int(nowMS),
        .bits(page.item.fingerprint), .int(crawl), .int(id),
      ])
    if removed {
      result.restoredRecords += 1
      return (.restored, stored.fields)
    }
    result.changedRecords += 1
    return (.changed, stored.fields)
  }

  /// Writes when and where the records of `seen` were seen, in one statement.
  private static func writeSeen(_ db: PostgresConnection, _ seen: [SeenRecord]) throws {
    guard !seen.isEmpty else { return }
    func column(_ value: (SeenRecord) -> String) -> PostgresValue { .text(arrayLiteral(seen.map(value))) }
    try db.query(
      """
      UPDATE records r SET url = u.url, last_seen = u.at, page = u.page, seen_crawl = u.crawl
      FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[]) AS u (id, url, at, page, crawl)
      WHERE r.id = u.id
      """,
      [
        column { String($0.id) }, column { quoted($0.url) }, column { String($0.at) },
        column { String(Int64(bitPattern: $0.page)) }, column { String($0.crawl) },
      ])
  }

  /// The stored rows of the records of `keys`, locked, in one statement.
  private static func storedRecords(_ db: PostgresConnection, _ keys: [RecordKey]) throws -> [RecordKey: ExistingRecord] {
    guard !keys.isEmpty else { return [:] }
    let rows = try db.query(
      """
      SELECT r.id, r.content_hash, r.fields, r.removed_at, r.source, r.key
      FROM records r JOIN unnest($1::text[], $2::text[]) AS u (source, key) ON r.source = u.source AND r.key = u.key
      ORDER BY r.id
      FOR UPDATE OF r
      """,
      [
        .text(arrayLiteral(keys.map { quoted(String($0.source.text)) })),
        .text(arrayLiteral(keys.map { quoted(String($0.key.text)) })),
      ])
    var found: [RecordKey: ExistingRecord] = [:]
    for row in 0..<rows.count {
      found[RecordKey(source: rows.string(row, 4), key: rows.string(row, 5))] = ExistingRecord(
        id: rows.int64(row, 0), contentHash: rows.uint64(row, 1), fields: rows.string(row, 2),
        removed: rows.optionalInt64(row, 3) != nil)
    }
    return found
  }

  /// A commit's records on their way in: which the batch insert added, and
  /// the changes to write, in page order.
  struct RecordBatch {
    var inserted: Set<RecordKey>
    /// The rows of the batch's records that were there already, locked.
    var stored: [RecordKey: ExistingRecord] = [:]
    /// Records given again unchanged, written together at the end.
    var seen: [SeenRecord]? = []
    var changes: [(change: RecordChange, router: (any ChangeRouter)?)] = []
  }

  /// Inserts the records of `pages` that the store lacks, in one statement;
  /// the rest are left for `stageRecord`.
  private static func insertNewRecords(_ db: PostgresConnection, _ pages: [PageCommit]) throws -> RecordBatch {
    var rows: [(record: RecordInput, page: PageCommit)] = []
    for page in pages { for record in page.records { rows.append((record, page)) } }
    guard !rows.isEmpty else { return RecordBatch(inserted: []) }
    func column(_ value: ((record: RecordInput, page: PageCommit)) -> String) -> PostgresValue {
      .text(arrayLiteral(rows.map(value)))
    }
    let inserted = try db.query(
      """
      INSERT INTO records (source, key, url, fields, content_hash, first_seen, last_seen, page, seen_crawl)
      SELECT u.source, u.key, u.url, u.fields, u.hash, u.at, u.at, u.page, u.crawl
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[])
        WITH ORDINALITY AS u (source, key, url, fields, hash, at, page, crawl, n)
      ORDER BY u.n
      ON CONFLICT (source, key) DO NOTHING
      RETURNING source, key
      """,
      [
        column { quoted($0.record.source) }, column { quoted($0.record.key) }, column { quoted($0.record.url) },
        column { quoted($0.record.fieldsJSON) }, column { String(Int64(bitPattern: $0.record.contentHash)) },
        column { String(milliseconds($0.page.now)) }, column { String(Int64(bitPattern: $0.page.item.fingerprint)) },
        column { String($0.page.item.crawl) },
      ])
    var batch = RecordBatch(
      inserted: Set((0..<inserted.count).map { RecordKey(source: inserted.string($0, 0), key: inserted.string($0, 1)) }))
    batch.stored = try storedRecords(db, rows.map { RecordKey($0.record) }.filter { !batch.inserted.contains($0) })
    return batch
  }

  /// One record of a batch after `insertNewRecords`: a new one is counted
  /// and its change staged; another is compared and updated as
  /// `upsertRecord` does, its change (if any) staged.
  private static func stageRecord(
    _ db: PostgresConnection, _ record: RecordInput, of page: PageCommit, batch: inout RecordBatch,
    into result: inout CommitResult
  ) throws {
    let nowMS = milliseconds(page.now)
    let kind: ChangeKind
    var before: String? = nil
    if batch.inserted.contains(RecordKey(record)) {
      result.newRecords += 1
      kind = .new
    } else {
      guard let stored = batch.stored[RecordKey(record)] else {
        throw StoreError.notFound("record \(record.key) of \(record.source)")
      }
      guard let existing = try update(db, stored, from: record, of: page, seen: &batch.seen, into: &result) else {
        return
      }
      (kind, before) = existing
    }
    // The id is the change row's, known once the batch's changes are written.
    let change = RecordChange(
      id: 0, source: record.source, key: record.key, kind: kind, url: record.url, beforeJSON: before,
      afterJSON: record.fieldsJSON, at: date(nowMS), run: page.run)
    batch.changes.append((change, page.router))
  }

  /// Writes the staged changes in one statement, in order, and their outbox
  /// rows; adds the changes (with their ids) to `result`.
  private static func writeChanges(
    _ db: PostgresConnection, _ batch: RecordBatch, firstCrawl: inout [String: Bool], into result: inout CommitResult
  ) throws {
    guard !batch.changes.isEmpty else { return }
    let changes = batch.changes.map(\.change)
    func column(_ value: (RecordChange) -> String) -> PostgresValue { .text(arrayLiteral(changes.map(value))) }
    let ids = try db.query(
      """
      INSERT INTO changes (source, key, kind, url, before, after, at, run)
      SELECT u.source, u.key, u.kind, u.url, u.before, u.after, u.at, u.run
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[])
        WITH ORDINALITY AS u (source, key, kind, url, before, after, at, run, n)
      ORDER BY u.n
      RETURNING id, source, key
      """,
      [
        column { quoted($0.source) }, column { quoted($0.key) }, column { $0.kind.rawValue }, column { quoted($0.url) },
        column { $0.beforeJSON.map(quoted) ?? "NULL" }, column { $0.afterJSON.map(quoted) ?? "NULL" },
        column { String(milliseconds($0.at)) }, column { $0.run.map { String($0) } ?? "NULL" },
      ])
    var idOf: [RecordKey: Int64] = [:]
    for row in 0..<ids.count { idOf[RecordKey(source: ids.string(row, 1), key: ids.string(row, 2))] = ids.int64(row, 0) }
    for (staged, router) in batch.changes {
      var change = staged
      guard let id = idOf[RecordKey(source: change.source, key: change.key)] else {
        throw StoreError.notFound("the change of record \(change.key) of \(change.source)")
      }
      change.id = id
      result.changes.append(change)
      try notify(db, change, router: router, firstCrawl: &firstCrawl, into: &result)
    }
  }

  /// Queues the outbox rows `router` asks for `change` (none without a
  /// router); whether its source has completed a crawl is asked once per
  /// commit (`firstCrawl`).
  private static func notify(
    _ db: PostgresConnection, _ change: RecordChange, router: (any ChangeRouter)?, firstCrawl: inout [String: Bool],
    into result: inout CommitResult
  ) throws {
    guard let router else { return }
    let first: Bool
    if let known = firstCrawl[change.source] {
      first = known
    } else {
      first = try !sourceHasCompletedCrawl(db, change.source)
      firstCrawl[change.source] = first
    }
    result.notifications += try enqueue(
      db, change, channels: router.channels(for: change, firstCrawl: first), now: milliseconds(change.at))
  }

  /// Inserts or updates one record, writing a change when it is new,
  /// changed or back after a removal. Two workers storing the same record
  /// at once are ordered by its row lock: the second sees the first's fields.
  private static func upsertRecord(
    _ db: PostgresConnection, _ record: RecordInput, of page: PageCommit, firstCrawl: inout [String: Bool],
    into result: inout CommitResult
  ) throws {
    let nowMS = milliseconds(page.now)
    let crawl = page.item.crawl
    let inserted = try db.query(
      """
      INSERT INTO records (source, key, url, fields, content_hash, first_seen, last_seen, page, seen_crawl)
      VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8)
      ON CONFLICT (source, key) DO NOTHING RETURNING id
      """,
      [
        .text(record.source), .text(record.key), .text(record.url), .text(record.fieldsJSON),
        .bits(record.contentHash), .int(nowMS), .bits(page.item.fingerprint), .int(crawl),
      ])
    let before: String?
    let kind: ChangeKind
    if inserted.count > 0 {
      result.newRecords += 1
      kind = .new
      before = nil
    } else {
      guard let existing = try updateExistingRecord(db, record, of: page, into: &result) else { return }
      (kind, before) = existing
    }
    let change = try writeChange(
      db, source: record.source, key: record.key, kind: kind, url: record.url, before: before,
      after: record.fieldsJSON, at: nowMS, run: page.run)
    result.changes.append(change)
    try notify(db, change, router: page.router, firstCrawl: &firstCrawl, into: &result)
  }

  /// Inserts a change row and returns it.
  static func writeChange(
    _ db: PostgresConnection, source: String, key: String, kind: ChangeKind, url: String, before: String?,
    after: String?, at: Int64, run: Int64?
  ) throws -> RecordChange {
    let id = try db.query(
      """
      INSERT INTO changes (source, key, kind, url, before, after, at, run) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
      RETURNING id
      """,
      [.text(source), .text(key), .text(kind.rawValue), .text(url), .string(before), .string(after), .int(at), .int(run)]
    ).int64(0, 0)
    return RecordChange(
      id: id, source: source, key: key, kind: kind, url: url, beforeJSON: before, afterJSON: after,
      at: date(at), run: run)
  }

  // MARK: Reading pages, records and changes

  static let pageColumns = "fingerprint, url, status, etag, last_modified, content_hash, fetched_at, links, encoding, record_count"

  static func page(_ r: PostgresResult, _ row: Int) -> PageRecord {
    let url = r.string(row, 1)
    return PageRecord(
      url: url, fingerprint: r.uint64(row, 0), status: r.int(row, 2), etag: r.optionalString(row, 3),
      lastModified: r.optionalString(row, 4), contentHash: r.optionalUInt64(row, 5), fetchedAt: r.date(row, 6),
      links: LinkList.decode(r.string(row, 7), pageURL: url), encoding: r.optionalString(row, 8),
      recordCount: r.int(row, 9))
  }

  /// The last stored fetch of the page with this fingerprint, or nil.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func page(fingerprint: UInt64) async throws -> PageRecord? {
    try await pages(fingerprints: [fingerprint])[fingerprint]
  }

  /// The stored pages among `fingerprints`, keyed by fingerprint (one query).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func pages(fingerprints: [UInt64]) async throws -> [UInt64: PageRecord] {
    guard !fingerprints.isEmpty else { return [:] }
    let list = "{" + fingerprints.map { String(Int64(bitPattern: $0)) }.joined(separator: ",") + "}"
    return try await run(transaction: false) { db in
      let result = try db.query("SELECT \(Self.pageColumns) FROM pages WHERE fingerprint = ANY($1::bigint[])", [.text(list)])
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

  static let changeColumns = "id, source, key, kind, url, before, after, at, run"

  static func change(_ r: PostgresResult, _ row: Int, offset: Int = 0) -> RecordChange {
    RecordChange(
      id: r.int64(row, offset), source: r.string(row, offset + 1), key: r.string(row, offset + 2),
      kind: ChangeKind(rawValue: r.string(row, offset + 3)) ?? .changed, url: r.string(row, offset + 4),
      beforeJSON: r.optionalString(row, offset + 5), afterJSON: r.optionalString(row, offset + 6),
      at: r.date(row, offset + 7), run: r.optionalInt64(row, offset + 8))
  }

  /// Up to `limit` changes with an id above `afterID`, oldest first, of
  /// `source` or of every source when nil.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func changes(source: String?, afterID: Int64, limit: Int) async throws -> [RecordChange] {
    try await run(transaction: false) { db in
      let result = try db.query(
        """
        SELECT \(Self.changeColumns) FROM changes
        WHERE ($1::text IS NULL OR source = $1) AND id > $2 ORDER BY id LIMIT $3
        """, [.string(source), .int(afterID), .int(max(0, limit))])
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
  /// pending notification (see `Store.pruneHistory`).
  ///
  /// - Throws: `StoreError` when a statement fails (nothing is dropped then).
  public func pruneHistory(_ retention: [String: HistoryRetention], now: Date) async throws -> Int {
    try await run { db in
      var dropped = 0
      let keepPending = "AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.change = changes.id AND o.state = 'pending')"
      for (source, rule) in retention.sorted(by: { $0.key < $1.key }) {
        if let maxAge = rule.maxAge {
          let cutoff = Self.milliseconds(now) - maxAge.milliseconds
          dropped += try db.query(
            "DELETE FROM changes WHERE source = $1 AND at < $2 \(keepPending)", [.text(source), .int(cutoff)]
          ).affected
        }
        if let keep = rule.keep {
          dropped += try db.query(
            """
            DELETE FROM changes WHERE id IN (
              SELECT id FROM (
                SELECT id, row_number() OVER (PARTITION BY key ORDER BY id DESC) AS newer
                FROM changes WHERE source = $1) ranked
              WHERE newer > $2)
            \(keepPending)
            """, [.text(source), .int(keep)]
          ).affected
        }
      }
      return dropped
    }
  }
}
#endif
