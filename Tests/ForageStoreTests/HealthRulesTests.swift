import Foundation
import Testing
@testable import ForageStore

/// The health rules alone (issue 29): no store, no SQL, only what a store
/// would read.
@Suite struct HealthRulesTests {
  let now = Date(timeIntervalSince1970: 1_700_000_000)

  /// An unseen record `id` of crawl 1 on page `id`; gone or lost as said.
  func candidate(_ id: Int64, gone: Bool = false, lost: Bool = false) -> HealthRules.Candidate {
    HealthRules.Candidate(
      record: RecordRules.RemovalCandidate(
        id: id, key: "k\(id)", url: "https://shop.test/\(id)", fields: "{}", removed: false, seenCrawl: 1,
        pageKept: lost, pageFetched: true),
      pageGone: gone, pageLost: lost)
  }

  func assess(
    _ candidates: [HealthRules.Candidate], current: Int, coverage: Coverage = Coverage(), healthy: Coverage? = nil,
    policy: HealthPolicy = HealthPolicy()
  ) -> HealthRules.Assessment {
    HealthRules.assess(
      candidates, source: "s", crawl: 2, capped: false, current: current, coverage: coverage, healthy: healthy,
      policy: policy, now: now)
  }

  @Test func test_assess_mostRecordsGoneFromPagesThatAnswered_isHeld() {
    let a = assess((1...6).map { candidate($0) }, current: 6)
    #expect(!a.healthy && a.remove.isEmpty && a.hold.map(\.id) == [1, 2, 3, 4, 5, 6])
    #expect(a.opens?.kind == .removals && a.opens?.before == 6 && a.opens?.now == 0)
    #expect(a.opens?.examples == ["https://shop.test/1", "https://shop.test/2", "https://shop.test/3"])
  }

  @Test func test_assess_pagesAnswering404Or410_alwaysRemove() {
    let a = assess((1...6).map { candidate($0, gone: true) }, current: 6)
    #expect(a.healthy && a.remove.count == 6 && a.hold.isEmpty && a.opens == nil)
  }

  @Test func test_assess_aModestShare_isRemoved() {
    let a = assess([candidate(1), candidate(2), candidate(3)], current: 6)
    #expect(a.healthy && a.remove.map(\.id) == [1, 2, 3])
  }

  @Test func test_assess_fewerThanTheMinimum_isRemovedWhateverItsShare() {
    let a = assess([candidate(1), candidate(2)], current: 2)
    #expect(a.healthy && a.remove.count == 2)
  }

  @Test func test_assess_lostPages_countTowardTheShare_andAreHeldNotRemoved() {
    let a = assess((1...4).map { candidate($0, lost: true) }, current: 6)
    #expect(!a.healthy && a.remove.isEmpty && a.hold.count == 4 && a.opens?.kind == .pages)
    let one = assess([candidate(1, lost: true)], current: 6)
    #expect(one.healthy && one.remove.isEmpty && one.hold.isEmpty)
  }

  @Test func test_assess_holdingTurnedOff_removesEverything() {
    var policy = HealthPolicy()
    policy.enabled = false
    let a = assess((1...6).map { candidate($0) }, current: 6, policy: policy)
    #expect(a.healthy && a.remove.count == 6)
  }

  @Test func test_assess_fieldCollapse_isUnhealthy_andNamesTheFieldAndItsSelector() {
    var policy = HealthPolicy()
    policy.fieldSelectors = ["price": ".price"]
    let healthy = Coverage(records: 10, present: ["price": 10, "title": 10])
    let now = Coverage(records: 10, present: ["price": 1, "title": 10])
    let a = assess([], current: 10, coverage: now, healthy: healthy, policy: policy)
    #expect(!a.healthy && a.collapsed == ["price"])
    #expect(a.opens?.kind == .field && a.opens?.subject == "price (.price)")
    #expect(a.opens?.before == 10 && a.opens?.now == 1 && a.opens?.nowTotal == 10)
  }

