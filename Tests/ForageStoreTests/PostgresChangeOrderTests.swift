#if Postgres
import Foundation
import Testing
@testable import ForagePostgres
@testable import ForageStore
@testable import ForageSupport

/// Change ids on PostgreSQL are read in order (migration pg11): transactions
/// writing changes hold the change-order lock shared, so they never wait for
/// each other's COMMIT, and a reader of changes by id takes it exclusively
/// first, so it waits until every transaction that drew an id has ended: a
/// change stream or cursor that read id N never later finds an id below N
/// committed by another transaction.
@Suite(
  .enabled(
    if: PostgresTestServer.url != nil || PostgresTestServer.isCI,
    "FORAGE_TEST_POSTGRES_URL is not set: the PostgreSQL tests are skipped"))
struct PostgresChangeOrderTests {
  static let insert = """
    INSERT INTO changes (source, key, kind, url, before, after, at, run)
    VALUES ('s', 'k', 'new', '', NULL, '{}', 0, NULL) RETURNING id
    """

  /// Runs `insert` on a connection of its own, on a thread, committing it.
  private static func insertOnThread(_ url: PostgresURL) -> (id: Locked<Int64?>, done: DispatchSemaphore) {
    let id = Locked<Int64?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread {
      defer { done.signal() }
      guard let b = try? PostgresConnection(url: url) else { return }
      // Queried outside the lock: the test polls `id` while the insert may wait.
      let inserted = try? b.query(Self.insert).int64(0, 0)
      id.withLock { $0 = inserted }
    }.start()
    return (id, done)
  }

