import Foundation
import ForageSupport

/// The tables of extraction health (see ``HealthRules``).
///
/// | table | holds | keys |
/// |---|---|---|
/// | `crawl_fields` | a crawl's running coverage: per field, records read, present, missing, empty; field `''` holds the totals (records read, pages in `present`, dropped records in `missing`, lost pages in `empty`) | `(crawl, field)` |
/// | `crawls.healthy` | 1 when the crawl completed healthy (the source's baseline), 0 when it held changes | — |
/// | `pages.lost_crawl` | the last crawl in which the page answered 2xx with markup and no selector matched (its records kept) | — |
/// | `health_episodes` | spells of held changes: source, kind, selector or field, counts before and now, example URLs, the crawl that opened it (`crawl`), start, end, resolution | `id`; one open per source |
/// | `health_episodes.ended_crawl` (v17) | the crawl that ended it: the healthy crawl of a recovery, the source's last completed crawl before an acceptance; NULL while open | — |
/// | `held_changes` | the changes an episode holds: a record's removal or its fields losing a value, with the fields before and after | `id`; UNIQUE `record` |
/// | `outbox` | `change` may be NULL: a source event's row names its `episode` and `event` (`source.unhealthy`, `source.recovered`) | — |
enum SQLiteHealthSchema {
  static let migration = """
    ALTER TABLE pages ADD COLUMN lost_crawl INTEGER;
    ALTER TABLE crawls ADD COLUMN healthy INTEGER;
    CREATE TABLE crawl_fields (
      crawl INTEGER NOT NULL,
      field TEXT NOT NULL,
      records INTEGER NOT NULL DEFAULT 0,
      present INTEGER NOT NULL DEFAULT 0,
      missing INTEGER NOT NULL DEFAULT 0,
      empty INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (crawl, field)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE health_episodes (
      id INTEGER PRIMARY KEY,
      source TEXT NOT NULL,
      kind TEXT NOT NULL,
      subject TEXT NOT NULL,
      before INTEGER NOT NULL,
      before_total INTEGER NOT NULL,
      now INTEGER NOT NULL,
      now_total INTEGER NOT NULL,
      examples TEXT NOT NULL DEFAULT '',
      crawl INTEGER NOT NULL,
      started_at INTEGER NOT NULL,
      ended_at INTEGER,
      resolution TEXT
    ) STRICT;
    CREATE UNIQUE INDEX health_episodes_open ON health_episodes (source) WHERE ended_at IS NULL;
    CREATE TABLE held_changes (
      id INTEGER PRIMARY KEY,
      record INTEGER NOT NULL UNIQUE,
      source TEXT NOT NULL,
      key TEXT NOT NULL,
      url TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind = 'removed' OR kind = 'changed'),
      before TEXT NOT NULL,
      after TEXT,
      content_hash INTEGER,
      crawl INTEGER NOT NULL,
      episode INTEGER
    ) STRICT;
    CREATE INDEX held_changes_by_source ON held_changes (source, crawl);
    CREATE TABLE outbox_health (
      id INTEGER PRIMARY KEY,
      change INTEGER REFERENCES changes (id) ON DELETE CASCADE,
      episode INTEGER REFERENCES health_episodes (id) ON DELETE CASCADE,
      event TEXT,
      channel TEXT NOT NULL,
      message_id TEXT NOT NULL UNIQUE,
      state TEXT NOT NULL DEFAULT 'pending'
        CHECK (state = 'pending' OR state = 'delivered' OR state = 'dead'),
      attempts INTEGER NOT NULL DEFAULT 0,
      next_at INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      owner TEXT,
      lease_until INTEGER,
      last_error TEXT,
      done_at INTEGER,
      CHECK (change IS NOT NULL OR episode IS NOT NULL AND event IS NOT NULL)
    ) STRICT;
    INSERT INTO outbox_health
      (id, change, channel, message_id, state, attempts, next_at, created_at, owner, lease_until, last_error, done_at)
      SELECT id, change, channel, message_id, state, attempts, next_at, created_at, owner, lease_until, last_error,
        done_at
      FROM outbox;
    DROP TABLE outbox;
    ALTER TABLE outbox_health RENAME TO outbox;
    CREATE INDEX outbox_due ON outbox (next_at) WHERE state = 'pending';
    CREATE INDEX outbox_by_change ON outbox (change);
    """

