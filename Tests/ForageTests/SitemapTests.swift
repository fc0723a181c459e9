import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageSupport
import ForageTestSupport
import ForageURL
@testable import Forage

/// The demo shop's product rules, for sources whose pages come from sitemaps.
private let productFields: KeyValuePairs<String, FieldRule> = [
  "title": "h1.product-title",
  "price": .css("span.price", as: .number),
  "sku": .css("div.product", attr: "data-sku", required: true),
]

private func fastFetch() -> FetchSettings {
  var fetch = FetchSettings()
  fetch.perHostDelay = .zero
  fetch.perHostConcurrency = 4
  fetch.concurrency = 4
  fetch.timeout = .seconds(20)
  return fetch
}

private func config(_ sources: [Source], concurrency: Int = 4) -> ForageConfig {
  var fetch = fastFetch()
  fetch.concurrency = concurrency
  fetch.perHostConcurrency = concurrency
  return ForageConfig(userAgent: "ForageTests/1.0", fetch: fetch, sources: sources)
}

/// A urlset of `locs` (with optional lastmods), as XML text.
private func urlset(_ entries: [(loc: String, lastmod: String?)]) -> String {
  var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
  xml += #"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"# + "\n"
  for e in entries {
    xml += "  <url><loc>\(e.loc)</loc>"
    if let lastmod = e.lastmod { xml += "<lastmod>\(lastmod)</lastmod>" }
    xml += "</url>\n"
  }
  return xml + "</urlset>\n"
}

private func xml(_ text: String) -> TestResponse {
  TestResponse(status: 200, headers: [("Content-Type", "application/xml")], body: Array(text.utf8))
}

private func gzipFile(_ bytes: [UInt8]) -> TestResponse {
  TestResponse(status: 200, headers: [("Content-Type", "application/gzip")], body: bytes)
}

/// An ISO 8601 date in UTC.
private func utc(_ text: String) -> Date? {
  FeedDate.parse(text).map { Date(timeIntervalSince1970: TimeInterval($0)) }
}

/// Parses `text` as a sitemap.
private func parse(_ text: String, max: Int = Sitemap.maxURLs) -> SitemapDocument {
  SitemapParser.parse(Array(text.utf8), url: WebURL("https://example.com/sitemap.xml"), maxEntries: max)
}

@Suite struct SitemapParserTests {
  @Test func test_urlsetAndIndex_areToldApartByTheirRoot() {
    let set = parse(urlset([("https://example.com/a", "2024-05-01"), ("https://example.com/b", nil)]))
    #expect(set.kind == .urlset)
    #expect(set.entries.map(\.loc) == ["https://example.com/a", "https://example.com/b"])
    #expect(set.entries[0].lastModified == utc("2024-05-02T00:00:00Z"))
    #expect(set.entries[1].lastModified == nil)
    #expect(set.problems.isEmpty)

    let index = parse(
      """
      <sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <sitemap><loc>https://example.com/s1.xml.gz</loc><lastmod>2024-05-01T10:00:00+02:00</lastmod></sitemap>
        <sitemap><loc>https://example.com/s2.xml</loc></sitemap>
      </sitemapindex>
      """)
    #expect(index.kind == .index)
    #expect(index.entries.map(\.loc) == ["https://example.com/s1.xml.gz", "https://example.com/s2.xml"])
    #expect(index.entries[0].lastModified == utc("2024-05-01T08:00:00Z"))
  }

