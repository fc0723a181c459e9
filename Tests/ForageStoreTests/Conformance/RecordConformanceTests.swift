import Foundation
import Testing
@testable import ForageStore

/// `RecordStore` on every store: what commits write (pages, records and
/// their changes), crawl completion and its removals, history queries and
/// pruning, and the figures of each source.
@Suite struct RecordConformanceTests {
  /// Claims the single seed of a fresh crawl and commits `records` for it.
  private func commitOnce(
    _ store: any Store, _ n: Int, _ records: [RecordInput], at now: Date, run: Int64? = nil
  ) async throws -> CommitResult {
    let crawl = try await store.openCrawl(source: "crawl-\(n)", seeds: [seed(n)], now: now)
    let items = try await claimFrontier(store, crawl.id, limit: 1, at: now)
    return try await commitPages(store, [pageCommit(items[0], records: records, run: run, at: now)])
  }

  // MARK: New, changed, unchanged

  @Test(arguments: StoreKind.all) func test_commit_newChangedUnchangedRecords_writeChanges(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let run = try await store.beginRun(task: "t", sources: ["s"], startedAt: t0)
      let r1 = try await commitOnce(
        store, 1, [record("a", fields: #"{"p":1}"#, hash: 1), record("b", fields: #"{"p":2}"#, hash: 2)],
        at: t0, run: run)
      #expect(r1.newRecords == 2 && r1.changedRecords == 0 && r1.unchangedRecords == 0)
      #expect(r1.changes.map(\.key) == ["a", "b"])
      #expect(r1.changes.allSatisfy { $0.beforeJSON == nil && $0.run == run && $0.at == t0 })

      let t1 = t0 + 3600
      let r2 = try await commitOnce(
        store, 2, [record("a", fields: #"{"p":1}"#, hash: 1), record("b", fields: #"{"p":3}"#, hash: 3)],
        at: t1)
      #expect(r2.newRecords == 0 && r2.changedRecords == 1 && r2.unchangedRecords == 1)
      let change = try #require(r2.changes.first)
      #expect(change.key == "b")
      #expect(change.beforeJSON == #"{"p":2}"#)
      #expect(change.afterJSON == #"{"p":3}"#)
      #expect(change.run == nil)
      #expect(change.at == t1)

      let stored = try await store.records(source: "s", afterID: 0, limit: 10)
      #expect(stored.map(\.key) == ["a", "b"])
      #expect(stored[0].firstSeen == t0 && stored[0].lastSeen == t1)
      #expect(stored[0].fieldsJSON == #"{"p":1}"#)
      #expect(stored[1].fieldsJSON == #"{"p":3}"# && stored[1].contentHash == 3)
      #expect(stored[1].firstSeen == t0 && stored[1].lastSeen == t1)

      let changes = try await store.changes(source: nil, afterID: 0, limit: 10)
      #expect(changes.count == 3)
      #expect(changes == r1.changes + r2.changes)
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_unchangedRecord_updatesURL(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      _ = try await commitOnce(store, 1, [record("a", fields: "{}", hash: 7)], at: t0)
      var moved = record("a", fields: "{}", hash: 7)
      moved.url = "https://example.com/moved"
      let result = try await commitOnce(store, 2, [moved], at: t0 + 1)
      #expect(result.unchangedRecords == 1)
      #expect(result.changes.isEmpty)
      #expect(try await store.records(source: nil, afterID: 0, limit: 5).first?.url
              == "https://example.com/moved")
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_hashesKeepAll64Bits(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let big: UInt64 = 0xFEDC_BA98_7654_3210
      _ = try await commitOnce(store, 1, [record("a", fields: "{}", hash: big)], at: t0)
      #expect(try await store.records(source: nil, afterID: 0, limit: 1).first?.contentHash == big)
    }
  }

  @Test(arguments: StoreKind.all) func test_commit_pageUpsert_roundTripsEveryField(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 2)
      let fingerprint = UInt64.max - 5
      let page = PageRecord(
        url: "https://example.com/1", fingerprint: fingerprint, status: 200, etag: "\"abc\"",
        lastModified: "Tue, 14 Nov 2023 22:13:20 GMT", contentHash: 0x8000_0000_0000_0001,
        fetchedAt: t0, links: ["https://example.com/2", "https://example.com/3?q=é"], encoding: "Shift_JIS",
        recordCount: 7)
      try await commitPages(store, [pageCommit(items[0], page: page)])
      #expect(try await store.page(fingerprint: fingerprint) == page)

      let revisit = PageRecord(url: "https://example.com/1", fingerprint: fingerprint, status: 304,
                               fetchedAt: t0 + 10)
      try await commitPages(store, [pageCommit(items[1], page: revisit, at: t0 + 10)])
      let stored = try #require(try await store.page(fingerprint: fingerprint))
      #expect(stored == revisit)
      #expect(stored.links.isEmpty && stored.etag == nil && stored.contentHash == nil && stored.encoding == nil)
      #expect(stored.recordCount == 0)
      #expect(try await store.page(fingerprint: 12345) == nil)
    }
  }

  @Test(arguments: StoreKind.all) func test_records_pageByIDAndFilterBySource(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      var inputs: [RecordInput] = []
      for i in 0..<7 {
        inputs.append(record("k\(i)", source: i % 2 == 0 ? "even" : "odd", fields: "{}",
                             hash: UInt64(i)))
      }
      _ = try await commitOnce(store, 1, inputs, at: t0)
      var seen: [String] = []
      var after: Int64 = 0
      while true {
        let batch = try await store.records(source: nil, afterID: after, limit: 3)
        guard let last = batch.last else { break }
        #expect(batch.count <= 3)
        seen += batch.map(\.key)
        after = last.id
      }
      #expect(seen == (0..<7).map { "k\($0)" })
      let even = try await store.records(source: "even", afterID: 0, limit: 100)
      #expect(even.map(\.key) == ["k0", "k2", "k4", "k6"])
      let evenAfter = try await store.records(source: "even", afterID: even[1].id, limit: 1)
      #expect(evenAfter.map(\.key) == ["k4"])
      #expect(try await store.records(source: "none", afterID: 0, limit: 10).isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_changes_pageByIDAndFilterBySource(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      _ = try await commitOnce(
        store, 1,
        [record("a", source: "x", fields: "1", hash: 1), record("b", source: "y", fields: "2", hash: 2),
         record("c", source: "x", fields: "3", hash: 3)], at: t0)
      let x = try await store.changes(source: "x", afterID: 0, limit: 10)
      #expect(x.map(\.key) == ["a", "c"])
      let afterFirst = try await store.changes(source: nil, afterID: x[0].id, limit: 1)
      #expect(afterFirst.map(\.key) == ["b"])
    }
  }

