#if Postgres
import Foundation
import ForageStore
import ForageSupport

extension PostgresStore {
  // MARK: A commit's coverage and held field losses

  /// Adds the extraction outcomes of `pages` to their crawls' coverage, in
  /// one statement (rows in crawl and field order, so two workers' commits
  /// lock them in the same order).
  static func writeCoverage(_ db: PostgresConnection, _ pages: [PageCommit]) throws {
    guard let statement = coverageStatement(pages) else { return }
    try db.query(statement.sql, statement.params)
  }

  /// The upsert of ``writeCoverage(_:_:)``; nil when `pages` gave no coverage.
  static func coverageStatement(_ pages: [PageCommit]) -> Statement? {
    let rows = Coverage.rows(of: pages).sorted { ($0.crawl, $0.field) < ($1.crawl, $1.field) }
    guard !rows.isEmpty else { return nil }
    func column(_ value: (CoverageRow) -> String) -> PostgresValue { .text(arrayLiteral(rows.map(value))) }
    return (
      """
      INSERT INTO crawl_fields (crawl, field, records, present, missing, empty)
      SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])
      ON CONFLICT (crawl, field) DO UPDATE SET records = crawl_fields.records + excluded.records,
        present = crawl_fields.present + excluded.present, missing = crawl_fields.missing + excluded.missing,
        empty = crawl_fields.empty + excluded.empty
      """,
      [
        column { String($0.crawl) }, column { quoted($0.field) }, column { String($0.records) },
        column { String($0.present) }, column { String($0.missing) }, column { String($0.empty) },
      ]
    )
  }

  /// Marks the lost pages of `pages` (see `PageExtraction.lost`) with their crawl.
  static func markLostPages(_ db: PostgresConnection, _ pages: [PageCommit]) throws {
    for statement in lostPagesStatements(pages) { try db.query(statement.sql, statement.params) }
  }

  /// The updates of ``markLostPages(_:_:)``, one per crawl in id order.
  static func lostPagesStatements(_ pages: [PageCommit]) -> [Statement] {
    var lost: [Int64: [UInt64]] = [:]
    for page in pages where page.extraction?.lost == true { lost[page.item.crawl, default: []].append(page.item.fingerprint) }
    return lost.sorted(by: { $0.key < $1.key }).map { crawl, fingerprints in
      (
        "UPDATE pages SET lost_crawl = $1 WHERE fingerprint = ANY($2::bigint[])",
        [.int(crawl), .text(arrayLiteral(fingerprints.map { String(Int64(bitPattern: $0)) }))]
      )
    }
  }

  /// Holds the planned changes that lose a collapsed field (see
  /// `HealthCommit.hold`); reads the health state only when a change loses a field.
  static func holdFieldLosses(
    _ db: PostgresConnection, _ pages: [PageCommit], plan: inout RecordPlan, stored: [RecordKey: StoredRecordRow]
  ) throws -> Int {
    try HealthCommit.hold(pages, plan: &plan, stored: stored) { source, crawl in
      (try healthyCoverage(db, source: source, before: crawl), try openEpisode(db, source: source)?.fieldSubject,
       Coverage(rows: try coverageRows(db, crawl: crawl)))
    } write: { held in
      try writeHeld(db, held, episode: nil)
    }
  }

  /// Keeps `held` in `held_changes` (a record's later hold replaces its earlier one), one statement.
  static func writeHeld(_ db: PostgresConnection, _ held: [HeldChange], episode: Int64?) throws {
    guard !held.isEmpty else { return }
    var last: [Int64: HeldChange] = [:]
    for h in held { last[h.record] = h }
    let rows = last.values.sorted { $0.record < $1.record }
    func column(_ value: (HeldChange) -> String) -> PostgresValue { .text(arrayLiteral(rows.map(value))) }
    try db.query(
      """
      INSERT INTO held_changes (record, source, key, url, kind, before, after, content_hash, crawl, episode)
      SELECT u.record, u.source, u.key, u.url, u.kind, u.before, u.after, u.hash, u.crawl, $10::bigint
      FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[],
        $9::bigint[]) AS u (record, source, key, url, kind, before, after, hash, crawl)
      ON CONFLICT (record) DO UPDATE SET url = excluded.url, kind = excluded.kind, before = excluded.before,
        after = excluded.after, content_hash = excluded.content_hash, crawl = excluded.crawl,
        episode = coalesce(excluded.episode, held_changes.episode)
      """,
      [
        column { String($0.record) }, column { quoted($0.source) }, column { quoted($0.key) },
        column { quoted($0.url) }, column { $0.kind.rawValue }, column { quoted($0.before) },
        column { $0.after.map(quoted) ?? "NULL" }, column { $0.contentHash.map { String(Int64(bitPattern: $0)) } ?? "NULL" },
        column { String($0.crawl) }, .int(episode),
      ])
  }

