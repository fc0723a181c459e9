#if Postgres
import Foundation
import ForageStore

extension PostgresStore {
  // MARK: The outbox

  static let notificationColumns =
    "o.id, o.message_id, o.channel, o.state, o.attempts, o.created_at, o.next_at, o.last_error, "
    + "c.id, c.source, c.key, c.kind, c.url, c.before, c.after, c.at, c.run, c.changed_fields, o.event, " + episodeColumns

  /// The change or the episode an outbox row `o` tells of, joined.
  static let notificationJoins =
    "LEFT JOIN changes c ON c.id = o.change LEFT JOIN health_episodes e ON e.id = o.episode"

  static func notification(_ r: PostgresResult, _ row: Int) -> OutboxNotification {
    var event: SourceEvent?
    let change: RecordChange
    if let kind = r.optionalString(row, 18).flatMap(SourceEvent.Kind.init(rawValue:)) {
      let episode = episode(r, row, offset: 19)
      event = SourceEvent(kind: kind, episode: episode)
      change = RecordChange(
        id: 0, source: episode.source, key: kind.rawValue, kind: .changed, url: episode.examples.first ?? "",
        beforeJSON: nil, afterJSON: nil,
        at: kind == .unhealthy ? episode.startedAt : episode.endedAt ?? episode.startedAt, run: nil)
    } else {
      change = Self.change(r, row, offset: 8)
    }
    return OutboxNotification(
      id: r.int64(row, 0), messageID: r.string(row, 1), channel: r.string(row, 2),
      state: NotificationState(rawValue: r.string(row, 3)) ?? .pending, attempts: r.int(row, 4),
      createdAt: r.date(row, 5), nextAttemptAt: r.date(row, 6), lastError: r.optionalString(row, 7),
      change: change, event: event)
  }