  // MARK: Batches (one statement per batch must give what one per page gave)

  /// Two pages of one batch give the same record: the first makes it new,
  /// the second changes it (or leaves it, when it reads the same).
  @Test(arguments: StoreKind.all) func test_oneKeyTwiceInABatch_isNewThenChanged(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let items = try await claimedSeeds(store, 3)
      let result = try await commitPages(store, [
        pageCommit(items[0], records: [record("k", fields: #"{"p":1}"#, hash: 1)]),
        pageCommit(items[1], records: [record("k", fields: #"{"p":2}"#, hash: 2)]),
        pageCommit(items[2], records: [record("k", fields: #"{"p":2}"#, hash: 2)]),
      ])
      #expect(result.newRecords == 1 && result.changedRecords == 1 && result.unchangedRecords == 1)
      #expect(result.changes.map(\.kind) == [.new, .changed])
      #expect(result.changes.last?.beforeJSON == #"{"p":1}"#)
      let stored = try await store.records(source: "s", afterID: 0, limit: 10)
      #expect(stored.map(\.fieldsJSON) == [#"{"p":2}"#])
    }
  }

  /// Keys are compared as their bytes: "é" written precomposed and
  /// decomposed (equal as Swift strings) are two records; keys with quotes,
  /// backslashes and control characters are found again on the next crawl.
  @Test(arguments: StoreKind.all) func test_keysAreBytes_andSurviveEscaping(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      // (No NUL: PostgreSQL's text cannot hold one; the engine's keys never do.)
      let keys = ["caf\u{E9}", "cafe\u{301}", #"a"b\c"#, "tab\there\u{1}", "snow \u{2603}", "", "😀\u{7F}"]
      #expect(keys[0] == keys[1], "the premise: Swift compares by canonical equivalence")
      let first = try await claimedSeeds(store, 1)
      let r1 = try await commitPages(store, [
        pageCommit(first[0], records: keys.enumerated().map { record($1, fields: #"{"n":\#($0)}"#, hash: UInt64($0)) })
      ])
      #expect(r1.newRecords == keys.count)
      // Again, with every other record changed: each change reaches its own row.
      let second = try await claimedSeeds(store, 1, source: "again")
      let r2 = try await commitPages(store, [
        pageCommit(
          second[0],
          records: keys.enumerated().map { i, key in
            i % 2 == 1 ? record(key, fields: #"{"n":\#(i),"v":2}"#, hash: UInt64(100 + i))
              : record(key, fields: #"{"n":\#(i)}"#, hash: UInt64(i))
          }, at: t0 + 1)
      ])
      let odd = keys.indices.filter { $0 % 2 == 1 }
      #expect(r2.newRecords == 0 && r2.unchangedRecords == keys.count - odd.count && r2.changedRecords == odd.count)
      #expect(r2.changes.map { Array($0.key.utf8) } == odd.map { Array(keys[$0].utf8) })
      #expect(r2.changes.map(\.beforeJSON) == odd.map { #"{"n":\#($0)}"# })
      let stored = try await store.records(source: "s", afterID: 0, limit: 20)
      #expect(stored.map { Array($0.key.utf8) } == keys.map { Array($0.utf8) })
      #expect(stored.map(\.fieldsJSON) == keys.indices.map { $0 % 2 == 1 ? #"{"n":\#($0),"v":2}"# : #"{"n":\#($0)}"# })
      #expect(stored.map(\.lastSeen) == Array(repeating: t0 + 1, count: keys.count))
    }
  }

  /// A key stored in one spelling and sent later in the other is a new
  /// record, in a batch of its own and beside the first spelling.
  @Test(arguments: StoreKind.all) func test_otherSpellingOfAStoredKey_isANewRecord(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let items = try await claimedSeeds(store, 3)
      try await commitPages(store, [pageCommit(items[0], records: [record("caf\u{E9}", fields: #"{"n":0}"#, hash: 10)])])
      let alone = try await commitPages(store, [
        pageCommit(items[1], records: [record("cafe\u{301}", fields: #"{"n":1}"#, hash: 11)], at: t0 + 1)
      ])
      #expect(alone.newRecords == 1 && alone.changedRecords == 0 && alone.unchangedRecords == 0)
      let both = try await commitPages(store, [
        pageCommit(
          items[2],
          records: [record("cafe\u{301}", fields: #"{"n":1}"#, hash: 11), record("caf\u{E9}", fields: #"{"n":2}"#, hash: 12)],
          at: t0 + 2)
      ])
      #expect(both.unchangedRecords == 1 && both.changedRecords == 1)
      #expect(both.changes.map(\.beforeJSON) == [#"{"n":0}"#])
      let stored = try await store.records(source: "s", afterID: 0, limit: 10)
      #expect(stored.map { Array($0.key.utf8) } == [Array("caf\u{E9}".utf8), Array("cafe\u{301}".utf8)])
      #expect(stored.map(\.fieldsJSON) == [#"{"n":2}"#, #"{"n":1}"#])
    }
  }

  /// A NUL character in text: SQLite stores it; PostgreSQL's text cannot
  /// hold one, and the store says so instead of cutting the value at the NUL
  /// (libpq reads a text parameter as a C string), writing nothing of the batch.
  /// (The engine's record keys never hold one: see `Extractor.storable`.)
  @Test(arguments: StoreKind.all) func test_aNulInAKey_storedBySQLite_refusedClearlyByPostgres(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let items = try await claimedSeeds(store, 1)
      let commit = pageCommit(items[0], records: [record("a\u{0}b", fields: "{}", hash: 1)])
      switch kind {
      case .sqlite:
        #expect(try await commitPages(store, [commit]).newRecords == 1)
        let stored = try await store.records(source: "s", afterID: 0, limit: 10)
        #expect(stored.map { Array($0.key.utf8) } == [Array("a\u{0}b".utf8)])
      case .postgres:
        await #expect {
          try await commitPages(store, [commit])
        } throws: { error in
          "\(error)".contains("NUL character")
        }
        #expect(try await store.records(source: "s", afterID: 0, limit: 10).isEmpty)
        #expect(try await store.frontierCounts(crawl: items[0].crawl) == FrontierCounts(claimed: 1))
      }
    }
  }

  /// Records of several sources in one batch are each looked up in their own.
  @Test(arguments: StoreKind.all) func test_sameKeyInTwoSources_areTwoRecords(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let items = try await claimedSeeds(store, 2)
      try await commitPages(store, [pageCommit(items[0], records: [record("k", source: "x", fields: "{}", hash: 1)])])
      let result = try await commitPages(store, [
        pageCommit(
          items[1], records: [record("k", source: "x", fields: "{}", hash: 2), record("k", source: "y", fields: "{}", hash: 2)],
          at: t0 + 1)
      ])
      #expect(result.changedRecords == 1 && result.newRecords == 1)
      #expect(result.changes.map(\.source) == ["x", "y"])
    }
  }

  /// A claim's stored pages come back keyed by fingerprint, all 64 bits of it,
  /// and only for the pages that were stored.
  @Test(arguments: StoreKind.all) func test_pagesOfABatch_keyedByFingerprint(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let items = try await claimedSeeds(store, 3)
      func page(_ item: FrontierItem, etag: String) -> PageRecord {
        PageRecord(url: item.url, fingerprint: item.fingerprint, status: 200, etag: etag, fetchedAt: t0)
      }
      try await commitPages(store, [
        pageCommit(items[0], page: page(items[0], etag: "e0")),
        pageCommit(items[2], page: page(items[2], etag: "e2")),
      ])
      let high = UInt64.max - 5
      let found = try await store.pages(fingerprints: items.map(\.fingerprint) + [high])
      #expect(Set(found.keys) == [items[0].fingerprint, items[2].fingerprint])
      #expect(found[items[0].fingerprint]?.etag == "e0" && found[items[2].fingerprint]?.etag == "e2")
      #expect(items.contains { $0.fingerprint > UInt64(Int64.max) })
      #expect(try await store.pages(fingerprints: []).isEmpty)
    }
  }

  // MARK: Completion, removal and restoration

  @Test(arguments: StoreKind.all) func test_completedCrawl_removesWhatItDidNotSee_keepsWhatA304PageStillHolds(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1), rec("b", 2)]), PagePlan(n: 2, records: [rec("c", 3, page: 2)])], at: t0)
      // Page 1 no longer lists b; page 2 answered 304.
      let (_, completion) = try await crawl(
        store, [PagePlan(n: 1, records: [rec("a", 1)]), PagePlan(n: 2, keepsRecords: true)], at: t0 + 60)
      let removed = try #require(completion).removed
      #expect(removed.map(\.key) == ["b"])
      #expect(removed[0].kind == .removed)
      #expect(removed[0].beforeJSON == #"{"price":2}"#)
      #expect(removed[0].afterJSON == nil)
      #expect(removed[0].url == "https://example.com/1")
      let records = try await store.records(source: "s", afterID: 0, limit: 10)
      #expect(records.first { $0.key == "b" }?.removedAt == t0 + 60)
      #expect(records.filter { $0.removedAt != nil }.map(\.key) == ["b"])
    }
  }

  /// `StoredRecord.lastSeen` is when a page last gave the record: a page
  /// answered 304 keeps its records for the crawl (they are not removed)
  /// without moving their `lastSeen` (the doc said a 304 did).
  @Test(arguments: StoreKind.all) func test_a304Page_keepsItsRecords_withoutMovingTheirLastSeen(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)]), PagePlan(n: 2, records: [rec("c", 3, page: 2)])], at: t0)
      let (_, completion) = try await crawl(
        store, [PagePlan(n: 1, records: [rec("a", 1)]), PagePlan(n: 2, keepsRecords: true)], at: t0 + 60)
      #expect(try #require(completion).removed.isEmpty)
      let records = try await store.records(source: "s", afterID: 0, limit: 10)
      #expect(records.first { $0.key == "a" }?.lastSeen == t0 + 60)
      #expect(records.first { $0.key == "c" }?.lastSeen == t0)
      #expect(records.allSatisfy { $0.removedAt == nil })
    }
  }

  /// A page that failed in a way that may pass (`keepsRecords`, outcome
  /// failed) vouches for its records like a 304: a completed crawl keeps them.
  @Test(arguments: StoreKind.all) func test_aFailedPageThatKeepsItsRecords_isNotEmptiedByCompletion(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)]), PagePlan(n: 2, records: [rec("c", 3, page: 2)])], at: t0)
      let (_, completion) = try await crawl(
        store,
        [PagePlan(n: 1, records: [rec("a", 1)]),
         PagePlan(n: 2, outcome: .failed(permanent: true, maxAttempts: 1), keepsRecords: true)],
        at: t0 + 60)
      #expect(try #require(completion).removed.isEmpty)
      // Without it, the next completed crawl removes them.
      let (_, next) = try await crawl(
        store, [PagePlan(n: 1, records: [rec("a", 1)]), PagePlan(n: 2, outcome: .failed(permanent: true, maxAttempts: 1))],
        at: t0 + 120)
      #expect(try #require(next).removed.map(\.key) == ["c"])
    }
  }

