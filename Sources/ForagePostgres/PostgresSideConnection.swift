#if Postgres
import Foundation
import ForageStore
import ForageSupport

/// The store's second connection, with a thread of its own: frontier claims
/// and counts, page lookups, the fleet's per-host request slots and the
/// robots.txt election run here, so that a request start or a claim waits
/// for one short statement, never behind a commit of many pages on the
/// store's own connection. (It began as the fleet's politeness connection.)
actor PostgresSideConnection {
  /// A thread of its own, as `PostgresStore` has: its calls block on the server.
  private let executor = ThreadExecutor(name: "forage-pg-host")
  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
  private let url: PostgresURL
  private var db: PostgresConnection?
  private let reconnectTimeout: Duration
  /// Every transaction read-only (a store opened to read).
  private let readOnly: Bool

  init(url: PostgresURL, reconnectTimeout: Duration, readOnly: Bool = false) {
    self.url = url
    self.reconnectTimeout = reconnectTimeout
    self.readOnly = readOnly
  }

  func close() {
    db?.close()
    db = nil
  }

  /// Runs `body` on the connection, in a transaction unless `transaction`
  /// is false (one statement is its own), made on first use and again after
  /// a loss, with backoff for up to `reconnectTimeout`.
  private func run<T>(transaction: Bool = true, _ body: (PostgresConnection) throws -> T) async throws -> T {
    try await PostgresStore.retrying(for: reconnectTimeout) {
      if db?.isOpen != true {
        db = try PostgresConnection(url: url, connectTimeout: 5, readOnly: readOnly)
        db?.label = "side"
      }
      let db = self.db!
      return transaction ? try db.transaction { try body(db) } : try body(db)
    }
  }

  /// Runs `body` on this connection for the store: frontier claims and page
  /// lookups, which a job needs while a commit of many pages holds the
  /// store's own connection (a claim waiting behind a commit left the worker
  /// with nothing to fetch).
  func perform<T: Sendable>(transaction: Bool = true, _ body: @Sendable (PostgresConnection) throws -> T)
    async throws -> T
  {
    try await run(transaction: transaction, body)
  }

  /// See ``PostgresStore/takeHostTickets(host:concurrency:delay:count:lease:returning:)``.
  func takeHostTickets(
    host: String, concurrency: Int, delay: Duration, count: Int, lease: Lease, returning: [Int64]
  ) async throws -> [Int64] {
    let owner = lease.owner
    let delayMS = delay.milliseconds
    let leaseMS = lease.milliseconds
    // One statement (migration pg5), its own transaction: one round trip,
    // which also gives back the tickets `returning` names.
    return try await run(transaction: false) { db in
      let result = try db.query(
        "SELECT forage_take_host_tickets($1, $2, $3, $4, $5, $6, $7::BIGINT[])",
        [.text(host), .text(owner), .int(concurrency), .int(delayMS), .int(count), .int(leaseMS),
         .text(Self.array(returning))])
      return result.rows { result.int64($0, 0) }
    }
  }

  /// A PostgreSQL array literal of `values`: `{1,2,3}`.
  private static func array(_ values: [Int64]) -> String {
    "{" + values.map(String.init).joined(separator: ",") + "}"
  }

  /// See ``PostgresStore/claimRobotsFetch(origin:lease:)``; `callerNow` is
  /// the caller's clock, or NULL for the server's.
  func claimRobotsFetch(origin: String, lease: Lease, callerNow: PostgresValue) async throws -> Bool {
    try await run { db in
      try db.query(
        """
        INSERT INTO robots_fetches AS f (origin, until)
        VALUES ($1, \(PostgresLease.now("$3")) + $2)
        ON CONFLICT (origin) DO UPDATE SET until = excluded.until
        WHERE f.until <= \(PostgresLease.now("$3"))
        RETURNING origin
        """, [.text(origin), PostgresLease.length(lease), callerNow]
      ).count == 1
    }
  }
}

extension PostgresStore {
  // MARK: Fleet politeness

  /// Takes up to `count` of `host`'s `concurrency` request slots for
  /// `lease.owner` in one call, when the host's next start has come, and moves
  /// that start `delay` later (one slot a call when `delay` is not zero);
  /// none when the host is busy. The host's row is locked meanwhile, so
  /// workers take slots one call at a time; tickets whose lease passed (a
  /// killed worker's) are dropped first, and `returning` is given back. A
  /// worker gets at most its fair share: the host's concurrency over the
  /// workers holding its slots or refused one in the last second. Times are
  /// the server's clock, which every worker shares. Runs on the store's
  /// second connection.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public nonisolated func takeHostTickets(
    host: String, concurrency: Int, delay: Duration, count: Int, lease: Lease, returning: [Int64]
  ) async throws -> [Int64] {
    try await side.takeHostTickets(
      host: host, concurrency: concurrency, delay: delay, count: count, lease: lease, returning: returning)
  }

  /// True when this worker should download `origin`'s robots.txt now: it
  /// took the origin's row, free or held past its lease (on the server's
  /// clock, or the caller's for a `.caller` store). Another worker holding
  /// it means its answer is on the way. The row keeps no owner.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public nonisolated func claimRobotsFetch(origin: String, lease: Lease) async throws -> Bool {
    try await side.claimRobotsFetch(origin: origin, lease: lease, callerNow: leaseNow(lease.at))
  }
}
#endif
