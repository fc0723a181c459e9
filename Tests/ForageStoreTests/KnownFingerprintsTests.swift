import Testing
@testable import ForageStore

@Suite struct KnownFingerprintsTests {
  @Test func test_contains_onlyWhatWasInsertedForThatCrawl() {
    var known = KnownFingerprints(capacity: 10)
    known.insert([1, 2, 3], crawl: 7)
    #expect(known.contains(2, crawl: 7))
    #expect(!known.contains(4, crawl: 7))
    #expect(!known.contains(2, crawl: 8))
    known.forget(crawl: 7)
    #expect(!known.contains(2, crawl: 7))
  }

  @Test func test_insert_staysWithinTwoGenerations() {
    var known = KnownFingerprints(capacity: 4)
    for fingerprint in UInt64(0)..<100 { known.insert([fingerprint], crawl: 1) }
    #expect(known.count(crawl: 1) <= 8)
    #expect(known.contains(99, crawl: 1))  // the newest are kept
    #expect(!known.contains(0, crawl: 1))  // the oldest are forgotten
  }
}
