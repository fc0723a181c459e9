#if Postgres
import Foundation
import ForageStore
import ForageSupport

/// The fleet's per-host politeness and robots.txt election, on a connection
/// of their own: a request start waits for one short transaction, never
/// behind a commit of many pages on the store's connection.
actor PostgresPoliteness {
  /// A thread of its own, as `PostgresStore` has: its calls block on the server.
  private let executor = ThreadExecutor(name: "forage-pg-host")
  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
  private let url: PostgresURL
  private var db: PostgresConnection?
  private let reconnectTimeout: Duration

  init(url: PostgresURL, reconnectTimeout: Duration) {
    self.url = url
    self.reconnectTimeout = reconnectTimeout
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
      if db?.isOpen != true { db = try PostgresConnection(url: url, connectTimeout: 5) }
      let db = self.db!
      return transaction ? try db.transaction { try body(db) } : try body(db)
    }
  }

  /// See ``PostgresStore/takeHostTicket(host:owner:concurrency:delay:lease:)``.
  func takeHostTicket(host: String, owner: String, concurrency: Int, delay: Duration, lease: Duration) async throws
    -> Int64?
  {
    let delayMS = delay.milliseconds
    let leaseMS = lease.milliseconds
    // One statement (migration pg4), its own transaction: one round trip.
    return try await run(transaction: false) { db in
      try db.query(
        "SELECT forage_take_host_ticket($1, $2, $3, $4, $5)",
        [.text(host), .text(owner), .int(concurrency), .int(delayMS), .int(leaseMS)]
      ).optionalInt64(0, 0)
    }
  }

  /// See ``PostgresStore/returnHostTicket(_:)``.
  func returnHostTicket(_ ticket: Int64) async throws {
    try await run(transaction: false) { db in
      _ = try db.query("DELETE FROM host_tickets WHERE id = $1", [.int(ticket)])
    }
  }

  /// See ``PostgresStore/claimRobotsFetch(origin:lease:)``.
  func claimRobotsFetch(origin: String, lease: Duration) async throws -> Bool {
    let leaseMS = lease.milliseconds
    return try await run { db in
      try db.query(
        """
        INSERT INTO robots_fetches AS f (origin, until)
        VALUES ($1, (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $2)
        ON CONFLICT (origin) DO UPDATE SET until = excluded.until
        WHERE f.until < (extract(epoch FROM clock_timestamp()) * 1000)::bigint
        RETURNING origin
        """, [.text(origin), .int(leaseMS)]
      ).count == 1
    }
  }
}

extension PostgresStore {
  // MARK: Fleet politeness

  /// Takes one of `host`'s `concurrency` request slots for `owner`, when the
  /// host's next start has come, and moves that start `delay` later; nil
  /// when the host is busy. The host's row is locked meanwhile, so workers
  /// take slots one at a time; tickets whose lease passed (a killed worker's)
  /// are dropped first. Times are the server's clock, which every worker
  /// shares. Runs on the store's second connection.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public nonisolated func takeHostTicket(
    host: String, owner: String, concurrency: Int, delay: Duration, lease: Duration
  ) async throws -> Int64? {
    try await politeness.takeHostTicket(host: host, owner: owner, concurrency: concurrency, delay: delay, lease: lease)
  }

  /// Gives back a ticket of ``takeHostTicket(host:owner:concurrency:delay:lease:)``.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public nonisolated func returnHostTicket(_ ticket: Int64) async throws {
    try await politeness.returnHostTicket(ticket)
  }

  /// True when this worker should download `origin`'s robots.txt now: it
  /// took the origin's row, free or held past its lease (on the server's
  /// clock). Another worker holding it means its answer is on the way.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public nonisolated func claimRobotsFetch(origin: String, lease: Duration) async throws -> Bool {
    try await politeness.claimRobotsFetch(origin: origin, lease: lease)
  }
}
#endif
