import Foundation
import Testing

#if Postgres
@testable import ForagePostgres
#endif

/// The PostgreSQL server the tests use: `FORAGE_TEST_POSTGRES_URL`, set by
/// `scripts/with-postgres` (which `scripts/test` runs the tests under).
enum PostgresTestServer {
  static var url: String? {
    ProcessInfo.processInfo.environment["FORAGE_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
  }
  static var isCI: Bool { !(ProcessInfo.processInfo.environment["CI"] ?? "").isEmpty }

  /// No server to test on.
  struct Missing: Error, CustomStringConvertible {
    var description: String {
      "FORAGE_TEST_POSTGRES_URL is not set: run the tests with scripts/test or scripts/with-postgres "
        + "(a PostgreSQL server is required under CI)"
    }
  }

  #if Postgres
  /// Runs `body` with the URL of a new, empty database on the test server,
  /// dropped afterwards.
  static func withDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
    guard let url else { throw Missing() }
    let base = try PostgresURL(url)
    let name = "forage_test_\(UInt64.random(in: 0...UInt64.max))"
    let admin = try PostgresConnection(url: base)
    try admin.exec("CREATE DATABASE \(name)")
    defer { _ = try? admin.exec("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    return try await body(base.replacingDatabase(with: name).text)
  }
  #endif
}

@Suite struct PostgresTestServerTests {
  /// Says why the PostgreSQL guarantees did not run; fails under CI.
  @Test(
    .enabled(
      if: PostgresTestServer.url != nil || PostgresTestServer.isCI,
      "FORAGE_TEST_POSTGRES_URL is not set: the PostgreSQL store tests are skipped (scripts/test starts a server)"))
  func test_aPostgreSQLServerIsThere_whenTheTestsNeedOne() throws {
    #if Postgres
    guard PostgresTestServer.url != nil else { throw PostgresTestServer.Missing() }
    #expect(StoreKind.all.contains(.postgres))
    #else
    Issue.record("built without the Postgres trait: no PostgreSQL store to test")
    #endif
  }
}
