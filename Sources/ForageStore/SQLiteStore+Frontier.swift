import Foundation

/// Frontier states as stored in `frontier.state`.
enum FrontierState {
  static let queued = "queued"
  static let claimed = "claimed"
  static let done = "done"
  static let failed = "failed"
}

extension SQLiteStore {
  // MARK: Crawls

  /// Returns the latest unfinished crawl of `source`, or starts a new one
  /// seeded with `seeds` (duplicates by fingerprint are ignored).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func openCrawl(source: String, seeds: [FrontierSeed], now: Date) async throws -> Crawl {
    let db = self.db
    return try db.transaction {
      let open = try db.statement(
        """
        SELECT id, started_at FROM crawls
        WHERE source = ? AND completed_at IS NULL ORDER BY id DESC LIMIT 1
        """)
      try open.bind(source, at: 1)
      if let crawl = try open.firstRow({
        Crawl(id: $0.int64(0), source: source, startedAt: Self.date($0.int64(1)), isNew: false)
      }) {
        return crawl
      }
      let nowMS = Self.milliseconds(now)
      let addSource = try db.statement(
        "INSERT OR IGNORE INTO sources (name, created_at) VALUES (?, ?)")
      try addSource.bind(source, at: 1)
      try addSource.bind(nowMS, at: 2)
      try addSource.execute()
      let insert = try db.statement("INSERT INTO crawls (source, started_at) VALUES (?, ?)")
      try insert.bind(source, at: 1)
      try insert.bind(nowMS, at: 2)
      try insert.execute()
      let id = db.lastInsertRowID
      var added = 0
      for seed in seeds {
        if try insertFrontier(crawl: id, seed) { added += 1 }
      }
      try setFrontierSize(crawl: id, added)
      return Crawl(id: id, source: source, startedAt: Self.date(nowMS), isNew: true)
    }
  }

  /// Inserts a frontier entry unless the crawl already has its fingerprint.
  /// Returns true when a row was added.
  func insertFrontier(crawl: Int64, _ seed: FrontierSeed) throws -> Bool {
    let insert = try db.statement(
      "INSERT OR IGNORE INTO frontier (crawl, url, fingerprint, depth, lastmod) VALUES (?, ?, ?, ?, ?)")
    try insert.bind(crawl, at: 1)
    try insert.bind(seed.url, at: 2)
    try insert.bind(seed.fingerprint, at: 3)
    try insert.bind(seed.depth, at: 4)
    try insert.bind(seed.lastModified.map(Self.milliseconds), at: 5)
    try insert.execute()
    return db.changes > 0
  }

  /// The number of frontier rows of `crawl`, from the crawl's counter.
  func frontierSize(crawl: Int64) throws -> Int {
    let select = try db.statement("SELECT frontier_size FROM crawls WHERE id = ?")
    try select.bind(crawl, at: 1)
    guard let size = try select.firstRow({ $0.int(0) }) else {
      throw StoreError.notFound("crawl with id \(crawl)")
    }
    return size
  }

  func setFrontierSize(crawl: Int64, _ size: Int) throws {
    let update = try db.statement("UPDATE crawls SET frontier_size = ? WHERE id = ?")
    try update.bind(size, at: 1)
    try update.bind(crawl, at: 2)
    try update.execute()
  }

  // MARK: Claims and leases

  /// Claims up to `limit` entries of `crawl` under `lease`: queued ones and
  /// claimed ones whose lease ended by `lease.at`, lowest depth first, then
  /// by id.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func claim(crawl: Int64, limit: Int, lease: Lease) async throws -> [FrontierItem] {
    guard limit > 0 else { return [] }
    let now = Self.milliseconds(lease.at)
    let db = self.db
    // One statement marks and returns the entries (an UPDATE per entry cost
    // a statement execution, and SQLite's allocations, for each).
    let claim = try db.statement(
      """
      UPDATE frontier SET state = 'claimed', owner = ?4, lease_until = ?5
      WHERE id IN (
        SELECT id FROM (
          SELECT id, depth FROM frontier WHERE crawl = ?1 AND state = 'queued'
          UNION ALL
          SELECT id, depth FROM frontier WHERE crawl = ?1 AND state = 'claimed' AND lease_until <= ?2
          ORDER BY depth, id LIMIT ?3))
      RETURNING id, url, fingerprint, depth, attempts, lastmod
      """)
    try claim.bind(crawl, at: 1)
    try claim.bind(now, at: 2)
    try claim.bind(limit, at: 3)
    try claim.bind(lease.owner, at: 4)
    try claim.bind(now + lease.milliseconds, at: 5)
    let items = try claim.rows {
      FrontierItem(
        id: $0.int64(0), crawl: crawl, url: $0.string(1), fingerprint: $0.uint64(2),
        depth: $0.int(3), attempts: $0.int(4), lastModified: $0.optionalInt64(5).map(Self.date))
    }
    // RETURNING gives rows in no promised order: lowest depth first, then by id.
    return items.sorted { ($0.depth, $0.id) < ($1.depth, $1.id) }
  }

  // MARK: Completion and counts

  /// Marks `crawl` complete when none of its entries is queued or claimed,
  /// and removes the records of its source that it did not see again (see
  /// `Store.completeCrawl`). Nil while entries are left; an empty
  /// completion for a crawl completed before.
  ///
  /// - Throws: `StoreError` of kind `.notFound` for an unknown crawl.
  public func completeCrawl(_ crawl: Int64, maxPages: Int?, router: (any ChangeRouter)?, now: Date) async throws
    -> CrawlCompletion?
  {
    try await completeCrawl(crawl, maxPages: maxPages, router: router, health: nil, now: now)
  }

  /// ``completeCrawl(_:maxPages:router:now:)`` under `health` (see `Store.completeCrawl`).
  ///
  /// - Throws: `StoreError` of kind `.notFound` for an unknown crawl.
  public func completeCrawl(
    _ crawl: Int64, maxPages: Int?, router: (any ChangeRouter)?, health: HealthPolicy?, now: Date
  ) async throws -> CrawlCompletion? {
    let db = self.db
    let completion = try db.transaction { () throws -> CrawlCompletion? in
      let select = try db.statement("SELECT source, completed_at, frontier_size FROM crawls WHERE id = ?")
      try select.bind(crawl, at: 1)
      guard let (source, completedAt, size) = try select.firstRow({ ($0.string(0), $0.optionalInt64(1), $0.int(2)) })
      else { throw StoreError.notFound("crawl with id \(crawl)") }
      let pending = try db.statement(
        """
        SELECT EXISTS (SELECT 1 FROM frontier WHERE crawl = ?1 AND state = 'queued')
            OR EXISTS (SELECT 1 FROM frontier WHERE crawl = ?1 AND state = 'claimed')
        """)
      try pending.bind(crawl, at: 1)
      let hasPending = try pending.firstRow { $0.int(0) != 0 } ?? false
      switch RecordRules.completion(
        hasPendingEntries: hasPending, completedBefore: completedAt != nil, frontierSize: size, maxPages: maxPages)
      {
      case .notYet: return nil
      case .alreadyCompleted: return CrawlCompletion()
      case .completes(let capped):
        // Whether this is the source's first completed crawl, asked before
        // this one counts.
        let firstCrawl = try !sourceHasCompletedCrawl(source)
        let update = try db.statement("UPDATE crawls SET completed_at = ? WHERE id = ?")
        try update.bind(Self.milliseconds(now), at: 1)
        try update.bind(crawl, at: 2)
        try update.execute()
        if let health {
          return try completeHealth(
            source: source, crawl: crawl, capped: capped, router: router, firstCrawl: firstCrawl, policy: health,
            now: now)
        }
        return try removeUnseenRecords(
          source: source, crawl: crawl, capped: capped, router: router, firstCrawl: firstCrawl, now: now)
      }
    }
    if completion != nil { known.forget(crawl: crawl) }
    if let newest = completion?.removed.last?.id { changeBell.ring(latest: newest) }
    return completion
  }

  /// How many entries of `crawl` are in each state.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func frontierCounts(crawl: Int64) async throws -> FrontierCounts {
    let select = try db.statement(
      "SELECT state, count(*) FROM frontier WHERE crawl = ? GROUP BY state")
    try select.bind(crawl, at: 1)
    var counts = FrontierCounts()
    for (state, count) in try select.rows({ ($0.string(0), $0.int(1)) }) {
      switch state {
      case FrontierState.queued: counts.queued = count
      case FrontierState.claimed: counts.claimed = count
      case FrontierState.done: counts.done = count
      case FrontierState.failed: counts.failed = count
      default: break
      }
    }
    return counts
  }
}
