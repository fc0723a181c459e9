import Foundation
import ForageSupport

extension SQLiteStore {
  // MARK: Commit

  /// Commits fetched pages, all in one transaction: for each page its
  /// frontier entry's new state, its page row, its records (with a change
  /// row for each new or changed one) and its discovered links, up to the
  /// crawl's `maxPages`. On any failure nothing of the batch is written.
  ///
  ///     let result = try await store.commit(fetched.map { page in
  ///       PageCommit(item: page.item, outcome: .done, page: page.record,
  ///                  records: page.records, discovered: page.links, now: .now)
  ///     })
  ///
  /// Frontier size is kept in a counter on the crawl row, so the cap costs
  /// no count query; links already on the frontier are found with one
  /// index lookup each and are not inserted again.
  ///
  /// - Throws: `StoreError` when a statement fails, or of kind `.notFound`
  ///   when a page's frontier entry or crawl does not exist; either way the
  ///   whole batch is rolled back.
  public func commit(_ pages: [PageCommit]) async throws -> CommitResult {
    guard !pages.isEmpty else { return CommitResult() }
    let db = self.db
    let (result, seen) = try db.transaction { () throws -> (CommitResult, [Int64: [UInt64: Int]]) in
      var result = CommitResult()
      // Frontier sizes of the crawls this batch touches, written back once,
      // and the fingerprints this batch already looked up, per crawl (pages
      // of one site share most links: nav, footer).
      var sizes: [Int64: (size: Int, original: Int)] = [:]
      var seen: [Int64: [UInt64: Int]] = [:]
      // Statements for a whole batch where one per page would do the same:
      // the entries fetched, and the records the pages give that exist.
      try markDone(pages.lazy.filter { $0.outcome == .done }.map(\.item))
      try writeRecords(of: pages, into: &result)
      try writeCoverage(pages)
      for page in pages {
        if page.outcome != .done { try updateFrontierState(page.item, page.outcome) }
        if let record = page.page { try upsertPage(record) }
        if page.keepsRecords { try keepRecords(of: page) }
        if !page.discovered.isEmpty {
          let crawl = page.item.crawl
          var entry: (size: Int, original: Int)
          if let known = sizes[crawl] {
            entry = known
          } else {
            let size = try frontierSize(crawl: crawl)
            entry = (size, size)
          }
          let added = try insertLinks(
            page.discovered, crawl: crawl, size: &entry.size, cap: page.maxPages ?? .max,
            seen: &seen[crawl, default: [:]])
          result.linksAdded += added
          sizes[crawl] = entry
        }
      }
      for (crawl, entry) in sizes where entry.size != entry.original {
        try setFrontierSize(crawl: crawl, entry.size)
      }
      return (result, seen)
    }
    // Committed: these fingerprints are on their frontiers for good.
    for (crawl, fingerprints) in seen { known.insert(fingerprints, crawl: crawl) }
    if let newest = result.changes.last?.id { changeBell.ring(latest: newest) }
    return result
  }

