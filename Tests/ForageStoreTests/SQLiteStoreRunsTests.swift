import Foundation
import Testing
@testable import ForageStore

/// What every store does with runs is in RunConformanceTests; these are the
/// summary's stored form and what another SQLite connection reads.
@Suite struct SQLiteStoreRunsTests {
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
}

@Suite struct SQLiteStoreRobotsTests {
  /// Another connection (another process) reads the answers one kept.
  @Test func test_robotsFile_keptByOneConnection_isReadByAnother() async throws {
    try await withStore { store, path in
      let file = RobotsFile(
        origin: "https://a.test", verdict: .rules, body: Array("User-agent: *\nDisallow: /x\n".utf8),
        fetchedAt: t0, expiresAt: t0 + 86_400)
      try await store.keepRobotsFile(file)
      let reopened = try SQLiteStore(path: path)
      #expect(try await reopened.robotsFile(origin: "https://a.test") == file)
      let replaced = RobotsFile(origin: "https://a.test", verdict: .allowAll, body: [], fetchedAt: t0 + 5, expiresAt: t0 + 9)
      try await reopened.keepRobotsFile(replaced)
      #expect(try await store.robotsFile(origin: "https://a.test") == replaced)
    }
  }
}
