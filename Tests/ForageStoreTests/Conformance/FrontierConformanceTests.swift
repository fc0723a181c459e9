import Foundation
import Testing
@testable import ForageStore

/// `FrontierStore` on every store: crawls, claims and leases, releases, counts,
/// and what a commit does to the frontier (outcomes, discovered links, the cap).
@Suite struct FrontierConformanceTests {
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

      let items = try await claimFrontier(store, first.id, limit: 10)
      try await commitPages(store, [pageCommit(items[0])])
      #expect(try await store.completeCrawlIfExhausted(first.id, now: t0 + 10))
      let next = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0 + 20)
      #expect(next.isNew)
      #expect(next.id != first.id)
      #expect(try await store.frontierCounts(crawl: next.id) == FrontierCounts(queued: 1))
    }
  }

  /// A seed's `lastModified` (a sitemap's `lastmod`) comes back on its claimed entry.
  @Test(arguments: StoreKind.all) func test_openCrawl_keepsASeedsLastModified(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let dated = FrontierSeed(url: "https://example.com/dated", fingerprint: 77, depth: 0, lastModified: t0 - 3600)
      let crawl = try await store.openCrawl(source: "s", seeds: [dated, seed(1)], now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 5)
      #expect(items.map(\.url) == ["https://example.com/dated", "https://example.com/1"])
      #expect(items.map(\.lastModified) == [t0 - 3600, nil])
      #expect(items[0].fingerprint == 77 && items[0].depth == 0)
    }
  }

  @Test(arguments: StoreKind.all) func test_claim_ordersByDepthThenDiscovery(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(
        source: "s", seeds: [seed(1, depth: 2), seed(2, depth: 0), seed(3, depth: 1),
                             seed(4, depth: 0)], now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 3)
      #expect(items.map(\.url) == ["https://example.com/2", "https://example.com/4",
                                   "https://example.com/3"])
      #expect(items.allSatisfy { $0.crawl == crawl.id && $0.attempts == 0 })
      #expect(items[0].fingerprint == seed(2).fingerprint)
      let rest = try await claimFrontier(store, crawl.id, limit: 3, owner: "b")
      #expect(rest.map(\.url) == ["https://example.com/1"])
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(claimed: 4))
      #expect(try await claimFrontier(store, crawl.id, limit: 3, owner: "c").isEmpty)
    }
  }

  /// Claims of one crawl never hand out another's entries.
  @Test(arguments: StoreKind.all) func test_claim_takesOnlyTheNamedCrawlsEntries(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let one = try await store.openCrawl(source: "one", seeds: [seed(1), seed(2)], now: t0)
      let two = try await store.openCrawl(source: "two", seeds: [seed(1), seed(3)], now: t0)
      let fromTwo = try await claimFrontier(store, two.id, limit: 10)
      #expect(fromTwo.map(\.url) == ["https://example.com/1", "https://example.com/3"])
      #expect(fromTwo.allSatisfy { $0.crawl == two.id })
      #expect(try await store.frontierCounts(crawl: one.id) == FrontierCounts(queued: 2))
      #expect(try await store.frontierCounts(crawl: two.id) == FrontierCounts(claimed: 2))
    }
  }

  @Test(arguments: StoreKind.all) func test_claim_liveLeaseIsNotReclaimed_expiredLeaseIs(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: t0)
      let a = try await claimFrontier(store, crawl.id, limit: 1, owner: "a", lease: 60, at: t0)
      #expect(a.count == 1)
      // Lease still running at t0 + 30: only the other entry is claimable.
      let b = try await claimFrontier(store, crawl.id, limit: 5, owner: "b", lease: 60, at: t0 + 30)
      #expect(b.map(\.id) != a.map(\.id))
      #expect(b.count == 1)
      // At t0 + 61, a's lease has ended but b's has not.
      let c = try await claimFrontier(store, crawl.id, limit: 5, owner: "c", lease: 139, at: t0 + 61)
      #expect(c.map(\.id) == a.map(\.id))
      #expect(c.first?.attempts == 0, "a lost lease is no failed attempt")
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(claimed: 2))
    }
  }

  /// A claim with its pages claims as `claim` does and brings the stored
  /// page of each entry fetched before, whole; entries never fetched have none.
  @Test(arguments: StoreKind.all) func test_claimWithPages_claimsInOrder_andBringsTheStoredPages(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let first = try await store.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: t0)
      let fetched = try await claimFrontier(store, first.id, limit: 2)
      let page = PageRecord(
        url: fetched[1].url, fingerprint: fetched[1].fingerprint, status: 200, etag: "\"v1\"",
        lastModified: "Tue, 01 Dec 2026 10:00:00 GMT", contentHash: 42, fetchedAt: t0,
        links: ["https://example.com/3"], encoding: "utf-8", recordCount: 2)
      try await commitPages(store, [pageCommit(fetched[0]), pageCommit(fetched[1], page: page)])
      #expect(try await store.completeCrawlIfExhausted(first.id, now: t0 + 1))

      let next = try await store.openCrawl(source: "s", seeds: [seed(3, depth: 1), seed(2), seed(1)], now: t0 + 2)
      let claimed = try await store.claimWithPages(crawl: next.id, limit: 2, lease: makeLease("a", 60, at: t0 + 2))
      #expect(claimed.items.map(\.url) == ["https://example.com/2", "https://example.com/1"])
      #expect(claimed.items.allSatisfy { $0.crawl == next.id })
      #expect(claimed.pages == [page.fingerprint: page])
      #expect(try await store.frontierCounts(crawl: next.id) == FrontierCounts(queued: 1, claimed: 2))
      // The rest: an entry never fetched, no page.
      let rest = try await store.claimWithPages(crawl: next.id, limit: 5, lease: makeLease("b", 60, at: t0 + 2))
      #expect(rest.items.map(\.url) == ["https://example.com/3"] && rest.pages.isEmpty)
      let none = try await store.claimWithPages(crawl: next.id, limit: 5, lease: makeLease("c", 60, at: t0 + 2))
      #expect(none.items.isEmpty && none.pages.isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_claim_zeroLimitClaimsNothing(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      #expect(try await claimFrontier(store, crawl.id, limit: 0).isEmpty)
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 1))
    }
  }

  @Test(arguments: StoreKind.all) func test_releaseClaims_ofOneOwner_andOfAll(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(
        source: "s", seeds: [seed(1), seed(2), seed(3)], now: t0)
      _ = try await claimFrontier(store, crawl.id, limit: 1, owner: "a")
      _ = try await claimFrontier(store, crawl.id, limit: 2, owner: "b")
      try await releaseFrontier(store, owner: "a")
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 1, claimed: 2))
      try await releaseFrontier(store, owner: "nobody")
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 1, claimed: 2))
      try await releaseFrontier(store, owner: nil)
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 3))
      // Released entries are claimed again in order, attempts unchanged.
      let again = try await claimFrontier(store, crawl.id, limit: 3, owner: "c")
      #expect(again.map(\.url) == (1...3).map { "https://example.com/\($0)" })
      #expect(again.allSatisfy { $0.attempts == 0 })
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_done_isNeverClaimedAgain(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 1)
      try await commitPages(store, [pageCommit(items[0])])
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(done: 1))
      try await releaseFrontier(store, owner: nil)
      #expect(try await claimFrontier(store, crawl.id, limit: 1, lease: 499, at: t0 + 500).isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_transientFailure_requeuesUntilMaxAttempts(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      for attempt in 0..<3 {
        let items = try await claimFrontier(store, crawl.id, limit: 1)
        try #require(items.count == 1)
        #expect(items[0].attempts == attempt)
        try await commitPages(store, [pageCommit(items[0], .failed(permanent: false, maxAttempts: 3))])
      }
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(failed: 1))
      #expect(try await claimFrontier(store, crawl.id, limit: 1).isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_permanentFailure_failsAtOnce(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 1)
      try await commitPages(store, [pageCommit(items[0], .failed(permanent: true, maxAttempts: 5))])
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(failed: 1))
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_deferred_requeuesWithAttemptsUnchanged(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      var items = try await claimFrontier(store, crawl.id, limit: 1)
      try await commitPages(store, [pageCommit(items[0], .failed(permanent: false, maxAttempts: 5))])
      items = try await claimFrontier(store, crawl.id, limit: 1)
      #expect(items.first?.attempts == 1)
      try await commitPages(store, [pageCommit(items[0], .deferred)])
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 1))
      items = try await claimFrontier(store, crawl.id, limit: 1)
      #expect(items.first?.attempts == 1)
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_discoveredLinks_dedupAndStopAtMaxPages(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 2)
      // Page 1 finds itself, a duplicate, and 3 new links; cap 4 admits 2.
      let first = pageCommit(
        items[0],
        discovered: [seed(1), seed(10, depth: 1), seed(10, depth: 1), seed(11, depth: 1),
                     seed(12, depth: 1)],
        maxPages: 4)
      // Page 2, in the same batch, finds more: the cap is already reached.
      let second = pageCommit(items[1], discovered: [seed(13, depth: 1)], maxPages: 4)
      let result = try await commitPages(store, [first, second])
      #expect(result.linksAdded == 2)
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 2, done: 2))
      #expect(try await frontierSize(store, crawl: crawl.id) == 4)
      let next = try await claimFrontier(store, crawl.id, limit: 5)
      #expect(next.map(\.url) == ["https://example.com/10", "https://example.com/11"])
      #expect(next.allSatisfy { $0.depth == 1 })
    }
  }

  /// A commit naming a frontier entry that does not exist writes nothing of
  /// its batch and says which entry it was.
  @Test(arguments: StoreKind.all) func test_commit_ofAnUnknownEntry_isNotFound_andWritesNothing(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 1)
      let ghost = FrontierItem(id: 987_654, crawl: crawl.id, url: "https://example.com/ghost", fingerprint: 42, depth: 1, attempts: 0)
      await #expect {
        try await commitPages(store, [pageCommit(items[0], discovered: [seed(2, depth: 1)]), pageCommit(ghost)])
      } throws: { error in
        (error as? StoreError)?.kind == .notFound && "\(error)".contains("987654")
      }
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(claimed: 1))
    }
  }

  /// A failing batch leaves nothing of itself: no record, change, page row,
  /// frontier state or link; the store works afterwards, and the link the
  /// failed batch had inserted is not taken as known.
  @Test(arguments: StoreKind.all) func test_failingBatch_leavesNothingOfTheBatch(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 2)
      let good = pageCommit(
        items[0], page: PageRecord(url: items[0].url, fingerprint: items[0].fingerprint, status: 200, fetchedAt: t0),
        records: [record("a", fields: "{}", hash: 1)], discovered: [seed(3)])
      // The second page names a frontier entry that does not exist.
      var missing = items[1]
      missing.id = 9_999
      let bad = pageCommit(missing, records: [record("b", fields: "{}", hash: 2)])
      await #expect(throws: StoreError.self) { try await commitPages(store, [good, bad]) }
      #expect(try await store.records(source: nil, afterID: 0, limit: 10).isEmpty)
      #expect(try await store.changes(source: nil, afterID: 0, limit: 10).isEmpty)
      #expect(try await store.page(fingerprint: items[0].fingerprint) == nil)
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(claimed: 2))
      #expect(try await frontierSize(store, crawl: crawl.id) == 2)
      let result = try await commitPages(store, [good])
      #expect(result.newRecords == 1 && result.linksAdded == 1)
      #expect(try await store.frontierCounts(crawl: crawl.id).total == 3)
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_discoveredLinks_withoutCap_areAllAdded(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 1)
      let result = try await commitPages(store, [pageCommit(items[0], discovered: (2...51).map { seed($0) })])
      #expect(result.linksAdded == 50)
      #expect(try await store.frontierCounts(crawl: crawl.id).total == 51)
      #expect(try await frontierSize(store, crawl: crawl.id) == 51)
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_linksKnownFromEarlierBatches_areNotAddedAgain(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(
        source: "s", seeds: [seed(1), seed(2), seed(3)], now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 3)
      let links = [seed(1), seed(10, depth: 1), seed(11, depth: 1)]
      var added: [Int] = []
      for item in items {
        added.append(try await commitPages(store, [pageCommit(item, discovered: links, maxPages: 100)]).linksAdded)
      }
      #expect(added == [2, 0, 0])
      #expect(try await frontierSize(store, crawl: crawl.id) == 5)
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 2, done: 3))
      // The next crawl of the source has its own frontier: links known in
      // the finished crawl are added to it again.
      let rest = try await claimFrontier(store, crawl.id, limit: 5)
      try await commitPages(store, rest.map { pageCommit($0) })
      #expect(try await store.completeCrawlIfExhausted(crawl.id, now: t0))
      let next = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0 + 1)
      let first = try await claimFrontier(store, next.id, limit: 1, at: t0 + 1)
      let result = try await commitPages(store, [pageCommit(first[0], discovered: links, maxPages: 100, at: t0 + 1)])
      #expect(result.linksAdded == 2)
    }
  }

  @Test(arguments: StoreKind.all) func test_completeCrawlIfExhausted_onlyWhenNothingQueuedOrClaimed(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: t0)
      #expect(try await !store.completeCrawlIfExhausted(crawl.id, now: t0))
      let items = try await claimFrontier(store, crawl.id, limit: 2)
      try await commitPages(store, [pageCommit(items[0])])
      #expect(try await !store.completeCrawlIfExhausted(crawl.id, now: t0))  // one claimed
      try await commitPages(store, [pageCommit(items[1], .failed(permanent: true, maxAttempts: 1))])
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

  /// Counts follow each entry through every state: queued, claimed, done
  /// and failed, one crawl apart from another.
  @Test(arguments: StoreKind.all) func test_frontierCounts_countEveryState(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: (1...5).map { seed($0) }, now: t0)
      _ = try await store.openCrawl(source: "other", seeds: (1...3).map { seed($0) }, now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 4)
      try await commitPages(store, [
        pageCommit(items[0]), pageCommit(items[1], .failed(permanent: true, maxAttempts: 3)),
      ])
      let counts = try await store.frontierCounts(crawl: crawl.id)
      #expect(counts == FrontierCounts(queued: 1, claimed: 2, done: 1, failed: 1))
      #expect(counts.total == 5)
      // The pending ones alone: queued and claimed, of this crawl only.
      #expect(try await store.pendingCounts(crawl: crawl.id) == FrontierCounts(queued: 1, claimed: 2))
      // Released claims are queued again.
      try await releaseFrontier(store, owner: nil)
      #expect(try await store.pendingCounts(crawl: crawl.id) == FrontierCounts(queued: 3))
      #expect(try await store.pendingCounts(crawl: 999_999) == FrontierCounts())
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_discoveredLinks_keepTheirURLsExactly_andTheirOrder(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let item = try #require(try await claimFrontier(store, crawl.id, limit: 1).first)
      let urls = [
        "https://example.com/a,b", "https://example.com/{x}", #"https://example.com/q"uote"#,
        #"https://example.com/back\slash"#, "NULL", "https://example.com/é ü", "https://example.com/last",
      ]
      let links = urls.enumerated().map { FrontierSeed(url: $1, fingerprint: UInt64(1000 + $0), depth: 1) }
        + [FrontierSeed(url: "https://example.com/dated", fingerprint: 2000, depth: 1, lastModified: t0 + 5)]
      let result = try await commitPages(store, [pageCommit(item, discovered: links)])
      #expect(result.linksAdded == urls.count + 1)
      let claimed = try await claimFrontier(store, crawl.id, limit: 50)
      #expect(claimed.map(\.url) == urls + ["https://example.com/dated"])
      #expect(claimed.last?.lastModified == t0 + 5)
      #expect(claimed.first?.lastModified == nil)
    }
  }

  // MARK: Depth is link distance (issue 10)

  static func link(_ n: Int, depth: Int) -> FrontierSeed {
    FrontierSeed(url: "https://example.com/\(n)", fingerprint: UInt64(n) &* 0x9E37_79B9_7F4A_7C15, depth: depth)
  }

  /// A shorter path found later lowers a queued URL's depth (issue 10).
  @Test(arguments: StoreKind.all) func test_issue10_aShorterPath_lowersAQueuedDepth_andALongerOneDoesNot(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [Self.link(1, depth: 0), Self.link(2, depth: 0)], now: t0)
      let seeds = try await claimFrontier(store, crawl.id, limit: 2, owner: "me")
      let first = try #require(seeds.first { $0.url.hasSuffix("/1") })
      let second = try #require(seeds.first { $0.url.hasSuffix("/2") })
      // Page 1 finds page 9 by a long path (depth 3, as a deep page would)…
      try await commitPages(store, [pageCommit(first, discovered: [Self.link(9, depth: 3)])])
      // …then page 2 finds it at depth 1, and a later page at depth 2.
      try await commitPages(store, [pageCommit(second, discovered: [Self.link(9, depth: 1)])])
      try await commitPages(store, [pageCommit(second, discovered: [Self.link(9, depth: 2)])])
      let claimed = try await claimFrontier(store, crawl.id, limit: 10, owner: "me")
      #expect(claimed.count == 1)
      #expect(claimed.first?.depth == 1)
      // Claimed (being fetched) or done entries keep theirs.
      let item = try #require(claimed.first)
      try await commitPages(store, [pageCommit(second, discovered: [Self.link(9, depth: 0)])])
      try await commitPages(store, [pageCommit(item)])
      #expect(try await store.frontierCounts(crawl: crawl.id).done == 3)
    }
  }

  /// Two pages of one commit find the same new page: it is added once, at
  /// the lesser depth, wherever in the batch that path was found.
  @Test(arguments: StoreKind.all) func test_oneBatch_sameNewLinkTwice_isAddedOnce_atTheLesserDepth(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [Self.link(1, depth: 0), Self.link(2, depth: 0)], now: t0)
      let seeds = try await claimFrontier(store, crawl.id, limit: 2, owner: "me")
      let result = try await commitPages(store, [
        pageCommit(seeds[0], discovered: [Self.link(9, depth: 3), Self.link(8, depth: 1)]),
        pageCommit(seeds[1], discovered: [Self.link(9, depth: 1)]),
      ])
      #expect(result.linksAdded == 2)
      let claimed = try await claimFrontier(store, crawl.id, limit: 10, owner: "me")
      #expect(claimed.count == 2)
      #expect(claimed.map(\.depth) == [1, 1], "\(claimed.map { ($0.url, $0.depth) })")
    }
  }
}
