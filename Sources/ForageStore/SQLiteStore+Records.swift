import Foundation

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
      for page in pages {
        try updateFrontierState(page.item, page.outcome)
        if let record = page.page { try upsertPage(record) }
        for record in page.records {
          try upsertRecord(record, at: page.now, run: page.run, into: &result)
        }
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
    return result
  }

  /// Adds the links whose fingerprints `crawl` lacks while its frontier
  /// has fewer than `cap` entries; returns how many were added. A link to a
  /// URL still queued at a greater depth lowers that depth: depth is link
  /// distance, the shortest path found so far, so `maxDepth` cuts where it
  /// should however the crawl happened to reach a page first.
  ///
  /// A lookup on the unique index (integers only) comes first: most links
  /// of a page are already known, and skipping the insert for them is
  /// several times cheaper than `INSERT OR IGNORE` with its text binding.
  private func insertLinks(
    _ links: [FrontierSeed], crawl: Int64, size: inout Int, cap: Int,
    seen: inout [UInt64: Int]
  ) throws -> Int {
    let exists = try db.statement("SELECT depth FROM frontier WHERE crawl = ? AND fingerprint = ?")
    let insert = try db.statement(
      "INSERT OR IGNORE INTO frontier (crawl, url, fingerprint, depth) VALUES (?, ?, ?, ?)")
    try exists.bind(crawl, at: 1)
    try insert.bind(crawl, at: 1)
    var added = 0
    for link in links {
      if let depth = known.depth(of: link.fingerprint, crawl: crawl), depth <= link.depth { continue }
      if let depth = seen[link.fingerprint], depth <= link.depth { continue }
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
      if size >= cap { continue }
      try insert.bind(link.url, at: 2)
      try insert.bind(link.fingerprint, at: 3)
      try insert.bind(link.depth, at: 4)
      try insert.execute()
      seen[link.fingerprint] = link.depth
      if db.changes > 0 {
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
        (fingerprint, url, status, etag, last_modified, content_hash, fetched_at, links, encoding)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (fingerprint) DO UPDATE SET
        url = excluded.url, status = excluded.status, etag = excluded.etag,
        last_modified = excluded.last_modified, content_hash = excluded.content_hash,
        fetched_at = excluded.fetched_at, links = excluded.links, encoding = excluded.encoding
      """)
    try upsert.bind(page.fingerprint, at: 1)
    try upsert.bind(page.url, at: 2)
    try upsert.bind(page.status, at: 3)
    try upsert.bind(page.etag, at: 4)
    try upsert.bind(page.lastModified, at: 5)
    try upsert.bind(page.contentHash, at: 6)
    try upsert.bind(Self.milliseconds(page.fetchedAt), at: 7)
    try upsert.bind(LinkList.encode(page.links, pageURL: page.url), at: 8)
    try upsert.bind(page.encoding, at: 9)
    try upsert.execute()
  }

  private func upsertRecord(
    _ record: RecordInput, at now: Date, run: Int64?, into result: inout CommitResult
  ) throws {
    let nowMS = Self.milliseconds(now)
    let select = try db.statement(
      "SELECT id, content_hash, fields FROM records WHERE source = ? AND key = ?")
    try select.bind(record.source, at: 1)
    try select.bind(record.key, at: 2)
    let existing = try select.firstRow { ($0.int64(0), $0.uint64(1), $0.string(2)) }
    let before: String?
    if let (id, hash, fields) = existing {
      if hash == record.contentHash {
        let touch = try db.statement("UPDATE records SET url = ?, last_seen = ? WHERE id = ?")
        try touch.bind(record.url, at: 1)
        try touch.bind(nowMS, at: 2)
        try touch.bind(id, at: 3)
        try touch.execute()
        result.unchangedRecords += 1
        return
      }
      let update = try db.statement(
        "UPDATE records SET url = ?, fields = ?, content_hash = ?, last_seen = ? WHERE id = ?")
      try update.bind(record.url, at: 1)
      try update.bind(record.fieldsJSON, at: 2)
      try update.bind(record.contentHash, at: 3)
      try update.bind(nowMS, at: 4)
      try update.bind(id, at: 5)
      try update.execute()
      result.changedRecords += 1
      before = fields
    } else {
      let insert = try db.statement(
        """
        INSERT INTO records (source, key, url, fields, content_hash, first_seen, last_seen)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """)
      try insert.bind(record.source, at: 1)
      try insert.bind(record.key, at: 2)
      try insert.bind(record.url, at: 3)
      try insert.bind(record.fieldsJSON, at: 4)
      try insert.bind(record.contentHash, at: 5)
      try insert.bind(nowMS, at: 6)
      try insert.bind(nowMS, at: 7)
      try insert.execute()
      result.newRecords += 1
      before = nil
    }
    let change = try db.statement(
      "INSERT INTO changes (source, key, before, after, at, run) VALUES (?, ?, ?, ?, ?, ?)")
    try change.bind(record.source, at: 1)
    try change.bind(record.key, at: 2)
    try change.bind(before, at: 3)
    try change.bind(record.fieldsJSON, at: 4)
    try change.bind(nowMS, at: 5)
    try change.bind(run, at: 6)
    try change.execute()
    result.changes.append(
      RecordChange(
        id: db.lastInsertRowID, source: record.source, key: record.key, beforeJSON: before,
        afterJSON: record.fieldsJSON, at: Self.date(nowMS), run: run))
  }

  // MARK: Reading pages, records and changes

  /// The last stored fetch of the page with this fingerprint, or nil.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func page(fingerprint: UInt64) async throws -> PageRecord? {
    try storedPage(fingerprint)
  }

  /// The stored pages among `fingerprints`, keyed by fingerprint (one actor
  /// call and one read transaction for a whole claimed batch).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func pages(fingerprints: [UInt64]) async throws -> [UInt64: PageRecord] {
    try db.readTransaction {
      var found: [UInt64: PageRecord] = [:]
      for f in fingerprints where found[f] == nil {
        if let page = try storedPage(f) { found[f] = page }
      }
      return found
    }
  }

  private func storedPage(_ fingerprint: UInt64) throws -> PageRecord? {
    let select = try db.statement(
      """
      SELECT url, status, etag, last_modified, content_hash, fetched_at, links, encoding
      FROM pages WHERE fingerprint = ?
      """)
    try select.bind(fingerprint, at: 1)
    return try select.firstRow {
      let url = $0.string(0)
      return PageRecord(
        url: url, fingerprint: fingerprint, status: $0.int(1),
        etag: $0.optionalString(2), lastModified: $0.optionalString(3),
        contentHash: $0.optionalUInt64(4), fetchedAt: Self.date($0.int64(5)),
        links: LinkList.decode($0.string(6), pageURL: url), encoding: $0.optionalString(7))
    }
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
      "id, source, key, url, fields, content_hash, first_seen, last_seen", from: "records",
      source: source, afterID: afterID, limit: limit)
    return try select.rows {
      StoredRecord(
        id: $0.int64(0), source: $0.string(1), key: $0.string(2), url: $0.string(3),
        fieldsJSON: $0.string(4), contentHash: $0.uint64(5), firstSeen: Self.date($0.int64(6)),
        lastSeen: Self.date($0.int64(7)))
    }
  }

  /// Up to `limit` changes with an id above `afterID`, oldest first, of
  /// `source` or of every source when nil.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func changes(source: String?, afterID: Int64, limit: Int) async throws -> [RecordChange] {
    let select = try pageQuery(
      "id, source, key, before, after, at, run", from: "changes", source: source, afterID: afterID, limit: limit)
    return try select.rows {
      RecordChange(
        id: $0.int64(0), source: $0.string(1), key: $0.string(2),
        beforeJSON: $0.optionalString(3), afterJSON: $0.string(4), at: Self.date($0.int64(5)),
        run: $0.optionalInt64(6))
    }
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
