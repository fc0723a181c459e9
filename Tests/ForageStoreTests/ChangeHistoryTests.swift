import Foundation
import Testing
@testable import ForageStore

/// Routes every change of the sources it knows to one channel, and records
/// what it was asked.
final class RecordingRouter: ChangeRouter, @unchecked Sendable {
  let lock = NSLock()
  var asked: [(kind: ChangeKind, key: String, firstCrawl: Bool)] = []
  let channels: [String]
  init(channels: [String] = ["ops"]) { self.channels = channels }
  func channels(for change: RecordChange, firstCrawl: Bool) -> [String] {
    lock.lock()
    asked.append((change.kind, change.key, firstCrawl))
    lock.unlock()
    return channels
  }
}

/// One page of a crawl: its seed number, what it gave, how it ended.
struct PagePlan {
  var n: Int
  var records: [RecordInput] = []
  var outcome: FrontierOutcome = .done
  var keepsRecords = false
}

/// Runs one crawl of source `s` over `pages` (all seeds at once), commits
/// each page and tries to complete it; returns the commits' result and the
/// completion (nil when the crawl is not complete).
@discardableResult
func crawl(
  _ store: any Store, _ pages: [PagePlan], seeds: [Int]? = nil, maxPages: Int? = nil,
  router: (any ChangeRouter)? = nil, at now: Date
) async throws -> (CommitResult, CrawlCompletion?) {
  let crawl = try await store.openCrawl(source: "s", seeds: (seeds ?? pages.map(\.n)).map { seed($0) }, now: now)
  let items = try await store.claim(crawl: crawl.id, limit: 100, owner: "a", leaseUntil: now + 60, now: now)
  var commits: [PageCommit] = []
  for page in pages {
    guard let item = items.first(where: { $0.fingerprint == seed(page.n).fingerprint }) else { continue }
    var commit = PageCommit(item: item, outcome: page.outcome, records: page.records, now: now)
    // A page that gave records was fetched: it has a row (as in a real crawl).
    if !page.records.isEmpty {
      commit.page = PageRecord(url: item.url, fingerprint: item.fingerprint, status: 200, fetchedAt: now)
    }
    commit.keepsRecords = page.keepsRecords
    commit.router = router
    commits.append(commit)
  }
  let result = try await store.commit(commits)
  try await store.releaseClaims(owner: "a")
  let completion = try await store.completeCrawl(crawl.id, maxPages: maxPages, router: router, now: now)
  return (result, completion)
}

func rec(_ key: String, _ price: Int, page: Int = 1) -> RecordInput {
  RecordInput(
    source: "s", key: key, url: "https://example.com/\(page)", fieldsJSON: #"{"price":\#(price)}"#,
    contentHash: UInt64(price) &* 31 &+ UInt64(key.utf8.first ?? 0))
}

@Suite struct ChangeHistoryTests {
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

  @Test(arguments: StoreKind.all) func test_completingTwice_removesOnce(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1), rec("b", 2)])], at: t0)
      let crawl2 = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0 + 60)
      let items = try await store.claim(crawl: crawl2.id, limit: 1, owner: "a", leaseUntil: t0 + 120, now: t0 + 60)
      _ = try await store.commit([PageCommit(item: items[0], outcome: .done, records: [rec("a", 1)], now: t0 + 60)])
      let first = try await store.completeCrawl(crawl2.id, maxPages: nil, router: nil, now: t0 + 60)
      let second = try await store.completeCrawl(crawl2.id, maxPages: nil, router: nil, now: t0 + 61)
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

  @Test(arguments: StoreKind.all) func test_failedCommit_writesNeitherChangeNorNotification(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let items = try await store.claim(crawl: crawl.id, limit: 1, owner: "a", leaseUntil: t0 + 60, now: t0)
      var good = PageCommit(item: items[0], outcome: .done, records: [rec("a", 1)], now: t0)
      good.router = RecordingRouter()
      var bogus = items[0]
      bogus.id = 999_999
      await #expect(throws: StoreError.self) {
        _ = try await store.commit([good, PageCommit(item: bogus, outcome: .done, now: t0)])
      }
      #expect(try await store.changes(matching: ChangeQuery()).isEmpty)
      #expect(try await store.notificationCounts(now: t0).pending == 0)
    }
  }

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
      #expect(try await store.changes(matching: ChangeQuery(source: "other")).isEmpty)
      let page = try await store.changes(matching: ChangeQuery(limit: 2))
      let rest = try await store.changes(matching: ChangeQuery(beforeID: page.last!.id, limit: 10))
      #expect(page + rest == all)
    }
  }
}