  @Test(arguments: StoreKind.all) func test_interruptedCrawl_removesNothing(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)]), PagePlan(n: 2, records: [rec("c", 3, page: 2)])], at: t0)
      // Page 2 was not reached (deferred): the crawl is not complete.
      let (_, completion) = try await crawl(
        store, [PagePlan(n: 1, records: []), PagePlan(n: 2, outcome: .deferred)], at: t0 + 60)
      #expect(completion == nil)
      let changes = try await store.changes(matching: ChangeQuery(kinds: [.removed]))
      #expect(changes.isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_recordSeenAgainAfterRemoval_isRestored(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1), rec("b", 2)])], at: t0)
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)])], at: t0 + 60)
      let (result, _) = try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1), rec("b", 5)])], at: t0 + 120)
      #expect(result.restoredRecords == 1)
      let restored = try #require(result.changes.first)
      #expect(restored.kind == .restored && restored.key == "b")
      #expect(restored.beforeJSON == #"{"price":2}"# && restored.afterJSON == #"{"price":5}"#)
      let b = try await store.records(source: "s", afterID: 0, limit: 10).first { $0.key == "b" }
      #expect(b?.removedAt == nil)
      // The same fields as before the removal still make a restored change.
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)])], at: t0 + 180)
      let (again, _) = try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1), rec("b", 5)])], at: t0 + 240)
      #expect(again.changes.map(\.kind) == [.restored])
    }
  }

  @Test(arguments: StoreKind.all) func test_cappedCrawl_removesOnlyFromPagesItFetched(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1), rec("b", 2)]), PagePlan(n: 2, records: [rec("c", 3, page: 2)])], at: t0)
      // The frontier holds one page and its cap is one: page 2 may lie past the cap.
      let (_, capped) = try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)])], maxPages: 1, at: t0 + 60)
      #expect(try #require(capped).removed.map(\.key) == ["b"])
      // Without a cap, a page no crawl reaches takes its records with it.
      let (_, full) = try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)])], at: t0 + 120)
      #expect(try #require(full).removed.map(\.key) == ["c"])
    }
  }

  /// A cap the frontier did not reach is no cap: every unseen record goes.
  @Test(arguments: StoreKind.all) func test_aCapNotReached_removesLikeNoCap(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1), rec("b", 2)]), PagePlan(n: 2, records: [rec("c", 3, page: 2)])], at: t0)
      let (_, completion) = try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)])], maxPages: 5, at: t0 + 60)
      #expect(try #require(completion).removed.map(\.key) == ["b", "c"])
    }
  }

  @Test(arguments: StoreKind.all) func test_completingTwice_removesOnce(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1), rec("b", 2)])], at: t0)
      let crawl2 = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0 + 60)
      let items = try await claimFrontier(store, crawl2.id, limit: 1, at: t0 + 60)
      try await commitPages(store, [pageCommit(items[0], records: [rec("a", 1)], at: t0 + 60)])
      let first = try await completeCrawl(store, crawl2.id, at: t0 + 60)
      let second = try await completeCrawl(store, crawl2.id, at: t0 + 61)
      #expect(first?.removed.count == 1)
      #expect(second == CrawlCompletion())
    }
  }

  @Test(arguments: StoreKind.all) func test_router_isToldOfTheFirstCrawl_andGetsEveryKind(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let router = RecordingRouter()
      let (first, _) = try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1), rec("b", 2)])], router: router, at: t0)
      #expect(first.notifications == 2)
      let (second, completion) = try await crawl(
        store, [PagePlan(n: 1, records: [rec("a", 3), rec("c", 4)])], router: router, at: t0 + 60)
      #expect(second.notifications == 2)
      #expect(completion?.notifications == 1)
      #expect(router.asked.map(\.kind) == [.new, .new, .changed, .new, .removed])
      #expect(router.asked.map(\.firstCrawl) == [true, true, false, false, false])
      let counts = try await store.notificationCounts(now: t0 + 60)
      #expect(counts.pending == 5 && counts.due == 5)
    }
  }

  /// A router naming no channel writes no notification; one naming two writes two.
  @Test(arguments: StoreKind.all) func test_router_writesOneNotificationPerChannel(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let (none, _) = try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)])], router: RecordingRouter(channels: []), at: t0)
      #expect(none.notifications == 0)
      let (two, _) = try await crawl(
        store, [PagePlan(n: 1, records: [rec("a", 2)])], router: RecordingRouter(channels: ["ops", "mail"]), at: t0 + 60)
      #expect(two.notifications == 2)
      let pending = try await store.notifications(state: .pending, limit: 10)
      #expect(Set(pending.map(\.channel)) == ["ops", "mail"])
      #expect(pending.allSatisfy { $0.change.kind == .changed && $0.change.key == "a" })
    }
  }

  @Test(arguments: StoreKind.all) func test_failedCommit_writesNeitherChangeNorNotification(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let items = try await claimFrontier(store, crawl.id, limit: 1)
      let good = pageCommit(items[0], records: [rec("a", 1)], router: RecordingRouter())
      var bogus = items[0]
      bogus.id = 999_999
      await #expect(throws: StoreError.self) {
        try await commitPages(store, [good, pageCommit(bogus)])
      }
      #expect(try await store.changes(matching: ChangeQuery()).isEmpty)
      #expect(try await store.notificationCounts(now: t0).pending == 0)
    }
  }

  // MARK: History

  @Test(arguments: StoreKind.all) func test_changesMatching_filtersAndPagesNewestFirst(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1), rec("b", 2)])], at: t0)
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 3)])], at: t0 + 3600)
      let all = try await store.changes(matching: ChangeQuery())
      #expect(all.map(\.kind) == [.removed, .changed, .new, .new])
      #expect(all.map(\.id) == all.map(\.id).sorted(by: >))
      #expect(try await store.changes(matching: ChangeQuery(kinds: [.changed])).map(\.key) == ["a"])
      #expect(try await store.changes(matching: ChangeQuery(kinds: [.new, .removed])).count == 3)
      #expect(try await store.changes(matching: ChangeQuery(since: t0 + 1)).count == 2)
      #expect(try await store.changes(matching: ChangeQuery(since: t0 + 3600)).count == 2, "since is inclusive")
      #expect(try await store.changes(matching: ChangeQuery(source: "other")).isEmpty)
      #expect(try await store.changes(matching: ChangeQuery(source: "s", kinds: [.new], since: t0)).count == 2)
      let page = try await store.changes(matching: ChangeQuery(limit: 2))
      let rest = try await store.changes(matching: ChangeQuery(beforeID: page.last!.id, limit: 10))
      #expect(page + rest == all)
    }
  }

  @Test(arguments: StoreKind.all) func test_prune_keepsNewestPerRecord_andPendingOnes(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      for i in 0..<5 {
        try await crawl(store, [PagePlan(n: 1, records: [rec("a", 10 + i), rec("b", 20 + i)])], at: t0 + Double(i) * 86_400)
      }
      #expect(try await store.changes(matching: ChangeQuery()).count == 10)
      let dropped = try await store.pruneHistory(["s": HistoryRetention(keep: 2)], now: t0 + 5 * 86_400)
      #expect(dropped == 6)
      let left = try await store.changes(matching: ChangeQuery())
      #expect(left.filter { $0.key == "a" }.map(\.afterJSON) == [#"{"price":14}"#, #"{"price":13}"#])
      // By age: only changes of the last two days stay; another source is untouched.
      let byAge = try await store.pruneHistory(["s": HistoryRetention(maxAge: .seconds(86_400))], now: t0 + 4.5 * 86_400)
      #expect(byAge == 2)
      #expect(try await store.pruneHistory(["other": HistoryRetention(keep: 1)], now: t0) == 0)
    }
  }

  @Test(arguments: StoreKind.all) func test_prune_neverDropsAChangeWithAPendingNotification(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let router = RecordingRouter()
      for i in 0..<3 {
        try await crawl(store, [PagePlan(n: 1, records: [rec("a", i)])], router: router, at: t0 + Double(i))
      }
      let pending = try await store.notificationCounts(now: t0 + 10).pending
      #expect(pending == 3)
      #expect(try await store.pruneHistory(["s": HistoryRetention(keep: 1)], now: t0 + 10) == 0)
      // Delivered ones may go, with their outbox rows.
      let claimed = try await claimOutbox(store, owner: "x", lease: 90, at: t0 + 10)
      for n in claimed { try await store.settleNotification(n.id, .delivered, now: t0 + 11) }
      #expect(try await store.pruneHistory(["s": HistoryRetention(keep: 1)], now: t0 + 12) == 2)
      #expect(try await store.notificationCounts(now: t0 + 12).delivered == 1)
    }
  }

  /// Sources not named keep everything, and an empty retention drops nothing.
  @Test(arguments: StoreKind.all) func test_prune_ofNoRetention_dropsNothing(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      for i in 0..<3 {
        try await crawl(store, [PagePlan(n: 1, records: [rec("a", i)])], at: t0 + Double(i) * 86_400)
      }
      #expect(try await store.pruneHistory([:], now: t0 + 400 * 86_400) == 0)
      #expect(try await store.pruneHistory(["s": HistoryRetention()], now: t0 + 400 * 86_400) == 0)
      #expect(try await store.changes(matching: ChangeQuery()).count == 3)
    }
  }

  // MARK: Sources

  @Test(arguments: StoreKind.all) func test_sourceNames_listsCrawledAndRecordedSources(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      #expect(try await store.sourceNames() == [])
      _ = try await store.openCrawl(source: "zeta", seeds: [seed(1)], now: t0)
      _ = try await store.openCrawl(source: "alpha", seeds: [seed(2)], now: t0)
      #expect(try await store.sourceNames() == ["alpha", "zeta"])
      // A record of a source no crawl names (a page of "alpha" giving "mid"'s records).
      _ = try await commitOnce(store, 3, [record("k", source: "mid", fields: "{}", hash: 1)], at: t0)
      #expect(try await store.sourceNames() == ["alpha", "crawl-3", "mid", "zeta"])
    }
  }

  /// Each source's figures: current and removed records, the newest
  /// `lastSeen`, changes since the date asked, the last completed crawl; a
  /// source with only an open crawl is listed with zeros.
  @Test(arguments: StoreKind.all) func test_sourceStatistics_countEachSource(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      #expect(try await store.sourceStatistics(since: t0).isEmpty)
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1), rec("b", 2), rec("c", 3)])], at: t0)
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1), rec("c", 4)])], at: t0 + 60)
      _ = try await store.openCrawl(source: "other", seeds: [seed(1)], now: t0 + 90)
      let stats = try await store.sourceStatistics(since: t0 + 30)
      #expect(stats.map(\.name) == ["other", "s"])
      var s = SourceStatistics(name: "s")
      s.records = 2
      s.removed = 1
      s.lastSeen = t0 + 60
      s.recentChanges = 2  // c changed, b removed
      s.lastCompletedCrawl = t0 + 60
      #expect(stats.last == s)
      #expect(stats.first == SourceStatistics(name: "other"))
      #expect(try await store.sourceStatistics(since: t0).last?.recentChanges == 5)
    }
  }
}
