import Foundation
import ForageSupport

extension SQLiteStore {
  // MARK: Changes

  static let changeColumns = "id, source, key, kind, url, before, after, at, run, changed_fields"

  /// A change from a row of `changeColumns` starting at column `offset`.
  static func change(from row: SQLiteStatement, offset: Int32 = 0) -> RecordChange {
    RecordChange(
      id: row.int64(offset), source: row.string(offset + 1), key: row.string(offset + 2),
      kind: ChangeKind(rawValue: row.string(offset + 3)) ?? .changed, url: row.string(offset + 4),
      beforeJSON: row.optionalString(offset + 5), afterJSON: row.optionalString(offset + 6),
      at: date(row.int64(offset + 7)), run: row.optionalInt64(offset + 8),
      changedFields: row.optionalString(offset + 9).flatMap(ChangedFields.decode))
  }

  /// Changes matching `query`, newest first.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func changes(matching query: ChangeQuery) async throws -> [RecordChange] {
    var conditions: [String] = []
    var bindings: [(SQLiteStatement, Int32) throws -> Void] = []
    if let source = query.source {
      conditions.append("source = ?")
      bindings.append { try $0.bind(source, at: $1) }
    }
    if !query.kinds.isEmpty {
      let kinds = ChangeKind.allCases.filter(query.kinds.contains)
      conditions.append("(" + kinds.map { _ in "kind = ?" }.joined(separator: " OR ") + ")")
      for kind in kinds { bindings.append { try $0.bind(kind.rawValue, at: $1) } }
    }
    if let since = query.since {
      conditions.append("at >= ?")
      bindings.append { try $0.bind(Self.milliseconds(since), at: $1) }
    }
    if let before = query.beforeID {
      conditions.append("id < ?")
      bindings.append { try $0.bind(before, at: $1) }
    }
    let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    let select = try db.statement(
      "SELECT \(Self.changeColumns) FROM changes \(filter) ORDER BY id DESC LIMIT ?")
    var index: Int32 = 1
    for bind in bindings {
      try bind(select, index)
      index += 1
    }
    try select.bind(max(0, query.limit), at: index)
    return try select.rows { Self.change(from: $0) }
  }

  /// Drops changes past each named source's retention: beyond the newest
  /// `keep` of each record, or older than `maxAge`, unless a notification of
  /// theirs is still pending (it needs the change to be sent) or a record
  /// sink delivered to within the retention's `sinkHold` has not applied it
  /// yet (it is after the sink's cursor). Their delivered and dead
  /// notifications go with them.
  ///
  /// - Throws: `StoreError` when a statement fails (nothing is dropped then).
  public func pruneHistory(_ retention: [String: HistoryRetention], now: Date) async throws -> Int {
    let db = self.db
    let nowMS = Self.milliseconds(now)
    return try db.transaction {
      var dropped = 0
      let keepPending = "AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.change = changes.id AND o.state = 'pending')"
      let keepUnapplied =
        "AND id <= (SELECT coalesce(min(change), 9223372036854775807) FROM sink_cursors WHERE updated_at >= ?3)"
      for (source, rule) in retention.sorted(by: { $0.key < $1.key }) {
        if let maxAge = rule.maxAge {
          let cutoff = nowMS - maxAge.milliseconds
          let delete = try db.statement(
            "DELETE FROM changes WHERE source = ?1 AND at < ?2 \(keepPending) \(keepUnapplied) RETURNING id")
          try delete.bind(source, at: 1)
          try delete.bind(cutoff, at: 2)
          try delete.bind(rule.sinkHoldCutoff(nowMS: nowMS), at: 3)
          dropped += try markPruned(delete, source: source)
        }
        if let keep = rule.keep {
          let delete = try db.statement(
            """
            DELETE FROM changes WHERE id IN (
              SELECT id FROM (
                SELECT id, row_number() OVER (PARTITION BY key ORDER BY id DESC) AS newer
                FROM changes WHERE source = ?1)
              WHERE newer > ?2)
            \(keepPending) \(keepUnapplied)
            RETURNING id
            """)
          try delete.bind(source, at: 1)
          try delete.bind(keep, at: 2)
          try delete.bind(rule.sinkHoldCutoff(nowMS: nowMS), at: 3)
          dropped += try markPruned(delete, source: source)
        }
      }
      return dropped
    }
  }

  /// Runs a bound `DELETE … RETURNING id` of `source`'s changes, raises the
  /// source's pruned mark (`history_pruned`) to the highest id it dropped,
  /// and returns how many it dropped.
  private func markPruned(_ delete: SQLiteStatement, source: String) throws -> Int {
    defer { delete.reset() }
    var count = 0
    var highest: Int64 = 0
    while try delete.step() {
      count += 1
      highest = max(highest, delete.int64(0))
    }
    guard count > 0 else { return 0 }
    let mark = try db.statement(
      """
      INSERT INTO history_pruned (source, through) VALUES (?, ?)
      ON CONFLICT (source) DO UPDATE SET through = max(through, excluded.through)
      """)
    try mark.bind(source, at: 1)
    try mark.bind(highest, at: 2)
    try mark.execute()
    return count
  }

  // MARK: The outbox

  /// Writes one pending notification of `change` per channel; returns how many.
  func enqueue(_ change: RecordChange, channels: [String], now: Int64) throws -> Int {
    guard !channels.isEmpty else { return 0 }
    let insert = try db.statement(
      "INSERT INTO outbox (change, channel, message_id, next_at, created_at) VALUES (?, ?, ?, ?, ?)")
    for channel in channels {
      try insert.bind(change.id, at: 1)
      try insert.bind(channel, at: 2)
      try insert.bind(Self.newMessageID(), at: 3)
      try insert.bind(now, at: 4)
      try insert.bind(now, at: 5)
      try insert.execute()
    }
    return channels.count
  }

  /// A fresh idempotency key: `msg_` and 128 random bits in hex, unique
  /// across stores (receivers drop duplicates by it).
  package static func newMessageID() -> String {
    var generator = SystemRandomNumberGenerator()
    let high = generator.next() as UInt64
    let low = generator.next() as UInt64
    func hex(_ v: UInt64) -> String {
      let digits = String(v, radix: 16)
      return String(repeating: "0", count: 16 - digits.count) + digits
    }
    return "msg_" + hex(high) + hex(low)
  }

  static let notificationColumns =
    "o.id, o.message_id, o.channel, o.state, o.attempts, o.created_at, o.next_at, o.last_error, "
    + "c.id, c.source, c.key, c.kind, c.url, c.before, c.after, c.at, c.run, c.changed_fields, o.event, " + episodeColumns

  /// The outbox joined to the change or the episode each row tells of.
  static let notificationTables =
    "outbox o LEFT JOIN changes c ON c.id = o.change LEFT JOIN health_episodes e ON e.id = o.episode"

  static func notification(from row: SQLiteStatement) -> OutboxNotification {
    var event: SourceEvent?
    var change: RecordChange
    if let kind = row.optionalString(18).flatMap(SourceEvent.Kind.init(rawValue:)) {
      let episode = Self.episode(from: row, offset: 19)
      event = SourceEvent(kind: kind, episode: episode)
      change = RecordChange(
        id: 0, source: episode.source, key: kind.rawValue, kind: .changed, url: episode.examples.first ?? "",
        beforeJSON: nil, afterJSON: nil, at: kind == .unhealthy ? episode.startedAt : episode.endedAt ?? episode.startedAt,
        run: nil)
    } else {
      change = Self.change(from: row, offset: 8)
    }
    return OutboxNotification(
      id: row.int64(0), messageID: row.string(1), channel: row.string(2),
      state: NotificationState(rawValue: row.string(3)) ?? .pending, attempts: row.int(4),
      createdAt: date(row.int64(5)), nextAttemptAt: date(row.int64(6)), lastError: row.optionalString(7),
      change: change, event: event)
  }

  /// Claims up to `limit` due notifications under `lease`, oldest first.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func claimNotifications(limit: Int, lease: Lease) async throws -> [OutboxNotification] {
    let db = self.db
    let nowMS = Self.milliseconds(lease.at)
    return try db.transaction {
      let select = try db.statement(
        """
        SELECT \(Self.notificationColumns) FROM \(Self.notificationTables)
        WHERE o.state = 'pending' AND o.next_at <= ?1 AND (o.lease_until IS NULL OR o.lease_until <= ?1)
        ORDER BY o.next_at, o.id LIMIT ?2
        """)
      try select.bind(nowMS, at: 1)
      try select.bind(max(0, limit), at: 2)
      let due = try select.rows { Self.notification(from: $0) }
      let claim = try db.statement("UPDATE outbox SET owner = ?, lease_until = ? WHERE id = ?")
      for n in due {
        try claim.bind(lease.owner, at: 1)
        try claim.bind(nowMS + lease.milliseconds, at: 2)
        try claim.bind(n.id, at: 3)
        try claim.execute()
      }
      return due
    }
  }

  /// Records how an attempt ended and releases the claim.
  ///
  /// - Throws: `StoreError` of kind `.notFound` for an unknown notification.
  public func settleNotification(_ id: Int64, _ settlement: NotificationSettlement, now: Date) async throws {
    let nowMS = Self.milliseconds(now)
    let update: SQLiteStatement
    switch settlement {
    case .delivered:
      update = try db.statement(
        """
        UPDATE outbox SET state = 'delivered', attempts = attempts + 1, done_at = ?1, owner = NULL,
          lease_until = NULL, last_error = NULL
        WHERE id = ?2
        """)
      try update.bind(nowMS, at: 1)
    case .retry(let at, let error):
      update = try db.statement(
        """
        UPDATE outbox SET attempts = attempts + 1, next_at = ?1, last_error = ?3, owner = NULL, lease_until = NULL
        WHERE id = ?2 AND state = 'pending'
        """)
      try update.bind(Self.milliseconds(at), at: 1)
      try update.bind(error, at: 3)
    case .dead(let error):
      update = try db.statement(
        """
        UPDATE outbox SET state = 'dead', done_at = ?1, last_error = ?3, owner = NULL, lease_until = NULL
        WHERE id = ?2 AND state = 'pending'
        """)
      try update.bind(nowMS, at: 1)
      try update.bind(error, at: 3)
    }
    try update.bind(id, at: 2)
    try update.execute()
    if db.changes == 0 {
      let exists = try db.statement("SELECT 1 FROM outbox WHERE id = ?")
      try exists.bind(id, at: 1)
      if try exists.firstRow({ _ in true }) == nil { throw StoreError.notFound("notification with id \(id)") }
    }
  }

  /// Notifications in `state` (all when nil), newest first.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func notifications(state: NotificationState?, limit: Int) async throws -> [OutboxNotification] {
    let filter = state == nil ? "" : "WHERE o.state = ?1"
    let select = try db.statement(
      """
      SELECT \(Self.notificationColumns) FROM \(Self.notificationTables)
      \(filter) ORDER BY o.id DESC LIMIT ?2
      """)
    if let state { try select.bind(state.rawValue, at: 1) }
    try select.bind(max(0, limit), at: 2)
    return try select.rows { Self.notification(from: $0) }
  }

  /// How many notifications are in each state at `now`.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func notificationCounts(now: Date) async throws -> NotificationCounts {
    let select = try db.statement(
      """
      SELECT
        count(*) FILTER (WHERE state = 'pending'),
        count(*) FILTER (WHERE state = 'delivered'),
        count(*) FILTER (WHERE state = 'dead'),
        count(*) FILTER (WHERE state = 'pending' AND next_at <= ?1),
        min(next_at) FILTER (WHERE state = 'pending'),
        count(*) FILTER (WHERE state = 'pending' AND attempts > 0)
      FROM outbox
      """)
    try select.bind(Self.milliseconds(now), at: 1)
    var counts = NotificationCounts()
    _ = try select.firstRow {
      counts.pending = $0.int(0)
      counts.delivered = $0.int(1)
      counts.dead = $0.int(2)
      counts.due = $0.int(3)
      counts.nextAttemptAt = $0.optionalInt64(4).map(Self.date)
      counts.retrying = $0.int(5)
    }
    return counts
  }

  /// The channels a receiver turned off, by name.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func disabledChannels() async throws -> [DisabledChannel] {
    try db.statement("SELECT name, target, reason, at FROM disabled_channels ORDER BY name").rows {
      DisabledChannel(name: $0.string(0), target: $0.string(1), reason: $0.string(2), at: Self.date($0.int64(3)))
    }
  }

  /// Turns a channel off, or on again when `channel` is nil.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func setDisabledChannel(_ channel: DisabledChannel?, name: String) async throws {
    if let channel {
      let upsert = try db.statement(
        """
        INSERT INTO disabled_channels (name, target, reason, at) VALUES (?, ?, ?, ?)
        ON CONFLICT (name) DO UPDATE SET target = excluded.target, reason = excluded.reason, at = excluded.at
        """)
      try upsert.bind(name, at: 1)
      try upsert.bind(channel.target, at: 2)
      try upsert.bind(channel.reason, at: 3)
      try upsert.bind(Self.milliseconds(channel.at), at: 4)
      try upsert.execute()
    } else {
      let delete = try db.statement("DELETE FROM disabled_channels WHERE name = ?")
      try delete.bind(name, at: 1)
      try delete.execute()
    }
  }
}
