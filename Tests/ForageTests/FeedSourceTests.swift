import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageSupport
import ForageTestSupport
@testable import Forage

/// Feed sources: the `feed` key of a config, and feeds fetched through a job.
@Suite struct FeedSourceTests {
  @Test func test_config_feedKey_readsAndWritesBack() throws {
    let c = try ForageConfig.parse(Array(#"{"sources": [{"name": "news", "feed": "https://example.com/rss"}]}"#.utf8))
    #expect(c.sources[0] == Source(name: "news", feed: "https://example.com/rss"))
    #expect(c.sources[0].format == .feed && c.sources[0].urls == ["https://example.com/rss"])
    #expect(c.jsonText.contains(#""feed": "https://example.com/rss""#))
    #expect(try ForageConfig.parse(Array(c.jsonText.utf8)) == c)
  }

  @Test func test_config_feedWithURLOrRules_isRefused() {
    #expect(problems(#"{"sources": [{"name": "n", "feed": "https://e.com/rss", "url": "https://e.com/"}]}"#).map(\.description)
      == [#"sources[0].feed: give "feed" or "url"/"urls", not both"#])
    #expect(problems(#"{"sources": [{"name": "n", "feed": "https://e.com/rss", "items": "item"}]}"#).map(\.description)
      == [#"sources[0].items: "items" does not apply to feed sources (their fields are fixed)"#])
    #expect(problems(#"{"sources": [{"name": "n", "feed": "ftp://e.com/rss"}]}"#).map(\.description)
      == [#"sources[0].feed: not an absolute http(s) URL: "ftp://e.com/rss""#])
  }

  static func rss(_ items: [(guid: String, title: String)]) -> String {
    "<?xml version=\"1.0\" encoding=\"utf-8\"?><rss version=\"2.0\"><channel><title>News</title>"
      + items.map { "<item><guid>\($0.guid)</guid><title>\($0.title)</title><link>/\($0.guid)</link></item>" }.joined()
      + "</channel></rss>"
  }

  @Test func test_feedRunTwice_oneNewEntry_givesOneNewRecord() async throws {
    let items = Locked([(guid: "a", title: "First"), (guid: "b", title: "Second")])
    let server = try TestServer(routes: [
      // Served as text/html: the format comes from the content.
      "/rss": Route { _ in .html(FeedSourceTests.rss(items.withLock { $0 })) }
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    let config = ForageConfig(fetch: fetch, sources: [Source(name: "news", feed: server.url("/rss"))])
    let first = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(first.recordsNew == 2 && first.warnings.isEmpty)
    items.withLock { $0.insert((guid: "c", title: "Third"), at: 0) }
    let second = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(second.recordsNew == 1)
    #expect(second.recordsChanged == 0)
    let records = try await allRecords(store)
    #expect(Set(records.map(\.key)) == ["a", "b", "c"])
    let c = try #require(records.first { $0.key == "c" })
    #expect(c.fieldsJSON.hasPrefix(#"{"id":"c","title":"Third","link":"\#(server.url("/c"))""#))
  }

  @Test func test_malformedFeed_keepsEntries_andWarnsWithTheReason() async throws {
    let server = try TestServer(routes: [
      "/rss": Route { _ in .text("<rss><channel><item><guid>1</guid><title>Caf&eacute;</title></item><item><guid>2</guid><title>Cut") }
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    let config = ForageConfig(fetch: fetch, sources: [Source(name: "news", feed: server.url("/rss"))])
    let s = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(s.recordsNew == 2)
    #expect(s.warnings.contains { $0.contains("malformed feed") && $0.contains("&eacute;") && $0.contains("truncated") })
  }
}