  @Test func test_usualBreakage_isTolerated() {
    // A BOM, whitespace and a comment before the declaration; a prefixed
    // root and a wrong namespace; entities and CDATA in locs; upper case.
    let text = "\u{FEFF}  \n<!-- generated -->\n<?xml version=\"1.0\"?>\n<!DOCTYPE urlset [<!ENTITY x \"y\">]>"
      + "<sm:URLSET xmlns:sm=\"http://example.com/wrong\">"
      + "<sm:url><sm:loc> https://example.com/p?a=1&amp;b=2&#38;c=&#x33; </sm:loc></sm:url>"
      + "<url><loc><![CDATA[https://example.com/q?x=1&y=2]]></loc></url>"
      + "<url><loc>https://example.com/&eacute;t&eacute;</loc></url>"
      + "</sm:URLSET>"
    let document = parse(text)
    #expect(document.kind == .urlset)
    #expect(
      document.entries.map(\.loc) == [
        "https://example.com/p?a=1&b=2&c=3", "https://example.com/q?x=1&y=2", "https://example.com/été",
      ])
  }

  /// Issue 28: one XML reader. A sitemap's references are decoded by the
  /// feeds' reader, so both read the same text alike: the DOCTYPE's own
  /// entities, C1 references as windows-1252 (as HTML does), HTML's names
  /// written without `;`. (The sitemap scanner's own decoder kept the first
  /// as written and the second as a control character.)
  @Test func test_issue28_sitemapReferences_decodeAsTheFeedReaderDoes() throws {
    let loc = "https://example.com/&shop;/caf&eacute;?p=&#x80;5&amp;x=1&nbsp"
    let document = parse(
      #"<!DOCTYPE urlset [<!ENTITY shop "boutique">]><urlset><url><loc>\#(loc)</loc></url></urlset>"#)
    var reader = XMLReader(utf8: Array(#"<!DOCTYPE r [<!ENTITY shop "boutique">]><r>\#(loc)</r>"#.utf8))
    let fromFeedReader = reader.read().text
    #expect(fromFeedReader == "https://example.com/boutique/café?p=€5&x=1\u{A0}")
    #expect(document.entries.map(\.loc) == [fromFeedReader])
  }

  @Test func test_extensionsLocs_areNotTakenForThePage() {
    let document = parse(
      """
      <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
        <url>
          <image:image><image:loc>https://cdn.example.com/1.jpg</image:loc></image:image>
          <loc>https://example.com/1</loc>
          <xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/1"/>
          <changefreq>daily</changefreq><priority>0.8</priority>
        </url>
      </urlset>
      """)
    #expect(document.entries.map(\.loc) == ["https://example.com/1"])
  }

  @Test func test_malformedXML_recoversTheReadableEntries() {
    // An unclosed <url>, a stray end tag, a bare <, an entry without a loc,
    // and a document cut off in the middle of a loc.
    let document = parse(
      """
      <urlset>
        <url><loc>https://example.com/1</loc>
        <url><loc>https://example.com/2</loc></lastmod></url>
        <url><loc>https://example.com/3 < 4</loc></url>
        <url><lastmod>2024-01-01</lastmod></url>
        <url><loc>https://example.com/4</loc><lastmod>2024-0
      """)
    #expect(document.kind == .urlset)
    #expect(document.entries.map(\.loc) == [
      "https://example.com/1", "https://example.com/2", "https://example.com/3 < 4", "https://example.com/4",
    ])
    #expect(document.entries[3].lastModified == nil)
    #expect(document.problems.contains { $0.contains("truncated") })
    #expect(document.problems.contains { $0.contains("no <loc>") })

    let cut = parse("<urlset><url><loc>https://example.com/1</loc></url><url><loc>https://exa")
    #expect(cut.entries.map(\.loc) == ["https://example.com/1"])
  }

  @Test func test_otherContent_isNoSitemap_andTextSitemapsAreRead() {
    if case .unknown(let reason) = parse("<!DOCTYPE html><html><body>Not found</body></html>").kind {
      #expect(reason.contains("<html>"))
    } else {
      Issue.record("an HTML page read as a sitemap")
    }
    #expect(parse("").kind == .unknown("the file is empty"))
    let text = parse("https://example.com/a\r\n\n  https://example.com/b  \nnot a url\nHTTPS://example.com/c\n")
    #expect(text.kind == .text)
    #expect(text.entries.map(\.loc) == ["https://example.com/a", "https://example.com/b", "HTTPS://example.com/c"])
    #expect(text.problems == ["1 line is not an http(s) URL"])
    if case .unknown = parse("{\"json\": true}").kind {} else { Issue.record("JSON read as a text sitemap") }
  }

  @Test func test_feedsAreSitemapsToo() {
    let document = parse(
      """
      <?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
      <item><title>a</title><link>https://example.com/a</link><pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate></item>
      <item><title>b</title><link>/b</link></item>
      </channel></rss>
      """)
    #expect(document.kind == .feed)
    #expect(document.entries.map(\.loc) == ["https://example.com/a", "https://example.com/b"])
    #expect(document.entries[0].lastModified == utc("2024-05-01T10:00:00Z"))
  }

  @Test func test_entryLimit_cutsTheFile() {
    let entries = (1...12).map { (loc: "https://example.com/\($0)", lastmod: String?.none) }
    let document = parse(urlset(entries), max: 10)
    #expect(document.entries.count == 10)
    #expect(document.cutAtEntryLimit)
    #expect(!parse(urlset(entries), max: 12).cutAtEntryLimit)
  }

  @Test func test_lastmod_w3cDatetime_aDateIsTheEndOfIt() {
    #expect(SitemapDate.parse("2024-05-01") == utc("2024-05-02T00:00:00Z"))
    #expect(SitemapDate.parse("2024-12") == utc("2025-01-01T00:00:00Z"))
    #expect(SitemapDate.parse("2024") == utc("2025-01-01T00:00:00Z"))
    #expect(SitemapDate.parse("2024-05-01T10:20Z") == utc("2024-05-01T10:20:00Z"))
    #expect(SitemapDate.parse("2024-05-01T10:20:30.5-01:00") == utc("2024-05-01T11:20:30Z"))
    #expect(SitemapDate.parse(" 2024-05-01T10:20:30+00:00 ") == utc("2024-05-01T10:20:30Z"))
    #expect(SitemapDate.parse("yesterday") == nil)
    #expect(SitemapDate.parse("") == nil)
  }
}

