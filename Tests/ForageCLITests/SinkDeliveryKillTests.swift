import Foundation
import Testing
import ForageStore

/// A record sink's delivery killed with SIGKILL between a batch's `apply`
/// and its cursor (a child process, `ForageSinkProbe`): the next delivery
/// gives that batch again, and nothing else twice. On SQLite, and on
/// PostgreSQL when the test server is there.
@Suite(.serialized) struct SinkDeliveryKillTests {
  /// Runs the probe to its end.
  static func runProbe(_ arguments: [String]) throws -> CommandResult {
    try runForage(arguments, program: sinkProbeBinary())
  }

  /// Fills `store` with 20 changes of source "catalog" (10 new records, then
  /// 5 of them changed and the other 5 removed); returns their ids, oldest first.
  static func fill(_ store: any Store) async throws -> [Int64] {
    var ids: [Int64] = []
    let seed = FrontierSeed(url: "https://example.com/", fingerprint: 0xBEEF, depth: 0)
    for (round, count) in [(0, 10), (1, 5)] {
      let now = Date(timeIntervalSince1970: 1_700_000_000 + Double(round) * 60)
      let crawl = try await store.openCrawl(source: "catalog", seeds: [seed], now: now)
      let items = try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "t", for: .seconds(60), at: now))
      let records = (0..<count).map { i in
        RecordInput(
          source: "catalog", key: "k\(i)", url: "https://example.com/\(i)", fieldsJSON: #"{"n":\#(i),"r":\#(round)}"#,
          contentHash: UInt64(i * 100 + round + 1))
      }
      let result = try await store.commit([PageCommit(item: items[0], outcome: .done, records: records, now: now)])
      let completion = try await store.completeCrawl(crawl.id, maxPages: nil, router: nil, now: now)
      ids += (result.changes + (completion?.removed ?? [])).map(\.id)
    }
    return ids
  }

  @Test(arguments: ChildStoreKind.all) func test_aSinkKilledBetweenApplyAndCursor_getsThatBatchAgain_andNothingElseTwice(
    _ kind: ChildStoreKind
  ) async throws {
    let dir = TemporaryDirectory()
    let output = dir.file("applied.txt")
    try await withChildStore(kind, in: dir) { store, location in
      let ids = try await Self.fill(store)
      try #require(ids.count == 20)
      // Batches of 4; killed after the second batch's apply returned.
      let killed = try Self.runProbe([location, "coredata", output, "4", "2"])
      #expect(killed.signalled && killed.status == SIGKILL, "\(killed.stderr)")
      let afterKill = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").compactMap { Int64($0) }
      #expect(afterKill == Array(ids[0..<8]))
      #expect(try await store.sinkCursor("coredata") == ids[3])

      let resumed = try Self.runProbe([location, "coredata", output, "4", "0"])
      #expect(resumed.status == 0 && !resumed.signalled, "\(resumed.stderr)")
      let applied = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").compactMap { Int64($0) }
      // The second batch twice (killed before its cursor), every other change once, in order.
      #expect(applied == Array(ids[0..<8]) + Array(ids[4..<20]))
      #expect(try await store.sinkCursor("coredata") == ids[19])
    }
  }
}
