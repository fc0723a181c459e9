import Foundation
import Testing
@testable import ForageStore

@Suite struct SQLiteStoreFrontierTests {
  @Test(arguments: StoreKind.all) func test_openCrawl_dedupsSeedsByFingerprint(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(
        source: "s", seeds: [seed(1), seed(2), seed(1), seed(3)], now: t0)
      #expect(crawl.isNew)
      #expect(crawl.source == "s")
      #expect(crawl.startedAt == t0)
      let counts = try await store.frontierCounts(crawl: crawl.id)
      #expect(counts == FrontierCounts(queued: 3))
      #expect(try await frontierSize(store, crawl: crawl.id) == 3)
    }
  }

  @Test(arguments: StoreKind.all) func test_openCrawl_returnsUnfinishedCrawl_thenStartsNewAfterCompletion(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let first = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let again = try await store.openCrawl(source: "s", seeds: [seed(2)], now: t0 + 5)
      #expect(again.id == first.id)
      #expect(!again.isNew)
      #expect(again.startedAt == t0)
      #expect(try await store.frontierCounts(crawl: first.id).total == 1)
      let other = try await store.openCrawl(source: "other", seeds: [seed(1)], now: t0)
      #expect(other.id != first.id)

      let items = try await store.claim(
        crawl: first.id, limit: 10, owner: "a", leaseUntil: t0 + 60, now: t0)
      _ = try await store.commit([PageCommit(item: items[0], outcome: .done, now: t0)])
      #expect(try await store.completeCrawlIfExhausted(first.id, now: t0 + 10))
      let next = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0 + 20)
      #expect(next.isNew)
      #expect(next.id != first.id)
      #expect(try await store.frontierCounts(crawl: next.id) == FrontierCounts(queued: 1))
    }
  }

  @Test(arguments: StoreKind.all) func test_claim_ordersByDepthThenDiscovery(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(
        source: "s", seeds: [seed(1, depth: 2), seed(2, depth: 0), seed(3, depth: 1),
                             seed(4, depth: 0)], now: t0)
      let items = try await store.claim(
        crawl: crawl.id, limit: 3, owner: "a", leaseUntil: t0 + 60, now: t0)
      #expect(items.map(\.url) == ["https://example.com/2", "https://example.com/4",
                                   "https://example.com/3"])
      #expect(items.allSatisfy { $0.crawl == crawl.id && $0.attempts == 0 })
      #expect(items[0].fingerprint == seed(2).fingerprint)
      let rest = try await store.claim(
        crawl: crawl.id, limit: 3, owner: "b", leaseUntil: t0 + 60, now: t0)
      #expect(rest.map(\.url) == ["https://example.com/1"])
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(claimed: 4))
      #expect(try await store.claim(
        crawl: crawl.id, limit: 3, owner: "c", leaseUntil: t0 + 60, now: t0).isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_claim_liveLeaseIsNotReclaimed_expiredLeaseIs(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: t0)
      let a = try await store.claim(
        crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0)
      #expect(a.count == 1)
      // Lease still running at t0 + 30: only the other entry is claimable.
      let b = try await store.claim(
        crawl: crawl.id, limit: 5, owner: "b", leaseUntil: t0 + 90, now: t0 + 30)
      #expect(b.map(\.id) != a.map(\.id))
      #expect(b.count == 1)
      // At t0 + 61, a's lease has ended but b's has not.
      let c = try await store.claim(
        crawl: crawl.id, limit: 5, owner: "c", leaseUntil: t0 + 200, now: t0 + 61)
      #expect(c.map(\.id) == a.map(\.id))
    }
  }

  @Test(arguments: StoreKind.all) func test_claim_zeroLimitClaimsNothing(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      #expect(try await store.claim(
        crawl: crawl.id, limit: 0, owner: "a", leaseUntil: t0 + 60, now: t0).isEmpty)
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 1))
    }
  }

  @Test(arguments: StoreKind.all) func test_releaseClaims_ofOneOwner_andOfAll(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(
        source: "s", seeds: [seed(1), seed(2), seed(3)], now: t0)
      _ = try await store.claim(crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0)
      _ = try await store.claim(crawl: crawl.id, limit: 2, owner: "b", leaseUntil: t0 + 60, now: t0)
      try await store.releaseClaims(owner: "a")
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 1, claimed: 2))
      try await store.releaseClaims(owner: "nobody")
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 1, claimed: 2))
      try await store.releaseClaims(owner: nil)
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 3))
      // Released entries are claimed again in order, attempts unchanged.
      let again = try await store.claim(
        crawl: crawl.id, limit: 3, owner: "c", leaseUntil: t0 + 60, now: t0)
      #expect(again.map(\.url) == (1...3).map { "https://example.com/\($0)" })
      #expect(again.allSatisfy { $0.attempts == 0 })
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_done_isNeverClaimedAgain(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let items = try await store.claim(
        crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0)
      _ = try await store.commit([PageCommit(item: items[0], outcome: .done, now: t0)])
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(done: 1))
      try await store.releaseClaims(owner: nil)
      #expect(try await store.claim(
        crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 999, now: t0 + 500).isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_transientFailure_requeuesUntilMaxAttempts(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      for attempt in 0..<3 {
        let items = try await store.claim(
          crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0)
        try #require(items.count == 1)
        #expect(items[0].attempts == attempt)
        _ = try await store.commit([
          PageCommit(item: items[0], outcome: .failed(permanent: false, maxAttempts: 3), now: t0)
        ])
      }
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(failed: 1))
      #expect(try await store.claim(
        crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0).isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_permanentFailure_failsAtOnce(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let items = try await store.claim(
        crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0)
      _ = try await store.commit([
        PageCommit(item: items[0], outcome: .failed(permanent: true, maxAttempts: 5), now: t0)
      ])
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(failed: 1))
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_deferred_requeuesWithAttemptsUnchanged(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      var items = try await store.claim(
        crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0)
      _ = try await store.commit([
        PageCommit(item: items[0], outcome: .failed(permanent: false, maxAttempts: 5), now: t0)
      ])
      items = try await store.claim(
        crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0)
      #expect(items.first?.attempts == 1)
      _ = try await store.commit([PageCommit(item: items[0], outcome: .deferred, now: t0)])
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 1))
      items = try await store.claim(
        crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0)
      #expect(items.first?.attempts == 1)
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_discoveredLinks_dedupAndStopAtMaxPages(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: t0)
      let items = try await store.claim(
        crawl: crawl.id, limit: 2, owner: "a", leaseUntil: t0 + 60, now: t0)
      // Page 1 finds itself, a duplicate, and 3 new links; cap 4 admits 2.
      let first = PageCommit(
        item: items[0], outcome: .done,
        discovered: [seed(1), seed(10, depth: 1), seed(10, depth: 1), seed(11, depth: 1),
                     seed(12, depth: 1)],
        maxPages: 4, now: t0)
      // Page 2, in the same batch, finds more: the cap is already reached.
      let second = PageCommit(
        item: items[1], outcome: .done, discovered: [seed(13, depth: 1)], maxPages: 4, now: t0)
      let result = try await store.commit([first, second])
      #expect(result.linksAdded == 2)
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 2, done: 2))
      #expect(try await frontierSize(store, crawl: crawl.id) == 4)
      let next = try await store.claim(
        crawl: crawl.id, limit: 5, owner: "a", leaseUntil: t0 + 60, now: t0)
      #expect(next.map(\.url) == ["https://example.com/10", "https://example.com/11"])
      #expect(next.allSatisfy { $0.depth == 1 })
    }
  }

  /// A commit naming a frontier entry that does not exist writes nothing of
  /// its batch and says which entry it was.
  @Test(arguments: StoreKind.all) func test_commit_ofAnUnknownEntry_isNotFound_andWritesNothing(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let items = try await store.claim(crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0)
      let ghost = FrontierItem(id: 987_654, crawl: crawl.id, url: "https://example.com/ghost", fingerprint: 42, depth: 1, attempts: 0)
      await #expect {
        _ = try await store.commit([
          PageCommit(item: items[0], outcome: .done, discovered: [seed(2, depth: 1)], now: t0),
          PageCommit(item: ghost, outcome: .done, now: t0),
        ])
      } throws: { error in
        (error as? StoreError)?.kind == .notFound && "\(error)".contains("987654")
      }
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(claimed: 1))
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_discoveredLinks_withoutCap_areAllAdded(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let items = try await store.claim(
        crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0)
      let result = try await store.commit([
        PageCommit(item: items[0], outcome: .done, discovered: (2...51).map { seed($0) }, now: t0)
      ])
      #expect(result.linksAdded == 50)
      #expect(try await store.frontierCounts(crawl: crawl.id).total == 51)
      #expect(try await frontierSize(store, crawl: crawl.id) == 51)
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_linksKnownFromEarlierBatches_areNotAddedAgain(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(
        source: "s", seeds: [seed(1), seed(2), seed(3)], now: t0)
      let items = try await store.claim(
        crawl: crawl.id, limit: 3, owner: "a", leaseUntil: t0 + 60, now: t0)
      let links = [seed(1), seed(10, depth: 1), seed(11, depth: 1)]
      var added: [Int] = []
      for item in items {
        added.append(try await store.commit([
          PageCommit(item: item, outcome: .done, discovered: links, maxPages: 100, now: t0)
        ]).linksAdded)
      }
      #expect(added == [2, 0, 0])
      #expect(try await frontierSize(store, crawl: crawl.id) == 5)
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 2, done: 3))
      // The next crawl of the source has its own frontier: links known in
      // the finished crawl are added to it again.
      let rest = try await store.claim(
        crawl: crawl.id, limit: 5, owner: "a", leaseUntil: t0 + 60, now: t0)
      _ = try await store.commit(rest.map { PageCommit(item: $0, outcome: .done, now: t0) })
      #expect(try await store.completeCrawlIfExhausted(crawl.id, now: t0))
      let next = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0 + 1)
      let first = try await store.claim(
        crawl: next.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0 + 1)
      let result = try await store.commit([
        PageCommit(item: first[0], outcome: .done, discovered: links, maxPages: 100, now: t0 + 1)
      ])
      #expect(result.linksAdded == 2)
    }
  }

  @Test(arguments: StoreKind.all) func test_completeCrawlIfExhausted_onlyWhenNothingQueuedOrClaimed(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: t0)
      #expect(try await !store.completeCrawlIfExhausted(crawl.id, now: t0))
      let items = try await store.claim(
        crawl: crawl.id, limit: 2, owner: "a", leaseUntil: t0 + 60, now: t0)
      _ = try await store.commit([PageCommit(item: items[0], outcome: .done, now: t0)])
      #expect(try await !store.completeCrawlIfExhausted(crawl.id, now: t0))  // one claimed
      _ = try await store.commit([
        PageCommit(item: items[1], outcome: .failed(permanent: true, maxAttempts: 1), now: t0)
      ])
      #expect(try await store.completeCrawlIfExhausted(crawl.id, now: t0))
      #expect(try await store.completeCrawlIfExhausted(crawl.id, now: t0 + 1))
      await #expect(throws: StoreError.self) {
        _ = try await store.completeCrawlIfExhausted(999, now: t0)
      }
    }
  }

  @Test(arguments: StoreKind.all) func test_frontierCounts_ofUnknownCrawlAreZero(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let counts = try await store.frontierCounts(crawl: 42)
      #expect(counts == FrontierCounts())
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_discoveredLinks_keepTheirURLsExactly_andTheirOrder(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let item = try #require(try await store.claim(crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0).first)
      let urls = [
        "https://example.com/a,b", "https://example.com/{x}", #"https://example.com/q"uote"#,
        #"https://example.com/back\slash"#, "NULL", "https://example.com/é ü", "https://example.com/last",
      ]
      let links = urls.enumerated().map { FrontierSeed(url: $1, fingerprint: UInt64(1000 + $0), depth: 1) }
        + [FrontierSeed(url: "https://example.com/dated", fingerprint: 2000, depth: 1, lastModified: t0 + 5)]
      let result = try await store.commit([PageCommit(item: item, outcome: .done, discovered: links, now: t0)])
      #expect(result.linksAdded == urls.count + 1)
      let claimed = try await store.claim(crawl: crawl.id, limit: 50, owner: "a", leaseUntil: t0 + 60, now: t0)
      #expect(claimed.map(\.url) == urls + ["https://example.com/dated"])
      #expect(claimed.last?.lastModified == t0 + 5)
      #expect(claimed.first?.lastModified == nil)
    }
  }
}