  static func coverageRows(_ db: PostgresConnection, crawl: Int64) throws -> [CoverageRow] {
    let r = try db.query(
      "SELECT field, records, present, missing, empty FROM crawl_fields WHERE crawl = $1", [.int(crawl)])
    return r.rows {
      CoverageRow(
        crawl: crawl, field: r.string($0, 0), records: r.int($0, 1), present: r.int($0, 2), missing: r.int($0, 3),
        empty: r.int($0, 4))
    }
  }

  /// The coverage of the last crawl of `source` before `crawl` that
  /// completed healthy and read records; nil when none did.
  static func healthyCoverage(_ db: PostgresConnection, source: String, before crawl: Int64) throws -> Coverage? {
    let r = try db.query(
      """
      SELECT c.id FROM crawls c JOIN crawl_fields f ON f.crawl = c.id AND f.field = ''
      WHERE c.source = $1 AND c.healthy AND c.id < $2 AND f.records > 0 ORDER BY c.id DESC LIMIT 1
      """, [.text(source), .int(crawl)])
    guard r.count > 0 else { return nil }
    return Coverage(rows: try coverageRows(db, crawl: r.int64(0, 0)))
  }

  // MARK: Completing a crawl

  /// Completes `crawl` of `source` under `policy` (see `SQLiteStore`'s), in
  /// the caller's transaction; the records removed or held are locked.
  static func completeHealth(
    _ db: PostgresConnection, source: String, crawl: Int64, capped: Bool, router: (any ChangeRouter)?,
    firstCrawl: Bool, policy: HealthPolicy, now: Date
  ) throws -> CrawlCompletion {
    let nowMS = milliseconds(now)
    // As `removeUnseenRecords`: the candidates' flags read unlocked and
    // without their fields (a recrawl answered 304 leaves nearly every
    // record a candidate), then only those the rules remove or hold are
    // read again, locked, with their fields.
    func select(_ fields: String, _ more: String) -> String {
      """
      SELECT r.id, r.key, r.url, \(fields), r.seen_crawl,
        coalesce(p.kept_crawl = $2, false), coalesce(f.state = 'done', false),
        coalesce(p.status = 404 OR p.status = 410, false), coalesce(p.lost_crawl = $2, false)
      FROM records r
      LEFT JOIN pages p ON p.fingerprint = r.page
      LEFT JOIN frontier f ON f.crawl = $2 AND f.fingerprint = r.page
      WHERE r.source = $1 AND r.removed_at IS NULL AND r.seen_crawl < $2 \(more)
      """
    }
    func read(_ r: PostgresResult, fields: Bool) -> [HealthRules.Candidate] {
      r.rows {
        HealthRules.Candidate(
          record: RecordRules.RemovalCandidate(
            id: r.int64($0, 0), key: r.string($0, 1), url: r.string($0, 2), fields: fields ? r.string($0, 3) : "",
            removed: false, seenCrawl: r.optionalInt64($0, 4), pageKept: r.bool($0, 5), pageFetched: r.bool($0, 6)),
          pageGone: r.bool($0, 7), pageLost: r.bool($0, 8))
      }
    }
    var candidates = read(try db.query(select("''", "ORDER BY r.id"), [.text(source), .int(crawl)]), fields: false)
    let current = try db.query(
      "SELECT count(*) FROM records WHERE source = $1 AND removed_at IS NULL", [.text(source)]
    ).int(0, 0)
    let coverage = Coverage(rows: try coverageRows(db, crawl: crawl))
    let healthy = try healthyCoverage(db, source: source, before: crawl)
    let open = try openEpisode(db, source: source)
    var assessment = HealthRules.assess(
      candidates, source: source, crawl: crawl, capped: capped, current: current, coverage: coverage,
      healthy: healthy, policy: policy, now: date(nowMS))
    let chosen = (assessment.remove + assessment.hold).map { String($0.id) }
    if !chosen.isEmpty {
      let locked = try db.query(
        select("r.fields", "AND r.id = ANY($3::bigint[]) ORDER BY r.id FOR UPDATE OF r"),
        [.text(source), .int(crawl), .text(arrayLiteral(chosen))])
      candidates = read(locked, fields: true)
      assessment = HealthRules.assess(
        candidates, source: source, crawl: crawl, capped: capped, current: current, coverage: coverage,
        healthy: healthy, policy: policy, now: date(nowMS))
    }
    var completion = CrawlCompletion()
    let removals = RecordRules.removals(
      assessment.remove, source: source, crawl: crawl, capped: capped, router: router, firstCrawl: firstCrawl,
      now: date(nowMS))
    if !removals.isEmpty {
      try db.query(
        "UPDATE records SET removed_at = $1 WHERE id = ANY($2::bigint[])",
        [.int(nowMS), .text(arrayLiteral(removals.map { String($0.id) }))])
      let changes = try writeChanges(db, removals.map(\.change.change))
      completion.notifications += try writeOutbox(db, zip(changes, removals).map { ($0, $1.change.channels) })
      completion.removed = changes
    }
    try db.query("UPDATE crawls SET healthy = $1 WHERE id = $2", [.bool(assessment.healthy), .int(crawl)])
    if assessment.healthy {
      try applyHeld(
        db, try heldChanges(db, source: source, crawl: crawl), router: router, firstCrawl: firstCrawl, nowMS: nowMS,
        into: &completion.released, notifications: &completion.notifications)
      if var episode = open {
        try db.query("DELETE FROM held_changes WHERE source = $1", [.text(source)])
        episode = try endEpisode(db, episode, .recovered, crawl: crawl, nowMS: nowMS)
        completion.notifications += try enqueueEvent(db, .recovered, episode: episode, router: router, nowMS: nowMS)
        completion.episode = episode
      }
      return completion
    }
    var episode: HealthEpisode
    if let open {
      episode = open
    } else {
      episode = assessment.opens ?? HealthEpisode(
        id: 0, source: source, kind: .removals, subject: policy.recordSelector ?? "the source's records",
        before: current, beforeTotal: current, now: current, nowTotal: current, examples: [], startedAt: date(nowMS),
        startCrawl: crawl)
      if episode.examples.isEmpty {
        episode.examples = Array(Set(try heldChanges(db, source: source, crawl: crawl).map(\.url))).sorted()
          .prefix(3).map { $0 }
      }
      episode.id = try db.query(
        """
        INSERT INTO health_episodes
          (source, kind, subject, before, before_total, now, now_total, examples, crawl, started_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id
        """,
        [
          .text(episode.source), .text(episode.kind.rawValue), .text(episode.subject), .int(episode.before),
          .int(episode.beforeTotal), .int(episode.now), .int(episode.nowTotal),
          .text(episode.examples.joined(separator: "\n")), .int(crawl), .int(milliseconds(episode.startedAt)),
        ]
      ).int64(0, 0)
      completion.notifications += try enqueueEvent(db, .unhealthy, episode: episode, router: router, nowMS: nowMS)
      completion.episode = episode
    }
    try writeHeld(
      db,
      assessment.hold.map {
        HeldChange(
          record: $0.id, source: source, key: $0.key, url: $0.url, kind: .removed, before: $0.fields, after: nil,
          contentHash: nil, crawl: crawl)
      }, episode: episode.id)
    try db.query(
      "UPDATE held_changes SET episode = $1 WHERE source = $2 AND episode IS NULL", [.int(episode.id), .text(source)])
    completion.held = assessment.hold.count
    return completion
  }