@Suite struct OutboxTests {
  /// A store with one changed record routed to "ops" (and the two new ones
  /// of the first crawl).
  private func storeWithNotifications(_ store: any Store) async throws {
    let router = RecordingRouter()
    try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)])], router: router, at: t0)
    try await crawl(store, [PagePlan(n: 1, records: [rec("a", 2)])], router: router, at: t0 + 60)
  }

  @Test(arguments: StoreKind.all) func test_claimSettle_delivered_retry_dead(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await storeWithNotifications(store)
      let claimed = try await store.claimNotifications(limit: 10, owner: "x", leaseUntil: t0 + 200, now: t0 + 100)
      #expect(claimed.count == 2)
      #expect(claimed.allSatisfy { $0.messageID.hasPrefix("msg_") && $0.messageID.count == 36 })
      #expect(Set(claimed.map(\.messageID)).count == 2)
      #expect(claimed.map(\.change.kind) == [.new, .changed])
      // Claimed: nobody else gets them while the lease holds.
      #expect(try await store.claimNotifications(limit: 10, owner: "y", leaseUntil: t0 + 200, now: t0 + 101).isEmpty)

      try await store.settleNotification(claimed[0].id, .delivered, now: t0 + 102)
      try await store.settleNotification(claimed[1].id, .retry(at: t0 + 300, error: "HTTP 500"), now: t0 + 102)
      let waiting = try await store.notificationCounts(now: t0 + 102)
      #expect(waiting.pending == 1 && waiting.retrying == 1 && waiting.due == 0)
      #expect(try await store.claimNotifications(limit: 10, owner: "y", leaseUntil: t0 + 400, now: t0 + 299).isEmpty)
      let retried = try await store.claimNotifications(limit: 10, owner: "y", leaseUntil: t0 + 400, now: t0 + 300)
      #expect(retried.map(\.messageID) == [claimed[1].messageID])
      #expect(retried[0].attempts == 1 && retried[0].lastError == "HTTP 500")

      try await store.settleNotification(retried[0].id, .dead(error: "too old"), now: t0 + 301)
      let counts = try await store.notificationCounts(now: t0 + 400)
      #expect(counts.pending == 0 && counts.delivered == 1 && counts.dead == 1)
      let dead = try await store.notifications(state: .dead, limit: 10)
      #expect(dead.map(\.lastError) == ["too old"])
      // A settled notification is not sent again.
      #expect(try await store.claimNotifications(limit: 10, owner: "z", leaseUntil: t0 + 900, now: t0 + 800).isEmpty)
      await #expect(throws: StoreError.self) { try await store.settleNotification(12345, .delivered, now: t0) }
    }
  }

  @Test func test_claimOfAKilledProcess_isReleased_sameMessageID() async throws {
    let temp = TempStorePath()
    var first: [OutboxNotification] = []
    do {
      let store = try SQLiteStore(path: temp.path)
      try await storeWithNotifications(store)
      first = try await store.claimNotifications(limit: 10, owner: "dead", leaseUntil: t0 + 3600, now: t0 + 100)
      #expect(first.count == 2)
      // The process dies here: no settle, no release.
    }
    let reopened = try SQLiteStore(path: temp.path)
    #expect(try await reopened.claimNotifications(limit: 10, owner: "b", leaseUntil: t0 + 3600, now: t0 + 101).isEmpty)
    try await reopened.releaseNotificationClaims(owner: nil)
    let again = try await reopened.claimNotifications(limit: 10, owner: "b", leaseUntil: t0 + 3600, now: t0 + 102)
    #expect(again.map(\.messageID) == first.map(\.messageID))
    // A lease that passed is claimable without a release.
    let later = try await reopened.claimNotifications(limit: 10, owner: "c", leaseUntil: t0 + 9000, now: t0 + 3601)
    #expect(later.map(\.messageID) == first.map(\.messageID))
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
      let claimed = try await store.claimNotifications(limit: 10, owner: "x", leaseUntil: t0 + 100, now: t0 + 10)
      for n in claimed { try await store.settleNotification(n.id, .delivered, now: t0 + 11) }
      #expect(try await store.pruneHistory(["s": HistoryRetention(keep: 1)], now: t0 + 12) == 2)
      #expect(try await store.notificationCounts(now: t0 + 12).delivered == 1)
    }
  }

  @Test(arguments: StoreKind.all) func test_disabledChannels_roundTrip(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let off = DisabledChannel(name: "ops", target: "https://hooks.example.com/x", reason: "410", at: t0)
      try await store.setDisabledChannel(off, name: "ops")
      #expect(try await store.disabledChannels() == [off])
      try await store.setDisabledChannel(nil, name: "ops")
      #expect(try await store.disabledChannels().isEmpty)
    }
  }
}

@Suite struct ChangeMigrationTests {
  /// A store written before v7 (kind-less changes, records without pages)
  /// keeps every change, reads kinds from them, and never removes a record
  /// no crawl has seen since.
  @Test func test_v6Store_keepsItsChanges_andRemovesNothingUnseen() async throws {
    let temp = TempStorePath()
    do {
      let db = try SQLiteConnection(path: temp.path)
      var old = Migrator()
      old.migrations = Array(Migrator.forage.migrations.prefix(6))
      _ = try old.migrate(db, now: 0)
      try db.exec(
        """
        INSERT INTO sources VALUES ('s', 0);
        INSERT INTO crawls (source, started_at, completed_at) VALUES ('s', 0, 1);
        INSERT INTO records (source, key, url, fields, content_hash, first_seen, last_seen)
          VALUES ('s', 'a', 'https://example.com/1', '{"price":2}', 2, 0, 1);
        INSERT INTO changes (source, key, before, after, at, run) VALUES ('s', 'a', NULL, '{"price":1}', 0, NULL);
        INSERT INTO changes (source, key, before, after, at, run) VALUES ('s', 'a', '{"price":1}', '{"price":2}', 1, NULL);
        """)
      try db.close()
    }
    let store = try SQLiteStore(path: temp.path)
    let changes = try await store.changes(matching: ChangeQuery())
    #expect(changes.map(\.kind) == [.changed, .new])
    #expect(changes.allSatisfy { $0.url == "https://example.com/1" })
    // A completed crawl that did not see "a" (its page answered 304 and the
    // old row knows no page) leaves it alone.
    let (_, completion) = try await crawl(store, [PagePlan(n: 1, keepsRecords: true)], at: t0)
    #expect(completion?.removed.isEmpty == true)
  }
}
