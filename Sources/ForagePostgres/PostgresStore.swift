#if Postgres
import Foundation
import ForageStore
import ForageSupport

/// The `Store` protocol on PostgreSQL, for fleets: several Forage processes
/// on one database share one frontier, one record set and one outbox.
///
///     let store = try PostgresStore(url: "postgres://forage@db.example:5432/forage")
///     let crawl = try await store.openCrawl(source: "news", seeds: seeds, now: .now)
///
/// Opening applies pending migrations (the same tables and names as SQLite's,
/// see `PostgresMigrations`); ``init(readingAt:reconnectTimeout:)`` opens a
/// store to read it only, changing nothing. Every method is one transaction,
/// as with SQLite; what differs is that other workers run beside this one:
///
/// - `claim` takes queued entries (and entries whose lease passed) with
///   `FOR UPDATE SKIP LOCKED`, so two workers never take the same URL and
///   never wait for each other; ``renew(_:lease:)`` keeps a live worker's
///   leases, and a dead worker's URLs return when theirs pass.
/// - `commit` writes a page only while its claim is still this worker's: a
///   page whose lease passed and was taken by another worker is discarded
///   (the other worker commits it), so nothing is written twice.
/// - `release(kind, owner: nil)`, which a single SQLite process calls at start
///   to recover from a crash, releases only claims whose lease has passed: the
///   others belong to live workers.
/// - When the connection is lost (the server restarted), a call reconnects
///   with backoff for up to `reconnectTimeout` and runs again; a commit that
///   may have landed before the loss is then discarded by the lease check.
///
/// - SeeAlso: <https://www.postgresql.org/docs/15/sql-select.html#SQL-FOR-UPDATE-SHARE>
public actor PostgresStore: Store {
  let db: PostgresConnection
  /// The URL without its password: how messages name the store.
  public nonisolated let location: String
  /// How long a call keeps trying to reconnect after the connection is lost.
  public nonisolated let reconnectTimeout: Duration
  /// The owner of each entry this store claimed and has not committed, so
  /// that a commit checks the claim is still its own. Behind a lock, not
  /// the actor: claims run on the second connection without the actor
  /// (see ``side``), and record their owners from there.
  nonisolated let owners = Locked<[Int64: String]>([:])
  /// How many times a lost connection was found and made again.
  public private(set) var reconnections = 0
  /// The store's second connection: frontier claims and counts, page
  /// lookups, host tickets and the robots.txt election, which must not wait
  /// behind a commit on this one. The methods that use it are
  /// `nonisolated`: the commit holds the actor's thread for its whole
  /// transaction, and a claim that started on the actor, or came back to
  /// it, waited for the commit there (a trace of one worker: claims out
  /// for 80–160 ms behind commits of 500–1,000 pages, its 16 fetches idle
  /// meanwhile, a quarter of the crawl).
  let side: PostgresSideConnection
  /// Rung after each commit of this store that wrote changes: wakes its change streams.
  nonisolated let changeBell = ChangeBell()
  /// Where the store is, for the change streams' own connections.
  nonisolated let url: PostgresURL
  /// The actor's own thread: libpq's calls block until the server answers,
  /// and on Swift's cooperative threads (one per core) every wait held up
  /// the job's fetching and parsing.
  private let executor = ThreadExecutor(name: "forage-pg")
  /// Runs the store's work on its own thread (see `executor`).
  public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

  /// The clock leases are counted on.
  public enum LeaseClock: Sendable {
    /// The server's, which every worker of a fleet shares (the default).
    case server
    /// The dates callers pass (a ``Lease``'s `at`): for tests on a virtual
    /// clock, as on SQLite. Host tickets stay on the server's (its function
    /// reads the clock under the host's lock).
    case caller
  }

  /// The clock this store counts leases on (see `PostgresLease`): a
  /// ``Lease``'s length from the server's clock, or from its `at`.
  public nonisolated let leaseClock: LeaseClock

  /// The caller's `now` as a statement parameter when leases run on the
  /// callers' clock; NULL (the server's clock) otherwise.
  nonisolated func leaseNow(_ now: Date) -> PostgresValue { leaseClock == .caller ? .date(now) : .null }

  /// Connects to `url` and applies pending migrations.
  ///
  ///     let store = try PostgresStore(url: "postgres://forage@127.0.0.1:5432/forage")
  ///
  /// - Throws: `PostgresURL.Invalid` for a location that is not a
  ///   `postgres://` URL; `StoreError` of kind `.connection` when the server
  ///   cannot be reached, `.open` when it refuses (user, password, database),
  ///   `.foreignDatabase` for another program's database, `.newerStore` when
  ///   a newer Forage migrated it.
  ///
  /// `reconnectTimeout` bounds how long a call keeps reconnecting after the
  /// connection is lost; `leaseClock` is the clock leases are counted on.
  public init(url: String, reconnectTimeout: Duration = .seconds(60), leaseClock: LeaseClock = .server) throws {
    let parsed = try PostgresURL(url)
    let db = try PostgresConnection(url: parsed)
    try PostgresMigrations.migrate(db, now: Self.milliseconds(Date()))
    self.init(connection: db, url: parsed, reconnectTimeout: reconnectTimeout, leaseClock: leaseClock, readOnly: false)
  }

  /// A store on `db`, a connection to `url` whose schema is ready (migrated,
  /// or found current by ``init(readingAt:reconnectTimeout:)``).
  init(
    connection db: PostgresConnection, url: PostgresURL, reconnectTimeout: Duration, leaseClock: LeaseClock,
    readOnly: Bool
  ) {
    self.leaseClock = leaseClock
    self.db = db
    self.location = url.redacted
    self.url = url
    self.reconnectTimeout = reconnectTimeout
    self.isReadOnly = readOnly
    self.side = PostgresSideConnection(url: url, reconnectTimeout: reconnectTimeout, readOnly: readOnly)
  }

  /// True for a store opened by ``init(readingAt:reconnectTimeout:)``:
  /// every write fails.
  public nonisolated let isReadOnly: Bool

  /// A store shared by other processes: claims of others are live.
  public nonisolated var isShared: Bool { true }

  // MARK: Running statements

  /// Runs `body` (one transaction when `transaction`), reconnecting with
  /// backoff and running it again when the connection was lost, or when the
  /// server chose it as a deadlock's or serialization failure's victim.
  @discardableResult
  func run<T>(transaction: Bool = true, _ body: (PostgresConnection) throws -> T) async throws -> T {
    try await Self.retrying(for: reconnectTimeout) {
      if closed { throw StoreError.closed(path: location) }
      if !db.isOpen { try db.reconnect(); reconnections += 1 }
      return transaction ? try db.transaction { try body(db) } : try body(db)
    }
  }

  /// Runs `attempt` until it succeeds or fails for good: after a lost
  /// connection, a deadlock or a serialization failure it runs again after a
  /// pause (100 ms, doubling up to 5 s) while `timeout` has not passed since
  /// the first try. Runs on the caller's actor.
  static func retrying<T>(
    for timeout: Duration, isolation: isolated (any Actor)? = #isolation, _ attempt: () throws -> T
  ) async throws -> T {
    let clock = ContinuousClock()
    let giveUp = clock.now + timeout
    var delay = Duration.milliseconds(100)
    while true {
      do {
        return try attempt()
      } catch let error as StoreError where isRetryable(error) {
        if clock.now + delay > giveUp { throw error }
        try await Task.sleep(for: delay)
        delay = min(delay * 2, .seconds(5))
      }
    }
  }

  static func isRetryable(_ error: StoreError) -> Bool {
    if error.kind == .connection { return true }
    let text = error.debugDescription
    return text.contains("SQLSTATE 40P01") || text.contains("SQLSTATE 40001")
  }

  // MARK: Dates

  /// Milliseconds since 1970, the store's date representation.
  static func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded())
  }

  static func date(_ milliseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(milliseconds) / 1000)
  }

  // MARK: The store as a whole

  /// The names of the sources with records or crawls in the store, sorted.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func sourceNames() async throws -> [String] {
    try await run(transaction: false) { db in
      let result = try db.query("SELECT source FROM crawls UNION SELECT source FROM records ORDER BY 1")
      return result.rows { result.string($0, 0) }
    }
  }

  /// Figures of each source, by name (see `SourceStatistics`).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func sourceStatistics(since: Date) async throws -> [SourceStatistics] {
    try await run { db in
      var stats: [String: SourceStatistics] = [:]
      let names = try db.query("SELECT source FROM crawls UNION SELECT source FROM records")
      for row in 0..<names.count { stats[names.string(row, 0)] = SourceStatistics(name: names.string(row, 0)) }
      let records = try db.query(
        """
        SELECT source, count(*) FILTER (WHERE removed_at IS NULL), count(*) FILTER (WHERE removed_at IS NOT NULL),
          max(last_seen)
        FROM records GROUP BY source
        """)
      for row in 0..<records.count {
        let name = records.string(row, 0)
        stats[name, default: SourceStatistics(name: name)].records = records.int(row, 1)
        stats[name]!.removed = records.int(row, 2)
        stats[name]!.lastSeen = records.optionalDate(row, 3)
      }
      let changes = try db.query(
        "SELECT source, count(*) FROM changes WHERE at >= $1 GROUP BY source", [.date(since)])
      for row in 0..<changes.count {
        stats[changes.string(row, 0), default: SourceStatistics(name: changes.string(row, 0))].recentChanges =
          changes.int(row, 1)
      }
      let crawls = try db.query("SELECT source, max(completed_at) FROM crawls GROUP BY source")
      for row in 0..<crawls.count {
        stats[crawls.string(row, 0), default: SourceStatistics(name: crawls.string(row, 0))].lastCompletedCrawl =
          crawls.optionalDate(row, 1)
      }
      return stats.values.sorted { $0.name < $1.name }
    }
  }

  /// Closes the connection; every later call throws a `StoreError` of kind
  /// `.closed`. Everything committed is already on the server.
  public func close() async throws {
    closed = true
    db.close()
    await side.close()
  }

  var closed = false
}
#endif