@Suite(.serialized) struct SitemapJobTests {
  @Test func test_indexWithAGzipChild_feedsProductPagesIntoRecords() async throws {
    let site = DemoSite(products: 10)
    let base = Locked("")
    let routes: [String: Route] = [
      "/sitemap_index.xml": Route { _ in
        let b = base.withLock { $0 }
        return xml(
          """
          <sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
            <sitemap><loc>\(b)/sitemap-products</loc></sitemap>
            <sitemap><loc>\(b)/sitemap-pages.xml.gz</loc></sitemap>
          </sitemapindex>
          """)
      },
      // Compressed, under a name without .gz: told by its magic bytes.
      "/sitemap-products": Route { _ in
        let b = base.withLock { $0 }
        let text = urlset([
          ("\(b)\(site.productPath(2))", "2024-01-01"), ("\(b)\(site.productPath(7))", "2024-03-01"),
          ("\(b)\(site.productPath(5))", nil),
        ])
        return gzipFile(Gzip.stored(Array(text.utf8)))
      },
      // Plain, under a .gz name.
      "/sitemap-pages.xml.gz": Route { _ in xml(urlset([(base.withLock { $0 } + "/about", nil)])) },
    ]
    let server = try TestServer(routes: routes, site: site)
    defer { server.stop() }
    base.withLock { $0 = server.baseURL }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let source = Source(
      name: "shop", sitemap: server.url("/sitemap_index.xml"), extract: productFields, match: "div.product",
      key: ["sku"])
    // One request at a time: pages are fetched in their frontier order.
    let summary = try await Job(config: config([source], concurrency: 1), store: store, transport: Engine.defaultTransport())
      .run(budget: .seconds(60))

    #expect(summary.completedSources == ["shop"])
    #expect(summary.warnings.isEmpty, "\(summary.warnings)")
    let records = try await allRecords(store)
    #expect(records.map(\.key) == ["SKU-2", "SKU-5", "SKU-7"])
    for n in [2, 5, 7] {
      let r = try #require(records.first { $0.key == "SKU-\(n)" })
      #expect(try JSONValue.parse(r.fieldsJSON)["title"] == .string(site.expectedProduct(n).title))
      #expect(server.requestCount(path: site.productPath(n)) == 1)
    }
    #expect(server.requestCount(path: "/about") == 1)
    // Newest lastmod first: 7 (March), 2 (January), then 5 (none).
    let order = server.requests.map(\.path).filter { $0.hasPrefix("/product/") }
    #expect(order == [site.productPath(7), site.productPath(2), site.productPath(5)])
  }

