import Foundation
import Testing
@testable import ForageStore

/// The record rules alone: no store, no SQL, only what a store would read.
@Suite struct RecordRulesTests {
  let t0 = Date(timeIntervalSince1970: 1_700_000_000)

  /// A record of source "s" whose fields are its price (the hash is the price).
  func input(_ key: String, _ price: Int, url: String = "https://shop.test/1") -> RecordInput {
    RecordInput(source: "s", key: key, url: url, fieldsJSON: #"{"price":\#(price)}"#, contentHash: UInt64(price))
  }

  /// A stored row of `key` with this price.
  func row(_ id: Int64, _ price: Int, removed: Bool = false) -> StoredRecordRow {
    StoredRecordRow(id: id, contentHash: UInt64(price), fields: #"{"price":\#(price)}"#, removed: removed)
  }

  func page(_ n: Int, _ records: [RecordInput], at now: Date? = nil, router: (any ChangeRouter)? = nil) -> PageCommit {
    let item = FrontierItem(
      id: Int64(n), crawl: 7, url: "https://shop.test/\(n)", fingerprint: UInt64(100 + n), depth: 0, attempts: 0)
    var commit = PageCommit(item: item, outcome: .done, records: records, run: 3, now: now ?? t0)
    commit.router = router
    return commit
  }

  func key(_ key: String) -> RecordKey { RecordKey(source: "s", key: key) }

  @Test func test_plan_recordTheStoreLacks_isNewAndInserted() {
    let plan = RecordRules.plan([page(1, [input("a", 10)])], stored: [:])
    #expect(plan.newRecords == 1 && plan.changedRecords == 0 && plan.unchangedRecords == 0)
    #expect(plan.inserts.map(\.record.key) == ["a"])
    #expect(plan.inserts[0].firstSeen == t0 && plan.inserts[0].page == 101 && plan.inserts[0].crawl == 7)
    #expect(plan.updates.isEmpty)
    #expect(plan.changes.map(\.change.kind) == [.new])
    #expect(plan.changes[0].change.beforeJSON == nil && plan.changes[0].change.afterJSON == #"{"price":10}"#)
    #expect(plan.changes[0].change.run == 3)
  }

  @Test func test_plan_sameHash_isUnchangedAndOnlyItsSightingIsWritten() {
    let plan = RecordRules.plan([page(1, [input("a", 10, url: "https://shop.test/new")])], stored: [key("a"): row(5, 10)])
    #expect(plan.unchangedRecords == 1 && plan.newRecords == 0)
    #expect(plan.inserts.isEmpty && plan.changes.isEmpty)
    #expect(
      plan.updates == [
        RecordPlan.Update(
          id: 5, url: "https://shop.test/new", fieldsJSON: nil, contentHash: 10, lastSeen: t0, page: 101, crawl: 7)
      ])
  }

  @Test func test_plan_otherHash_isChangedWithTheStoredFieldsBefore() {
    let plan = RecordRules.plan([page(1, [input("a", 12)])], stored: [key("a"): row(5, 10)])
    #expect(plan.changedRecords == 1)
    #expect(plan.updates.map(\.fieldsJSON) == [#"{"price":12}"#])
    #expect(plan.updates.map(\.contentHash) == [12])
    #expect(plan.changes.map(\.change.kind) == [.changed])
    #expect(plan.changes[0].change.beforeJSON == #"{"price":10}"#)
    #expect(plan.changes[0].change.afterJSON == #"{"price":12}"#)
  }

  @Test func test_plan_removedRecord_isRestoredEvenWithTheSameHash() {
    let plan = RecordRules.plan([page(1, [input("a", 10)])], stored: [key("a"): row(5, 10, removed: true)])
    #expect(plan.restoredRecords == 1 && plan.unchangedRecords == 0)
    #expect(plan.updates.map(\.fieldsJSON) == [#"{"price":10}"#])  // fields written: the removal is cleared
    #expect(plan.changes.map(\.change.kind) == [.restored])
  }

  @Test func test_plan_newRecordGivenTwice_secondSeesTheFirst() {
    let later = t0 + 5
    let plan = RecordRules.plan(
      [page(1, [input("a", 10)]), page(2, [input("a", 12)], at: later), page(3, [input("a", 12)], at: later + 1)],
      stored: [:])
    #expect(plan.newRecords == 1 && plan.changedRecords == 1 && plan.unchangedRecords == 1)
    #expect(plan.changes.map(\.change.kind) == [.new, .changed])
    #expect(plan.changes[1].change.beforeJSON == #"{"price":10}"#)
    // One row, as the batch leaves it: first seen by page 1, the rest page 3's.
    #expect(plan.inserts.count == 1 && plan.updates.isEmpty)
    #expect(plan.inserts[0].record.fieldsJSON == #"{"price":12}"#)
    #expect(plan.inserts[0].firstSeen == t0 && plan.inserts[0].lastSeen == later + 1 && plan.inserts[0].page == 103)
  }

  @Test func test_plan_storedRecordGivenTwice_isOneUpdateAndTwoComparisons() {
    let plan = RecordRules.plan(
      [page(1, [input("a", 12)]), page(2, [input("a", 10)]), page(3, [input("b", 1)])],
      stored: [key("a"): row(5, 10, removed: true)])
    // Restored by the first page, changed back by the second.
    #expect(plan.changes.map(\.change.kind) == [.restored, .changed, .new])
    #expect(plan.changes[1].change.beforeJSON == #"{"price":12}"#)
    #expect(plan.updates.count == 1)
    #expect(plan.updates[0].fieldsJSON == #"{"price":10}"# && plan.updates[0].page == 102)
  }

  @Test func test_plan_changedThenSeenAgainUnchanged_keepsTheNewFields() {
    let plan = RecordRules.plan([page(1, [input("a", 12)]), page(2, [input("a", 12)])], stored: [key("a"): row(5, 10)])
    #expect(plan.changedRecords == 1 && plan.unchangedRecords == 1)
    #expect(plan.updates.count == 1 && plan.updates[0].fieldsJSON == #"{"price":12}"#)
  }

  @Test func test_plan_keysAreComparedAsBytes() {
    // "é" as one scalar and as e + combining accent: two records, as the databases see them.
    let composed = input("caf\u{E9}", 1)
    let decomposed = input("cafe\u{301}", 2)
    #expect(RecordRules.keys(of: [page(1, [composed, decomposed, composed])]).count == 2)
    let plan = RecordRules.plan([page(1, [composed, decomposed])], stored: [RecordKey(composed): row(5, 1)])
    #expect(plan.unchangedRecords == 1 && plan.newRecords == 1)
  }

  @Test func test_route_asksEachRouterOncePerSourceWhetherItIsTheFirstCrawl() {
    let router = RecordingRouter()
    var plan = RecordRules.plan(
      [page(1, [input("a", 1), input("b", 2)], router: router), page(2, [input("c", 3)])], stored: [:])
    var asked: [String] = []
    plan.route { source in
      asked.append(source)
      return true
    }
    #expect(asked == ["s"])
    #expect(plan.changes.map(\.channels) == [["ops"], ["ops"], []])  // page 2 has no router
    #expect(plan.notificationCount == 2)
    #expect(router.asked.map(\.key) == ["a", "b"] && router.asked.allSatisfy(\.firstCrawl))
  }

  // MARK: Completing a crawl

  @Test func test_completion_waitsForPendingEntriesAndHappensOnce() {
    #expect(RecordRules.completion(hasPendingEntries: true, completedBefore: false, frontierSize: 3, maxPages: nil) == .notYet)
    #expect(
      RecordRules.completion(hasPendingEntries: false, completedBefore: true, frontierSize: 3, maxPages: nil)
        == .alreadyCompleted)
    #expect(
      RecordRules.completion(hasPendingEntries: false, completedBefore: false, frontierSize: 3, maxPages: nil)
        == .completes(capped: false))
    #expect(
      RecordRules.completion(hasPendingEntries: false, completedBefore: false, frontierSize: 3, maxPages: 4)
        == .completes(capped: false))
    #expect(
      RecordRules.completion(hasPendingEntries: false, completedBefore: false, frontierSize: 4, maxPages: 4)
        == .completes(capped: true))
  }

  func candidate(
    _ id: Int64, seen: Int64? = 6, removed: Bool = false, kept: Bool = false, fetched: Bool = false
  ) -> RecordRules.RemovalCandidate {
    RecordRules.RemovalCandidate(
      id: id, key: "k\(id)", url: "https://shop.test/\(id)", fields: "{}", removed: removed, seenCrawl: seen,
      pageKept: kept, pageFetched: fetched)
  }

  @Test func test_removes_onlyRecordsAnEarlierCrawlSawAndThisOneDidNot() {
    #expect(RecordRules.removes(candidate(1), crawl: 7, capped: false))
    #expect(!RecordRules.removes(candidate(2, seen: 7), crawl: 7, capped: false))  // seen by this crawl
    #expect(!RecordRules.removes(candidate(3, seen: nil), crawl: 7, capped: false))  // never tracked
    #expect(!RecordRules.removes(candidate(4, removed: true), crawl: 7, capped: false))  // gone already
    #expect(!RecordRules.removes(candidate(5, kept: true), crawl: 7, capped: false))  // its page still stands
  }

  @Test func test_removes_whenCapped_onlyRecordsOfPagesThisCrawlFetched() {
    #expect(!RecordRules.removes(candidate(1, fetched: false), crawl: 7, capped: true))
    #expect(RecordRules.removes(candidate(2, fetched: true), crawl: 7, capped: true))
    #expect(!RecordRules.removes(candidate(3, kept: true, fetched: true), crawl: 7, capped: true))
  }

  @Test func test_removals_areRemovedChangesRoutedWithTheFirstCrawlFlag() {
    let router = RecordingRouter(channels: ["ops", "log"])
    let removals = RecordRules.removals(
      [candidate(1), candidate(2, seen: 7), candidate(3)], source: "s", crawl: 7, capped: false, router: router,
      firstCrawl: false, now: t0)
    #expect(removals.map(\.id) == [1, 3])
    #expect(removals.map(\.change.change.kind) == [.removed, .removed])
    #expect(removals[0].change.change.beforeJSON == "{}" && removals[0].change.change.afterJSON == nil)
    #expect(removals.map(\.change.channels) == [["ops", "log"], ["ops", "log"]])
    #expect(router.asked.map(\.firstCrawl) == [false, false])
    let unrouted = RecordRules.removals(
      [candidate(1)], source: "s", crawl: 7, capped: false, router: nil, firstCrawl: false, now: t0)
    #expect(unrouted.map(\.change.channels) == [[]])
  }
}