  /// v17: the crawl that ended each episode, so that a report places its
  /// end by crawl, not by date; episodes ended before it get theirs from
  /// the crawls (a recovery's first healthy crawl after the one that
  /// opened it, an acceptance's last completed crawl before it).
  static let endedCrawlMigration = """
    ALTER TABLE health_episodes ADD COLUMN ended_crawl INTEGER;
    UPDATE health_episodes SET ended_crawl = CASE resolution
      WHEN 'recovered' THEN (
        SELECT min(c.id) FROM crawls c
        WHERE c.source = health_episodes.source AND c.id > health_episodes.crawl AND c.healthy = 1)
      ELSE (
        SELECT max(c.id) FROM crawls c
        WHERE c.source = health_episodes.source AND c.completed_at IS NOT NULL
          AND c.completed_at <= health_episodes.ended_at)
      END
    WHERE ended_at IS NOT NULL;
    """
}

extension SQLiteStore {
  // MARK: A commit's coverage and held field losses

  /// Adds the extraction outcomes of `pages` to their crawls' coverage:
  /// one upsert per row of ``Coverage/rows(of:)``.
  func writeCoverage(_ pages: [PageCommit]) throws {
    let rows = Coverage.rows(of: pages)
    guard !rows.isEmpty else { return }
    let upsert = try db.statement(
      """
      INSERT INTO crawl_fields (crawl, field, records, present, missing, empty) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (crawl, field) DO UPDATE SET records = records + excluded.records,
        present = present + excluded.present, missing = missing + excluded.missing, empty = empty + excluded.empty
      """)
    for row in rows {
      try upsert.bind(row.crawl, at: 1)
      try upsert.bind(row.field, at: 2)
      try upsert.bind(row.records, at: 3)
      try upsert.bind(row.present, at: 4)
      try upsert.bind(row.missing, at: 5)
      try upsert.bind(row.empty, at: 6)
      try upsert.execute()
    }
  }

  /// Holds the planned changes that lose a field whose coverage collapsed
  /// (``HealthRules/holdsLoss(of:policy:healthy:running:openSubject:)``):
  /// each record keeps its fields (only its sighting is written) and the
  /// change is kept in `held_changes`. Reads the health state only when a
  /// change loses a field. Returns how many were held.
  func holdFieldLosses(_ pages: [PageCommit], plan: inout RecordPlan, stored: [RecordKey: StoredRecordRow]) throws
    -> Int
  {
    try HealthCommit.hold(pages, plan: &plan, stored: stored) { source, crawl in
      (try healthyCoverage(source: source, before: crawl), try openEpisode(source: source)?.fieldSubject,
       Coverage(rows: try coverageRows(crawl: crawl)))
    } write: { held in
      try writeHeld(held, episode: nil)
    }
  }

  /// Keeps `held` in `held_changes` (a record's later hold replaces its earlier one).
  private func writeHeld(_ held: [HeldChange], episode: Int64?) throws {
    let upsert = try db.statement(
      """
      INSERT INTO held_changes (record, source, key, url, kind, before, after, content_hash, crawl, episode)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (record) DO UPDATE SET url = excluded.url, kind = excluded.kind, before = excluded.before,
        after = excluded.after, content_hash = excluded.content_hash, crawl = excluded.crawl,
        episode = coalesce(excluded.episode, held_changes.episode)
      """)
    for h in held {
      try upsert.bind(h.record, at: 1)
      try upsert.bind(h.source, at: 2)
      try upsert.bind(h.key, at: 3)
      try upsert.bind(h.url, at: 4)
      try upsert.bind(h.kind.rawValue, at: 5)
      try upsert.bind(h.before, at: 6)
      try upsert.bind(h.after, at: 7)
      try upsert.bind(h.contentHash, at: 8)
      try upsert.bind(h.crawl, at: 9)
      try upsert.bind(episode, at: 10)
      try upsert.execute()
    }
  }

  /// The stored coverage rows of `crawl`.
  private func coverageRows(crawl: Int64) throws -> [CoverageRow] {
    let select = try db.statement(
      "SELECT field, records, present, missing, empty FROM crawl_fields WHERE crawl = ?")
    try select.bind(crawl, at: 1)
    return try select.rows {
      CoverageRow(
        crawl: crawl, field: $0.string(0), records: $0.int(1), present: $0.int(2), missing: $0.int(3),
        empty: $0.int(4))
    }
  }

