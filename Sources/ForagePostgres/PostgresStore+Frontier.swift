#if Postgres
import Foundation
import ForageStore

extension PostgresStore {
  // MARK: Crawls

  /// Returns the unfinished crawl of `source`, or starts one seeded with
  /// `seeds`. Workers opening the same source at once get the same crawl:
  /// the source's row is locked while one of them looks and creates.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func openCrawl(source: String, seeds: [FrontierSeed], now: Date) async throws -> Crawl {
    try await run { db in
      try db.query(
        "INSERT INTO sources (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        [.text(source), .date(now)])
      try db.query("SELECT 1 FROM sources WHERE name = $1 FOR UPDATE", [.text(source)])
      let open = try db.query(
        "SELECT id, started_at FROM crawls WHERE source = $1 AND completed_at IS NULL ORDER BY id DESC LIMIT 1",
        [.text(source)])
      if open.count > 0 {
        return Crawl(id: open.int64(0, 0), source: source, startedAt: open.date(0, 1), isNew: false)
      }
      let nowMS = Self.milliseconds(now)
      let id = try db.query(
        "INSERT INTO crawls (source, started_at) VALUES ($1, $2) RETURNING id", [.text(source), .int(nowMS)]
      ).int64(0, 0)
      var added = 0
      for seed in seeds {
        added += try db.query(
          """
          INSERT INTO frontier (crawl, url, fingerprint, depth, lastmod) VALUES ($1, $2, $3, $4, $5)
          ON CONFLICT (crawl, fingerprint) DO NOTHING
          """,
          [.int(id), .text(seed.url), .bits(seed.fingerprint), .int(seed.depth), .date(seed.lastModified)]
        ).affected
      }
      try db.query("UPDATE crawls SET frontier_size = $1 WHERE id = $2", [.int(added), .int(id)])
      return Crawl(id: id, source: source, startedAt: Self.date(nowMS), isNew: true)
    }
  }

  // MARK: Claims and leases