  static func heldChanges(_ db: PostgresConnection, source: String, crawl: Int64? = nil) throws -> [HeldChange] {
    let r = try db.query(
      """
      SELECT record, key, url, kind, before, after, content_hash, crawl FROM held_changes
      WHERE source = $1 AND ($2::bigint IS NULL OR crawl = $2) ORDER BY id
      """, [.text(source), .int(crawl)])
    return r.rows {
      HeldChange(
        record: r.int64($0, 0), source: source, key: r.string($0, 1), url: r.string($0, 2),
        kind: HeldChange.Kind(rawValue: r.string($0, 3)) ?? .changed, before: r.string($0, 4),
        after: r.optionalString($0, 5), contentHash: r.optionalUInt64($0, 6), crawl: r.int64($0, 7))
    }
  }

  /// Applies `held` to the records they still fit, writes their changes
  /// and notifications, and forgets them (see `SQLiteStore`'s).
  static func applyHeld(
    _ db: PostgresConnection, _ held: [HeldChange], router: (any ChangeRouter)?, firstCrawl: Bool, nowMS: Int64,
    into changes: inout [RecordChange], notifications: inout Int
  ) throws {
    guard !held.isEmpty else { return }
    let ids = arrayLiteral(held.map { String($0.record) })
    let r = try db.query(
      "SELECT id, fields FROM records WHERE id = ANY($1::bigint[]) AND removed_at IS NULL ORDER BY id FOR UPDATE",
      [.text(ids)])
    var fields: [Int64: String] = [:]
    for row in 0..<r.count { fields[r.int64(row, 0)] = r.string(row, 1) }
    try db.query("DELETE FROM held_changes WHERE record = ANY($1::bigint[])", [.text(ids)])
    var planned: [(RecordChange, HeldChange)] = []
    for h in held {
      guard let current = fields[h.record] else { continue }
      switch h.kind {
      case .removed:
        try db.query("UPDATE records SET removed_at = $1 WHERE id = $2", [.int(nowMS), .int(h.record)])
        planned.append((
          RecordChange(
            id: 0, source: h.source, key: h.key, kind: .removed, url: h.url, beforeJSON: current, afterJSON: nil,
            at: date(nowMS), run: nil), h))
      case .changed:
        guard current == h.before, let after = h.after, let hash = h.contentHash else { continue }
        try db.query(
          "UPDATE records SET fields = $1, content_hash = $2 WHERE id = $3",
          [.text(after), .bits(hash), .int(h.record)])
        planned.append((
          RecordChange(
            id: 0, source: h.source, key: h.key, kind: .changed, url: h.url, beforeJSON: current, afterJSON: after,
            at: date(nowMS), run: nil), h))
      }
    }
    let written = try writeChanges(db, planned.map(\.0))
    notifications += try writeOutbox(
      db, written.map { ($0, router?.channels(for: $0, firstCrawl: firstCrawl) ?? []) })
    changes += written
  }