  /// Adds the links whose fingerprints `crawl` lacks while its frontier
  /// has fewer than `cap` entries; returns how many were added. A link to a
  /// URL still queued at a greater depth lowers that depth: depth is link
  /// distance, the shortest path found so far, so `maxDepth` cuts where it
  /// should however the crawl happened to reach a page first.
  ///
  /// Links the fingerprints already committed in this process (`known`)
  /// or earlier in the batch (`seen`) name are skipped without a statement.
  /// For the others, one statement or two: on a crawl that started here
  /// they are mostly new, and the insert comes first (the unique key
  /// ignores a known one, which a lookup then reads); on a resumed crawl
  /// they are mostly known, and a lookup on the unique index (integers
  /// only) comes first, several times cheaper than an insert with its text.
  /// Each batch starts with the order its last link would have wanted.
  private func insertLinks(
    _ links: [FrontierSeed], crawl: Int64, size: inout Int, cap: Int,
    seen: inout [UInt64: Int]
  ) throws -> Int {
    let exists = try db.statement("SELECT depth FROM frontier WHERE crawl = ? AND fingerprint = ?")
    let insert = try db.statement(
      "INSERT OR IGNORE INTO frontier (crawl, url, fingerprint, depth, lastmod) VALUES (?, ?, ?, ?, ?)")
    try exists.bind(crawl, at: 1)
    try insert.bind(crawl, at: 1)
    /// Inserts `link` unless its fingerprint is on the frontier; true when it was not.
    func inserted(_ link: FrontierSeed) throws -> Bool {
      try insert.bind(link.url, at: 2)
      try insert.bind(link.fingerprint, at: 3)
      try insert.bind(link.depth, at: 4)
      // Bound on every row (a statement keeps its bindings): NULL for links.
      if let lastModified = link.lastModified {
        try insert.bind(Self.milliseconds(lastModified), at: 5)
      } else {
        try insert.bindNull(at: 5)
      }
      try insert.execute()
      return db.changes > 0
    }
    var added = 0
    for link in links {
      if let depth = known.depth(of: link.fingerprint, crawl: crawl), depth <= link.depth { continue }
      if let depth = seen[link.fingerprint], depth <= link.depth { continue }
      if insertsLinksFirst && size < cap {
        if try inserted(link) {
          seen[link.fingerprint] = link.depth
          size += 1
          added += 1
          continue
        }
        insertsLinksFirst = false
      }
      exists.reset()
      try exists.bind(link.fingerprint, at: 2)
      if try exists.step() {
        let depth = exists.int(0)
        exists.reset()
        if link.depth < depth {
          try lowerDepth(crawl: crawl, fingerprint: link.fingerprint, to: link.depth)
          seen[link.fingerprint] = link.depth
        } else {
          seen[link.fingerprint] = depth
        }
        continue
      }
      // Not on the frontier: the next unknown link is likely new too.
      insertsLinksFirst = true
      if size >= cap { continue }
      seen[link.fingerprint] = link.depth
      if try inserted(link) {
        size += 1
        added += 1
      }
    }
    exists.reset()
    return added
  }

  /// Gives a queued frontier entry the shorter link distance just found. An
  /// entry being fetched or already done keeps its depth (its links were or
  /// are being found at the old one).
  private func lowerDepth(crawl: Int64, fingerprint: UInt64, to depth: Int) throws {
    let update = try db.statement(
      "UPDATE frontier SET depth = ?3 WHERE crawl = ?1 AND fingerprint = ?2 AND state = 'queued' AND depth > ?3")
    try update.bind(crawl, at: 1)
    try update.bind(fingerprint, at: 2)
    try update.bind(depth, at: 3)
    try update.execute()
  }

  /// Marks the entries of `items` done with one statement; when one of
  /// them is missing, names it (the caller's transaction is rolled back).
  private func markDone(_ items: some Collection<FrontierItem>) throws {
    guard !items.isEmpty else { return }
    let update = try db.statement(
      """
      UPDATE frontier SET state = 'done', owner = NULL, lease_until = NULL
      WHERE id IN (SELECT value FROM json_each(?))
      """)
    let ids = items.map(\.id)
    try update.bind(jsonArray: ids, at: 1)
    try update.execute()
    if db.changes != Set(ids).count {
      let exists = try db.statement("SELECT 1 FROM frontier WHERE id = ?")
      for item in items {
        try exists.bind(item.id, at: 1)
        if try exists.firstRow({ _ in true }) == nil { throw StoreError.notFound("frontier entry with id \(item.id)") }
      }
    }
  }

  /// Reads the stored rows of the records `pages` give, plans them
  /// (`RecordRules`), and writes the plan: rows, changes, outbox rows.
  private func writeRecords(of pages: [PageCommit], into result: inout CommitResult) throws {
    let keys = RecordRules.keys(of: pages)
    guard !keys.isEmpty else { return }
    var stored = try storedRecords(keys)
    var plan = RecordRules.plan(pages, stored: stored)
    let missed = try insertRecords(plan.inserts)
    if !missed.isEmpty {
      // The lookup missed rows the unique key found: plan again with them
      // (the other inserts, written already, are planned the same).
      stored.merge(try storedRecords(missed)) { $1 }
      plan = RecordRules.plan(pages, stored: stored)
    }
    result.held += try holdFieldLosses(pages, plan: &plan, stored: stored)
    try updateRecords(plan.updates)
    try plan.route { try !sourceHasCompletedCrawl($0) }
    let written = try writeChanges(plan.changes.map(\.change))
    for (planned, change) in zip(plan.changes, written) {
      result.changes.append(change)
      result.notifications += try enqueue(change, channels: planned.channels, now: Self.milliseconds(change.at))
    }
    result.newRecords += plan.newRecords
    result.changedRecords += plan.changedRecords
    result.unchangedRecords += plan.unchangedRecords
    result.restoredRecords += plan.restoredRecords
  }