  @Test func test_robotsTxt_namesTheSitemap() async throws {
    let site = DemoSite(products: 6)
    let base = Locked("")
    let routes: [String: Route] = [
      "/robots.txt": Route { _ in
        .text("User-agent: *\nDisallow: /private/\n\nSitemap: \(base.withLock { $0 })/maps/products.xml\n")
      },
      "/maps/products.xml": Route { _ in
        let b = base.withLock { $0 }
        return xml(urlset([("\(b)\(site.productPath(3))", nil), ("\(b)\(site.productPath(4))", nil)]))
      },
    ]
    let server = try TestServer(routes: routes, site: site)
    defer { server.stop() }
    base.withLock { $0 = server.baseURL }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var source = Source(name: "shop", url: server.url("/"), extract: productFields, match: "div.product", key: ["sku"])
    source.sitemap = .robotsTxt
    let summary = try await Job(config: config([source]), store: store, transport: Engine.defaultTransport())
      .run(budget: .seconds(60))
    #expect(summary.completedSources == ["shop"])
    #expect(summary.warnings.isEmpty, "\(summary.warnings)")
    #expect(try await allRecords(store).map(\.key) == ["SKU-3", "SKU-4"])
    #expect(server.requestCount(path: "/maps/products.xml") == 1)
    #expect(server.requestCount(path: "/robots.txt") == 1)
  }

  @Test func test_lastmod_olderThanTheLastFetch_isNotFetchedAgain_newerIs() async throws {
    let site = DemoSite(products: 4)
    let base = Locked("")
    // The second launch's sitemap says product 2 changed after the first fetch.
    let changed = Locked<String?>(nil)
    let routes: [String: Route] = [
      "/sitemap.xml": Route { _ in
        let b = base.withLock { $0 }
        return xml(
          urlset([
            ("\(b)\(site.productPath(1))", "2001-01-01"),
            ("\(b)\(site.productPath(2))", changed.withLock { $0 } ?? "2001-01-01"),
          ]))
      }
    ]
    let server = try TestServer(routes: routes, site: site)
    defer { server.stop() }
    base.withLock { $0 = server.baseURL }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let cfg = config([
      Source(name: "shop", sitemap: server.url("/sitemap.xml"), extract: productFields, key: ["sku"])
    ])
    let first = try await Job(config: cfg, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(60))
    #expect(first.completedSources == ["shop"])
    #expect(first.pagesFetched == 3)  // the sitemap and two products: nothing fetched before
    #expect(first.recordsNew == 2)

    changed.withLock { $0 = ISODate.string(Date().addingTimeInterval(3600)) }
    let second = try await Job(config: cfg, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(60))
    #expect(second.completedSources == ["shop"])
    #expect(second.pagesFresh == 1)
    #expect(second.pagesFetched == 2)  // the sitemap again, and product 2
    #expect(second.recordsRemoved == 0)
    #expect(server.requestCount(path: site.productPath(1)) == 1)
    #expect(server.requestCount(path: site.productPath(2)) == 2)
    #expect(server.requestCount(path: "/sitemap.xml") == 2)
    // Product 1's record still stands.
    let records = try await allRecords(store)
    #expect(records.map(\.key) == ["SKU-1", "SKU-2"])
    #expect(records.allSatisfy { $0.removedAt == nil })
  }

  @Test func test_aGzipBomb_andA60000URLFile_areCutOff_andTheLaunchGoesOn() async throws {
    let site = DemoSite(products: 8)
    let base = Locked("")
    let routes: [String: Route] = [
      // A real entry, then a member of 1 GiB of zeros (about 1 MB on the wire).
      "/bomb.xml.gz": Route { _ in
        let b = base.withLock { $0 }
        let head = "<urlset><url><loc>\(b)\(site.productPath(1))</loc></url>"
        return gzipFile(Gzip.stored(Array(head.utf8)) + Gzip.zeroBomb(decodedSize: 1 << 30))
      },
      // 60,000 URLs: products 2 and 3 early, product 4 at entry 55,000, past the cut.
      "/big.xml": Route { _ in
        let b = base.withLock { $0 }
        var entries: [(loc: String, lastmod: String?)] = []
        entries.reserveCapacity(60_000)
        for n in 1...60_000 {
          let product = [10: 2, 20: 3, 55_000: 4][n]
          entries.append((product.map { "\(b)\(site.productPath($0))" } ?? "\(b)/listing/\(n)", nil))
        }
        return xml(urlset(entries))
      },
    ]
    let server = try TestServer(routes: routes, site: site)
    defer { server.stop() }
    base.withLock { $0 = server.baseURL }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let cfg = config([
      Source(name: "bomb", sitemap: server.url("/bomb.xml.gz"), extract: productFields, key: ["sku"]),
      Source(
        name: "big", sitemap: server.url("/big.xml"), extract: productFields, key: ["sku"], filter: "/product/\\d+$"),
      Source(name: "other", url: server.url(site.productPath(8)), extract: productFields, key: ["sku"]),
    ])
    let summary = try await Job(config: cfg, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(120))

    #expect(Set(summary.completedSources) == ["bomb", "big", "other"])
    #expect(summary.warnings.contains { $0.contains("/bomb.xml.gz") && $0.contains("more than 50 MB uncompressed") })
    #expect(summary.warnings.contains { $0.contains("/big.xml") && $0.contains("more than 50000 URLs") })
    #expect(try await allRecords(store, source: "bomb").map(\.key) == ["SKU-1"])
    #expect(try await allRecords(store, source: "big").map(\.key) == ["SKU-2", "SKU-3"])
    #expect(try await allRecords(store, source: "other").map(\.key) == ["SKU-8"])
    #expect(server.requestCount(path: site.productPath(4)) == 0)
    #expect(server.requests.allSatisfy { !$0.path.hasPrefix("/listing/") })
  }

