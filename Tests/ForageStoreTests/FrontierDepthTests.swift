import Foundation
import Testing
@testable import ForageStore

/// Depth is link distance: a shorter path found later lowers a queued URL's
/// depth (issue 10). What every store does is in FrontierConformanceTests;
/// this is SQLite's in-memory cache of known fingerprints.
@Suite struct FrontierDepthTests {
  static func link(_ n: Int, depth: Int) -> FrontierSeed {
    FrontierSeed(url: "https://example.com/\(n)", fingerprint: UInt64(n) &* 0x9E37_79B9_7F4A_7C15, depth: depth)
  }

  @Test func test_issue10_theKnownFingerprintCache_doesNotHideAShorterPath() async throws {
    try await withStore { store, _ in
      let crawl = try await store.openCrawl(source: "s", seeds: [Self.link(1, depth: 0)], now: t0)
      let seed = try #require(try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "me", for: .seconds(60), at: t0)).first)
      // The first commit puts 9 in the in-memory cache at depth 4.
      _ = try await store.commit([PageCommit(item: seed, outcome: .done, discovered: [Self.link(9, depth: 4)], now: t0)])
      let fingerprint = Self.link(9, depth: 0).fingerprint
      #expect(await store.known.depth(of: fingerprint, crawl: crawl.id) == 4)
      _ = try await store.commit([PageCommit(item: seed, outcome: .done, discovered: [Self.link(9, depth: 2)], now: t0)])
      #expect(await store.known.depth(of: fingerprint, crawl: crawl.id) == 2)
      let claimed = try await store.claim(crawl: crawl.id, limit: 10, lease: Lease(owner: "me", for: .seconds(60), at: t0))
      #expect(claimed.map(\.depth) == [2])
    }
  }
}