  /// The stored rows of the records of `keys`, read with one statement per
  /// source.
  private func storedRecords(_ keys: [RecordKey]) throws -> [RecordKey: StoredRecordRow] {
    var bySource: [UTF8Key: [String]] = [:]
    for key in keys { bySource[key.source, default: []].append(String(key.key.text)) }
    let select = try db.statement(
      """
      SELECT key, id, content_hash, fields, removed_at FROM records
      WHERE source = ?1 AND key IN (SELECT value FROM json_each(?2))
      """)
    var found: [RecordKey: StoredRecordRow] = [:]
    for (source, list) in bySource {
      let name = String(source.text)
      try select.bind(name, at: 1)
      try select.bind(jsonArray: list, at: 2)
      for (key, row) in try select.rows({
        ($0.string(0), StoredRecordRow(
          id: $0.int64(1), contentHash: $0.uint64(2), fields: $0.string(3), removed: $0.optionalInt64(4) != nil))
      }) {
        found[RecordKey(source: name, key: key)] = row
      }
    }
    return found
  }

  /// Inserts the rows of `inserts`; returns the keys of those the store
  /// had after all (the unique key ignored them).
  private func insertRecords(_ inserts: [RecordPlan.Insert]) throws -> [RecordKey] {
    guard !inserts.isEmpty else { return [] }
    let insert = try db.statement(
      """
      INSERT INTO records (source, key, url, fields, content_hash, first_seen, last_seen, page, seen_crawl)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (source, key) DO NOTHING
      """)
    var missed: [RecordKey] = []
    for row in inserts {
      try insert.bind(row.record.source, at: 1)
      try insert.bind(row.record.key, at: 2)
      try insert.bind(row.record.url, at: 3)
      try insert.bind(row.record.fieldsJSON, at: 4)
      try insert.bind(row.record.contentHash, at: 5)
      try insert.bind(Self.milliseconds(row.firstSeen), at: 6)
      try insert.bind(Self.milliseconds(row.lastSeen), at: 7)
      try insert.bind(row.page, at: 8)
      try insert.bind(row.crawl, at: 9)
      try insert.execute()
      if db.changes == 0 { missed.append(RecordKey(row.record)) }
    }
    return missed
  }

  /// Writes the stored rows' updates: a sighting, and new fields where given.
  private func updateRecords(_ updates: [RecordPlan.Update]) throws {
    guard !updates.isEmpty else { return }
    let touch = try db.statement(
      "UPDATE records SET url = ?, last_seen = ?, page = ?, seen_crawl = ? WHERE id = ?")
    let update = try db.statement(
      """
      UPDATE records SET url = ?, last_seen = ?, page = ?, seen_crawl = ?, fields = ?, content_hash = ?,
        removed_at = NULL
      WHERE id = ?
      """)
    for row in updates {
      let statement = row.fieldsJSON == nil ? touch : update
      try statement.bind(row.url, at: 1)
      try statement.bind(Self.milliseconds(row.lastSeen), at: 2)
      try statement.bind(row.page, at: 3)
      try statement.bind(row.crawl, at: 4)
      if let fields = row.fieldsJSON {
        try statement.bind(fields, at: 5)
        try statement.bind(row.contentHash, at: 6)
        try statement.bind(row.id, at: 7)
      } else {
        try statement.bind(row.id, at: 5)
      }
      try statement.execute()
    }
  }