  @Test func test_nesting_stopsAtThreeLevels() async throws {
    let site = DemoSite(products: 3)
    let base = Locked("")
    func index(_ child: String) -> Route {
      Route { _ in
        xml("<sitemapindex><sitemap><loc>\(base.withLock { $0 })/\(child)</loc></sitemap></sitemapindex>")
      }
    }
    let routes: [String: Route] = [
      "/a.xml": index("b.xml"),
      "/b.xml": Route { _ in
        let b = base.withLock { $0 }
        return xml("<sitemapindex><sitemap><loc>\(b)/c.xml</loc></sitemap><sitemap><loc>\(b)/p.xml</loc></sitemap></sitemapindex>")
      },
      "/c.xml": index("d.xml"),
      "/d.xml": Route { _ in xml(urlset([(base.withLock { $0 } + site.productPath(1), nil)])) },
      "/p.xml": Route { _ in xml(urlset([(base.withLock { $0 } + site.productPath(2), nil)])) },
    ]
    let server = try TestServer(routes: routes, site: site)
    defer { server.stop() }
    base.withLock { $0 = server.baseURL }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let cfg = config([Source(name: "s", sitemap: server.url("/a.xml"), extract: productFields, key: ["sku"])])
    let summary = try await Job(config: cfg, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(60))
    #expect(summary.completedSources == ["s"])
    // a (level 1) → b (2) → c (3, an index: not followed); b → p (3, a urlset: read).
    #expect(server.requestCount(path: "/c.xml") == 1)
    #expect(server.requestCount(path: "/d.xml") == 0)
    #expect(summary.warnings.contains { $0.contains("/c.xml") && $0.contains("not read") })
    #expect(try await allRecords(store).map(\.key) == ["SKU-2"])
  }

  @Test func test_frontier_keepsLastModified() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let when = Date(timeIntervalSince1970: 1_714_557_600)
    let crawl = try await store.openCrawl(
      source: "s",
      seeds: [
        FrontierSeed(url: "https://example.com/a", fingerprint: 1, depth: -1, lastModified: when),
        FrontierSeed(url: "https://example.com/b", fingerprint: 2, depth: 0),
      ], now: Date())
    let items = try await store.claim(crawl: crawl.id, limit: 10, lease: Lease(owner: "t", for: .seconds(60), at: Date()))
    #expect(items.map(\.url) == ["https://example.com/a", "https://example.com/b"])  // sitemaps first
    #expect(items.map(\.lastModified) == [when, nil])
    var commit = PageCommit(item: items[1], outcome: .done, now: Date())
    commit.discovered = [
      FrontierSeed(url: "https://example.com/c", fingerprint: 3, depth: 1, lastModified: when + 5),
      FrontierSeed(url: "https://example.com/d", fingerprint: 4, depth: 1),
    ]
    _ = try await store.commit([commit])
    let more = try await store.claim(crawl: crawl.id, limit: 10, lease: Lease(owner: "t", for: .seconds(60), at: Date()))
    #expect(more.map(\.lastModified) == [when + 5, nil])
  }
}

@Suite struct SitemapConfigTests {
  private func read(_ sources: String) throws -> ForageConfig {
    try ForageConfig.parse(Array("{\"sources\": [\(sources)]}".utf8), file: "test.json")
  }

