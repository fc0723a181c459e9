import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageSupport
import ForageTestSupport
import ForageURL
@testable import Forage

/// A config crawling the demo shop at `base`, one record per product.
func shopConfig(
  _ base: String, maxPages: Int = 100_000, revisitAfter: Duration = .zero, concurrency: Int = 8,
  delay: Duration = .zero
) -> ForageConfig {
  var fetch = FetchSettings()
  fetch.perHostDelay = delay
  fetch.perHostConcurrency = concurrency
  fetch.concurrency = concurrency
  fetch.timeout = .seconds(10)
  return ForageConfig(
    userAgent: "ForageTests/1.0", fetch: fetch,
    sources: [
      Source(
        name: "catalog", url: base + "/",
        extract: [
          "title": "h1.product-title",
          "price": .css("span.price", as: .number),
          "sku": .css("div.product", attr: "data-sku", required: true),
        ],
        match: "div.product", key: ["sku"],
        crawl: CrawlScope(maxDepth: 6, maxPages: maxPages, revisitAfter: revisitAfter))
    ])
}

@Suite(.serialized) struct JobTests {
  @Test func test_crawl_demoShop_extractsEveryProduct() async throws {
    let site = DemoSite(products: 45)
    let server = try TestServer(site: site)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let job = Job(config: shopConfig(server.baseURL), store: store, transport: Engine.defaultTransport())
    let summary = try await job.run(budget: .seconds(60))

    #expect(!summary.stoppedByBudget)
    #expect(summary.completedSources == ["catalog"])
    #expect(summary.recordsNew == 45)
    let records = try await allRecords(store)
    #expect(records.count == 45)
    for n in 1...45 {
      let expected = site.expectedProduct(n)
      let r = try #require(records.first { $0.key == expected.sku })
      let fields = try JSONValue.parse(r.fieldsJSON)
      #expect(fields["title"] == .string(expected.title))
      #expect(fields["price"] == ValueConversion.convert(expected.price, to: .number))
      #expect(r.url == server.url(site.productPath(n)))
    }
    // robots.txt disallows /private/: never requested.
    #expect(server.requestCount(path: "/private/staff") == 0)
    // Every product page fetched exactly once (duplicates with fragments and
    // utm_ parameters were deduplicated).
    for n in 1...45 { #expect(server.requestCount(path: site.productPath(n)) == 1) }
  }

  @Test func test_budget_stopsAndTheNextLaunchContinues() async throws {
    let site = DemoSite(products: 60)
    let server = try TestServer(site: site)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    // One request every 20ms: about 1.6s for the whole shop, several launches.
    let config = shopConfig(server.baseURL, concurrency: 2, delay: .milliseconds(20))
    var launches = 0
    var stoppedOnce = false
    var budget: Duration = .milliseconds(900)
    while launches < 60 {
      launches += 1
      let summary = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: budget)
      if summary.stoppedByBudget { stoppedOnce = true } else { break }
      budget = .milliseconds(900)
    }
    #expect(stoppedOnce, "the first launch should not have finished the crawl within 900ms")
    let records = try await allRecords(store)
    #expect(Set(records.map(\.key)) == Set((1...60).map { "SKU-\($0)" }))
    // Nothing committed is fetched again within the crawl: each product once.
    for n in 1...60 { #expect(server.requestCount(path: site.productPath(n)) == 1) }
  }

  @Test func test_secondCrawl_revisitsAndFindsRecordsUnchanged() async throws {
    let site = DemoSite(products: 25)
    let server = try TestServer(site: site)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shopConfig(server.baseURL)
    let first = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(60))
    #expect(first.recordsNew == 25)
    let second = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(60))
    #expect(second.completedSources == ["catalog"])
    #expect(second.recordsNew == 0)
    #expect(second.recordsChanged == 0)
    #expect(second.recordsUnchanged == 25)
    #expect(try await allRecords(store).count == 25)
  }

  @Test func test_robotsTxt_isAskedOnceAcrossLaunches_throughTheStore() async throws {
    let site = DemoSite(products: 10)
    let server = try TestServer(site: site)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let config = shopConfig(server.baseURL)
    for _ in 0..<2 {
      // Each launch opens the store anew, as a new process would.
      let store = try SQLiteStore(path: dir.file("s.sqlite"))
      let summary = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(60))
      #expect(summary.completedSources == ["catalog"])
    }
    #expect(server.requestCount(path: "/robots.txt") == 1)
    #expect(server.requestCount(path: "/private/staff") == 0)
    let kept = try await SQLiteStore(path: dir.file("s.sqlite")).robotsFile(origin: try #require(WebURL(server.baseURL)).origin)
    #expect(kept?.verdict == .rules)
  }

  @Test func test_revisitAfter_skipsFreshPagesButFollowsTheirLinks() async throws {
    let site = DemoSite(products: 25)
    let server = try TestServer(site: site)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shopConfig(server.baseURL, revisitAfter: .seconds(3600))
    _ = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(60))
    server.clearRequests()
    let second = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(60))
    #expect(second.completedSources == ["catalog"])
    #expect(second.pagesFetched == 0)
    #expect(second.pagesFresh > 25)
    // Only pages that failed last time are asked for (robots.txt is kept in the store).
    let pages = server.requests.map(\.path).filter { $0.hasPrefix("/product/") || $0.hasPrefix("/category/") || $0 == "/" }
    #expect(pages.filter { path in (1...25).contains { site.productPath($0) == path } || !path.hasPrefix("/product/") }.isEmpty)
  }

  @Test func test_changedPage_isAChangedRecord() async throws {
    let price = Locked(10)
    let server = try TestServer(routes: [
      "/item": Route { _ in
        .html("<div class=product data-sku=A><h1>Lamp</h1><span class=price>$\(price.withLock { $0 })</span></div>")
      }
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    let config = ForageConfig(fetch: fetch, sources: [
      Source(name: "item", url: server.url("/item"), extract: ["name": "h1", "price": .css(".price", as: .number)])
    ])
    let a = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(a.recordsNew == 1)
    let b = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(b.recordsUnchanged == 1)
    price.withLock { $0 = 12 }
    let c = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(c.recordsChanged == 1)
    let changes = try await store.changes(source: "item", afterID: 0, limit: 10)
    #expect(changes.count == 2)
    #expect(changes.last?.beforeJSON == #"{"name":"Lamp","price":10}"#)
    #expect(changes.last?.afterJSON == #"{"name":"Lamp","price":12}"#)
    // A non-crawl source is fetched on every launch.
    #expect(server.requestCount(path: "/item") == 3)
  }

  @Test func test_jsonSource_itemsAndPointers() async throws {
    let server = try TestServer(routes: [
      "/api": Route { _ in
        .json(#"{"data": {"items": [{"id": 1, "name": "a", "tags": ["x", "y"]}, {"id": 2, "name": "b", "price": "3.50"}]}}"#)
      }
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    let config = ForageConfig(fetch: fetch, sources: [
      Source(
        name: "api", url: server.url("/api"), format: .json,
        extract: [
          "id": .pointer("/id", as: .integer), "name": "/name",
          "price": .pointer("/price", as: .number), "tags": FieldRule("/tags", all: true),
        ],
        items: "/data/items", key: ["id"])
    ])
    let s = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(s.recordsNew == 2)
    let records = try await allRecords(store)
    #expect(records.map(\.key) == ["1", "2"])
    #expect(records[0].fieldsJSON == #"{"id":1,"name":"a","price":null,"tags":["x","y"]}"#)
    #expect(records[1].fieldsJSON == #"{"id":2,"name":"b","price":3.5,"tags":null}"#)
  }

  @Test func test_failingPages_areCountedNotThrown() async throws {
    let server = try TestServer(routes: [
      "/ok": Route { _ in .html("<h1>fine</h1>") },
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    fetch.retries = 0
    let config = ForageConfig(fetch: fetch, sources: [
      Source(name: "s", urls: [server.url("/ok"), server.url("/missing")], extract: ["h": "h1"])
    ])
    let s = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(s.pagesFetched == 1)
    #expect(s.pagesFailed == 1)
    #expect(s.recordsNew == 1)
    #expect(s.warnings.contains { $0.contains("/missing") && $0.contains("404") })
  }

  @Test func test_unknownSourceName_isAnEngineError() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = ForageConfig(sources: [Source(name: "prices", url: "http://127.0.0.1:9/")])
    await #expect {
      _ = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(sources: ["price"], budget: .seconds(1))
    } throws: { error in
      (error as? EngineError)?.kind == .unknownSource && "\(error)".contains("did you mean \"prices\"?")
    }
  }

  /// A launch is resolved once and passed down: the job runs the sources it
  /// was given, as given, and records the launch's task; it looks no name
  /// up in the config again (issue 28).
  @Test func test_issue28_aResolvedLaunch_runsItsSourcesAsGiven() async throws {
    let site = DemoSite(products: 5)
    let server = try TestServer(site: site)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shopConfig(server.baseURL)
    // The config's source renamed, and only one page of it: not a name of the config.
    var source = config.sources[0]
    source.name = "catalog-preview"
    source.crawl = nil
    source.urls = [server.url(site.productPath(1))]
    let launch = Launch(task: "com.example.preview", sources: [source], budget: .seconds(30))
    let summary = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(launch)
    #expect(summary.completedSources == ["catalog-preview"])
    #expect(summary.sources.map(\.name) == ["catalog-preview"])
    #expect(summary.pagesFetched == 1 && summary.recordsNew == 1)
    #expect(server.requestCount(path: site.productPath(2)) == 0)
    let runs = try await store.runs(limit: 1)
    #expect(runs.first?.task == "com.example.preview")
  }
}

@Suite struct ConditionalRequestTests {
  @Test(arguments: ["/fault/etag", "/fault/last-modified"])
  func test_unchangedPage_isNotModified_withoutBody(_ path: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    let config = ForageConfig(fetch: fetch, sources: [Source(name: "c", url: server.url(path), extract: ["t": "title"])])
    let first = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(first.pagesFetched == 1)
    #expect(first.recordsNew == 1)
    let second = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(second.pagesNotModified == 1)
    #expect(second.pagesFetched == 0)
    // The server vouched for the page's record: it counts as unchanged.
    #expect(second.recordsUnchanged == 1 && second.recordsNew == 0 && second.recordsChanged == 0)
    #expect(second.sources.first?.recordsUnchanged == 1)
    #expect(second.bytes == 0)
    let last = try #require(server.requests.last)
    #expect(last.header("If-None-Match") != nil || last.header("If-Modified-Since") != nil)
  }
}

@Suite struct JobEdgeTests {
  /// A link whose name does not say it is a file (`/get?file=1`) is fetched,
  /// but an HTML source reads no more than its head once that says it is
  /// no page: the archive's 8 MiB never arrive, and nothing fails.
  @Test func test_linkToAnArchiveUnderAPageName_costsItsHeadOnly() async throws {
    let server = try TestServer(routes: [
      "/": Route { _ in .html("<h1>Home</h1><a href=/get?file=1>the catalogue</a>") },
      "/get": Route { _ in
        TestResponse(headers: [("Content-Type", "application/zip")], body: [UInt8](repeating: 0x50, count: 8 << 20))
      },
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    let config = ForageConfig(fetch: fetch, sources: [
      Source(name: "s", url: server.url("/"), extract: ["t": "h1"], crawl: CrawlScope())
    ])
    let summary = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(summary.completedSources == ["s"])
    #expect(summary.pagesFetched == 2 && summary.pagesFailed == 0, "\(summary)")
    #expect(summary.bytes < 1 << 20, "\(summary.bytes) bytes read")
    #expect(server.requestCount(path: "/get") == 1)
  }

  @Test func test_startURL_mayRedirectOutOfTheIncludePatterns() async throws {
    let server = try TestServer(routes: [
      "/": Route { _ in .redirect(to: "/home") },
      "/home": Route { _ in .html("<a href=/item/1>one</a><a href=/about>about</a>") },
      "/item/1": Route { _ in .html("<h1>One</h1>") },
      "/about": Route { _ in .html("<h1>About</h1>") },
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    fetch.perHostDelay = .zero
    let config = ForageConfig(fetch: fetch, sources: [
      Source(name: "s", url: server.url("/"), extract: ["t": "h1"], match: "h1", crawl: CrawlScope(include: ["/item/"]))
    ])
    let s = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(s.recordsNew == 1)
    #expect(try await allRecords(store).map(\.key) == [server.url("/item/1")])
    #expect(server.requestCount(path: "/about") == 0)
  }

  @Test func test_withoutRecoveringClaims_anotherJobsClaimsAreLeftAlone() async throws {
    let server = try TestServer(routes: [
      "/a": Route { _ in .html("<h1>A</h1>") }, "/b": Route { _ in .html("<h1>B</h1>") },
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    let source = Source(name: "s", urls: [server.url("/a"), server.url("/b")], extract: ["t": "h1"])
    let config = ForageConfig(fetch: fetch, sources: [source])
    // Another job of the same process holds /a.
    let compiled = try CompiledSource(source, canonicalizer: .default)
    let seeds = source.urls.map { PageContext.seed(WebURL($0)!, source: compiled, depth: 0) }
    let crawl = try await store.openCrawl(source: "s", seeds: seeds, now: Date())
    let held = try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "other", for: .seconds(3600), at: Date()))
    #expect(held.map(\.url) == [server.url("/a")])

    let s = try await Job(config: config, store: store, transport: Engine.defaultTransport())
      .run(budget: .seconds(30), recoveringClaims: false)
    #expect(s.pagesFetched == 1)
    #expect(server.requestCount(path: "/a") == 0)
    #expect(server.requestCount(path: "/b") == 1)
  }
}

@Suite struct CommitCadenceTests {
  @Test func test_slowCrawl_commitsAsItGoes_notOnlyAtTheEnd() async throws {
    var routes: [String: Route] = [
      "/": Route { _ in .html((1...12).map { "<a href=/p/\($0)>\($0)</a>" }.joined()) }
    ]
    for n in 1...12 { routes["/p/\(n)"] = Route { _ in .html("<h1>Item \(n)</h1>") } }
    let server = try TestServer(routes: routes)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    fetch.concurrency = 1
    fetch.perHostConcurrency = 1
    fetch.perHostDelay = .milliseconds(150)
    fetch.adaptiveDelay = false
    let config = ForageConfig(fetch: fetch, sources: [
      Source(name: "s", url: server.url("/"), extract: ["t": "h1"], match: "h1", crawl: CrawlScope(revisitAfter: .zero))
    ])
    let job = Task { try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(60)) }
    // Some records are stored while the crawl (about 2 s) is still going.
    var seenPartial = false
    while !seenPartial {
      let n = try await store.records(source: "s", afterID: 0, limit: 100).count
      if n > 0 && n < 12 { seenPartial = true }
      if n == 12 { break }
      try await Task.sleep(for: .milliseconds(20))
    }
    let summary = try await job.value
    #expect(summary.recordsNew == 12)
    #expect(seenPartial, "records should be committed while the crawl runs, not all at the end")
  }
}