  // MARK: Episodes

  static let episodeColumns =
    "e.id, e.source, e.kind, e.subject, e.before, e.before_total, e.now, e.now_total, e.examples, e.started_at, "
    + "e.ended_at, e.resolution, e.crawl, e.ended_crawl"
  /// How many columns `episodeColumns` names.
  static let episodeColumnCount = 14

  static func episode(_ r: PostgresResult, _ row: Int, offset: Int = 0, held: Int = 0) -> HealthEpisode {
    HealthEpisode(
      id: r.int64(row, offset), source: r.string(row, offset + 1),
      kind: HealthEpisode.Kind(rawValue: r.string(row, offset + 2)) ?? .removals, subject: r.string(row, offset + 3),
      before: r.int(row, offset + 4), beforeTotal: r.int(row, offset + 5), now: r.int(row, offset + 6),
      nowTotal: r.int(row, offset + 7), examples: r.string(row, offset + 8).split(separator: "\n").map(String.init),
      startedAt: r.date(row, offset + 9), startCrawl: r.int64(row, offset + 12),
      endedAt: r.optionalDate(row, offset + 10), endCrawl: r.optionalInt64(row, offset + 13),
      resolution: r.optionalString(row, offset + 11).flatMap(HealthEpisode.Resolution.init(rawValue:)), held: held)
  }

  static func openEpisode(_ db: PostgresConnection, source: String) throws -> HealthEpisode? {
    let r = try db.query(
      "SELECT \(episodeColumns) FROM health_episodes e WHERE e.source = $1 AND e.ended_at IS NULL", [.text(source)])
    return r.count > 0 ? episode(r, 0) : nil
  }

  /// Ends `e` at `crawl` (nil for an acceptance: the source's last
  /// completed crawl, which the acceptance comes after).
  static func endEpisode(
    _ db: PostgresConnection, _ e: HealthEpisode, _ resolution: HealthEpisode.Resolution, crawl: Int64?,
    nowMS: Int64
  ) throws -> HealthEpisode {
    let r = try db.query(
      """
      UPDATE health_episodes SET ended_at = $1, resolution = $2, ended_crawl = coalesce($3::BIGINT,
        (SELECT max(c.id) FROM crawls c WHERE c.source = health_episodes.source AND c.completed_at IS NOT NULL))
      WHERE id = $4 RETURNING ended_crawl
      """,
      [.int(nowMS), .text(resolution.rawValue), .int(crawl), .int(e.id)])
    var ended = e
    ended.endedAt = date(nowMS)
    ended.endCrawl = r.count > 0 ? r.optionalInt64(0, 0) : nil
    ended.resolution = resolution
    return ended
  }

