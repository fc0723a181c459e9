import Foundation
import Testing
@testable import ForageStore

/// What a commit holds under extraction health (`HealthCommit.hold`), without
/// a store: the health state it would read is given, and counted.
@Suite struct HealthCommitTests {
  let t0 = Date(timeIntervalSince1970: 1_700_000_000)

  /// A record of source "s" with these fields (the hash is given).
  func input(_ key: String, _ fields: String, hash: UInt64) -> RecordInput {
    RecordInput(source: "s", key: key, url: "https://shop.test/\(key)", fieldsJSON: fields, contentHash: hash)
  }

  /// Page `n` of crawl 7 giving `records`, under the default health policy.
  func page(_ n: Int, _ records: [RecordInput]) -> PageCommit {
    let item = FrontierItem(
      id: Int64(n), crawl: 7, url: "https://shop.test/\(n)", fingerprint: UInt64(100 + n), depth: 0, attempts: 0)
    var commit = PageCommit(item: item, outcome: .done, records: records, run: 3, now: t0)
    commit.health = HealthPolicy()
    commit.extraction = PageExtraction(
      records: records.count, matched: true,
      fields: ["price": .init(missing: records.count), "title": .init(present: records.count)])
    return commit
  }

  /// Holds what `pages` plan against `stored`, the last healthy crawl having
  /// had a price on every one of its 10 records; returns the count held, the
  /// plan after, how many times the health state was read, and what was written.
  func hold(_ pages: [PageCommit], stored: [RecordKey: StoredRecordRow]) throws
    -> (held: Int, plan: RecordPlan, reads: Int, written: [HeldChange])
  {
    var plan = RecordRules.plan(pages, stored: stored)
    var reads = 0
    var written: [HeldChange] = []
    let held = try HealthCommit.hold(pages, plan: &plan, stored: stored) { _, _ in
      reads += 1
      return (Coverage(records: 10, pages: 10, present: ["price": 10, "title": 10]), nil, Coverage())
    } write: { written += $0 }
    return (held, plan, reads, written)
  }

  @Test func test_hold_aBatchOfNewRecordsOnly_readsNoHealthStateAndHoldsNothing() throws {
    let pages = (1...3).map { page($0, [input("k\($0)", #"{"title":"A"}"#, hash: UInt64($0))]) }
    let (held, plan, reads, written) = try hold(pages, stored: [:])
    #expect(held == 0 && reads == 0 && written.isEmpty)
    #expect(plan.changes.map(\.change.kind) == [.new, .new, .new])
    #expect(plan.newRecords == 3)
  }

  @Test func test_hold_aChangeThatLosesNoField_isKeptWithoutReadingHealthState() throws {
    let stored = [RecordKey(source: "s", key: "a"): StoredRecordRow(
      id: 5, contentHash: 1, fields: #"{"price":3,"title":"A"}"#, removed: false)]
    let (held, plan, reads, _) = try hold([page(1, [input("a", #"{"price":4,"title":"A"}"#, hash: 2)])], stored: stored)
    #expect(held == 0 && reads == 0)
    #expect(plan.changes.map(\.change.kind) == [.changed] && plan.changedRecords == 1)
  }

  @Test func test_hold_aChangeLosingACollapsedField_isHeldAndItsRecordKeepsItsFields() throws {
    let stored = [RecordKey(source: "s", key: "a"): StoredRecordRow(
      id: 5, contentHash: 1, fields: #"{"price":3,"title":"A"}"#, removed: false)]
    // Beside a new record in the same batch: only the change is held.
    let pages = [
      page(1, [input("a", #"{"price":null,"title":"A"}"#, hash: 2)]),
      page(2, [input("b", #"{"price":null,"title":"B"}"#, hash: 3)]),
    ]
    let (held, plan, reads, written) = try hold(pages, stored: stored)
    #expect(held == 1 && reads == 1)
    #expect(written.map(\.record) == [5] && written.first?.after == #"{"price":null,"title":"A"}"#)
    #expect(plan.changes.map(\.change.kind) == [.new] && plan.changedRecords == 0 && plan.unchangedRecords == 1)
    let update = try #require(plan.updates.first { $0.id == 5 })
    #expect(update.fieldsJSON == nil && update.contentHash == 1)
  }
}
