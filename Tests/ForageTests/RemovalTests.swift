import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageSupport
import ForageTestSupport
@testable import Forage

@Suite(.serialized) struct RemovalTests {
  /// A real crawl: a page answering 304 keeps its record; a page that now
  /// answers 404 takes its record with it.
  @Test func test_notModifiedPageKeepsItsRecord_goneOneLosesIt() async throws {
    let gone = Locked(false)
    let server = try TestServer(routes: [
      "/kept": .fault(.etag("v1")),
      "/item": .choosing { _ in gone.withLock { $0 } ? .response(.notFound("/item")) : .response(.html("<h1>Lamp</h1>")) },
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    fetch.perHostDelay = .zero
    let config = ForageConfig(fetch: fetch, sources: [
      Source(name: "pages", urls: [server.url("/kept"), server.url("/item")], extract: ["title": "h1"])
    ])
    let first = try await launch(config, store)
    #expect(first.recordsNew == 2)
    gone.withLock { $0 = true }
    let second = try await launch(config, store)
    #expect(second.pagesNotModified == 1)
    #expect(second.recordsUnchanged == 1)
    #expect(second.recordsRemoved == 1)
    let removed = try await store.changes(matching: ChangeQuery(kinds: [.removed]))
    #expect(removed.map(\.url) == [server.url("/item")])
    let current = try await allRecords(store).filter { $0.removedAt == nil }
    #expect(current.map(\.url) == [server.url("/kept")])
  }
}