  /// Writes one pending notification of a source event per channel the
  /// router names for the episode's source, in one statement; returns how many.
  static func enqueueEvent(
    _ db: PostgresConnection, _ kind: SourceEvent.Kind, episode: HealthEpisode, router: (any ChangeRouter)?,
    nowMS: Int64
  ) throws -> Int {
    let channels = router?.channels(forSourceEvent: episode.source) ?? []
    guard !channels.isEmpty else { return 0 }
    try db.query(
      """
      INSERT INTO outbox (episode, event, channel, message_id, next_at, created_at)
      SELECT $1, $2, u.channel, u.message, $3, $3 FROM unnest($4::text[], $5::text[]) AS u (channel, message)
      """,
      [
        .int(episode.id), .text(kind.rawValue), .int(nowMS), .text(arrayLiteral(channels.map(quoted))),
        .text(arrayLiteral(channels.map { _ in SQLiteStore.newMessageID() })),
      ])
    return channels.count
  }

  /// Episodes, open ones first, then the most recently ended.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func healthEpisodes(limit: Int) async throws -> [HealthEpisode] {
    try await run(transaction: false) { db in
      let r = try db.query(
        """
        SELECT \(Self.episodeColumns), (SELECT count(*) FROM held_changes h WHERE h.episode = e.id)
        FROM health_episodes e
        ORDER BY e.ended_at IS NOT NULL, coalesce(e.ended_at, e.started_at) DESC, e.id DESC LIMIT $1
        """, [.int(max(0, limit))])
      return r.rows { Self.episode(r, $0, held: r.int($0, Self.episodeColumnCount)) }
    }
  }

  /// The last `limit` crawls of `source` with a stored coverage, newest first.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func crawlHealth(source: String, limit: Int) async throws -> [CrawlHealth] {
    try await run(transaction: false) { db in
      let r = try db.query(
        """
        SELECT c.id, c.started_at, c.completed_at, CASE WHEN c.healthy THEN 1 WHEN NOT c.healthy THEN 0 END,
          f.field, f.records, f.present, f.missing, f.empty
        FROM crawls c JOIN crawl_fields f ON f.crawl = c.id
        WHERE c.id IN (
          SELECT t.crawl FROM crawl_fields t JOIN crawls s ON s.id = t.crawl
          WHERE t.field = '' AND s.source = $1 ORDER BY t.crawl DESC LIMIT $2)
        ORDER BY c.id DESC, f.field
        """, [.text(source), .int(max(0, limit))])
      let rows = r.rows {
        CrawlHealth.Row(
          crawl: r.int64($0, 0), startedAt: r.date($0, 1), completedAt: r.optionalDate($0, 2),
          healthy: r.optionalInt64($0, 3).map { $0 != 0 },
          coverage: CoverageRow(
            crawl: r.int64($0, 0), field: r.string($0, 4), records: r.int($0, 5), present: r.int($0, 6),
            missing: r.int($0, 7), empty: r.int($0, 8)))
      }
      return CrawlHealth.grouped(rows, source: source)
    }
  }

  /// Applies what `source`'s open episode holds and ends it as accepted.
  ///
  /// - Throws: `StoreError` when a statement fails (nothing is applied then).
  public func acceptHeldChanges(source: String, router: (any ChangeRouter)?, now: Date) async throws
    -> HealthAcceptance?
  {
    let nowMS = Self.milliseconds(now)
    return try await run { db in
      try Self.holdChangeOrder(db)
      let locked = try db.query(
        "SELECT id FROM health_episodes WHERE source = $1 AND ended_at IS NULL FOR UPDATE", [.text(source)])
      guard locked.count > 0, let open = try Self.openEpisode(db, source: source) else { return nil }
      var changes: [RecordChange] = []
      var notifications = 0
      try Self.applyHeld(
        db, try Self.heldChanges(db, source: source), router: router, firstCrawl: false, nowMS: nowMS,
        into: &changes, notifications: &notifications)
      let episode = try Self.endEpisode(db, open, .accepted, crawl: nil, nowMS: nowMS)
      notifications += try Self.enqueueEvent(db, .recovered, episode: episode, router: router, nowMS: nowMS)
      return HealthAcceptance(episode: episode, changes: changes, notifications: notifications)
    }
  }
}
#endif
