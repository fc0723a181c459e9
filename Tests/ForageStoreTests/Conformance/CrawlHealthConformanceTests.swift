import Foundation
import Testing
@testable import ForageStore

/// `HealthStore.crawlHealth(source:limit:)` on every store (issue 29): each
/// crawl's stored coverage read back per crawl, newest first, with its
/// healthy flag.
@Suite struct CrawlHealthConformanceTests {
  let health = HealthConformanceTests()

  @Test(arguments: StoreKind.all) func test_issue29_crawlHealth_readsEachCrawlsCoverage_newestFirst(
    _ kind: StoreKind
  ) async throws {
    try await withStore(kind) { store in
      typealias Page = HealthConformanceTests.Page
      // Healthy: six products with prices.
      try await health.sixProducts(store)
      // A price moved: every product without it (held, unhealthy).
      try await health.healthCrawl(store, (1...6).map { Page.noPrice($0) }, at: t0 + 60)
      // Back: five with prices, one without (healthy).
      try await health.healthCrawl(
        store, (1...5).map { Page(n: $0, price: $0 * 10) } + [Page.noPrice(6)], at: t0 + 120)

      let crawls = try await store.crawlHealth(source: "s", limit: 10)
      #expect(crawls.count == 3)
      #expect(crawls.map(\.healthy) == [true, false, true])
      #expect(crawls.map(\.records) == [6, 6, 6])
      #expect(crawls.map(\.pages) == [6, 6, 6])
      #expect(crawls.map { $0.fields["price"]?.present } == [5, 0, 6])
      #expect(crawls.map { $0.fields["price"]?.missing } == [1, 6, 0])
      #expect(crawls[0].share("price") == 5.0 / 6.0 && crawls[0].share("title") == 1)
      #expect(crawls.allSatisfy { $0.source == "s" && $0.completedAt != nil })
      #expect(crawls[0].crawl > crawls[1].crawl && crawls[1].crawl > crawls[2].crawl)
      #expect(crawls[0].startedAt == t0 + 120 && crawls[2].startedAt == t0)

      let last = try await store.crawlHealth(source: "s", limit: 1)
      #expect(last.map(\.crawl) == [crawls[0].crawl])
      #expect(try await store.crawlHealth(source: "other", limit: 10).isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_issue29_crawlHealth_countsBlockPagesAndOpenCrawls(_ kind: StoreKind)
    async throws
  {
    try await withStore(kind) { store in
      typealias Page = HealthConformanceTests.Page
      try await health.sixProducts(store)
      try await health.healthCrawl(
        store, [Page(n: 1, lost: true), Page(n: 2, lost: true)] + (3...6).map { Page(n: $0, price: $0 * 10) },
        at: t0 + 60)
      let crawls = try await store.crawlHealth(source: "s", limit: 10)
      #expect(crawls.first?.lostPages == 2 && crawls.first?.records == 4 && crawls.first?.pages == 6)
      // A crawl still open: not yet judged.
      let open = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0 + 120)
      let items = try await claimFrontier(store, open.id, limit: 10, at: t0 + 120)
      var commit = pageCommit(
        items[0], .done, page: PageRecord(url: items[0].url, fingerprint: items[0].fingerprint, status: 200, fetchedAt: t0 + 120),
        records: [health.product(1, price: 10)], at: t0 + 120)
      commit.extraction = PageExtraction(records: 1, matched: true, fields: ["price": .init(present: 1)])
      _ = try await commitPages(store, [commit])
      let now = try await store.crawlHealth(source: "s", limit: 10)
      #expect(now.first?.crawl == open.id && now.first?.healthy == nil && now.first?.completedAt == nil)
      #expect(now.first?.records == 1)
    }
  }
}
