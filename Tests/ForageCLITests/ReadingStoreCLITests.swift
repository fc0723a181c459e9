import Foundation
import Testing
import ForageStore
#if Postgres
@testable import ForagePostgres
#endif

/// Commands that only read a store create, migrate and write nothing, on a
/// PostgreSQL store as on a SQLite file (issue 25's rule): before, every
/// `--store postgres://…` was migrated on open, so `forage status` on an
/// empty database gave it Forage's tables; and `forage simulate` (without
/// `--live`) turned an empty file into a store.
@Suite(.serialized) struct ReadingStoreCLITests {
  @Test(
    .enabled(
      if: FleetServer.url != nil || FleetServer.isCI,
      "FORAGE_TEST_POSTGRES_URL is not set: skipped (scripts/test starts a PostgreSQL server)"))
  func test_readingCommands_onAnEmptyPostgreSQLDatabase_sayItIsNotAStore_andCreateNothing() async throws {
    #if Postgres
    let dir = TemporaryDirectory()
    try await FleetTests.withDatabase { url in
      let redacted = StoreLocation.redacted(url)
      let sentence = "\(redacted) is not a Forage store: it is an empty database (a command that only reads never adds tables)"
      for command in [
        ["status", "--store", url], ["changes", "--store", url], ["export", "--store", url],
        ["report", "--store", url, "--out", dir.file("report.html")], ["health", "--store", url],
        ["download", "--list", "--store", url],
      ] {
        let result = try runForage(command)
        #expect(result.status == 2, "\(command[0]): \(result.stderr)")
        #expect(result.stderr == "forage \(command[0]): \(sentence)\n", "\(command[0])")
        let db = try PostgresConnection(url: PostgresURL(url))
        let tables = try db.query("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()")
        #expect(tables.int(0, 0) == 0, "forage \(command[0]) created tables")
        db.close()
      }
      #expect(!FileManager.default.fileExists(atPath: dir.file("report.html")))
    }
    #endif
  }

  @Test func test_simulateWithoutLive_readsTheStoreOnly_andLeavesAnEmptyFileEmpty() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", """
      {"tasks": [{"id": "prices", "every": "15m", "sources": ["prices"]}],
       "sources": [{"name": "prices", "url": "https://example.com/item/1"}]}
      """)
    let store = dir.file("empty.sqlite")
    _ = FileManager.default.createFile(atPath: store, contents: Data())
    let result = try runForage(["simulate", "--config", config, "--store", store, "--days", "1"])
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("\(store) is not a Forage store: the file is empty"), "\(result.stderr)")
    #expect(try FileManager.default.attributesOfItem(atPath: store)[.size] as? Int == 0)
  }
}