  private func updateFrontierState(_ item: FrontierItem, _ outcome: FrontierOutcome) throws {
    switch outcome {
    case .done:
      let update = try db.statement(
        "UPDATE frontier SET state = 'done', owner = NULL, lease_until = NULL WHERE id = ?")
      try update.bind(item.id, at: 1)
      try update.execute()
    case .failed(let permanent, let maxAttempts):
      let update = try db.statement(
        """
        UPDATE frontier SET
          state = CASE WHEN ?1 OR attempts + 1 >= ?2 THEN 'failed' ELSE 'queued' END,
          attempts = attempts + 1, owner = NULL, lease_until = NULL
        WHERE id = ?3
        """)
      try update.bind(permanent ? 1 : 0, at: 1)
      try update.bind(maxAttempts, at: 2)
      try update.bind(item.id, at: 3)
      try update.execute()
    case .deferred:
      let update = try db.statement(
        "UPDATE frontier SET state = 'queued', owner = NULL, lease_until = NULL WHERE id = ?")
      try update.bind(item.id, at: 1)
      try update.execute()
    }
    if db.changes == 0 { throw StoreError.notFound("frontier entry with id \(item.id)") }
  }

  private func upsertPage(_ page: PageRecord) throws {
    let upsert = try db.statement(
      """
      INSERT INTO pages
        (fingerprint, url, status, etag, last_modified, content_hash, fetched_at, links, encoding, record_count)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (fingerprint) DO UPDATE SET
        url = excluded.url, status = excluded.status, etag = excluded.etag,
        last_modified = excluded.last_modified, content_hash = excluded.content_hash,
        fetched_at = excluded.fetched_at, links = excluded.links, encoding = excluded.encoding,
        record_count = excluded.record_count
      """)
    try upsert.bind(page.fingerprint, at: 1)
    try upsert.bind(page.url, at: 2)
    try upsert.bind(page.status, at: 3)
    try upsert.bind(page.etag, at: 4)
    try upsert.bind(page.lastModified, at: 5)
    try upsert.bind(page.contentHash, at: 6)
    try upsert.bind(Self.milliseconds(page.fetchedAt), at: 7)
    try upsert.bind(utf8Text: LinkList.encodedBytes(page.links, pageURL: page.url), at: 8)
    try upsert.bind(page.encoding, at: 9)
    try upsert.bind(page.recordCount, at: 10)
    try upsert.execute()
  }

  /// Notes that a page was not read again by its crawl, so the records it
  /// gave before still stand: its row says which crawl kept it (completing
  /// the crawl then leaves its records alone). One update by the pages'
  /// fingerprint index; the records themselves are not touched.
  private func keepRecords(of page: PageCommit) throws {
    // A lost page (see `PageExtraction.lost`) is kept, and says so.
    let lost = page.extraction?.lost == true
    let keep = try db.statement(
      lost
        ? "UPDATE pages SET kept_crawl = ?1, lost_crawl = ?1 WHERE fingerprint = ?2"
        : "UPDATE pages SET kept_crawl = ?1 WHERE fingerprint = ?2")
    try keep.bind(page.item.crawl, at: 1)
    try keep.bind(page.item.fingerprint, at: 2)
    try keep.execute()
  }

  /// True when `source` has a completed crawl.
  func sourceHasCompletedCrawl(_ source: String) throws -> Bool {
    let select = try db.statement(
      "SELECT EXISTS (SELECT 1 FROM crawls WHERE source = ? AND completed_at IS NOT NULL)")
    try select.bind(source, at: 1)
    return try select.firstRow { $0.int(0) != 0 } ?? false
  }

  /// Records a completed crawl of `source` did not see again: each gets its
  /// `removed_at` and a `removed` change (`RecordRules.removes` decides
  /// which, over the current records this crawl did not see).
  func removeUnseenRecords(
    source: String, crawl: Int64, capped: Bool, router: (any ChangeRouter)?, firstCrawl: Bool, now: Date
  ) throws -> CrawlCompletion {
    let nowMS = Self.milliseconds(now)
    let select = try db.statement(
      """
      SELECT r.id, r.key, r.url, r.fields, r.seen_crawl,
        EXISTS (SELECT 1 FROM pages p WHERE p.fingerprint = r.page AND p.kept_crawl = ?2),
        EXISTS (SELECT 1 FROM frontier f WHERE f.crawl = ?2 AND f.fingerprint = r.page AND f.state = 'done')
      FROM records r
      WHERE r.source = ?1 AND r.removed_at IS NULL AND r.seen_crawl < ?2
      ORDER BY r.id
      """)
    try select.bind(source, at: 1)
    try select.bind(crawl, at: 2)
    let candidates = try select.rows {
      RecordRules.RemovalCandidate(
        id: $0.int64(0), key: $0.string(1), url: $0.string(2), fields: $0.string(3), removed: false,
        seenCrawl: $0.optionalInt64(4), pageKept: $0.int(5) != 0, pageFetched: $0.int(6) != 0)
    }
    var completion = CrawlCompletion()
    try remove(
      candidates, source: source, crawl: crawl, capped: capped, router: router, firstCrawl: firstCrawl, nowMS: nowMS,
      into: &completion)
    return completion
  }