  private func problems(_ sources: String) -> [String] {
    do {
      _ = try read(sources)
      return []
    } catch let error as ConfigError {
      return error.problems.map { "\($0.path): \($0.message)" }
    } catch {
      return ["\(error)"]
    }
  }

  @Test func test_sitemapSources_readAndWriteBack() throws {
    let config = try read(
      """
      {"name": "a", "sitemap": "https://example.com/sitemap.xml", "sitemapFilter": "/product/", "extract": {"t": "h1"}},
      {"name": "b", "url": "https://example.com/", "sitemap": "robots", "extract": {"t": "h1"}},
      {"name": "c", "url": "https://example.com/start", "sitemap": ["https://example.com/s1.xml", "https://example.com/s2.xml.gz"]},
      {"name": "d", "urls": ["https://example.com/", "https://example.org/"], "sitemap": "robots", "sitemapFilter": "x"}
      """)
    let a = config.sources[0]
    #expect(a.urls == ["https://example.com/sitemap.xml"])
    #expect(a.sitemap == .urls(["https://example.com/sitemap.xml"]))
    #expect(a.sitemapFilter == "/product/")
    #expect(config.sources[1].sitemap == .robotsTxt)
    #expect(config.sources[1].urls == ["https://example.com/"])
    #expect(
      config.sources[2].urls == ["https://example.com/start", "https://example.com/s1.xml", "https://example.com/s2.xml.gz"])
    // Written back, read again: the same sources, the same text.
    let text = config.jsonText
    let again = try ForageConfig.parse(Array(text.utf8), file: "again.json")
    #expect(again.sources == config.sources)
    #expect(again.jsonText == text)
    #expect(text.contains("\"sitemap\": \"robots\""))
    #expect(!text.contains("\"url\": \"https://example.com/sitemap.xml\""))
  }

  @Test func test_validation() {
    let badURL = problems(#"{"name": "a", "sitemap": "/sitemap.xml"}"#)
    #expect(badURL == ["sources[0].sitemap: not an absolute http(s) URL: \"/sitemap.xml\""])
    let badInArray = problems(#"{"name": "a", "sitemap": ["https://example.com/s.xml", "ftp://x/s.xml"]}"#)
    #expect(badInArray == ["sources[0].sitemap[1]: not an absolute http(s) URL: \"ftp://x/s.xml\""])
    let badFilter = problems(#"{"name": "a", "sitemap": "https://example.com/s.xml", "sitemapFilter": "(unclosed"}"#)
    #expect(badFilter == ["sources[0].sitemapFilter: invalid regular expression \"(unclosed\""])
    let withFeed = problems(#"{"name": "a", "feed": "https://example.com/rss", "sitemap": "https://example.com/s.xml"}"#)
    #expect(withFeed.contains { $0.hasPrefix("sources[0].sitemap: give \"sitemap\" or \"feed\", not both") })
    let robotsAlone = problems(#"{"name": "a", "sitemap": "robots"}"#)
    #expect(robotsAlone.count == 1 && robotsAlone[0].contains("give \"url\" or \"urls\" too"))
    let filterAlone = problems(#"{"name": "a", "url": "https://example.com/", "sitemapFilter": "x"}"#)
    #expect(filterAlone == ["sources[0].sitemapFilter: applies only with \"sitemap\""])
    let feedFormat = problems(#"{"name": "a", "url": "https://example.com/", "format": "feed", "sitemap": "robots"}"#)
    #expect(feedFormat.contains("sources[0].sitemap: a feed source cannot read sitemaps"))
    let typo = problems(#"{"name": "a", "sitemaps": "https://example.com/s.xml"}"#)
    #expect(typo.contains { $0.contains("did you mean \"sitemap\"") })
  }

  @Test func test_sourcesBuiltInCode_areChecked() {
    var source = Source(name: "a", sitemap: "https://example.com/s.xml", filter: "(bad")
    #expect(throws: ConfigError.self) { try CompiledSource(source, canonicalizer: URLCanonicalizer()) }
    source.sitemapFilter = nil
    source.sitemap = .urls(["not a url"])
    #expect(throws: ConfigError.self) { try CompiledSource(source, canonicalizer: URLCanonicalizer()) }
    source.sitemap = .urls(["https://example.com/s.xml"])
    #expect(throws: Never.self) { try CompiledSource(source, canonicalizer: URLCanonicalizer()) }
  }
}