  /// Claims up to `limit` due notifications under `lease`, oldest first; rows
  /// another worker is claiming are skipped, so each is delivered by one.
  /// The lease lasts `lease.length` on the server's clock (see `PostgresLease`).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func claimNotifications(limit: Int, lease: Lease) async throws -> [OutboxNotification] {
    try await run { db in
      let result = try db.query(
        """
        WITH picked AS (
          SELECT id FROM outbox
          WHERE state = 'pending' AND next_at <= $1
            AND (lease_until IS NULL OR lease_until <= \(PostgresLease.now("$5")))
          ORDER BY next_at, id LIMIT $2
          FOR UPDATE SKIP LOCKED
        ), claimed AS (
          UPDATE outbox SET owner = $3, lease_until = \(PostgresLease.now("$5")) + $4 FROM picked WHERE outbox.id = picked.id RETURNING outbox.*
        )
        SELECT \(Self.notificationColumns) FROM claimed o \(Self.notificationJoins)
        ORDER BY o.next_at, o.id
        """, [.date(lease.at), .int(max(0, limit)), .text(lease.owner), PostgresLease.length(lease), leaseNow(lease.at)])
      return result.rows { Self.notification(result, $0) }
    }
  }

  /// Records how an attempt ended and releases the claim.
  ///
  /// - Throws: `StoreError` of kind `.notFound` for an unknown notification.
  public func settleNotification(_ id: Int64, _ settlement: NotificationSettlement, now: Date) async throws {
    try await run { db in
      let changed: Int
      switch settlement {
      case .delivered:
        changed = try db.query(
          """
          UPDATE outbox SET state = 'delivered', attempts = attempts + 1, done_at = $1, owner = NULL,
            lease_until = NULL, last_error = NULL
          WHERE id = $2
          """, [.date(now), .int(id)]
        ).affected
      case .retry(let at, let error):
        changed = try db.query(
          """
          UPDATE outbox SET attempts = attempts + 1, next_at = $1, last_error = $3, owner = NULL, lease_until = NULL
          WHERE id = $2 AND state = 'pending'
          """, [.date(at), .int(id), .text(error)]
        ).affected
      case .dead(let error):
        changed = try db.query(
          """
          UPDATE outbox SET state = 'dead', done_at = $1, last_error = $3, owner = NULL, lease_until = NULL
          WHERE id = $2 AND state = 'pending'
          """, [.date(now), .int(id), .text(error)]
        ).affected
      }
      if changed == 0, try db.query("SELECT 1 FROM outbox WHERE id = $1", [.int(id)]).count == 0 {
        throw StoreError.notFound("notification with id \(id)")
      }
    }
  }

  /// Notifications in `state` (all when nil), newest first.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func notifications(state: NotificationState?, limit: Int) async throws -> [OutboxNotification] {
    try await run(transaction: false) { db in
      let result = try db.query(
        """
        SELECT \(Self.notificationColumns) FROM outbox o \(Self.notificationJoins)
        WHERE $1::text IS NULL OR o.state = $1 ORDER BY o.id DESC LIMIT $2
        """, [.string(state?.rawValue), .int(max(0, limit))])
      return result.rows { Self.notification(result, $0) }
    }
  }

  /// How many notifications are in each state at `now`.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func notificationCounts(now: Date) async throws -> NotificationCounts {
    try await run(transaction: false) { db in
      let r = try db.query(
        """
        SELECT
          count(*) FILTER (WHERE state = 'pending'),
          count(*) FILTER (WHERE state = 'delivered'),
          count(*) FILTER (WHERE state = 'dead'),
          count(*) FILTER (WHERE state = 'pending' AND next_at <= $1),
          min(next_at) FILTER (WHERE state = 'pending'),
          count(*) FILTER (WHERE state = 'pending' AND attempts > 0)
        FROM outbox
        """, [.date(now)])
      var counts = NotificationCounts()
      counts.pending = r.int(0, 0)
      counts.delivered = r.int(0, 1)
      counts.dead = r.int(0, 2)
      counts.due = r.int(0, 3)
      counts.nextAttemptAt = r.optionalDate(0, 4)
      counts.retrying = r.int(0, 5)
      return counts
    }
  }

  /// The channels a receiver turned off, by name.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func disabledChannels() async throws -> [DisabledChannel] {
    try await run(transaction: false) { db in
      let r = try db.query("SELECT name, target, reason, at FROM disabled_channels ORDER BY name")
      return r.rows {
        DisabledChannel(name: r.string($0, 0), target: r.string($0, 1), reason: r.string($0, 2), at: r.date($0, 3))
      }
    }
  }

  /// Turns a channel off, or on again when `channel` is nil.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func setDisabledChannel(_ channel: DisabledChannel?, name: String) async throws {
    try await run(transaction: false) { db in
      if let channel {
        try db.query(
          """
          INSERT INTO disabled_channels (name, target, reason, at) VALUES ($1, $2, $3, $4)
          ON CONFLICT (name) DO UPDATE SET target = excluded.target, reason = excluded.reason, at = excluded.at
          """, [.text(name), .text(channel.target), .text(channel.reason), .date(channel.at)])
      } else {
        try db.query("DELETE FROM disabled_channels WHERE name = $1", [.text(name)])
      }
    }
  }

  // MARK: Task runs

  /// Records the start of a run of `task` over `sources`; returns its id.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func beginRun(task: String, sources: [String], startedAt: Date) async throws -> Int64 {
    let json = String(decoding: try JSONEncoder().encode(sources), as: UTF8.self)
    return try await run(transaction: false) { db in
      try db.query(
        "INSERT INTO runs (task, sources, started_at) VALUES ($1, $2, $3) RETURNING id",
        [.text(task), .text(json), .date(startedAt)]
      ).int64(0, 0)
    }
  }

  /// Records the end of run `id` with its totals.
  ///
  /// - Throws: `StoreError` of kind `.notFound` for an unknown run.
  public func finishRun(_ id: Int64, summary: RunSummary) async throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    encoder.dateEncodingStrategy = .millisecondsSince1970
    let json = String(decoding: try encoder.encode(summary), as: UTF8.self)
    let changed = try await run(transaction: false) { db in
      try db.query(
        "UPDATE runs SET finished_at = $1, summary = $2 WHERE id = $3",
        [.date(summary.finishedAt ?? Date()), .text(json), .int(id)]
      ).affected
    }
    if changed == 0 { throw StoreError.notFound("run with id \(id)") }
  }

  /// Records the running totals of unfinished run `id` (its `summary`
  /// column while `finished_at` is empty); a finished run is left alone.
  ///
  /// - Throws: `StoreError` when the statement fails.
  public func recordRunProgress(_ id: Int64, summary: RunSummary) async throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    encoder.dateEncodingStrategy = .millisecondsSince1970
    let json = String(decoding: try encoder.encode(summary), as: UTF8.self)
    _ = try await run(transaction: false) { db in
      try db.query(
        "UPDATE runs SET summary = $1 WHERE id = $2 AND finished_at IS NULL", [.text(json), .int(id)]
      ).affected
    }
  }

  /// The `limit` most recent runs, newest first.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func runs(limit: Int) async throws -> [TaskRun] {
    try await run(transaction: false) { db in
      let r = try db.query(
        "SELECT id, task, sources, started_at, finished_at, summary FROM runs ORDER BY id DESC LIMIT $1",
        [.int(max(0, limit))])
      let decoder = JSONDecoder()
      decoder.dateDecodingStrategy = .millisecondsSince1970
      return r.rows { row in
        let sources = (try? JSONDecoder().decode([String].self, from: Data(r.string(row, 2).utf8))) ?? []
        var summary: RunSummary?
        var progress: RunSummary?
        if let json = r.optionalString(row, 5) {
          if let finished = r.optionalDate(row, 4) {
            summary = try? decoder.decode(RunSummary.self, from: Data(json.utf8))
            summary?.finishedAt = finished
          } else {
            progress = try? decoder.decode(RunSummary.self, from: Data(json.utf8))
          }
        }
        return TaskRun(
          id: r.int64(row, 0), task: r.string(row, 1), sources: sources, startedAt: r.date(row, 3), summary: summary,
          progress: progress)
      }
    }
  }

  // MARK: robots.txt

  /// The robots.txt answer kept for `origin`, expired or not; the whole
  /// fleet reads the answer one worker fetched.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func robotsFile(origin: String) async throws -> RobotsFile? {
    try await run(transaction: false) { db in
      let r = try db.query(
        "SELECT verdict, body, fetched_at, expires_at FROM robots WHERE origin = $1", [.text(origin)])
      guard r.count > 0, let verdict = RobotsFile.Verdict(rawValue: r.string(0, 0)) else { return nil }
      return RobotsFile(
        origin: origin, verdict: verdict, body: r.bytes(0, 1), fetchedAt: r.date(0, 2), expiresAt: r.date(0, 3))
    }
  }

  /// Keeps `file` in place of its origin's earlier answer.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func keepRobotsFile(_ file: RobotsFile) async throws {
    try await run(transaction: false) { db in
      try db.query(
        """
        INSERT INTO robots (origin, verdict, body, fetched_at, expires_at) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (origin) DO UPDATE SET
          verdict = excluded.verdict, body = excluded.body,
          fetched_at = excluded.fetched_at, expires_at = excluded.expires_at
        """,
        [.text(file.origin), .text(file.verdict.rawValue), .bytes(file.body), .date(file.fetchedAt), .date(file.expiresAt)])
    }
  }

  // MARK: Pending task requests

  /// The kept pending task requests, ordered by identifier.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func pendingTaskRequests() async throws -> [PendingTaskRequest] {
    try await run(transaction: false) { db in
      let r = try db.query(
        """
        SELECT identifier, kind, earliest_begin_at, requires_network, requires_external_power, title, subtitle, strategy
        FROM pending_requests ORDER BY identifier COLLATE "C"
        """)
      return r.rows { row in
        var continued: PendingTaskRequest.Continued?
        if let title = r.optionalString(row, 5), let subtitle = r.optionalString(row, 6),
          let strategy = r.optionalString(row, 7)
        {
          continued = PendingTaskRequest.Continued(title: title, subtitle: subtitle, strategy: strategy)
        }
        return PendingTaskRequest(
          identifier: r.string(row, 0), kind: r.string(row, 1), earliestBeginDate: r.optionalDate(row, 2),
          requiresNetworkConnectivity: r.int(row, 3) != 0, requiresExternalPower: r.int(row, 4) != 0,
          continued: continued)
      }
    }
  }

  /// Replaces the kept pending task requests with `requests`, in one
  /// transaction (nothing changes when one cannot be written).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func replacePendingTaskRequests(_ requests: [PendingTaskRequest]) async throws {
    try await run { db in
      try db.query("DELETE FROM pending_requests")
      for r in requests {
        try db.query(
          """
          INSERT INTO pending_requests (identifier, kind, earliest_begin_at, requires_network,
            requires_external_power, title, subtitle, strategy)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
          """,
          [
            .text(r.identifier), .text(r.kind), .date(r.earliestBeginDate), .int(r.requiresNetworkConnectivity ? 1 : 0),
            .int(r.requiresExternalPower ? 1 : 0), .string(r.continued?.title), .string(r.continued?.subtitle),
            .string(r.continued?.strategy),
          ])
      }
    }
  }

  /// Writes `requests` over the kept requests of the same identifiers and
  /// removes `removing`, in one transaction; other identifiers' requests
  /// (another daemon's) are left alone, so daemons of a fleet never erase
  /// each other's.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func updatePendingTaskRequests(_ requests: [PendingTaskRequest], removing: [String]) async throws {
    try await run { db in
      for identifier in removing {
        try db.query("DELETE FROM pending_requests WHERE identifier = $1", [.text(identifier)])
      }
      for r in requests {
        try db.query(
          """
          INSERT INTO pending_requests (identifier, kind, earliest_begin_at, requires_network,
            requires_external_power, title, subtitle, strategy)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
          ON CONFLICT (identifier) DO UPDATE SET kind = excluded.kind,
            earliest_begin_at = excluded.earliest_begin_at, requires_network = excluded.requires_network,
            requires_external_power = excluded.requires_external_power, title = excluded.title,
            subtitle = excluded.subtitle, strategy = excluded.strategy
          """,
          [
            .text(r.identifier), .text(r.kind), .date(r.earliestBeginDate), .int(r.requiresNetworkConnectivity ? 1 : 0),
            .int(r.requiresExternalPower ? 1 : 0), .string(r.continued?.title), .string(r.continued?.subtitle),
            .string(r.continued?.strategy),
          ])
      }
    }
  }

  // MARK: Task launches

  /// True when `lease.owner` may run `task`'s launch due at `lease.at`: the
  /// task has no launch claim, or its claim is the owner's, or it has passed
  /// (on the server's clock, see `PostgresLease`). The claim then becomes
  /// `lease`, and `lease.at` is kept as the launch's due date.
  ///
  /// One statement decides: `INSERT … ON CONFLICT (task) DO UPDATE … WHERE`
  /// locks the task's row, so of several daemons asking at once exactly one
  /// is granted (the others see its claim). A claim is a lease rather than a
  /// session's advisory lock so that it outlives the launcher's connection
  /// by a known time: the daemons of a fleet reach the same due launch at
  /// slightly different moments (each keeps its own schedule), and the
  /// lease covers them all; a killed launcher's claim lapses when its lease
  /// passes, and the task's next launch is granted again (the lost launch's
  /// crawl resumes there), never blocked forever.
  ///
  /// - Throws: `StoreError` when the statement fails.
  public func claimLaunch(task: String, lease: Lease) async throws -> Bool {
    try await run(transaction: false) { db in
      try db.query(
        """
        INSERT INTO task_launches AS l (task, due, owner, lease_until)
        VALUES ($1, $2, $3, \(PostgresLease.now("$5")) + $4)
        ON CONFLICT (task) DO UPDATE SET due = excluded.due, owner = excluded.owner, lease_until = excluded.lease_until
        WHERE l.lease_until <= \(PostgresLease.now("$5")) OR l.owner = excluded.owner
        RETURNING task
        """, [.text(task), .date(lease.at), .text(lease.owner), PostgresLease.length(lease), leaseNow(lease.at)]
      ).count == 1
    }
  }
}
#endif
