import Foundation
import Testing
@testable import ForageStore

/// Issue 25: a run whose process was killed (no end recorded) is listed
/// with the totals it recorded as its commits landed, on every store.
@Suite struct RunProgressTests {
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
}
