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

  /// Another connection (another process: the restarted daemon) reads the
  /// kept set. What every store does is in RunConformanceTests.
  @Test func test_pendingTaskRequests_keptByOneConnection_areReadByAnother() async throws {
    try await withStore { store, path in
      try await store.replacePendingTaskRequests([Self.refresh, Self.crawl, Self.export])
      #expect(try await SQLiteStore(path: path).pendingTaskRequests() == [Self.export, Self.refresh, Self.crawl])
      try await SQLiteStore(path: path).updatePendingTaskRequests([], removing: [Self.crawl.identifier])
      #expect(try await store.pendingTaskRequests() == [Self.export, Self.refresh])
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
