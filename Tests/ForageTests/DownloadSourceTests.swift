import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageSupport
import ForageTestSupport
@testable import Forage

@Suite(.serialized) struct DownloadSourceTests {
  static let items = #"{"items": [{"sku": "A", "price": 10}, {"sku": "B", "price": 20}]}"#

  func config(_ url: String, directory: String) -> ForageConfig {
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    fetch.perHostDelay = .zero
    var source = Source(
      name: "dataset", url: url, format: .json, extract: ["sku": "/sku", "price": .pointer("/price", as: .number)],
      items: "/items", key: ["sku"])
    source.download = true
    var config = ForageConfig(fetch: fetch, sources: [source])
    config.directory = directory
    return config
  }

  @Test func test_downloadSource_isReadLikeAFetchedPage_andItsCacheIsEmptied() async throws {
    let server = try TestServer(routes: ["/data.json": Route { _ in .json(Self.items) }])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = config(server.url("/data.json"), directory: dir.path)
    let first = try await launch(config, store)
    #expect(first.recordsNew == 2 && first.sources[0].completed)
    let records = try await allRecords(store)
    #expect(records.map(\.fieldsJSON) == [#"{"sku":"A","price":10}"#, #"{"sku":"B","price":20}"#])
    let cache = dir.file(".forage-downloads/dataset")
    #expect(try FileManager.default.contentsOfDirectory(atPath: cache).isEmpty)
    // The next crawl downloads the file again.
    let second = try await launch(config, store)
    #expect(second.recordsUnchanged == 2)
    #expect(server.requestCount(path: "/data.json") == 2)
  }

  @Test func test_unfinishedDownload_leavesTheCrawlOpen_andTheNextLaunchFinishes() async throws {
    let hanging = Locked(true)
    let server = try TestServer(routes: [
      "/data.json": .choosing { _ in
        hanging.withLock { $0 } ? .fault(.slowHeaders(seconds: 30)) : .response(.json(Self.items))
      }
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = config(server.url("/data.json"), directory: dir.path)
    let cut = try await launch(config, store, budget: .seconds(2))
    #expect(cut.pagesDeferred == 1 && !cut.sources[0].completed && cut.recordsNew == 0)
    hanging.withLock { $0 = false }
    let done = try await launch(config, store)
    #expect(done.recordsNew == 2 && done.sources[0].completed)
  }

  @Test func test_config_download_readWrittenAndChecked() throws {
    let text = #"{"sources": [{"name": "d", "url": "https://e.com/d.json", "format": "json", "download": true, "extract": {"a": "/a"}}]}"#
    let config = try ForageConfig.parse(Array(text.utf8))
    #expect(config.sources[0].download)
    #expect(try ForageConfig.parse(Array(config.jsonText.utf8)) == config)
    let bad = #"{"sources": [{"name": "d", "url": "https://e.com/", "download": true, "crawl": {}}]}"#
    do {
      _ = try ForageConfig.parse(Array(bad.utf8))
      Issue.record("download with crawl was accepted")
    } catch {
      #expect(error.problems.map(\.path).contains("sources[0].crawl"))
    }
    #expect(PageContext.safeFolderName("../a b") == "_._a_b")
  }
}