  @Test func test_collapsedFields_needWatchedFieldsAndEnoughRecords() {
    let policy = HealthPolicy()
    let healthy = Coverage(records: 10, present: ["price": 10, "rare": 3])
    // Too few records read (2 of the 3 needed) says nothing.
    #expect(HealthRules.collapsedFields(now: Coverage(records: 2), healthy: healthy, policy: policy).isEmpty)
    // A field few records had is not watched.
    let now = Coverage(records: 10, present: ["price": 9, "rare": 0])
    #expect(HealthRules.collapsedFields(now: now, healthy: healthy, policy: policy).isEmpty)
    // A one-record source: one record read is enough.
    let single = Coverage(records: 1, present: ["price": 1])
    #expect(
      HealthRules.collapsedFields(now: Coverage(records: 1), healthy: single, policy: policy) == ["price"])
  }

  @Test func test_holdsLoss_whileRunningCoverageIsBelowTheCollapse_orTheFieldsEpisodeIsOpen() {
    let policy = HealthPolicy()
    let healthy = Coverage(records: 10, present: ["price": 10])
    #expect(
      HealthRules.holdsLoss(
        of: "price", policy: policy, healthy: healthy, running: Coverage(records: 1), openSubject: nil))
    #expect(
      !HealthRules.holdsLoss(
        of: "price", policy: policy, healthy: healthy, running: Coverage(records: 4, present: ["price": 3]),
        openSubject: nil))
    // No healthy crawl to compare with: applied.
    #expect(
      !HealthRules.holdsLoss(of: "price", policy: policy, healthy: nil, running: Coverage(records: 1), openSubject: nil))
    // The field's episode is open: held whatever the counts.
    #expect(
      HealthRules.holdsLoss(
        of: "price", policy: policy, healthy: nil, running: Coverage(records: 4, present: ["price": 4]),
        openSubject: "price"))
  }

  @Test func test_lostFields_areThoseWithAValueBeforeAndNoneAfter() {
    #expect(HealthRules.lostFields(before: #"{"a":1,"b":"x","c":[1]}"#, after: #"{"a":1,"b":"","c":[]}"#) == ["b", "c"])
    #expect(HealthRules.lostFields(before: #"{"a":null}"#, after: #"{"a":2}"#).isEmpty)
    #expect(HealthRules.lostFields(before: #"{"a":false}"#, after: #"{}"#) == ["a"])
  }

  @Test func test_coverageRows_addUpPerCrawlAndField_lostPagesCountOnlyAsLost() {
    func page(_ crawl: Int64, _ e: PageExtraction) -> PageCommit {
      var c = PageCommit(
        item: FrontierItem(id: 1, crawl: crawl, url: "u", fingerprint: 1, depth: 0, attempts: 0), outcome: .done,
        now: now)
      c.extraction = e
      return c
    }
    let pages = [
      page(1, PageExtraction(records: 2, matched: true, fields: ["price": .init(present: 1, missing: 1)], dropped: 1)),
      page(1, PageExtraction(records: 1, matched: true, fields: ["price": .init(present: 1)])),
      page(1, PageExtraction(records: 0, matched: false, lost: true)),
    ]
    let rows = Coverage.rows(of: pages)
    #expect(rows.map(\.field) == ["", "price"])
    #expect(rows[0].records == 3 && rows[0].present == 3 && rows[0].missing == 1 && rows[0].empty == 1)
    #expect(rows[1].records == 3 && rows[1].present == 2 && rows[1].missing == 1)
    let coverage = Coverage(rows: rows)
    #expect(coverage.records == 3 && coverage.pages == 3 && coverage.lostPages == 1 && coverage.dropped == 1)
    #expect(coverage.share("price") == 2.0 / 3.0)
    #expect(Coverage().adding(pages) == coverage)
  }
}
