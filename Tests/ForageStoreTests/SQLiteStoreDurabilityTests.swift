import Foundation
import Testing
@testable import ForageStore

@Suite struct SQLiteStoreDurabilityTests {
  @Test func test_committedData_isVisibleToASecondConnectionWhileFirstIsOpen() async throws {
    let temp = TempStorePath()
    let writer = try SQLiteStore(path: temp.path)
    let crawl = try await writer.openCrawl(source: "s", seeds: [seed(1)], now: t0)
    let items = try await writer.claim(
      crawl: crawl.id, limit: 1, lease: Lease(owner: "a", for: .seconds(60), at: t0))
    _ = try await writer.commit([
      PageCommit(item: items[0], outcome: .done, records: [record("a", fields: "{}", hash: 1)],
                 discovered: [seed(2, depth: 1)], now: t0)
    ])
    // The writer is never closed: a second store sees what was committed.
    let reader = try SQLiteStore(path: temp.path)
    #expect(try await reader.records(source: nil, afterID: 0, limit: 10).map(\.key) == ["a"])
    #expect(try await reader.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 1, done: 1))
    #expect(try await reader.openCrawl(source: "s", seeds: [], now: t0).id == crawl.id)
    _ = writer
  }

  @Test func test_twoStoresOnOneFile_neverClaimTheSameEntry() async throws {
    let temp = TempStorePath()
    let a = try SQLiteStore(path: temp.path)
    let b = try SQLiteStore(path: temp.path)
    let crawl = try await a.openCrawl(source: "s", seeds: (1...20).map { seed($0) }, now: t0)
    #expect(try await b.openCrawl(source: "s", seeds: [], now: t0).id == crawl.id)
    var claimed: [Int64] = []
    for round in 0..<6 {
      let store = round % 2 == 0 ? a : b
      claimed += try await store.claim(
        crawl: crawl.id, limit: 4, lease: Lease(owner: "\(round % 2)", for: .seconds(60), at: t0)
      ).map(\.id)
    }
    #expect(claimed.count == 20)
    #expect(Set(claimed).count == 20)
  }

  @Test func test_failingBatch_onConstraintViolation_rollsBack() async throws {
    try await withStore { store, path in
      // A trigger makes the record keyed "boom" violate a constraint.
      let side = try SQLiteConnection(path: path)
      try side.exec(
        """
        CREATE TRIGGER main.boom BEFORE INSERT ON records WHEN NEW.key = 'boom'
        BEGIN SELECT RAISE(ABORT, 'boom record refused'); END
        """)
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: t0)
      let items = try await store.claim(
        crawl: crawl.id, limit: 2, lease: Lease(owner: "a", for: .seconds(60), at: t0))
      let good = PageCommit(item: items[0], outcome: .done,
                            records: [record("a", fields: "{}", hash: 1)],
                            discovered: [seed(5)], now: t0)
      let bad = PageCommit(item: items[1], outcome: .done,
                           records: [record("c", fields: "{}", hash: 3),
                                     record("boom", fields: "{}", hash: 2)], now: t0)
      let error = await #expect(throws: StoreError.self) { _ = try await store.commit([good, bad]) }
      #expect(error?.kind == .statement)
      #expect(error?.primarySQLiteCode == 19)  // SQLITE_CONSTRAINT
      #expect(error?.description.contains("boom record refused") == true)
      #expect(try await store.records(source: nil, afterID: 0, limit: 10).isEmpty)
      #expect(try await store.changes(source: nil, afterID: 0, limit: 10).isEmpty)
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(claimed: 2))
      #expect(try await frontierSize(store, crawl: crawl.id) == 2)
    }
  }
}