  /// Inserts the rows of `changes`, up to ``changeRowsPerInsert`` to a
  /// statement, and returns them in their order with their ids (and their
  /// dates as stored, to the millisecond).
  ///
  /// An `INSERT` into `changes` (AUTOINCREMENT since v16) also reads and
  /// writes the table's `sqlite_sequence` row, once per statement: one
  /// statement per change paid that for every change of a commit. The rows
  /// of one statement get consecutive ids in their order (each new id is one
  /// past the highest one handed out), so the last id gives them all.
  func writeChanges(_ changes: [RecordChange]) throws -> [RecordChange] {
    var written: [RecordChange] = []
    written.reserveCapacity(changes.count)
    var start = 0
    while start < changes.count {
      // 16, 8, 4, 2 or 1 rows: five statements in the cache cover any count.
      var rows = Self.changeRowsPerInsert
      while rows > changes.count - start { rows /= 2 }
      let insert = try db.statement(Self.changeInsertSQL[rows.trailingZeroBitCount])
      var dates: [Int64] = []
      dates.reserveCapacity(rows)
      for row in 0..<rows {
        let change = changes[start + row]
        let at = Self.milliseconds(change.at)
        dates.append(at)
        let base = Int32(row * 9)
        try insert.bind(change.source, at: base + 1)
        try insert.bind(change.key, at: base + 2)
        try insert.bind(change.kind.rawValue, at: base + 3)
        try insert.bind(change.url, at: base + 4)
        try insert.bind(change.beforeJSON, at: base + 5)
        try insert.bind(change.afterJSON, at: base + 6)
        try insert.bind(at, at: base + 7)
        try insert.bind(change.run, at: base + 8)
        try insert.bind(ChangedFields.encode(change.changedFields), at: base + 9)
      }
      try insert.execute()
      let last = db.lastInsertRowID
      for row in 0..<rows {
        var change = changes[start + row]
        change.id = last - Int64(rows - 1 - row)
        change.at = Self.date(dates[row])
        written.append(change)
      }
      start += rows
    }
    return written
  }

  /// The most change rows one `INSERT` of ``writeChanges(_:)`` writes (a power of two).
  static let changeRowsPerInsert = 16

  /// The `INSERT`s of ``writeChanges(_:)``, by the base-2 logarithm of their row count.
  private static let changeInsertSQL: [String] = (0...changeRowsPerInsert.trailingZeroBitCount).map { power in
    "INSERT INTO changes (source, key, kind, url, before, after, at, run, changed_fields) VALUES "
      + repeatElement("(?, ?, ?, ?, ?, ?, ?, ?, ?)", count: 1 << power).joined(separator: ", ")
  }

  /// Inserts a change row and returns it with its id (and its date as stored, to the millisecond).
  func writeChange(_ change: RecordChange) throws -> RecordChange {
    let at = Self.milliseconds(change.at)
    let insert = try db.statement(
      """
      INSERT INTO changes (source, key, kind, url, before, after, at, run, changed_fields)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      """)
    try insert.bind(change.source, at: 1)
    try insert.bind(change.key, at: 2)
    try insert.bind(change.kind.rawValue, at: 3)
    try insert.bind(change.url, at: 4)
    try insert.bind(change.beforeJSON, at: 5)
    try insert.bind(change.afterJSON, at: 6)
    try insert.bind(at, at: 7)
    try insert.bind(change.run, at: 8)
    try insert.bind(ChangedFields.encode(change.changedFields), at: 9)
    try insert.execute()
    var written = change
    written.id = db.lastInsertRowID
    written.at = Self.date(at)
    return written
  }

