import Foundation
import Testing
@testable import ForageStore

@Suite struct SQLiteStorePendingRequestsTests {
  static let refresh = PendingTaskRequest(identifier: "b.refresh", kind: "appRefresh", earliestBeginDate: t0 + 900)
  static let crawl = PendingTaskRequest(
    identifier: "c.crawl", kind: "processing", requiresNetworkConnectivity: true, requiresExternalPower: true)
  static let export = PendingTaskRequest(
    identifier: "a.export", kind: "continuedProcessing", earliestBeginDate: t0 + 0.5,
    continued: .init(title: "Exporting", subtitle: "0 of 40", strategy: "queue"))

  @Test func test_pendingTaskRequests_emptyAtFirst_thenReplacedAsAWholeSet() async throws {
    try await withStore { store, path in
      #expect(try await store.pendingTaskRequests().isEmpty)
      try await store.replacePendingTaskRequests([Self.refresh, Self.crawl, Self.export])
      #expect(try await store.pendingTaskRequests() == [Self.export, Self.refresh, Self.crawl])
      // Another connection (another process: the restarted daemon) sees them.
      #expect(try await SQLiteStore(path: path).pendingTaskRequests() == [Self.export, Self.refresh, Self.crawl])

      var later = Self.refresh
      later.earliestBeginDate = t0 + 1800
      try await store.replacePendingTaskRequests([later])
      #expect(try await store.pendingTaskRequests() == [later])
      try await store.replacePendingTaskRequests([])
      #expect(try await store.pendingTaskRequests().isEmpty)
    }
  }

  @Test func test_updatePendingTaskRequests_writesAndRemovesOnlyThoseNamed() async throws {
    try await withStore { store, _ in
      try await store.replacePendingTaskRequests([Self.refresh, Self.crawl])
      var later = Self.refresh
      later.earliestBeginDate = t0 + 1800
      try await store.updatePendingTaskRequests([later, Self.export], removing: [])
      #expect(try await store.pendingTaskRequests() == [Self.export, later, Self.crawl])
      try await store.updatePendingTaskRequests([], removing: [Self.crawl.identifier])
      #expect(try await store.pendingTaskRequests() == [Self.export, later])
    }
  }

  @Test func test_claimLaunch_aStoreOfOneProcess_alwaysGrants() async throws {
    try await withStore { store, _ in
      let first = try await store.claimLaunch(task: "t", due: t0, owner: "a", leaseUntil: t0 + 60)
      let second = try await store.claimLaunch(task: "t", due: t0 + 1, owner: "b", leaseUntil: t0 + 61)
      #expect(first && second)
    }
  }

  @Test(arguments: StoreKind.all) func test_replacePendingTaskRequests_failingMidway_leavesTheEarlierSetWhole(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await store.replacePendingTaskRequests([Self.refresh, Self.crawl])
      // Each replacement below fails on its last row, after the old rows
      // were deleted and the first new one inserted: nothing of it remains.
      let unknownKind = PendingTaskRequest(identifier: "z", kind: "nightly")
      let repeated = PendingTaskRequest(identifier: Self.export.identifier, kind: "appRefresh")
      let continuedWithoutTitle = PendingTaskRequest(identifier: "z", kind: "continuedProcessing")
      let titleOnARefresh = PendingTaskRequest(
        identifier: "z", kind: "appRefresh", continued: .init(title: "t", subtitle: "s", strategy: "queue"))
      let unknownStrategy = PendingTaskRequest(
        identifier: "z", kind: "continuedProcessing", continued: .init(title: "t", subtitle: "s", strategy: "later"))
      for bad in [unknownKind, repeated, continuedWithoutTitle, titleOnARefresh, unknownStrategy] {
        await #expect(throws: StoreError.self, "\(bad)") {
          try await store.replacePendingTaskRequests([Self.export, bad])
        }
        #expect(try await store.pendingTaskRequests() == [Self.refresh, Self.crawl], "\(bad)")
      }
    }
  }

  @Test func test_pendingRequests_aWriterKilledMidTransaction_leavesTheEarlierSet() async throws {
    try await withStore { store, path in
      try await store.replacePendingTaskRequests([Self.refresh])
      // Another connection deletes the set and inserts a new one, and is
      // closed before it commits, as a killed process would leave it.
      let killed = try SQLiteConnection(path: path, busyTimeout: .seconds(5))
      try killed.exec(
        """
        BEGIN IMMEDIATE;
        DELETE FROM pending_requests;
        INSERT INTO pending_requests (identifier, kind, requires_network, requires_external_power)
          VALUES ('x', 'appRefresh', 0, 0);
        """)
      try killed.close()
      #expect(try await store.pendingTaskRequests() == [Self.refresh])
      #expect(try await SQLiteStore(path: path).pendingTaskRequests() == [Self.refresh])
    }
  }

  @Test func test_migration_v5_addsAStrictPendingRequestsTable() async throws {
    try await withStore { store, path in
      try await store.close()
      let db = try SQLiteConnection(path: path, busyTimeout: .seconds(5))
      defer { try? db.close() }
      #expect(try Migrator.forage.appliedNames(db).contains("v5-pending-requests"))
      let sql = try db.uncachedStatement("SELECT sql FROM sqlite_schema WHERE name = 'pending_requests'")
        .firstRow { $0.string(0) }
      let schema = try #require(sql)
      #expect(schema.hasSuffix("STRICT"))
      #expect(!schema.contains(" IN "), "IN (…) checks cost a temporary index per write")
    }
  }
}
