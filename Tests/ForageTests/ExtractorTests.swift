import Testing
import ForageHTML
import ForageURL
@testable import Forage

func extract(_ html: String, _ source: Source, url: String = "https://shop.example/p/1?utm_source=x#top") throws -> Extraction {
  let compiled = try CompiledSource(source, canonicalizer: .default)
  let u = try #require(WebURL(url))
  return Extractor.extractHTML(
    Document.parse(html: html), url: u, canonical: compiled.canonicalizer.canonical(u), source: compiled, wantLinks: true)
}

@Suite struct ExtractorTests {
  @Test func test_fields_textAttrTypesAndDefaults() throws {
    let html = """
      <div class=product data-sku="SKU-7"><h1> Oak  &amp; Iron
      Lamp </h1><span class=price>€1.299,00</span><a href="../img/7.jpg" class=img>pic</a>
      <ul><li class=tag>a<li class=tag>b</ul><time>2026-11-29</time><b class=stock>yes</b></div>
      """
    let source = Source(
      name: "s", url: "https://shop.example/",
      extract: [
        "title": "h1", "price": .css(".price", as: .number), "sku": .css(".product", attr: "data-sku"),
        "image": .css("a.img", attr: "href"), "tags": .css(".tag", all: true),
        "date": .css("time", as: .date), "inStock": .css(".stock", as: .bool),
        "missing": FieldRule(".nope", default: .string("n/a")), "absent": ".nope",
        "skuNumber": FieldRule(".product", attr: "data-sku", type: .integer, regex: #"SKU-(\d+)"#),
      ])
    let e = try extract(html, source)
    #expect(e.records.count == 1)
    let f = try #require(e.records.first?.fields)
    #expect(f["title"] == .string("Oak & Iron Lamp"))
    #expect(f["price"] == .number(1299))
    #expect(f["sku"] == .string("SKU-7"))
    #expect(f["image"] == .string("https://shop.example/img/7.jpg"))
    #expect(f["tags"] == .array([.string("a"), .string("b")]))
    #expect(f["date"] == .string("2026-11-29"))
    #expect(f["inStock"] == .bool(true))
    #expect(f["missing"] == .string("n/a"))
    #expect(f["absent"] == .null)
    #expect(f["skuNumber"] == .number(7))
    // Key defaults to the canonical URL: fragment and utm_ parameters dropped.
    #expect(e.records.first?.key == "https://shop.example/p/1")
  }

  @Test func test_match_gatesRecords() throws {
    let source = Source(name: "s", url: "https://shop.example/", extract: ["t": "h1"], match: "div.product")
    #expect(try extract("<h1>Listing</h1>", source).records.isEmpty)
    #expect(try extract("<div class=product><h1>Item</h1></div>", source).records.count == 1)
  }

  @Test func test_required_dropsTheRecord() throws {
    let source = Source(name: "s", url: "https://shop.example/", extract: ["t": "h1", "p": .css(".price", required: true)])
    let e = try extract("<h1>x</h1>", source)
    #expect(e.records.isEmpty)
    #expect(e.warnings.contains { $0.contains("required field \"p\"") })
  }

  @Test func test_items_oneRecordPerItem_fieldsScoped() throws {
    let html = """
      <ul><li class=row data-id=1><b>One</b> <i>1.5</i></li><li class=row data-id=2><b>Two</b></li></ul><b>outside</b>
      """
    let source = Source(
      name: "s", url: "https://shop.example/",
      extract: ["id": .css(".row", attr: "data-id"), "name": "b", "price": .css("i", as: .number)],
      items: "li.row", key: ["id"])
    let e = try extract(html, source)
    #expect(e.records.map(\.key) == ["1", "2"])
    #expect(e.records[0].fields["name"] == .string("One"))
    #expect(e.records[0].fields["price"] == .number(1.5))
    #expect(e.records[1].fields["name"] == .string("Two"))
    #expect(e.records[1].fields["price"] == .null)
  }

  @Test func test_itemsWithoutKey_areSkippedNotMerged() throws {
    let html = "<li class=row data-id=1>a</li><li class=row>b</li><li class=row data-id=''>c</li>"
    let source = Source(
      name: "s", url: "https://shop.example/", extract: ["id": .css(".row", attr: "data-id"), "t": ".row"],
      items: "li.row", key: ["id"])
    let e = try extract(html, source)
    #expect(e.records.map(\.key) == ["1"])
    #expect(e.warnings.contains { $0.contains("without its key") })
  }

  @Test func test_links_resolvedAgainstBaseHref_withoutFragments() throws {
    let html = """
      <head><base href="https://cdn.example/dir/"></head>
      <a href="a.html#x">a</a><a href="a.html">dup</a><a href="/b">b</a><a href="mailto:x@y">m</a>
      <a href=" https://other.example/c ">c</a><a>no href</a>
      """
    let source = Source(name: "s", url: "https://shop.example/", crawl: CrawlScope())
    let e = try extract(html, source)
    #expect(e.links.map(\.url.href) == ["https://cdn.example/dir/a.html", "https://cdn.example/b", "https://other.example/c"])
  }

  /// One compiled source serves many pages: links remembered from one page
  /// (by origin and raw href) must resolve as they would on the next.
  @Test func test_links_memoizedPerOrigin_relativePathsResolvedPerPage() throws {
    let source = Source(name: "s", url: "https://shop.example/", crawl: CrawlScope(sameHost: false))
    let compiled = try CompiledSource(source, canonicalizer: .default)
    func links(_ html: String, at url: String) throws -> [String] {
      let u = try #require(WebURL(url))
      return Extractor.extractHTML(
        Document.parse(html: html), url: u, canonical: compiled.canonicalizer.canonical(u), source: compiled,
        wantLinks: true
      ).links.map(\.url.href)
    }
    let html = #"<a href="/b?utm_source=x#f">b</a><a href="c.html">c</a><a href="https://x.example/d">d</a><a href="//y.example/e">e</a>"#
    #expect(try links(html, at: "https://shop.example/p/1") == [
      "https://shop.example/b?utm_source=x", "https://shop.example/p/c.html", "https://x.example/d", "https://y.example/e",
    ])
    // Same hrefs, another directory and another origin.
    #expect(try links(html, at: "https://shop.example/q/r/2") == [
      "https://shop.example/b?utm_source=x", "https://shop.example/q/r/c.html", "https://x.example/d", "https://y.example/e",
    ])
    #expect(try links(html, at: "http://other.example:8080/z/") == [
      "http://other.example:8080/b?utm_source=x", "http://other.example:8080/z/c.html", "https://x.example/d", "http://y.example/e",
    ])
    // The remembered link carries the canonical form the frontier needs.
    let origin = try #require(compiled.linkMemo.originID("https://shop.example"))
    let key = try #require(LinkMemo.key("/b?utm_source=x#f", origin: origin))
    let remembered = try #require(compiled.linkMemo.lookup(key) ?? nil)
    #expect(remembered.canonicalHref == "https://shop.example/b")
  }

  @Test func test_namesOtherScheme_onlyWhereTheParserWouldGiveAnotherScheme() throws {
    for other in ["mailto:a@b.example", "javascript:void(0)", "JavaScript:x", "tel:+331", "data:,x", " ftp://h/",
                  "httpx:y", "a+b-c.d:e"] {
      #expect(CrawlLink.namesOtherScheme(other), "\(other)")
    }
    for maybe in ["http://h/", "HTTPS://h/", "https:x", "/a:b", "a/b:c", "?x:y", "#m:n", "", ":x", "1a:b",
                  "java\tscript:x", "\tmailto:x", "mailto", "a b:c", "é:x"] {
      #expect(!CrawlLink.namesOtherScheme(maybe), "\(maybe.debugDescription)")
    }
    // Whatever it skips, the full parser resolves to a scheme that is not followed.
    let base = try #require(WebURL("https://shop.example/a/b.html"))
    for href in ["mailto:x", "javascript:alert(1)", "Tel:1", "ws://h/", "file:///etc", "blob:https://h/x", "HTTP:x"] {
      let skipped = CrawlLink.namesOtherScheme(href)
      let scheme = base.resolving(href)?.scheme
      #expect(skipped == (scheme != "http" && scheme != "https"), "\(href)")
    }
  }

  /// Hrefs that share the part before "#" are resolved once per page; the
  /// links found are those of resolving each href on its own.
  @Test func test_fragmentlessKey_sharesOnlyWhatResolvesAlike() throws {
    #expect(CrawlLink.fragmentlessKey("a.html#x") == "a.html")
    #expect(CrawlLink.fragmentlessKey("#top") == "")
    #expect(CrawlLink.fragmentlessKey("a.html") == nil)
    #expect(CrawlLink.fragmentlessKey("a?q=#1#2") == "a?q=")
    #expect(CrawlLink.fragmentlessKey("a #x") == nil)
    #expect(CrawlLink.fragmentlessKey("a\t#x") == nil)
    let base = try #require(WebURL("https://docs.example/lib/f.html"))
    let hrefs = ["g.html#a", "g.html#b", "g.html", "#top", "", "../i.html?x=1#k", "../i.html?x=1", "g.html #c",
                 "g.html%20#d", "G.html#a", "/r#x", "h\t.html#y", "h.html"]
    var groups: [Substring: String] = [:]
    for href in hrefs {
      let alone = try #require(base.resolving(href)?.removingFragment.href)
      guard let key = CrawlLink.fragmentlessKey(href) else { continue }
      if let first = groups[key] { #expect(first == alone, "\(href)") } else { groups[key] = alone }
    }
    let source = Source(name: "s", url: "https://docs.example/", crawl: CrawlScope())
    let compiled = try CompiledSource(source, canonicalizer: .default)
    let html = hrefs.map { "<a href='\($0)'>x</a>" }.joined()
    let found = Extractor.extractHTML(
      Document.parse(html: html), url: base, canonical: base, source: compiled, wantLinks: true
    ).links.map(\.url.href)
    var expected: [String] = []
    for href in hrefs {
      let url = try #require(base.resolving(href)?.removingFragment)
      let fingerprint = compiled.canonicalizer.fingerprint(compiled.canonicalizer.canonical(url))
      if !expected.contains(where: { other in
        compiled.canonicalizer.fingerprint(compiled.canonicalizer.canonical(WebURL(other)!)) == fingerprint
      }) {
        expected.append(url.href)
      }
    }
    #expect(found == expected)
  }

  /// Links to files that are no pages (archives, images, PDFs…) are not
  /// followed unless an `include` pattern names them; the extension is read
  /// from the path's last segment only, whatever its case.
  @Test func test_linksToNonPageFiles_areNotFollowed_unlessIncluded() throws {
    let html = ["a.pdf", "b.PNG", "c.tar.gz", "d.html", "e", "f.php?file=x.zip", "g.pdf#p2", "dir.v2/page", "h.Zip",
                "i.aspx", "j.", "k.json"].map { "<a href='\($0)'>x</a>" }.joined()
    func followed(_ scope: CrawlScope) throws -> [String] {
      try extract(html, Source(name: "s", url: "https://shop.example/", crawl: scope), url: "https://shop.example/files/")
        .links.filter(\.allowed).map { String($0.url.path.dropFirst("/files/".count)) + ($0.url.query.map { "?" + $0 } ?? "") }
    }
    #expect(try followed(CrawlScope()) == ["d.html", "e", "f.php?file=x.zip", "dir.v2/page", "i.aspx", "j.", "k.json"])
    var pdfs = CrawlScope()
    pdfs.include = ["\\.pdf$"]
    #expect(try followed(pdfs) == ["a.pdf", "g.pdf"])
  }

  @Test func test_linkMemo_keysOnlyOriginDependentHrefs() throws {
    #expect(LinkMemo.key("/a/b", origin: 3) == LinkMemo.Key(origin: 3, href: "/a/b"))
    #expect(LinkMemo.key("https://x/y", origin: 3) == LinkMemo.Key(origin: 0, href: "https://x/y"))
    #expect(LinkMemo.key("http://x/y", origin: 3) == LinkMemo.Key(origin: 0, href: "http://x/y"))
    for dependent in ["//x/y", "/\\x", "a.html", "../a", "?q", "#f", "", " /a", "HTTP://x/"] {
      #expect(LinkMemo.key(dependent, origin: 3) == nil, "\(dependent)")
    }
    let memo = LinkMemo(capacity: 1)
    let a = try #require(memo.originID("https://a.example"))
    #expect(a != 0 && memo.originID("https://a.example") == a)
    #expect(memo.originID("https://b.example") != a)
    memo.remember(nil, for: LinkMemo.Key(origin: a, href: "/1"))
    memo.remember(nil, for: LinkMemo.Key(origin: a, href: "/2"))
    #expect(memo.lookup(LinkMemo.Key(origin: a, href: "/1")) != nil, "remembered as 'nothing to follow'")
    #expect(memo.lookup(LinkMemo.Key(origin: a, href: "/2")) == nil, "over capacity: not remembered")
  }

  /// Hrefs are told apart by their bytes, as the URL parser reads them:
  /// "é" as one scalar and as "e" with a combining accent are equal Swift
  /// strings but two URLs, on one page (with fragments) and from one page
  /// to the next (through the crawl's link memo).
  @Test func test_hrefsThatAreEqualStrings_butOtherBytes_areTwoLinks() throws {
    let composed = "caf\u{E9}.html", decomposed = "cafe\u{301}.html"
    #expect(composed == decomposed, "the premise: Swift compares by canonical equivalence")
    let compiled = try CompiledSource(
      Source(name: "s", url: "https://shop.example/", crawl: CrawlScope()), canonicalizer: .default)
    func links(_ html: String) throws -> [String] {
      let u = try #require(WebURL("https://shop.example/p/"))
      return Extractor.extractHTML(
        Document.parse(html: html), url: u, canonical: u, source: compiled, wantLinks: true
      ).links.map(\.url.href)
    }
    let c = "https://shop.example/p/caf%C3%A9.html", d = "https://shop.example/p/cafe%CC%81.html"
    #expect(try links("<a href='\(composed)#a'>1</a><a href='\(decomposed)#b'>2</a>") == [c, d])
    #expect(try links("<a href='/x/\(composed)'>1</a>") == ["https://shop.example/x/caf%C3%A9.html"])
    #expect(try links("<a href='/x/\(decomposed)'>2</a>") == ["https://shop.example/x/cafe%CC%81.html"])
  }

  /// A JSON string may hold a NUL character (`\u0000`); PostgreSQL's text
  /// cannot. A record key holding one gets U+FFFD in its place (as the HTML
  /// parser does), so every store takes it; the field itself keeps it
  /// (fields are stored as JSON text, escaped).
  @Test func test_aKeyWithANulCharacter_getsAReplacementCharacter() throws {
    let source = Source(
      name: "api", url: "https://x.org/a.json", format: .json, extract: ["id": "/id", "n": "/n"],
      items: "/items", key: ["id"])
    let compiled = try CompiledSource(source, canonicalizer: .default)
    let json = try JSONValue.parse(#"{"items": [{"id": "a\u0000b", "n": "x"}, {"id": "plain", "n": "y"}]}"#)
    let u = try #require(WebURL("https://x.org/a.json"))
    let out = Extractor.extractJSON(json, url: u, canonical: u, source: compiled)
    #expect(out.records.map(\.key) == ["a\u{FFFD}b", "plain"])
    #expect(out.records.first?.fields["id"] == .string("a\u{0}b"))
    #expect(Extractor.storable("\u{0}\u{301}x\u{0}") == "\u{FFFD}\u{301}x\u{FFFD}")
  }

  @Test func test_scope_sameHostDepthIncludeExclude() throws {
    let source = Source(
      name: "s", url: "https://shop.example/",
      crawl: CrawlScope(sameHost: true, allowedDomains: ["partner.example"], include: [], exclude: ["/private/"], maxDepth: 2))
    let c = try CompiledSource(source, canonicalizer: .default)
    func ok(_ s: String, _ depth: Int = 1) -> Bool { PageContext.inScope(WebURL(s)!, source: c, depth: depth) }
    #expect(ok("https://shop.example/a"))
    #expect(!ok("https://other.example/a"))
    #expect(ok("https://partner.example/a"))
    #expect(ok("https://www.partner.example/a"))
    #expect(!ok("https://shop.example/private/x"))
    #expect(!ok("https://shop.example/a", 3))
    #expect(!ok("ftp://shop.example/a"))
  }

  /// Issue 25: a launch past its budget stops extracting a page; the
  /// result says it is partial, so the page is left for the next launch.
  @Test func test_issue25_extractionStopsWhenAsked() throws {
    let html = "<body>" + String(repeating: "<div class=item><h2>t</h2></div>", count: 100)
    let source = Source(name: "s", url: "https://shop.example/", extract: ["t": "h2"], items: ".item")
    let compiled = try CompiledSource(source, canonicalizer: .default)
    let u = try #require(WebURL("https://shop.example/"))
    let doc = Document.parse(html: html)
    let whole = Extractor.extractHTML(doc, url: u, canonical: u, source: compiled, wantLinks: true, shouldStop: { false })
    #expect(!whole.interrupted)
    #expect(whole.records.count == 100)
    let stopped = Extractor.extractHTML(doc, url: u, canonical: u, source: compiled, wantLinks: true, shouldStop: { true })
    #expect(stopped.interrupted)
    #expect(stopped.records.isEmpty)
  }

  @Test func test_invalidSelectorInCode_isAConfigError() {
    let source = Source(name: "s", url: "https://shop.example/", extract: ["t": "h1["])
    #expect(throws: ConfigError.self) { try CompiledSource(source, canonicalizer: .default) }
  }
}