  /// The coverage of the last crawl of `source` before `crawl` that
  /// completed healthy and read records; nil when none did.
  private func healthyCoverage(source: String, before crawl: Int64) throws -> Coverage? {
    let select = try db.statement(
      """
      SELECT c.id FROM crawls c JOIN crawl_fields f ON f.crawl = c.id AND f.field = ''
      WHERE c.source = ? AND c.healthy = 1 AND c.id < ? AND f.records > 0 ORDER BY c.id DESC LIMIT 1
      """)
    try select.bind(source, at: 1)
    try select.bind(crawl, at: 2)
    guard let id = try select.firstRow({ $0.int64(0) }) else { return nil }
    return Coverage(rows: try coverageRows(crawl: id))
  }

  // MARK: Completing a crawl

  /// Completes `crawl` of `source` under `policy`: applies, holds, opens or
  /// ends as ``HealthRules/assess(_:source:crawl:capped:current:coverage:healthy:policy:now:)``
  /// decides, in the caller's transaction.
  func completeHealth(
    source: String, crawl: Int64, capped: Bool, router: (any ChangeRouter)?, firstCrawl: Bool,
    policy: HealthPolicy, now: Date
  ) throws -> CrawlCompletion {
    let nowMS = Self.milliseconds(now)
    let select = try db.statement(
      """
      SELECT r.id, r.key, r.url, r.fields, r.seen_crawl,
        EXISTS (SELECT 1 FROM pages p WHERE p.fingerprint = r.page AND p.kept_crawl = ?2),
        EXISTS (SELECT 1 FROM frontier f WHERE f.crawl = ?2 AND f.fingerprint = r.page AND f.state = 'done'),
        EXISTS (SELECT 1 FROM pages p WHERE p.fingerprint = r.page AND (p.status = 404 OR p.status = 410)),
        EXISTS (SELECT 1 FROM pages p WHERE p.fingerprint = r.page AND p.lost_crawl = ?2)
      FROM records r
      WHERE r.source = ?1 AND r.removed_at IS NULL AND r.seen_crawl < ?2
      ORDER BY r.id
      """)
    try select.bind(source, at: 1)
    try select.bind(crawl, at: 2)
    let candidates = try select.rows {
      HealthRules.Candidate(
        record: RecordRules.RemovalCandidate(
          id: $0.int64(0), key: $0.string(1), url: $0.string(2), fields: $0.string(3), removed: false,
          seenCrawl: $0.optionalInt64(4), pageKept: $0.int(5) != 0, pageFetched: $0.int(6) != 0),
        pageGone: $0.int(7) != 0, pageLost: $0.int(8) != 0)
    }
    let count = try db.statement("SELECT count(*) FROM records WHERE source = ? AND removed_at IS NULL")
    try count.bind(source, at: 1)
    let current = try count.firstRow { $0.int(0) } ?? 0
    let coverage = Coverage(rows: try coverageRows(crawl: crawl))
    let healthy = try healthyCoverage(source: source, before: crawl)
    let open = try openEpisode(source: source)
    let assessment = HealthRules.assess(
      candidates, source: source, crawl: crawl, capped: capped, current: current, coverage: coverage,
      healthy: healthy, policy: policy, now: Self.date(nowMS))
    var completion = CrawlCompletion()
    try remove(
      assessment.remove, source: source, crawl: crawl, capped: capped, router: router, firstCrawl: firstCrawl,
      nowMS: nowMS, into: &completion)
    let mark = try db.statement("UPDATE crawls SET healthy = ? WHERE id = ?")
    try mark.bind(assessment.healthy ? 1 : 0, at: 1)
    try mark.bind(crawl, at: 2)
    try mark.execute()
    if assessment.healthy {
      // What this crawl held at commit, tentatively, is real: applied.
      try applyHeld(
        try heldChanges(source: source, crawl: crawl), router: router, firstCrawl: firstCrawl, nowMS: nowMS,
        into: &completion.released, notifications: &completion.notifications)
      if var episode = open {
        let drop = try db.statement("DELETE FROM held_changes WHERE source = ?")
        try drop.bind(source, at: 1)
        try drop.execute()
        episode = try endEpisode(episode, .recovered, crawl: crawl, nowMS: nowMS)
        completion.notifications += try enqueueEvent(.recovered, episode: episode, router: router, nowMS: nowMS)
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
        before: current, beforeTotal: current, now: current, nowTotal: current, examples: [],
        startedAt: Self.date(nowMS), startCrawl: crawl)
      if episode.examples.isEmpty {
        episode.examples = Array(Set(try heldChanges(source: source, crawl: crawl).map(\.url))).sorted()
          .prefix(3).map { $0 }
      }
      episode.id = try insertEpisode(episode, crawl: crawl)
      completion.notifications += try enqueueEvent(.unhealthy, episode: episode, router: router, nowMS: nowMS)
      completion.episode = episode
    }
    try writeHeld(
      assessment.hold.map {
        HeldChange(
          record: $0.id, source: source, key: $0.key, url: $0.url, kind: .removed, before: $0.fields, after: nil,
          contentHash: nil, crawl: crawl)
      }, episode: episode.id)
    let attach = try db.statement("UPDATE held_changes SET episode = ? WHERE source = ? AND episode IS NULL")
    try attach.bind(episode.id, at: 1)
    try attach.bind(source, at: 2)
    try attach.execute()
    completion.held = assessment.hold.count
    return completion
  }

