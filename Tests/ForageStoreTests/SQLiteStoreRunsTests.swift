import Foundation
import Testing
@testable import ForageStore

@Suite struct SQLiteStoreRunsTests {
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
}

extension SQLiteStoreRunsTests {
  @Test func test_summary_ofAnOlderStore_reads_withMissingMembersAsZero() throws {
    // As stores before the single summary type wrote it.
    let old = #"{"bytes":10,"finishedAt":1700000000000,"outcome":"budget","pagesDeferred":0,"pagesFailed":1,"pagesFetched":2,"pagesNotModified":3,"recordsChanged":0,"recordsNew":2,"recordsUnchanged":0}"#
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .millisecondsSince1970
    let summary = try decoder.decode(RunSummary.self, from: Data(old.utf8))
    #expect(summary.outcome == .budget && summary.stoppedByBudget)
    #expect(summary.pagesNotModified == 3 && summary.pagesFresh == 0 && summary.pagesFetched == 2)
    #expect(summary.warnings.isEmpty && summary.seconds == 0)
    let unknown = try decoder.decode(RunSummary.self, from: Data(#"{"outcome":"exploded"}"#.utf8))
    #expect(unknown.outcome == .failed)
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
}

@Suite struct SQLiteStoreRobotsTests {
  @Test func test_robotsFile_keptReadAndReplaced_perOrigin() async throws {
    try await withStore { store, path in
      #expect(try await store.robotsFile(origin: "https://a.test") == nil)
      let file = RobotsFile(
        origin: "https://a.test", verdict: .rules, body: Array("User-agent: *\nDisallow: /x\n".utf8),
        fetchedAt: t0, expiresAt: t0 + 86_400)
      try await store.keepRobotsFile(file)
      try await store.keepRobotsFile(
        RobotsFile(origin: "http://b.test:8080", verdict: .disallowAll, body: [], fetchedAt: t0, expiresAt: t0 + 600))
      #expect(try await store.robotsFile(origin: "https://a.test") == file)
      let replaced = RobotsFile(origin: "https://a.test", verdict: .allowAll, body: [], fetchedAt: t0 + 5, expiresAt: t0 + 9)
      try await store.keepRobotsFile(replaced)
      #expect(try await store.robotsFile(origin: "https://a.test") == replaced)
      #expect(try await store.robotsFile(origin: "http://b.test:8080")?.verdict == .disallowAll)
      // Another connection (another process) sees them.
      let reopened = try SQLiteStore(path: path)
      #expect(try await reopened.robotsFile(origin: "https://a.test") == replaced)
    }
  }
}
