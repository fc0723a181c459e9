import Foundation
import Testing
@testable import ForageStore

/// Change ids and pruning on every store: an id is never handed out twice
/// (pruning the newest changes does not give their ids to the next ones),
/// and pruning keeps the changes a record sink has not applied while the
/// sink is delivered to within the retention's `sinkHold`.
@Suite struct ChangeIDConformanceTests {
  /// Commits `records` for the single seed `n` of a fresh crawl, at `now`.
  @discardableResult
  private func commit(_ store: any Store, _ n: Int, _ records: [RecordInput], at now: Date = t0) async throws
    -> [RecordChange]
  {
    let crawl = try await store.openCrawl(source: "crawl-\(n)", seeds: [seed(n)], now: now)
    let items = try await claimFrontier(store, crawl.id, limit: 1, at: now)
    return try await commitPages(store, [pageCommit(items[0], records: records, at: now)]).changes
  }

  private let day: TimeInterval = 86_400

  // MARK: Ids never go back

  @Test(arguments: StoreKind.all) func test_issue30_pruningEveryChange_thenCommitting_givesAnIDAboveEveryEarlierOne(
    _ kind: StoreKind
  ) async throws {
    try await withStore(kind) { store in
      let earlier = try await commit(
        store, 1, [record("a", fields: #"{"p":1}"#, hash: 1), record("b", fields: #"{"p":1}"#, hash: 2)])
      let newest = try #require(earlier.map(\.id).max())
      // Every change is older than a day: the newest ones go too.
      let dropped = try await store.pruneHistory(["s": HistoryRetention(maxAge: .seconds(86_400))], now: t0 + 2 * day)
      #expect(dropped == 2)
      #expect(try await store.changes(matching: ChangeQuery()).isEmpty)

      let next = try await commit(store, 2, [record("c", fields: #"{"p":1}"#, hash: 3)], at: t0 + 2 * day)
      #expect(next.count == 1)
      #expect(next[0].id > newest, "change \(next[0].id) reused an id at or below \(newest)")
      let stored = try await store.changes(source: "s", afterID: newest, limit: 10)
      #expect(stored.map(\.id) == next.map(\.id))
    }
  }

  @Test(arguments: StoreKind.all) func test_issue30_aStreamAtThePrunedEnd_yieldsTheNextCommit(
    _ kind: StoreKind
  ) async throws {
    try await withStore(kind) { store in
      let earlier = try await commit(store, 1, [record("a", fields: #"{"p":1}"#, hash: 1)])
      #expect(try await store.pruneHistory(["s": HistoryRetention(maxAge: .seconds(86_400))], now: t0 + 2 * day) == 1)
      // The stream was at the newest change, which pruning dropped: nothing
      // after it is missing, and the next commit reaches it.
      let stream = StreamWatcher(store.changes(source: "s", after: earlier[0].cursor))
      try await stream.waitUntilWaiting(store)
      let next = try await commit(store, 2, [record("b", fields: #"{"p":2}"#, hash: 2)], at: t0 + 2 * day)
      try await stream.waitFor(count: 1)
      await stream.stop()
      #expect(stream.changes == next)
    }
  }

  // MARK: Sinks hold the history they have not applied

  @Test(arguments: StoreKind.all) func test_prune_keepsEveryChangeAfterTheCursorOfASinkDeliveredToWithinMaxAge(
    _ kind: StoreKind
  ) async throws {
    try await withStore(kind) { store in
      let first = try await commit(store, 1, [record("a", fields: #"{"p":1}"#, hash: 1)])
      let second = try await commit(store, 2, [record("a", fields: #"{"p":2}"#, hash: 2)])
      let third = try await commit(store, 3, [record("b", fields: #"{"p":1}"#, hash: 3)])
      // The sink applied the first change a day after it was made.
      try await store.setSinkCursor("coredata", to: first[0].id, now: t0 + day)
      let retention = ["s": HistoryRetention(maxAge: .seconds(86_400))]

      // Two days on, everything is past maxAge; the sink's last delivery is
      // a day old, within it: only the change it applied goes.
      #expect(try await store.pruneHistory(retention, now: t0 + 2 * day) == 1)
      #expect(try await store.changes(source: "s", afterID: 0, limit: 10) == second + third)
      #expect(try await store.historyPrunedThrough(source: "s") == first[0].id)

      // Past maxAge since the sink's last delivery, it holds nothing.
      #expect(try await store.pruneHistory(retention, now: t0 + 2.5 * day) == 2)
      #expect(try await store.changes(source: "s", afterID: 0, limit: 10).isEmpty)
      #expect(try await store.historyPrunedThrough(source: "s") == third[0].id)
    }
  }

  @Test(arguments: StoreKind.all) func test_prune_withoutMaxAge_sinksHoldForTheDefaultHold(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let first = try await commit(store, 1, [record("a", fields: #"{"p":1}"#, hash: 1)])
      let second = try await commit(store, 2, [record("a", fields: #"{"p":2}"#, hash: 2)])
      _ = try await commit(store, 3, [record("a", fields: #"{"p":3}"#, hash: 3)])
      // Two sinks: the one further behind holds the history.
      try await store.setSinkCursor("widget", to: second[0].id, now: t0)
      try await store.setSinkCursor("coredata", to: 0, now: t0)
      let retention = ["s": HistoryRetention(keep: 1)]
      let hold = TimeInterval(StoreDefaults.sinkHistoryHold.components.seconds)
      #expect(try await store.pruneHistory(retention, now: t0 + hold) == 0)
      // "coredata" applied the first: the lowest cursor is now the first's, so it goes.
      try await store.setSinkCursor("coredata", to: first[0].id, now: t0 + hold)
      #expect(try await store.pruneHistory(retention, now: t0 + hold) == 1)
      #expect(try await store.historyPrunedThrough(source: "s") == first[0].id)
      // Past the hold since "widget" was delivered to, it holds nothing;
      // "coredata" (delivered to later) still holds what is after its cursor.
      #expect(try await store.pruneHistory(retention, now: t0 + hold + 1) == 0)
      #expect(try await store.changes(source: "s", afterID: 0, limit: 10).count == 2)
      #expect(try await store.pruneHistory(retention, now: t0 + 2 * hold + 1) == 1)
      #expect(try await store.historyPrunedThrough(source: "s") == second[0].id)
    }
  }
}
