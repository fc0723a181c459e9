import Foundation
import Testing
@testable import ForageStore
#if Postgres
@testable import ForagePostgres
#endif

/// Episodes ended before the stores kept the crawl that ended them (SQLite
/// v17, PostgreSQL pg10) get it from the crawls when the store is upgraded:
/// a recovery's first healthy crawl after the one that opened it, an
/// acceptance's last completed crawl before it; an open episode has none.
@Suite struct HealthEpisodeCrawlMigrationTests {
  /// The rows of a store with three episodes of source `s` (and a crawl of
  /// `t` that is not theirs), in a dialect whose booleans are `yes`/`no`.
  static func rows(yes: String, no: String) -> String {
    """
    INSERT INTO crawls (id, source, started_at, completed_at, healthy) VALUES
      (1, 's', 90, 100, \(yes)), (2, 's', 190, 200, \(no)), (8, 't', 240, 250, \(yes)), (3, 's', 290, 300, \(no)),
      (4, 's', 390, 400, \(yes)), (5, 's', 490, 500, \(no)), (6, 's', 690, 700, \(yes)), (7, 's', 790, 800, \(no));
    INSERT INTO health_episodes
      (id, source, kind, subject, before, before_total, now, now_total, crawl, started_at, ended_at, resolution)
    VALUES
      (1, 's', 'removals', 'div.product', 6, 6, 0, 6, 2, 200, 400, 'recovered'),
      (2, 's', 'field', 'price (.price)', 6, 6, 0, 6, 5, 500, 600, 'accepted'),
      (3, 's', 'pages', 'div.product', 6, 6, 0, 6, 7, 800, NULL, NULL);
    """
  }

  static func check(_ store: any Store) async throws {
    let episodes = try await store.healthEpisodes(limit: 10).sorted { $0.id < $1.id }
    #expect(episodes.map(\.startCrawl) == [2, 5, 7])
    #expect(episodes.map(\.endCrawl) == [4, 5, nil])
  }

  @Test func test_aV16Store_findsTheCrawlThatEndedEachEpisode() async throws {
    let temp = TempStorePath()
    do {
      let db = try SQLiteConnection(path: temp.path)
      var old = Migrator()
      old.migrations = Array(Migrator.forage.migrations.prefix { $0.name != "v17-health-episodes-ended-crawl" })
      #expect(old.migrations.last?.name == "v16-change-ids-never-reused")
      _ = try old.migrate(db, now: 0)
      try db.exec(Self.rows(yes: "1", no: "0"))
      try db.close()
    }
    let store = try SQLiteStore(path: temp.path)
    try await Self.check(store)
    try await store.close()
  }

  #if Postgres
  @Test(
    .enabled(
      if: PostgresTestServer.url != nil || PostgresTestServer.isCI,
      "FORAGE_TEST_POSTGRES_URL is not set: skipped (scripts/test starts a server)"))
  func test_aPg9Store_findsTheCrawlThatEndedEachEpisode() async throws {
    try await PostgresTestServer.withDatabase { url in
      try PostgresStoreReadingTests.migrate(url, through: "pg9-sink-cursors")
      let db = try PostgresConnection(url: PostgresURL(url))
      try db.exec(Self.rows(yes: "true", no: "false"))
      db.close()
      let store = try PostgresStore(url: url)
      try await Self.check(store)
      try await store.close()
    }
  }
  #endif
}
