import Foundation
import Testing
@testable import ForageStore

/// `RunStore` on every store: task runs (begin, progress, finish, listing)
/// and the scheduler's pending task requests (replace, update).
@Suite struct RunConformanceTests {
  @Test(arguments: StoreKind.all) func test_runs_beginFinishAndListNewestFirst(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let first = try await store.beginRun(task: "refresh", sources: ["a", "b"], startedAt: t0)
      let second = try await store.beginRun(task: "crawl", sources: [], startedAt: t0 + 1)
      var summary = RunSummary(outcome: .budget, finishedAt: t0 + 30.5)
      summary.pagesFresh = 7
      summary.seconds = 29.5
      summary.completedSources = ["a"]
      summary.warn("x: HTTP 404")
      summary.pagesFetched = 12
      summary.pagesNotModified = 3
      summary.pagesFailed = 1
      summary.pagesDeferred = 2
      summary.recordsNew = 4
      summary.recordsChanged = 5
      summary.recordsUnchanged = 6
      summary.bytes = 1 << 40
      try await store.finishRun(first, summary: summary)

      let runs = try await store.runs(limit: 10)
      #expect(runs.map(\.id) == [second, first])
      #expect(runs[0].task == "crawl" && runs[0].sources.isEmpty && runs[0].summary == nil)
      #expect(runs[0].startedAt == t0 + 1)
      #expect(runs[1].sources == ["a", "b"])
      #expect(runs[1].startedAt == t0)
      #expect(runs[1].summary == summary)
      #expect(try await store.runs(limit: 1).map(\.id) == [second])
    }
  }

  @Test(arguments: StoreKind.all) func test_finishRun_unknownRunThrows(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      await #expect(throws: StoreError.self) {
        try await store.finishRun(77, summary: RunSummary(outcome: .completed, finishedAt: t0))
      }
    }
  }

  @Test(arguments: StoreKind.all) func test_dates_roundTripToTheMillisecond(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let startedAt = Date(timeIntervalSince1970: 1_700_000_000.123)
      _ = try await store.beginRun(task: "t", sources: [], startedAt: startedAt)
      let read = try #require(try await store.runs(limit: 1).first?.startedAt)
      #expect(SQLiteStore.milliseconds(read) == 1_700_000_000_123)
      #expect(abs(read.timeIntervalSince(startedAt)) < 0.000_5)
    }
  }

  /// Issue 25: a run whose process was killed (no end recorded) is listed
  /// with the totals it recorded as its commits landed, on every store.
  @Test(arguments: StoreKind.all) func test_issue25_anUnfinishedRunKeepsItsLastProgress_aFinishedOneItsSummary(
    _ kind: StoreKind
  ) async throws {
    try await withStore(kind) { store in
      let killed = try await store.beginRun(task: "crawl", sources: ["a"], startedAt: t0)
      let silent = try await store.beginRun(task: "crawl", sources: ["a"], startedAt: t0 + 1)
      let finished = try await store.beginRun(task: "crawl", sources: ["a"], startedAt: t0 + 2)
      var progress = RunSummary()
      progress.pagesFetched = 12
      progress.pagesFailed = 1
      progress.recordsNew = 30
      try await store.recordRunProgress(killed, summary: progress)
      progress.pagesFetched = 20
      try await store.recordRunProgress(killed, summary: progress)

      var summary = RunSummary(outcome: .completed, finishedAt: t0 + 10)
      summary.pagesFetched = 40
      try await store.recordRunProgress(finished, summary: progress)
      try await store.finishRun(finished, summary: summary)
      // Progress after the end changes nothing.
      try await store.recordRunProgress(finished, summary: progress)

      let runs = Dictionary(uniqueKeysWithValues: try await store.runs(limit: 10).map { ($0.id, $0) })
      #expect(runs[killed]?.summary == nil)
      #expect(runs[killed]?.progress == progress)
      #expect(runs[killed]?.progress?.outcome == .running)
      #expect(runs[silent]?.summary == nil && runs[silent]?.progress == nil)
      #expect(runs[finished]?.summary == summary)
      #expect(runs[finished]?.progress == nil)
    }
  }

  // MARK: Pending task requests

  static let refresh = PendingTaskRequest(identifier: "b.refresh", kind: "appRefresh", earliestBeginDate: t0 + 900)
  static let crawl = PendingTaskRequest(
    identifier: "c.crawl", kind: "processing", requiresNetworkConnectivity: true, requiresExternalPower: true)
  static let export = PendingTaskRequest(
    identifier: "a.export", kind: "continuedProcessing", earliestBeginDate: t0 + 0.5,
    continued: .init(title: "Exporting", subtitle: "0 of 40", strategy: "queue"))

  @Test(arguments: StoreKind.all) func test_pendingTaskRequests_emptyAtFirst_thenReplacedAsAWholeSet(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      #expect(try await store.pendingTaskRequests().isEmpty)
      try await store.replacePendingTaskRequests([Self.refresh, Self.crawl, Self.export])
      #expect(try await store.pendingTaskRequests() == [Self.export, Self.refresh, Self.crawl])

      var later = Self.refresh
      later.earliestBeginDate = t0 + 1800
      try await store.replacePendingTaskRequests([later])
      #expect(try await store.pendingTaskRequests() == [later])
      try await store.replacePendingTaskRequests([])
      #expect(try await store.pendingTaskRequests().isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_updatePendingTaskRequests_writesAndRemovesOnlyThoseNamed(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await store.replacePendingTaskRequests([Self.refresh, Self.crawl])
      var later = Self.refresh
      later.earliestBeginDate = t0 + 1800
      try await store.updatePendingTaskRequests([later, Self.export], removing: [])
      #expect(try await store.pendingTaskRequests() == [Self.export, later, Self.crawl])
      try await store.updatePendingTaskRequests([], removing: [Self.crawl.identifier, "never.kept"])
      #expect(try await store.pendingTaskRequests() == [Self.export, later])
      // One call may write some identifiers and remove others.
      try await store.updatePendingTaskRequests([Self.crawl], removing: [Self.export.identifier])
      #expect(try await store.pendingTaskRequests() == [later, Self.crawl])
    }
  }

  @Test(arguments: StoreKind.all) func test_replacePendingTaskRequests_failingMidway_leavesTheEarlierSetWhole(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await store.replacePendingTaskRequests([Self.refresh, Self.crawl])
      // Each replacement below fails on its last row, after the old rows
      // were deleted and the first new one inserted: nothing of it remains.
      let unknownKind = PendingTaskRequest(identifier: "z", kind: "nightly")
      let repeated = PendingTaskRequest(identifier: Self.export.identifier, kind: "appRefresh")
      let continuedWithoutTitle = PendingTaskRequest(identifier: "z", kind: "continuedProcessing")
      let titleOnARefresh = PendingTaskRequest(
        identifier: "z", kind: "appRefresh", continued: .init(title: "t", subtitle: "s", strategy: "queue"))
      let unknownStrategy = PendingTaskRequest(
        identifier: "z", kind: "continuedProcessing", continued: .init(title: "t", subtitle: "s", strategy: "later"))
      for bad in [unknownKind, repeated, continuedWithoutTitle, titleOnARefresh, unknownStrategy] {
        await #expect(throws: StoreError.self, "\(bad)") {
          try await store.replacePendingTaskRequests([Self.export, bad])
        }
        #expect(try await store.pendingTaskRequests() == [Self.refresh, Self.crawl], "\(bad)")
      }
    }
  }
}