  /// Marks `records` removed, each with a `removed` change routed through
  /// `router` (`RecordRules.removals` decides which): the one writer of
  /// removals, for completions with and without health.
  func remove(
    _ records: [RecordRules.RemovalCandidate], source: String, crawl: Int64, capped: Bool,
    router: (any ChangeRouter)?, firstCrawl: Bool, nowMS: Int64, into completion: inout CrawlCompletion
  ) throws {
    let mark = try db.statement("UPDATE records SET removed_at = ? WHERE id = ?")
    for (id, planned) in RecordRules.removals(
      records, source: source, crawl: crawl, capped: capped, router: router, firstCrawl: firstCrawl,
      now: Self.date(nowMS))
    {
      try mark.bind(nowMS, at: 1)
      try mark.bind(id, at: 2)
      try mark.execute()
      let change = try writeChange(planned.change)
      completion.removed.append(change)
      completion.notifications += try enqueue(change, channels: planned.channels, now: nowMS)
    }
  }

  /// The held changes of `source` (of `crawl` only, when given), in id order.
  private func heldChanges(source: String, crawl: Int64? = nil) throws -> [HeldChange] {
    let select = try db.statement(
      """
      SELECT record, key, url, kind, before, after, content_hash, crawl FROM held_changes
      WHERE source = ?1 AND (?2 IS NULL OR crawl = ?2) ORDER BY id
      """)
    try select.bind(source, at: 1)
    try select.bind(crawl, at: 2)
    return try select.rows {
      HeldChange(
        record: $0.int64(0), source: source, key: $0.string(1), url: $0.string(2),
        kind: HeldChange.Kind(rawValue: $0.string(3)) ?? .changed, before: $0.string(4),
        after: $0.optionalString(5), contentHash: $0.optionalUInt64(6), crawl: $0.int64(7))
    }
  }

  /// Applies `held` to the records they still fit (a removal to a current
  /// record, fields to a record whose fields are still `before`), writes
  /// their changes and notifications, and forgets them.
  private func applyHeld(
    _ held: [HeldChange], router: (any ChangeRouter)?, firstCrawl: Bool, nowMS: Int64,
    into changes: inout [RecordChange], notifications: inout Int
  ) throws {
    guard !held.isEmpty else { return }
    let read = try db.statement("SELECT fields, removed_at FROM records WHERE id = ?")
    let removeRow = try db.statement("UPDATE records SET removed_at = ? WHERE id = ?")
    let updateRow = try db.statement("UPDATE records SET fields = ?, content_hash = ? WHERE id = ?")
    let forget = try db.statement("DELETE FROM held_changes WHERE record = ?")
    for h in held {
      try read.bind(h.record, at: 1)
      let row = try read.firstRow { ($0.string(0), $0.optionalInt64(1) != nil) }
      try forget.bind(h.record, at: 1)
      try forget.execute()
      guard let (fields, removed) = row, !removed else { continue }
      let kind: ChangeKind
      switch h.kind {
      case .removed:
        try removeRow.bind(nowMS, at: 1)
        try removeRow.bind(h.record, at: 2)
        try removeRow.execute()
        kind = .removed
      case .changed:
        guard fields == h.before, let after = h.after, let hash = h.contentHash else { continue }
        try updateRow.bind(after, at: 1)
        try updateRow.bind(hash, at: 2)
        try updateRow.bind(h.record, at: 3)
        try updateRow.execute()
        kind = .changed
      }
      let change = try writeChange(
        RecordChange(
          id: 0, source: h.source, key: h.key, kind: kind, url: h.url, beforeJSON: fields,
          afterJSON: kind == .removed ? nil : h.after, at: Self.date(nowMS), run: nil))
      changes.append(change)
      notifications += try enqueue(
        change, channels: router?.channels(for: change, firstCrawl: firstCrawl) ?? [], now: nowMS)
    }
  }

