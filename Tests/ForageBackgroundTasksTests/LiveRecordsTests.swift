#if os(Linux)
import Foundation
import Testing
import Forage
import ForageBackgroundTasks
import ForageStore

/// `LiveRecords`, the SwiftUI model of a source's records (issue 30): it
/// reads them, follows the change stream, folds bursts into reads, lists
/// what does not decode, and ends with its task.
@Suite struct LiveRecordsTests {
  struct Product: Decodable, Sendable, Equatable {
    let title: String
    let price: Double?
  }

  /// Commits one page of `records` (key, fields JSON) as a crawl of `source`, and completes it.
  static func commit(_ store: any Store, source: String, _ records: [(String, String)], at now: Date) async throws {
    let seed = FrontierSeed(url: "https://example.com/\(source)", fingerprint: 0xF00D, depth: 0)
    let crawl = try await store.openCrawl(source: source, seeds: [seed], now: now)
    let items = try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "t", for: .seconds(60), at: now))
    let inputs = records.map { key, fields in
      RecordInput(
        source: source, key: key, url: "https://example.com/\(source)/\(key)", fieldsJSON: fields,
        contentHash: fields.utf8.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 })
    }
    let page = PageRecord(url: items[0].url, fingerprint: items[0].fingerprint, status: 200, fetchedAt: now)
    _ = try await store.commit([PageCommit(item: items[0], outcome: .done, page: page, records: inputs, now: now)])
    _ = try await store.completeCrawl(crawl.id, maxPages: nil, router: nil, now: now)
  }

  static func engine(_ store: any Store) -> Engine {
    Engine(
      config: ForageConfig(sources: [Source(name: "catalog", url: "http://127.0.0.1:9/catalog", extract: ["title": "h1"])]),
      store: store)
  }

  @MainActor @Test func test_follow_readsTheRecords_thenKeepsThemCurrent_andEndsWithItsTask() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    try await Self.commit(store, source: "catalog", [("a", #"{"price":3,"title":"Mug"}"#)], at: t0)
    let model = LiveRecords(Product.self, source: "catalog", engine: Self.engine(store))
    #expect(model.records.isEmpty && model.readAt == nil)

    let following = Task { await model.follow() }
    #expect(await eventually { @MainActor in model.reads >= 1 })
    #expect(model.records.map(\.value) == [Product(title: "Mug", price: 3)])

    // Another writer of the same store (a launch, the daemon): the model follows.
    try await Self.commit(
      store, source: "catalog",
      [("a", #"{"price":3,"title":"Mug"}"#), ("b", #"{"title":"Cup"}"#), ("bad", #"{"price":"cheap","title":"X"}"#)], at: t0 + 60)
    #expect(await eventually { @MainActor in model.records.count == 2 })
    #expect(model.records.map(\.key) == ["a", "b"])
    #expect(model.failures.map(\.key) == ["bad"])
    #expect(model.problem == nil)

    following.cancel()
    await following.value  // returns: the stream and its reader end with the task
    let reads = model.reads
    try await Self.commit(store, source: "catalog", 
      [("a", #"{"price":3,"title":"Mug"}"#), ("b", #"{"title":"Cup"}"#), ("c", #"{"title":"Jar"}"#)], at: t0 + 120)
    await model.reload()
    #expect(model.reads == reads + 1 && model.records.count == 3)
  }

  @MainActor @Test func test_anUnknownSource_isAProblemInWords_notACrash() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let model = LiveRecords(Product.self, source: "catalgo", engine: Self.engine(store))
    await model.follow()  // the stream refuses the source: follow returns
    let problem = try #require(model.problem)
    #expect(problem.contains("catalgo"))
    #expect(problem.contains("catalog"))  // the closest name
  }
}
#endif
