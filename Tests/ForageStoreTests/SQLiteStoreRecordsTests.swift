import Foundation
import Testing
@testable import ForageStore

@Suite struct SQLiteStoreRecordsTests {
  /// Claims the single seed of a fresh crawl and commits `records` for it.
  private func commitOnce(
    _ store: any Store, _ n: Int, _ records: [RecordInput], at now: Date, run: Int64? = nil
  ) async throws -> CommitResult {
    let crawl = try await store.openCrawl(source: "crawl-\(n)", seeds: [seed(n)], now: now)
    let items = try await store.claim(
      crawl: crawl.id, limit: 1, owner: "a", leaseUntil: now + 60, now: now)
    return try await store.commit([
      PageCommit(item: items[0], outcome: .done, records: records, run: run, now: now)
    ])
  }

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
      let items = try await store.claim(
        crawl: crawl.id, limit: 2, owner: "a", leaseUntil: t0 + 60, now: t0)
      let fingerprint = UInt64.max - 5
      let page = PageRecord(
        url: "https://example.com/1", fingerprint: fingerprint, status: 200, etag: "\"abc\"",
        lastModified: "Tue, 14 Nov 2023 22:13:20 GMT", contentHash: 0x8000_0000_0000_0001,
        fetchedAt: t0, links: ["https://example.com/2", "https://example.com/3?q=é"], encoding: "Shift_JIS",
        recordCount: 7)
      _ = try await store.commit([PageCommit(item: items[0], outcome: .done, page: page, now: t0)])
      #expect(try await store.page(fingerprint: fingerprint) == page)

      let revisit = PageRecord(url: "https://example.com/1", fingerprint: fingerprint, status: 304,
                               fetchedAt: t0 + 10)
      _ = try await store.commit([
        PageCommit(item: items[1], outcome: .done, page: revisit, now: t0 + 10)
      ])
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
}