  /// Claims up to `limit` entries of `crawl` under `lease`: queued ones and
  /// claimed ones whose lease has passed, lowest depth first, then by id.
  /// The lease lasts `lease.length` on the server's clock, and passes by
  /// it (see `PostgresLease`). Rows another worker is claiming at this instant are skipped
  /// (`FOR UPDATE SKIP LOCKED`), so workers neither share nor wait.
  ///
  /// One statement: the queued entries come in claim order from a partial
  /// index (`frontier_queued`), the expired claims from another
  /// (`frontier_claimed_by_lease`), and the rows are updated by primary key;
  /// a state test joined by OR made the server sort every queued entry of
  /// the crawl at each claim.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public nonisolated func claim(crawl: Int64, limit: Int, lease: Lease) async throws -> [FrontierItem] {
    try await claim(crawl: crawl, limit: limit, lease: lease, withPages: false).items
  }

  /// ``claim(crawl:limit:lease:)`` and the claimed entries' stored pages in
  /// the same statement: one round trip, where a claim and then a lookup of
  /// its pages took two (a worker far from its database waited for both
  /// before it could fetch).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public nonisolated func claimWithPages(crawl: Int64, limit: Int, lease: Lease) async throws -> ClaimedEntries {
    try await claim(crawl: crawl, limit: limit, lease: lease, withPages: true)
  }

  private nonisolated func claim(crawl: Int64, limit: Int, lease: Lease, withPages: Bool) async throws
    -> ClaimedEntries
  {
    guard limit > 0 else { return ClaimedEntries(items: [], pages: [:]) }
    let owner = lease.owner
    let length = PostgresLease.length(lease)
    let leaseNow = leaseNow(lease.at)
    let pages =
      withPages
      ? "SELECT c.*, p.* FROM claimed c LEFT JOIN LATERAL \(Self.pageProbe("c.fingerprint")) AS p ON true"
      : "SELECT * FROM claimed"
    // On the second connection: a claim must not wait for a commit. One
    // statement, its own transaction: one round trip.
    let claimed = try await side.perform(transaction: false) { db in
      let result = try db.query(
        """
        WITH queued AS (
          SELECT id, depth FROM frontier WHERE crawl = $1 AND state = 'queued'
          ORDER BY depth, id LIMIT $4 FOR UPDATE SKIP LOCKED
        ), expired AS (
          SELECT id, depth FROM frontier
          WHERE crawl = $1 AND state = 'claimed' AND lease_until <= \(PostgresLease.now("$5"))
          ORDER BY depth, id LIMIT $4 FOR UPDATE SKIP LOCKED
        ), claimed AS (
          UPDATE frontier f SET state = 'claimed', owner = $2, lease_until = \(PostgresLease.now("$5")) + $3
          WHERE f.id = ANY (ARRAY(
            SELECT id FROM (SELECT id, depth FROM queued UNION ALL SELECT id, depth FROM expired) picked
            ORDER BY depth, id LIMIT $4))
          RETURNING f.id, f.url, f.fingerprint, f.depth, f.attempts, f.lastmod
        )
        \(pages)
        """,
        [.int(crawl), .text(owner), length, .int(limit), leaseNow])
      var items: [FrontierItem] = []
      var found: [UInt64: PageRecord] = [:]
      for row in 0..<result.count {
        items.append(
          FrontierItem(
            id: result.int64(row, 0), crawl: crawl, url: result.string(row, 1), fingerprint: result.uint64(row, 2),
            depth: result.int(row, 3), attempts: result.int(row, 4), lastModified: result.optionalDate(row, 5)))
        if withPages && !result.isNull(row, 6) {
          let page = Self.page(result, row, offset: 6)
          found[page.fingerprint] = page
        }
      }
      return ClaimedEntries(items: items, pages: found)
    }
    owners.withLock { owners in
      for item in claimed.items { owners[item.id] = owner }
    }
    return ClaimedEntries(items: claimed.items.sorted { ($0.depth, $0.id) < ($1.depth, $1.id) }, pages: claimed.pages)
  }

  // MARK: Completion and counts

  /// Marks `crawl` complete when none of its entries is queued or claimed,
  /// and removes the records of its source that it did not see again (see
  /// `Store.completeCrawl`). The crawl's row is locked meanwhile, so two
  /// workers finishing at once complete it once.
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
    let completion = try await run { db -> CrawlCompletion? in
      try Self.holdChangeOrder(db)  // it may write changes (see there)
      let row = try db.query(
        "SELECT source, completed_at, frontier_size FROM crawls WHERE id = $1 FOR UPDATE", [.int(crawl)])
      guard row.count > 0 else { throw StoreError.notFound("crawl with id \(crawl)") }
      let pending = try db.query(
        "SELECT EXISTS (SELECT 1 FROM frontier WHERE crawl = $1 AND (state = 'queued' OR state = 'claimed'))",
        [.int(crawl)])
      switch RecordRules.completion(
        hasPendingEntries: pending.bool(0, 0), completedBefore: !row.isNull(0, 1), frontierSize: row.int(0, 2),
        maxPages: maxPages)
      {
      case .notYet: return nil
      case .alreadyCompleted: return CrawlCompletion()
      case .completes(let capped):
        let source = row.string(0, 0)
        let firstCrawl = try !Self.sourceHasCompletedCrawl(db, source)
        try db.query("UPDATE crawls SET completed_at = $1 WHERE id = $2", [.date(now), .int(crawl)])
        if let health {
          return try Self.completeHealth(
            db, source: source, crawl: crawl, capped: capped, router: router, firstCrawl: firstCrawl, policy: health,
            now: now)
        }
        return try Self.removeUnseenRecords(
          db, source: source, crawl: crawl, capped: capped, router: router, firstCrawl: firstCrawl, now: now)
      }
    }
    if let newest = completion?.removed.last?.id { changeBell.ring(latest: newest) }
    return completion
  }

  /// How many entries of `crawl` are queued and claimed: two counts of the
  /// partial indexes of those entries (`frontier_queued`,
  /// `frontier_claimed_by_lease`), where ``frontierCounts(crawl:)`` reads
  /// every entry of the crawl (6 ms at 10,000 entries against 0.1, asked by
  /// each worker of a fleet whose claim came back empty).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public nonisolated func pendingCounts(crawl: Int64) async throws -> FrontierCounts {
    // On the second connection, as claims (see `frontierCounts`).
    try await side.perform(transaction: false) { db in
      let result = try db.query(
        """
        SELECT (SELECT count(*) FROM frontier WHERE crawl = $1 AND state = 'queued'),
          (SELECT count(*) FROM frontier WHERE crawl = $1 AND state = 'claimed')
        """, [.int(crawl)])
      return FrontierCounts(queued: result.int(0, 0), claimed: result.int(0, 1))
    }
  }

  /// How many entries of `crawl` are in each state.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public nonisolated func frontierCounts(crawl: Int64) async throws -> FrontierCounts {
    // On the second connection, as claims: a fleet's empty claim reads the
    // counts next, and must not wait behind a commit.
    try await side.perform(transaction: false) { db in
      let result = try db.query("SELECT state, count(*) FROM frontier WHERE crawl = $1 GROUP BY state", [.int(crawl)])
      var counts = FrontierCounts()
      for row in 0..<result.count {
        let count = result.int(row, 1)
        switch result.string(row, 0) {
        case "queued": counts.queued = count
        case "claimed": counts.claimed = count
        case "done": counts.done = count
        case "failed": counts.failed = count
        default: break
        }
      }
      return counts
    }
  }

  static func sourceHasCompletedCrawl(_ db: PostgresConnection, _ source: String) throws -> Bool {
    try db.query(
      "SELECT EXISTS (SELECT 1 FROM crawls WHERE source = $1 AND completed_at IS NOT NULL)", [.text(source)]
    ).bool(0, 0)
  }

  /// Records a completed crawl of `source` did not see again: each gets its
  /// `removed_at` and a `removed` change (`RecordRules.removes` decides
  /// which, over the current records this crawl did not see, read locked).
  static func removeUnseenRecords(
    _ db: PostgresConnection, source: String, crawl: Int64, capped: Bool, router: (any ChangeRouter)?,
    firstCrawl: Bool, now: Date
  ) throws -> CrawlCompletion {
    let nowMS = milliseconds(now)
    // Two reads: the candidates' flags for the rule, unlocked and without
    // their fields (a recrawl answered 304 leaves nearly every record of the
    // source a candidate, and locking them all was most of the server's time
    // per page); then the ones the rule removes, locked, with their fields,
    // the rule asked again over what the lock shows. Joins on the unique
    // keys, not EXISTS: on a store without statistics yet (a fleet's first
    // recrawl) the planner ran the frontier's EXISTS through the claim-order
    // index, a scan of the crawl's done entries per record.
    func select(_ fields: String, _ more: String) -> String {
      """
      SELECT r.id, r.key, r.url, \(fields), r.seen_crawl,
        coalesce(p.kept_crawl = $2, false), coalesce(f.state = 'done', false)
      FROM records r
      LEFT JOIN pages p ON p.fingerprint = r.page
      LEFT JOIN frontier f ON f.crawl = $2 AND f.fingerprint = r.page
      WHERE r.source = $1 AND r.removed_at IS NULL AND r.seen_crawl < $2 \(more)
      """
    }
    func candidates(_ rows: PostgresResult, fields: Bool) -> [RecordRules.RemovalCandidate] {
      rows.rows {
        RecordRules.RemovalCandidate(
          id: rows.int64($0, 0), key: rows.string($0, 1), url: rows.string($0, 2),
          fields: fields ? rows.string($0, 3) : "", removed: false, seenCrawl: rows.optionalInt64($0, 4),
          pageKept: rows.bool($0, 5), pageFetched: rows.bool($0, 6))
      }
    }
    let unlocked = try db.query(
      select("''", "ORDER BY r.id"), [.text(source), .int(crawl)])
    let chosen = candidates(unlocked, fields: false).filter { RecordRules.removes($0, crawl: crawl, capped: capped) }
    guard !chosen.isEmpty else { return CrawlCompletion() }
    let locked = try db.query(
      select("r.fields", "AND r.id = ANY($3::bigint[]) ORDER BY r.id FOR UPDATE OF r"),
      [.text(source), .int(crawl), .text(arrayLiteral(chosen.map { String($0.id) }))])
    let candidates = candidates(locked, fields: true)
    let removals = RecordRules.removals(
      candidates, source: source, crawl: crawl, capped: capped, router: router, firstCrawl: firstCrawl,
      now: date(nowMS))
    guard !removals.isEmpty else { return CrawlCompletion() }
    try db.query(
      "UPDATE records SET removed_at = $1 WHERE id = ANY($2::bigint[])",
      [.int(nowMS), .text(arrayLiteral(removals.map { String($0.id) }))])
    let changes = try writeChanges(db, removals.map(\.change.change))
    let notifications = try writeOutbox(db, zip(changes, removals).map { ($0, $1.change.channels) })
    return CrawlCompletion(removed: changes, notifications: notifications)
  }
}
#endif

#if Postgres
extension PostgresStore {
  /// The number of frontier rows of `crawl`, from the crawl's counter.
  func frontierSize(crawl: Int64) async throws -> Int {
    try await run(transaction: false) { db in
      let row = try db.query("SELECT frontier_size FROM crawls WHERE id = $1", [.int(crawl)])
      guard row.count > 0 else { throw StoreError.notFound("crawl with id \(crawl)") }
      return row.int(0, 0)
    }
  }
}
#endif

