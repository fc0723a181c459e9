#if Postgres
import Foundation
import Testing
@testable import ForagePostgres
@testable import ForageStore
@testable import ForageSupport

/// Change ids on PostgreSQL become visible in increasing order (the
/// `changes_order` trigger of pg6-change-stream): a change stream that read
/// id N never later finds an id below N committed by another transaction.
@Suite(
  .enabled(
    if: PostgresTestServer.url != nil || PostgresTestServer.isCI,
    "FORAGE_TEST_POSTGRES_URL is not set: the PostgreSQL tests are skipped"))
struct PostgresChangeOrderTests {
  static let insert = """
    INSERT INTO changes (source, key, kind, url, before, after, at, run)
    VALUES ('s', 'k', 'new', '', NULL, '{}', 0, NULL) RETURNING id
    """

  @Test func test_aTransactionWritingChanges_getsItsIDsAfterEveryEarlierOnesCommit() async throws {
    try await PostgresTestServer.withDatabase { url in
      try await PostgresStore(url: url).close()  // migrates
      let parsed = try PostgresURL(url)
      let a = try PostgresConnection(url: parsed)
      // `a` holds the order lock (as a transaction that wrote changes does)
      // and writes its change only after `b` started writing its own.
      try a.exec("BEGIN")
      try a.query("SELECT pg_advisory_xact_lock($1)", [.int(PostgresMigrations.changeOrderLockKey)])
      let bID = Locked<Int64?>(nil)
      let bStarted = DispatchSemaphore(value: 0)
      let bDone = DispatchSemaphore(value: 0)
      let thread = Thread {
        defer { bDone.signal() }
        guard let b = try? PostgresConnection(url: parsed) else { return }
        bStarted.signal()
        bID.withLock { $0 = try? b.query(Self.insert).int64(0, 0) }
      }
      thread.start()
      bStarted.wait()
      // Until b's statement waits on the lock (a guard against hanging, not a timing expectation).
      let watcher = try PostgresConnection(url: parsed)
      for _ in 0..<6000 {
        let waiting = try watcher.query(
          "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").int(0, 0)
        if waiting > 0 { break }
        try await Task.sleep(for: .milliseconds(10))
      }
      let aID = try a.query(Self.insert).int64(0, 0)
      try a.exec("COMMIT")
      bDone.wait()
      let b = try #require(bID.withLock { $0 })
      #expect(b > aID, "b drew id \(b) before a's \(aID) committed")
    }
  }
}
#endif
