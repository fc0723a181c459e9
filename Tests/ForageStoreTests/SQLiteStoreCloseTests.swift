import Foundation
import Testing
@testable import ForageStore

/// Closing a store leaves one complete file (issue 8: the daemon left its
/// data in the WAL), and a closed store refuses every call.
@Suite struct SQLiteStoreCloseTests {
  @Test func test_issue8_close_checkpointsTheWAL_intoTheFileAlone() async throws {
    let temp = TempStorePath()
    let store = try SQLiteStore(path: temp.path)
    let crawl = try await store.openCrawl(source: "news", seeds: (1...200).map { seed($0) }, now: t0)
    _ = try await store.claim(crawl: crawl.id, limit: 10, lease: Lease(owner: "me", for: .seconds(60), at: t0))
    let walBefore = (try? FileManager.default.attributesOfItem(atPath: temp.path + "-wal")[.size] as? Int) ?? 0
    #expect(walBefore > 0, "the writes went to the WAL first")
    try await store.close()
    let walAfter = (try? FileManager.default.attributesOfItem(atPath: temp.path + "-wal")[.size] as? Int) ?? 0
    #expect(walAfter == 0)

    // The main file alone holds everything: copy it without its companions.
    let copy = TempStorePath()
    try FileManager.default.copyItem(atPath: temp.path, toPath: copy.path)
    let reopened = try SQLiteStore(path: copy.path)
    let again = try await reopened.openCrawl(source: "news", seeds: [], now: t0)
    #expect(again.id == crawl.id && !again.isNew)
    #expect(try await reopened.frontierCounts(crawl: again.id).total == 200)
  }

  @Test func test_close_thenAnyCall_throwsClosed_andCloseTwiceIsFine() async throws {
    let temp = TempStorePath()
    let store = try SQLiteStore(path: temp.path)
    try await store.close()
    try await store.close()
    await #expect {
      _ = try await store.runs(limit: 1)
    } throws: { error in
      (error as? StoreError)?.kind == .closed
    }
  }
}
