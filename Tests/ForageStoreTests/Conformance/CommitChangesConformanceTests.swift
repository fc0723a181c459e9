import Foundation
import Testing
@testable import ForageStore

/// The changes one commit writes, on every store: many of them in one batch
/// (SQLite writes up to 16 to a statement) come back with the ids, dates and
/// field names the store keeps, in the order of the batch's records, and
/// each notification tells of its own change.
@Suite struct CommitChangesConformanceTests {
  /// Commits one page per record of `records` for source "s", all in one batch, routed to "ops".
  private func commitBatch(_ store: any Store, _ records: [RecordInput], at now: Date) async throws -> CommitResult {
    let crawl = try await store.openCrawl(source: "s", seeds: records.indices.map { seed($0 + 1) }, now: now)
    let items = try await claimFrontier(store, crawl.id, limit: records.count, at: now)
    let pages = records.indices.map { i in
      pageCommit(
        items.first { $0.fingerprint == seed(i + 1).fingerprint }!, records: [records[i]], router: RecordingRouter(),
        at: now)
    }
    let result = try await commitPages(store, pages)
    try await releaseFrontier(store, owner: "a")
    _ = try await completeCrawl(store, crawl.id, at: now)
    return result
  }

  /// 23 rows: statements of 16, 4, 2 and 1 in SQLite.
  private let keys = (1...23).map { String(format: "k%02d", $0) }

  @Test(arguments: StoreKind.all) func test_aBatchOfManyChanges_returnsTheStoredIDsInTheOrderOfItsRecords(
    _ kind: StoreKind
  ) async throws {
    try await withStore(kind) { store in
      let first = try await commitBatch(
        store, keys.map { record($0, fields: #"{"price":1,"title":"\#($0)"}"#, hash: 1) }, at: t0)
      #expect(first.changes.map(\.key) == keys)
      #expect(first.changes.allSatisfy { $0.kind == .new && $0.changedFields == ["price", "title"] })
      let ids = first.changes.map(\.id)
      #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "ids \(ids) do not increase with the batch")
      #expect(try await store.changes(source: "s", afterID: 0, limit: 100) == first.changes)

      // The next batch changes every price: its ids go on above the first's.
      let second = try await commitBatch(
        store, keys.map { record($0, fields: #"{"price":2,"title":"\#($0)"}"#, hash: 2) }, at: t0 + 60)
      #expect(second.changes.map(\.key) == keys)
      #expect(second.changes.allSatisfy { $0.kind == .changed && $0.changedFields == ["price"] })
      #expect(try #require(second.changes.first).id > ids.max()!)
      let stored = try await store.changes(source: "s", afterID: ids.max()!, limit: 100)
      #expect(stored == second.changes)

      // Every change was routed to one channel: each notification tells of its own change.
      #expect(first.notifications == keys.count && second.notifications == keys.count)
      let claimed = try await claimOutbox(store, limit: 100, owner: "o", at: t0 + 61)
      #expect(claimed.count == 2 * keys.count)
      let byID = Dictionary(uniqueKeysWithValues: (first.changes + second.changes).map { ($0.id, $0) })
      for notification in claimed {
        #expect(byID[notification.change.id] == notification.change, "notification of \(notification.change.key)")
      }
    }
  }
}