  // MARK: Episodes

  static let episodeColumns =
    "e.id, e.source, e.kind, e.subject, e.before, e.before_total, e.now, e.now_total, e.examples, e.started_at, "
    + "e.ended_at, e.resolution, e.crawl, e.ended_crawl"
  /// How many columns `episodeColumns` names.
  static let episodeColumnCount: Int32 = 14

  /// An episode from a row of `episodeColumns` starting at column `offset`.
  static func episode(from row: SQLiteStatement, offset: Int32 = 0, held: Int = 0) -> HealthEpisode {
    HealthEpisode(
      id: row.int64(offset), source: row.string(offset + 1),
      kind: HealthEpisode.Kind(rawValue: row.string(offset + 2)) ?? .removals, subject: row.string(offset + 3),
      before: row.int(offset + 4), beforeTotal: row.int(offset + 5), now: row.int(offset + 6),
      nowTotal: row.int(offset + 7), examples: row.string(offset + 8).split(separator: "\n").map(String.init),
      startedAt: date(row.int64(offset + 9)), startCrawl: row.int64(offset + 12),
      endedAt: row.optionalInt64(offset + 10).map(date), endCrawl: row.optionalInt64(offset + 13),
      resolution: row.optionalString(offset + 11).flatMap(HealthEpisode.Resolution.init(rawValue:)), held: held)
  }

  private func openEpisode(source: String) throws -> HealthEpisode? {
    let select = try db.statement(
      "SELECT \(Self.episodeColumns) FROM health_episodes e WHERE e.source = ? AND e.ended_at IS NULL")
    try select.bind(source, at: 1)
    return try select.firstRow { Self.episode(from: $0) }
  }

  private func insertEpisode(_ e: HealthEpisode, crawl: Int64) throws -> Int64 {
    let insert = try db.statement(
      """
      INSERT INTO health_episodes
        (source, kind, subject, before, before_total, now, now_total, examples, crawl, started_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      """)
    try insert.bind(e.source, at: 1)
    try insert.bind(e.kind.rawValue, at: 2)
    try insert.bind(e.subject, at: 3)
    try insert.bind(e.before, at: 4)
    try insert.bind(e.beforeTotal, at: 5)
    try insert.bind(e.now, at: 6)
    try insert.bind(e.nowTotal, at: 7)
    try insert.bind(e.examples.joined(separator: "\n"), at: 8)
    try insert.bind(crawl, at: 9)
    try insert.bind(Self.milliseconds(e.startedAt), at: 10)
    try insert.execute()
    return db.lastInsertRowID
  }

  /// Ends `e` at `crawl` (nil for an acceptance: the source's last
  /// completed crawl, which the acceptance comes after).
  private func endEpisode(_ e: HealthEpisode, _ resolution: HealthEpisode.Resolution, crawl: Int64?, nowMS: Int64)
    throws -> HealthEpisode
  {
    var endCrawl = crawl
    if endCrawl == nil {
      let last = try db.statement("SELECT max(id) FROM crawls WHERE source = ? AND completed_at IS NOT NULL")
      try last.bind(e.source, at: 1)
      endCrawl = try last.firstRow { $0.optionalInt64(0) } ?? nil
    }
    let update = try db.statement(
      "UPDATE health_episodes SET ended_at = ?, resolution = ?, ended_crawl = ? WHERE id = ?")
    try update.bind(nowMS, at: 1)
    try update.bind(resolution.rawValue, at: 2)
    try update.bind(endCrawl, at: 3)
    try update.bind(e.id, at: 4)
    try update.execute()
    var ended = e
    ended.endedAt = Self.date(nowMS)
    ended.endCrawl = endCrawl
    ended.resolution = resolution
    return ended
  }