  /// `a`, a transaction left open after drawing a change id, and `bID`, a
  /// higher id drawn and committed beside it (on a thread; `bDone` when it
  /// has ended).
  private static func lowerOpenHigherCommitted(_ url: PostgresURL) async throws
    -> (a: PostgresConnection, aID: Int64, bID: Int64, bDone: DispatchSemaphore)
  {
    let a = try PostgresConnection(url: url)
    try a.exec("BEGIN")
    let aID = try a.query(Self.insert).int64(0, 0)
    let b = Self.insertOnThread(url)
    for _ in 0..<6000 where b.id.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(10)) }
    let bID = try #require(b.id.withLock { $0 }, "b's insert did not finish while a was open")
    return (a, aID, bID, b.done)
  }

  /// Polls until `finished` or some session waits for an advisory lock; returns
  /// whether one waits (a guard against hanging, not a timing expectation).
  private static func untilWaitingOnTheLock(_ watcher: PostgresConnection, finished: () -> Bool) async throws -> Bool {
    for _ in 0..<6000 {
      if finished() { return false }
      let waiting = try watcher.query(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").int(0, 0)
      if waiting > 0 { return true }
      try await Task.sleep(for: .milliseconds(10))
    }
    return false
  }

  /// On a new store, and on a store of the migrations up to pg10 (whose
  /// trigger took the lock exclusively) that opening upgrades.
  @Test(arguments: [nil, "pg10-health-episodes-ended-crawl"])
  func test_twoTransactionsWritingChanges_doNotWaitForEachOthersCommit(_ upgradedFrom: String?) async throws {
    try await PostgresTestServer.withDatabase { url in
      if let upgradedFrom { try PostgresStoreReadingTests.migrate(url, through: upgradedFrom) }
      try await PostgresStore(url: url).close()  // migrates
      let parsed = try PostgresURL(url)
      let a = try PostgresConnection(url: parsed)
      try a.exec("BEGIN")
      let aID = try a.query(Self.insert).int64(0, 0)
      // `a` is still open; `b` writes and commits beside it.
      let b = Self.insertOnThread(parsed)
      let watcher = try PostgresConnection(url: parsed)
      let waited = try await Self.untilWaitingOnTheLock(watcher) { b.id.withLock { $0 } != nil }
      try a.exec("COMMIT")
      b.done.wait()
      #expect(!waited, "b's change insert waited for a's COMMIT")
      let bID = try #require(b.id.withLock { $0 })
      #expect(bID > aID)
    }
  }

  /// The two reads of changes by id: a sink's batch and a change stream's page.
  enum Reader: CaseIterable, Sendable {
    case changes, changePage

    func read(_ store: PostgresStore) async throws -> [Int64] {
      switch self {
      case .changes: try await store.changes(source: nil, afterID: 0, limit: 10).map(\.id)
      case .changePage: try await store.changePage(source: nil, afterID: 0, limit: 10).changes.map(\.id)
      }
    }
  }

  @Test(arguments: Reader.allCases)
  func test_aReadOfChangesByID_waitsForTheTransactionsThatDrewLowerIDs(_ reader: Reader) async throws {
    try await PostgresTestServer.withDatabase { url in
      let store = try PostgresStore(url: url)
      let parsed = try PostgresURL(url)
      let (a, aID, bID, bDone) = try await Self.lowerOpenHigherCommitted(parsed)
      let watcher = try PostgresConnection(url: parsed)
      let read = Locked<[Int64]?>(nil)
      let reading = Task {
        let ids = try await reader.read(store)
        read.withLock { $0 = ids }
      }
      let waited = try await Self.untilWaitingOnTheLock(watcher) { read.withLock { $0 } != nil }
      try a.exec("COMMIT")
      try await reading.value
      bDone.wait()
      #expect(waited, "the read did not wait for a's transaction")
      #expect(read.withLock { $0 } == [aID, bID], "read \(read.withLock { $0 } ?? []) while \(aID) was uncommitted")
      try await store.close()
    }
  }

  @Test func test_aStreamFromLatest_resolvesLatestAfterTheTransactionsWritingChanges() async throws {
    try await PostgresTestServer.withDatabase { url in
      try await PostgresStore(url: url).close()  // migrates
      let parsed = try PostgresURL(url)
      let a = try PostgresConnection(url: parsed)
      try a.exec("BEGIN")
      let aID = try a.query(Self.insert).int64(0, 0)
      let latest = Locked<Int64?>(nil)
      let opened = DispatchSemaphore(value: 0)
      Thread {
        defer { opened.signal() }
        let resolved = try? PostgresChangeListener(url: parsed).latest
        latest.withLock { $0 = resolved }
      }.start()
      let watcher = try PostgresConnection(url: parsed)
      let waited = try await Self.untilWaitingOnTheLock(watcher) { latest.withLock { $0 } != nil }
      try a.exec("COMMIT")
      opened.wait()
      #expect(waited, "the stream resolved .latest while a change was being written")
      #expect(latest.withLock { $0 } == aID)
    }
  }

  @Test func test_pruning_dropsNoChangeAboveOneStillBeingWritten() async throws {
    try await PostgresTestServer.withDatabase { url in
      let store = try PostgresStore(url: url)
      let parsed = try PostgresURL(url)
      // Both changes are old.
      let (a, aID, bID, _) = try await Self.lowerOpenHigherCommitted(parsed)
      let dropped = Locked<Int?>(nil)
      let pruning = Task {
        let count = try await store.pruneHistory(["s": HistoryRetention(maxAge: .seconds(60))], now: Date())
        dropped.withLock { $0 = count }
      }
      let watcher = try PostgresConnection(url: parsed)
      let waited = try await Self.untilWaitingOnTheLock(watcher) { dropped.withLock { $0 } != nil }
      try a.exec("COMMIT")
      try await pruning.value
      // Dropping b's alone would have marked the history pruned through
      // b's id while a's lower one, about to commit, was still to be read.
      #expect(waited, "pruning did not wait for a's transaction")
      #expect(dropped.withLock { $0 } == 2)
      #expect(try await store.historyPrunedThrough(source: "s") == max(aID, bID))
      try await store.close()
    }
  }

  /// A commit sent a statement at a time (here a batch that names its entry
  /// twice) takes the change-order lock before any row lock: taken only by
  /// the change insert's trigger, after the frontier's rows, a reader
  /// waiting for the lock exclusively could close a cycle that PostgreSQL
  /// breaks only after `deadlock_timeout`.
  @Test func test_aCommitAStatementAtATime_waitsForTheOrderLockBeforeLockingARow() async throws {
    try await PostgresTestServer.withDatabase { url in
      let store = try PostgresStore(url: url)
      let parsed = try PostgresURL(url)
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let item = try #require(
        try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "a", for: .seconds(60), at: Date())).first)
      // A reader's exclusive hold (as `waitForChangeWriters` takes it).
      let reader = try PostgresConnection(url: parsed)
      try reader.exec("BEGIN")
      try reader.query("SELECT pg_advisory_xact_lock($1)", [.int(PostgresMigrations.changeOrderLockKey)])
      let page = PageCommit(item: item, outcome: .done, records: [record("k", fields: #"{"v":1}"#, hash: 1)], now: t0)
      let committed = Locked<Bool>(false)
      let committing = Task {
        _ = try await store.commit([page, page])
        committed.withLock { $0 = true }
      }
      let watcher = try PostgresConnection(url: parsed)
      let waited = try await Self.untilWaitingOnTheLock(watcher) { committed.withLock { $0 } }
      // While the commit waits, its frontier entry is not locked.
      try watcher.exec("BEGIN")
      let rowFree = (try? watcher.query(
        "SELECT id FROM frontier WHERE id = $1 FOR UPDATE NOWAIT", [.int(item.id)])) != nil
      _ = try? watcher.exec("ROLLBACK")
      try reader.exec("COMMIT")
      try await committing.value
      #expect(waited, "the commit did not wait for the reader")
      #expect(rowFree, "the commit locked its frontier entry before the order lock")
      try await store.close()
    }
  }
}
#endif