  // MARK: Reading pages, records and changes

  /// The last stored fetch of the page with this fingerprint, or nil.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func page(fingerprint: UInt64) async throws -> PageRecord? {
    try storedPage(fingerprint)
  }

  /// The stored pages among `fingerprints`, keyed by fingerprint (one actor
  /// call and one statement for a whole claimed batch).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func pages(fingerprints: [UInt64]) async throws -> [UInt64: PageRecord] {
    guard !fingerprints.isEmpty else { return [:] }
    let select = try db.statement(
      """
      SELECT \(Self.pageColumns) FROM pages
      WHERE fingerprint IN (SELECT value FROM json_each(?))
      """)
    try select.bind(jsonArray: fingerprints.lazy.map { Int64(bitPattern: $0) }, at: 1)
    var found: [UInt64: PageRecord] = [:]
    for page in try select.rows(Self.page(from:)) { found[page.fingerprint] = page }
    return found
  }

  private func storedPage(_ fingerprint: UInt64) throws -> PageRecord? {
    let select = try db.statement("SELECT \(Self.pageColumns) FROM pages WHERE fingerprint = ?")
    try select.bind(fingerprint, at: 1)
    return try select.firstRow(Self.page(from:))
  }

  /// The columns `page(from:)` reads, in its order.
  private static let pageColumns =
    "fingerprint, url, status, etag, last_modified, content_hash, fetched_at, links, encoding, record_count"

  private static func page(from row: SQLiteStatement) -> PageRecord {
    let url = row.string(1)
    return PageRecord(
      url: url, fingerprint: row.uint64(0), status: row.int(2),
      etag: row.optionalString(3), lastModified: row.optionalString(4),
      contentHash: row.optionalUInt64(5), fetchedAt: date(row.int64(6)),
      links: LinkList.decode(row.string(7), pageURL: url), encoding: row.optionalString(8),
      recordCount: row.int(9))
  }

  /// Up to `limit` records with an id above `afterID`, in insertion order,
  /// of `source` or of every source when nil. Page with the last id seen.
  ///
  ///     var after: Int64 = 0
  ///     while case let batch = try await store.records(source: nil, afterID: after, limit: 500),
  ///           let last = batch.last { export(batch); after = last.id }
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func records(source: String?, afterID: Int64, limit: Int) async throws -> [StoredRecord] {
    let select = try pageQuery(
      "id, source, key, url, fields, content_hash, first_seen, last_seen, removed_at", from: "records",
      source: source, afterID: afterID, limit: limit)
    return try select.rows {
      StoredRecord(
        id: $0.int64(0), source: $0.string(1), key: $0.string(2), url: $0.string(3),
        fieldsJSON: $0.string(4), contentHash: $0.uint64(5), firstSeen: Self.date($0.int64(6)),
        lastSeen: Self.date($0.int64(7)), removedAt: $0.optionalInt64(8).map(Self.date))
    }
  }

  /// Up to `limit` changes with an id above `afterID`, oldest first, of
  /// `source` or of every source when nil.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func changes(source: String?, afterID: Int64, limit: Int) async throws -> [RecordChange] {
    let select = try pageQuery(
      Self.changeColumns, from: "changes", source: source, afterID: afterID, limit: limit)
    return try select.rows { Self.change(from: $0) }
  }
}

extension SQLiteStore {
  /// A bound keyset-page query over `table` (records or changes): rows with
  /// an id above `afterID`, of `source` or of every source when nil, oldest
  /// first, at most `limit`.
  fileprivate func pageQuery(
    _ columns: String, from table: String, source: String?, afterID: Int64, limit: Int
  ) throws -> SQLiteStatement {
    let filter = source == nil ? "" : "source = ? AND "
    let select = try db.statement("SELECT \(columns) FROM \(table) WHERE \(filter)id > ? ORDER BY id LIMIT ?")
    var index: Int32 = 1
    if let source {
      try select.bind(source, at: index)
      index += 1
    }
    try select.bind(afterID, at: index)
    try select.bind(limit, at: index + 1)
    return select
  }
}