  /// Writes one pending notification of a source event per channel the
  /// router names for the episode's source; returns how many.
  private func enqueueEvent(
    _ kind: SourceEvent.Kind, episode: HealthEpisode, router: (any ChangeRouter)?, nowMS: Int64
  ) throws -> Int {
    let channels = router?.channels(forSourceEvent: episode.source) ?? []
    guard !channels.isEmpty else { return 0 }
    let insert = try db.statement(
      "INSERT INTO outbox (episode, event, channel, message_id, next_at, created_at) VALUES (?, ?, ?, ?, ?, ?)")
    for channel in channels {
      try insert.bind(episode.id, at: 1)
      try insert.bind(kind.rawValue, at: 2)
      try insert.bind(channel, at: 3)
      try insert.bind(Self.newMessageID(), at: 4)
      try insert.bind(nowMS, at: 5)
      try insert.bind(nowMS, at: 6)
      try insert.execute()
    }
    return channels.count
  }

  /// Episodes, open ones first, then the most recently ended.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func healthEpisodes(limit: Int) async throws -> [HealthEpisode] {
    let select = try db.statement(
      """
      SELECT \(Self.episodeColumns), (SELECT count(*) FROM held_changes h WHERE h.episode = e.id)
      FROM health_episodes e ORDER BY e.ended_at IS NOT NULL, coalesce(e.ended_at, e.started_at) DESC, e.id DESC
      LIMIT ?
      """)
    try select.bind(max(0, limit), at: 1)
    return try select.rows { Self.episode(from: $0, held: $0.int(Self.episodeColumnCount)) }
  }

  /// The last `limit` crawls of `source` with a stored coverage, newest first.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func crawlHealth(source: String, limit: Int) async throws -> [CrawlHealth] {
    let select = try db.statement(
      """
      SELECT c.id, c.started_at, c.completed_at, c.healthy, f.field, f.records, f.present, f.missing, f.empty
      FROM crawls c JOIN crawl_fields f ON f.crawl = c.id
      WHERE c.id IN (
        SELECT t.crawl FROM crawl_fields t JOIN crawls s ON s.id = t.crawl
        WHERE t.field = '' AND s.source = ?1 ORDER BY t.crawl DESC LIMIT ?2)
      ORDER BY c.id DESC, f.field
      """)
    try select.bind(source, at: 1)
    try select.bind(max(0, limit), at: 2)
    let rows = try select.rows {
      CrawlHealth.Row(
        crawl: $0.int64(0), startedAt: Self.date($0.int64(1)), completedAt: $0.optionalInt64(2).map(Self.date),
        healthy: $0.optionalInt64(3).map { $0 != 0 },
        coverage: CoverageRow(
          crawl: $0.int64(0), field: $0.string(4), records: $0.int(5), present: $0.int(6), missing: $0.int(7),
          empty: $0.int(8)))
    }
    return CrawlHealth.grouped(rows, source: source)
  }

  /// Applies what `source`'s open episode holds and ends it as accepted.
  ///
  /// - Throws: `StoreError` when a statement fails (nothing is applied then).
  public func acceptHeldChanges(source: String, router: (any ChangeRouter)?, now: Date) async throws
    -> HealthAcceptance?
  {
    let db = self.db
    let nowMS = Self.milliseconds(now)
    return try db.transaction { () throws -> HealthAcceptance? in
      guard let open = try openEpisode(source: source) else { return nil }
      var changes: [RecordChange] = []
      var notifications = 0
      try applyHeld(
        try heldChanges(source: source), router: router, firstCrawl: false, nowMS: nowMS, into: &changes,
        notifications: &notifications)
      let episode = try endEpisode(open, .accepted, crawl: nil, nowMS: nowMS)
      notifications += try enqueueEvent(.recovered, episode: episode, router: router, nowMS: nowMS)
      return HealthAcceptance(episode: episode, changes: changes, notifications: notifications)
    }
  }
}

extension HealthEpisode {
  /// The subject of an open field episode (whose field's losses are held); nil for other kinds.
  package var fieldSubject: String? { kind == .field ? subject : nil }
}
