import Foundation
import Testing
@testable import ForageStore

/// Depth is link distance: a shorter path found later lowers a queued URL's
/// depth (issue 10).
@Suite struct FrontierDepthTests {
  static func link(_ n: Int, depth: Int) -> FrontierSeed {
    FrontierSeed(url: "https://example.com/\(n)", fingerprint: UInt64(n) &* 0x9E37_79B9_7F4A_7C15, depth: depth)
  }

  @Test(arguments: StoreKind.all) func test_issue10_aShorterPath_lowersAQueuedDepth_andALongerOneDoesNot(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [Self.link(1, depth: 0), Self.link(2, depth: 0)], now: t0)
      let seeds = try await store.claim(crawl: crawl.id, limit: 2, owner: "me", leaseUntil: t0 + 60, now: t0)
      let first = try #require(seeds.first { $0.url.hasSuffix("/1") })
      let second = try #require(seeds.first { $0.url.hasSuffix("/2") })
      // Page 1 finds page 9 by a long path (depth 3, as a deep page would)…
      _ = try await store.commit([PageCommit(item: first, outcome: .done, discovered: [Self.link(9, depth: 3)], now: t0)])
      // …then page 2 finds it at depth 1, and a later page at depth 2.
      _ = try await store.commit([PageCommit(item: second, outcome: .done, discovered: [Self.link(9, depth: 1)], now: t0)])
      _ = try await store.commit([PageCommit(item: second, outcome: .done, discovered: [Self.link(9, depth: 2)], now: t0)])
      let claimed = try await store.claim(crawl: crawl.id, limit: 10, owner: "me", leaseUntil: t0 + 60, now: t0)
      #expect(claimed.count == 1)
      #expect(claimed.first?.depth == 1)
      // Claimed (being fetched) or done entries keep theirs.
      let item = try #require(claimed.first)
      _ = try await store.commit([PageCommit(item: second, outcome: .done, discovered: [Self.link(9, depth: 0)], now: t0)])
      _ = try await store.commit([PageCommit(item: item, outcome: .done, now: t0)])
      #expect(try await store.frontierCounts(crawl: crawl.id).done == 3)
    }
  }

  /// Two pages of one commit find the same new page: it is added once, at
  /// the lesser depth, wherever in the batch that path was found.
  @Test(arguments: StoreKind.all) func test_oneBatch_sameNewLinkTwice_isAddedOnce_atTheLesserDepth(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [Self.link(1, depth: 0), Self.link(2, depth: 0)], now: t0)
      let seeds = try await store.claim(crawl: crawl.id, limit: 2, owner: "me", leaseUntil: t0 + 60, now: t0)
      let result = try await store.commit([
        PageCommit(item: seeds[0], outcome: .done, discovered: [Self.link(9, depth: 3), Self.link(8, depth: 1)], now: t0),
        PageCommit(item: seeds[1], outcome: .done, discovered: [Self.link(9, depth: 1)], now: t0),
      ])
      #expect(result.linksAdded == 2)
      let claimed = try await store.claim(crawl: crawl.id, limit: 10, owner: "me", leaseUntil: t0 + 60, now: t0)
      #expect(claimed.count == 2)
      #expect(claimed.map(\.depth) == [1, 1], "\(claimed.map { ($0.url, $0.depth) })")
    }
  }

  @Test func test_issue10_theKnownFingerprintCache_doesNotHideAShorterPath() async throws {
    try await withStore { store, _ in
      let crawl = try await store.openCrawl(source: "s", seeds: [Self.link(1, depth: 0)], now: t0)
      let seed = try #require(try await store.claim(crawl: crawl.id, limit: 1, owner: "me", leaseUntil: t0 + 60, now: t0).first)
      // The first commit puts 9 in the in-memory cache at depth 4.
      _ = try await store.commit([PageCommit(item: seed, outcome: .done, discovered: [Self.link(9, depth: 4)], now: t0)])
      let fingerprint = Self.link(9, depth: 0).fingerprint
      #expect(await store.known.depth(of: fingerprint, crawl: crawl.id) == 4)
      _ = try await store.commit([PageCommit(item: seed, outcome: .done, discovered: [Self.link(9, depth: 2)], now: t0)])
      #expect(await store.known.depth(of: fingerprint, crawl: crawl.id) == 2)
      let claimed = try await store.claim(crawl: crawl.id, limit: 10, owner: "me", leaseUntil: t0 + 60, now: t0)
      #expect(claimed.map(\.depth) == [2])
    }
  }
}
