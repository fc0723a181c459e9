#if Postgres
import Foundation
import Testing

@testable import ForagePostgres
@testable import ForageStore

/// A commit's lookups of a batch's fingerprints probe an index whatever the
/// planner's statistics say: a connection keeps the generic plan its first
/// commits got, when a new store's tables were small, until autovacuum
/// analyzes them, and `fingerprint = ANY($n)` was then planned as a scan of
/// every row compared with every element of the array (half the server's
/// CPU in the fleet benchmark's first crawl of 10,000 products).
@Suite(
  .enabled(
    if: PostgresTestServer.url != nil || PostgresTestServer.isCI,
    "FORAGE_TEST_POSTGRES_URL is not set: PostgreSQL tests are skipped (scripts/test starts a server)"))
struct PostgresLookupPlanTests {
  /// The plan of `sql` run as a prepared statement's generic plan: what a
  /// connection's cached statement runs after a few executions, and keeps
  /// until the table is analyzed again (not while it grows: a first crawl
  /// of a few minutes keeps the plan its first commits got).
  static func genericPlan(_ db: PostgresConnection, _ sql: String, _ arguments: String) throws -> String {
    try db.exec("SET plan_cache_mode = force_generic_plan")
    try db.exec("PREPARE lookup AS \(sql)")
    let plan = try db.exec("EXPLAIN EXECUTE lookup(\(arguments))")
    try db.exec("DEALLOCATE lookup")
    return (0..<plan.count).map { plan.string($0, 0) }.joined(separator: "\n")
  }

  /// pg12 drops the index of (crawl, state, depth, id) that nothing read
  /// and every state change wrote; a store from before loses it on upgrade,
  /// and its crawls still claim, count and complete.
  @Test func test_issue27_anUpgradedStore_losesTheClaimOrderIndex_andStillClaimsAndCompletes() async throws {
    try await PostgresTestServer.withDatabase { url in
      try PostgresStoreReadingTests.migrate(url, through: "pg11-change-order-shared")
      func indexes() throws -> [String] {
        let db = try PostgresConnection(url: try PostgresURL(url))
        defer { db.close() }
        let r = try db.query("SELECT indexname::text FROM pg_indexes WHERE tablename = 'frontier' ORDER BY 1")
        return r.rows { r.string($0, 0) }
      }
      #expect(try indexes().contains("frontier_claim_order"))
      let store = try PostgresStore(url: url, leaseClock: .caller)
      #expect(try !indexes().contains("frontier_claim_order"))
      #expect(try indexes().contains("frontier_queued"))
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 1)
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 1, claimed: 1))
      try await commitPages(store, [pageCommit(items[0])])
      #expect(try await !store.completeCrawlIfExhausted(crawl.id, now: t0 + 1))
      try await commitPages(store, [pageCommit(try await claimFrontier(store, crawl.id, limit: 1)[0])])
      #expect(try await store.completeCrawlIfExhausted(crawl.id, now: t0 + 2))
      try await store.close()
    }
  }

  @Test func test_issue27_theFrontiersLinkLookup_probesTheKey_inAPlanMadeWhileTheTableIsSmall() async throws {
    try await PostgresTestServer.withDatabase { url in
      let store = try PostgresStore(url: url)
      let crawl = try await store.openCrawl(
        source: "s", seeds: [FrontierSeed(url: "https://example.com/", fingerprint: 1, depth: 0)], now: Date())
      try await store.close()
      let db = try PostgresConnection(url: try PostgresURL(url))
      // Small, as in a first crawl's first commits, when a connection's
      // cached statement gets the plan it keeps while the table grows.
      try db.exec(
        """
        INSERT INTO frontier (crawl, url, fingerprint, depth)
        SELECT \(crawl.id), 'https://example.com/' || g, g * 7919, 1 FROM generate_series(2, 60) AS g
        """)
      let links = (0..<500).map { FrontierSeed(url: "https://example.com/l\($0)", fingerprint: UInt64($0) * 7919, depth: 2) }
      let lookup = PostgresStore.LinkBatch(links, crawl: crawl.id, cap: nil).lookup
      let array = "'{" + (0..<500).map { String($0 * 7919) }.joined(separator: ",") + "}'"
      let plan = try Self.genericPlan(db, lookup.sql, "\(crawl.id), \(array)")
      #expect(plan.contains("Index Scan using frontier_crawl_fingerprint_key"), "\(plan)")
      #expect(!plan.contains("Filter: (fingerprint = ANY"), "\(plan)")
      // And it finds what the crawl has: the links' multiples of 7919 from 2 × 7919 to 60 × 7919.
      let found = try db.query(lookup.sql, lookup.params)
      #expect(found.count == 59)
    }
  }

  @Test func test_issue27_thePagesLookup_probesTheKey_inAPlanMadeWhileTheTableIsSmall() async throws {
    try await PostgresTestServer.withDatabase { url in
      let store = try PostgresStore(url: url)
      try await store.close()
      let db = try PostgresConnection(url: try PostgresURL(url))
      try db.exec(
        """
        INSERT INTO pages (fingerprint, url, status, fetched_at)
        SELECT g * 7919, 'https://example.com/' || g, 200, 0 FROM generate_series(1, 60) AS g
        """)
      let array = "'{" + (1...500).map { String($0 * 7919) }.joined(separator: ",") + "}'"
      let plan = try Self.genericPlan(db, PostgresStore.pagesLookupSQL, array)
      #expect(plan.contains("Index Scan using pages_fingerprint_key"), "\(plan)")
      #expect(!plan.contains("Filter: (fingerprint = ANY"), "\(plan)")
    }
  }
}
#endif
