import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageSupport
import ForageTestSupport
@testable import Forage

/// One launch runs every source at once (issue 10): a slow or hostile source
/// holds only its own share of the pool.
@Suite(.serialized) struct InterleavedLaunchTests {
  /// Ten misbehaving routes, each a source of its own, on one host.
  static let hostile = [
    "/fault/drip?rate=1&total=60", "/fault/truncated", "/fault/endless-chunked", "/fault/gzip-bomb",
    "/fault/redirect-loop", "/fault/429?retry-after=3600", "/fault/reset", "/fault/bad-status",
    "/fault/huge-headers?bytes=1048576", "/fault/slow-headers?seconds=60",
  ]

  @Test func test_issue10_tenHostileSources_doNotStarveTwoGoodOnes() async throws {
    let bad = try TestServer()
    defer { bad.stop() }
    let good = try TestServer(routes: [
      "/one": Route { _ in .html("<h1>one</h1>") },
      "/two": Route { _ in .html("<h1>two</h1>") },
    ])
    defer { good.stop() }
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    fetch.perHostDelay = .zero
    fetch.retries = 0
    fetch.concurrency = 8
    // The hostile sources are listed first: run one after another, they
    // would have taken the whole budget before the good ones were asked.
    var sources = Self.hostile.enumerated().map { i, path in
      Source(name: "bad\(i)", url: bad.url(path), extract: ["t": "h1"])
    }
    sources.append(Source(name: "one", url: good.url("/one"), extract: ["t": "h1"]))
    sources.append(Source(name: "two", url: good.url("/two"), extract: ["t": "h1"]))
    let config = ForageConfig(userAgent: "ForageTests/1.0", fetch: fetch, sources: sources)
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    // When the good records were committed, as the launch reports progress.
    let goodCommitted = Locked<Double?>(nil)
    let started = ContinuousClock.now
    let summary = try await Job(config: config, store: store, transport: Engine.defaultTransport())
      .run(budget: .seconds(8)) { progress in
        let done = progress.sources.filter { ["one", "two"].contains($0.name) }.allSatisfy { $0.pagesFetched == 1 }
        if done { goodCommitted.withLock { if $0 == nil { $0 = (ContinuousClock.now - started).seconds } } }
      }
    let records = try await allRecords(store)
    #expect(Set(records.map(\.source)) == ["one", "two"])
    #expect(summary.completedSources.contains("one") && summary.completedSources.contains("two"))
    let perSource = Dictionary(uniqueKeysWithValues: summary.sources.map { ($0.name, $0) })
    #expect(perSource["one"]?.recordsNew == 1 && perSource["two"]?.recordsNew == 1)
    #expect(summary.sources.count == 12)
    // The good pages landed while the hostile ones were still going: before
    // the launch ended, not at its end.
    let landed = try #require(goodCommitted.withLock { $0 })
    #expect(landed < summary.seconds, "good records at \(landed)s of \(summary.seconds)s")
  }

  @Test func test_issue10_onePageSources_completeBesideALargeCrawl() async throws {
    let site = DemoSite(products: 20_000)
    let shop = try TestServer(site: site)
    defer { shop.stop() }
    let small = try TestServer(routes: Dictionary(uniqueKeysWithValues: (1...5).map { n in
      ("/p\(n)", Route { _ in .html("<h1>page \(n)</h1>") })
    }))
    defer { small.stop() }
    var config = shopConfig(shop.baseURL, concurrency: 8)
    config.fetch.robotsTxt = false
    for n in 1...5 {
      config.sources.append(Source(name: "page\(n)", url: small.url("/p\(n)"), extract: ["t": "h1"]))
    }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let summary = try await Job(config: config, store: store, transport: Engine.defaultTransport())
      .run(budget: .seconds(5))
    #expect(summary.stoppedByBudget, "the big crawl cannot finish in 5 s")
    #expect(!summary.completedSources.contains("catalog"))
    for n in 1...5 { #expect(summary.completedSources.contains("page\(n)"), "page\(n)") }
    let records = try await allRecords(store)
    #expect(Set(records.filter { $0.source.hasPrefix("page") }.map(\.source)).count == 5)
    // The next launch continues the big crawl where it stopped.
    let catalog = try #require(summary.sources.first { $0.name == "catalog" })
    #expect(catalog.pagesFetched > 0 && !catalog.completed)
  }
}
