import Foundation
import Testing
import ForageHTML
import ForageStore
import ForageSupport
import ForageTestSupport
import ForageURL
@testable import Forage

/// The fields of the only record `html` yields for a source extracting `fields`.
private func fields(_ html: String, _ fields: KeyValuePairs<String, FieldRule>) throws -> (JSONValue, [String]) {
  let e = try extract(html, Source(name: "s", url: "https://shop.example/", extract: fields))
  #expect(e.records.count == 1)
  return (try #require(e.records.first?.fields), e.warnings)
}

private func ld(_ json: String, type: String = "application/ld+json") -> String {
  #"<script type="\#(type)">\#(json)</script>"#
}

/// A config with one HTML source whose extract is `extract` (JSON text).
private func config(extract: String, format: String = "html") -> String {
  #"{"sources": [{"name": "a", "url": "https://x.org/", "format": "\#(format)", "extract": \#(extract)}]}"#
}

@Suite struct StructuredDataTests {
  static let shop = """
    <!doctype html><html><head><title>Lamp</title>
    <meta property="og:title" content="Oak Lamp — Shop">
    <meta name="Description" content="  A lamp of oak.  ">
    <meta property="og:image" content="/img/lamp.jpg">
    <script type="application/ld+json">
    {"@context": "https://schema.org", "@type": "BreadcrumbList", "itemListElement": []}
    </script>
    <script type="application/ld+json">
    {
      "@context": "https://schema.org",
      "@type": "Product",
      "name": "Oak Lamp",
      "sku": "L-7",
      "image": ["https://cdn.example/1.jpg", "https://cdn.example/2.jpg"],
      "offers": [
        {"@type": "Offer", "price": "1299.00", "priceCurrency": "EUR", "availability": "https://schema.org/InStock"},
        {"@type": "Offer", "price": 1199, "priceCurrency": "EUR"}
      ]
    }
    </script>
    </head><body><h1>Oak Lamp</h1><p>No price in the markup.</p></body></html>
    """

  @Test func test_priceOnlyInJSONLD_offersArray_isANumber() throws {
    let (f, warnings) = try fields(StructuredDataTests.shop, [
      "price": .jsonLD("Product", pointer: "/offers/price", as: .number),
      "currency": .jsonLD("Product", pointer: "/offers/priceCurrency"),
      "second": .jsonLD("Product", pointer: "/offers/1/price", as: .number),
      "prices": .jsonLD("Product", pointer: "/offers/price", as: .number, all: true),
      "image": .jsonLD("Product", pointer: "/image"),
      "images": .jsonLD("Product", pointer: "/image", all: true),
      "missing": .jsonLD("Product", pointer: "/gtin13"),
      "sku": .jsonLD("product", pointer: "/sku"),
    ])
    #expect(warnings.isEmpty)
    #expect(f["price"] == .number(1299))
    #expect(f["currency"] == .string("EUR"))
    #expect(f["second"] == .number(1199))
    #expect(f["prices"] == .array([.number(1299), .number(1199)]))
    #expect(f["image"] == .string("https://cdn.example/1.jpg"))
    #expect(f["images"] == .array([.string("https://cdn.example/1.jpg"), .string("https://cdn.example/2.jpg")]))
    #expect(f["missing"] == .null)
    #expect(f["sku"] == .string("L-7"))
  }

  @Test func test_graph_topLevelArrays_nestedNodes_andTypeForms() throws {
    let html = ld(#"""
      {"@context": {"@vocab": "http://schema.org/", "price": {"@id": "schema:price", "@type": "Product"}},
       "@graph": [
        {"@type": "WebPage", "name": "Page", "mainEntity": {"@type": ["Thing", "schema:Product"], "name": "In page",
         "offers": {"@type": "Offer", "price": {"@value": "5.50"}}}},
        {"@type": "http://schema.org/Organization", "name": "Shop Inc"}
       ]}
      """#) + ld(#"[{"@type": "Event", "name": "Sale"}, {"@type": "https://schema.org/Recipe", "name": "Soup"}]"#)
    let (f, _) = try fields(html, [
      "product": .jsonLD("Product", pointer: "/name"),
      "price": .jsonLD("Product", pointer: "/offers/price", as: .number),
      "org": .jsonLD("Organization", pointer: "/name"),
      "iriForm": .jsonLD("http://schema.org/Organization", pointer: "/name"),
      "event": .jsonLD("Event", pointer: "/name"),
      "recipe": .jsonLD("schema:Recipe", pointer: "/name"),
      "none": .jsonLD("Movie", pointer: "/name"),
    ])
    // The product is nested in the page's mainEntity; the @context's term
    // definition (with "@type": "Product") is not a node.
    #expect(f["product"] == .string("In page"))
    #expect(f["price"] == .number(5.5))
    #expect(f["org"] == .string("Shop Inc"))
    #expect(f["iriForm"] == .string("Shop Inc"))
    #expect(f["event"] == .string("Sale"))
    #expect(f["recipe"] == .string("Soup"))
    #expect(f["none"] == .null)
  }

  @Test func test_anyType_wholeNode_andAllNodes() throws {
    let html = ld(#"{"@context": "https://schema.org", "@graph": [{"@type": "Article", "headline": "Hi"}, {"@type": "Person", "name": "Ann"}]}"#)
    let (f, _) = try fields(html, [
      "first": .jsonLD(nil),
      "headline": .jsonLD(nil, pointer: "/headline"),
      "types": .jsonLD(nil, pointer: "/@type", all: true),
      "asNumber": .jsonLD("Article", as: .number),
    ])
    #expect(f["first"] == .object([("@type", .string("Article")), ("headline", .string("Hi"))]))
    #expect(f["headline"] == .string("Hi"))
    #expect(f["types"] == .array([.string("Article"), .string("Person")]))
    // A whole node is no number: the field is missing, left out (issue 29).
    #expect(f["asNumber"] == nil)
  }

  @Test func test_malformedBlock_beforeAGoodOne_warnsOnceWithItsPosition() throws {
    let html = ld(#"{"@type": "Product", "name": "Broken" "price": 1}"#) + ld(#"{"@type": "Product", "name": "Good", "offers": {"price": "9.99"}}"#)
    // Two fields read JSON-LD: the blocks are parsed once, so one warning.
    let (f, warnings) = try fields(html, [
      "name": .jsonLD("Product", pointer: "/name"), "price": .jsonLD("Product", pointer: "/offers/price", as: .number),
    ])
    #expect(f["name"] == .string("Good"))
    #expect(f["price"] == .number(9.99))
    #expect(warnings.count == 1)
    #expect(warnings.first?.contains("JSON-LD block 1 of 2") == true)
    // No field reads JSON-LD: nothing is parsed and nothing is said.
    let (_, quiet) = try fields(html, ["title": FieldRule("p", default: .string("-"))])
    #expect(quiet.isEmpty)
  }

  @Test func test_commonBreakage_isTolerated() throws {
    let blocks = [
      ld("<!--\n{\"@type\": \"A\", \"v\": 1}\n-->"),
      ld("//<![CDATA[\n{\"@type\": \"B\", \"v\": 2}\n//]]>"),
      ld("<![CDATA[{\"@type\": \"C\", \"v\": 3}]]>"),
      ld("{\"@type\": \"D\", \"v\": [4, 5,], \"w\": {\"x\": 1,\n},\n}"),
      ld("{\"@type\": \"E\", \"v\": \"line one\nline\ttwo\"}"),
      ld(#"{"@type": "F", "v": 6}"#, type: " Application/LD+JSON; charset=utf-8"),
      ld(#"{"@type": "G", "v": 7}"#, type: "application/json"),
      ld("/* data */ {\"@type\": \"H\", \"v\": 8} /* end */"),
      ld("   "),
    ]
    let (f, warnings) = try fields(blocks.joined(), [
      "a": .jsonLD("A", pointer: "/v", as: .number), "b": .jsonLD("B", pointer: "/v", as: .number),
      "c": .jsonLD("C", pointer: "/v", as: .number), "d": .jsonLD("D", pointer: "/v", as: .number, all: true),
      "e": FieldRule.jsonLD("E", pointer: "/v"), "f": .jsonLD("F", pointer: "/v", as: .number),
      "g": .jsonLD("G", pointer: "/v"), "h": .jsonLD("H", pointer: "/v", as: .number),
    ])
    #expect(warnings.isEmpty)
    #expect(f["a"] == .number(1))
    #expect(f["b"] == .number(2))
    #expect(f["c"] == .number(3))
    #expect(f["d"] == .array([.number(4), .number(5)]))
    #expect(f["e"] == .string("line one\nline\ttwo"))
    #expect(f["f"] == .number(6))
    #expect(f["g"] == .null)   // not JSON-LD
    #expect(f["h"] == .number(8))
  }

  @Test func test_meta_nameOrPropertyOrItemprop_firstMatch() throws {
    let html = StructuredDataTests.shop + """
      <meta property="og:title" content="Second title">
      <meta itemprop="price" content="12,50">
      <meta property="article:tag" content="oak"><meta property="article:tag" content="lamp">
      <meta property="twitter:title og:site_name" content="Shop">
      <meta name="empty" content="">
      """
    let (f, warnings) = try fields(html, [
      "title": .meta("og:title"), "description": .meta("description"), "upper": .meta("OG:TITLE"),
      "image": .meta("og:image"), "price": .meta("price", as: .number), "tags": .meta("article:tag", all: true),
      "site": .meta("og:site_name"), "empty": .meta("empty"), "absent": .meta("og:nothing"),
    ])
    #expect(warnings.isEmpty)
    #expect(f["title"] == .string("Oak Lamp — Shop"))
    #expect(f["upper"] == .string("Oak Lamp — Shop"))
    #expect(f["description"] == .string("A lamp of oak."))
    #expect(f["image"] == .string("https://shop.example/img/lamp.jpg"))
    #expect(f["price"] == .number(12.5))
    #expect(f["tags"] == .array([.string("oak"), .string("lamp")]))
    #expect(f["site"] == .string("Shop"))
    #expect(f["empty"] == .null)
    #expect(f["absent"] == .null)
  }

  @Test func test_options_regexDefaultRequired() throws {
    let html = ld(#"{"@type": "Product", "sku": "SKU-0042", "price": 19.5, "inStock": true}"#) + #"<meta name="twitter:data1" content="Price: $7.25">"#
    var skuNumber = FieldRule.jsonLD("Product", pointer: "/sku", as: .integer)
    skuNumber.regex = #"SKU-(\d+)"#
    var cents = FieldRule.jsonLD("Product", pointer: "/price")
    cents.regex = #"\.(\d+)"#
    var data = FieldRule.meta("twitter:data1", as: .number)
    data.regex = #"\$([\d.]+)"#
    var fallback = FieldRule.jsonLD("Offer", pointer: "/price")
    fallback.defaultValue = .string("n/a")
    let (f, _) = try fields(html, [
      "sku": skuNumber, "cents": cents, "data": data, "fallback": fallback,
      "price": .jsonLD("Product", pointer: "/price"), "inStock": .jsonLD("Product", pointer: "/inStock", as: .bool),
    ])
    #expect(f["sku"] == .number(42))
    #expect(f["cents"] == .string("5"))
    #expect(f["data"] == .number(7.25))
    #expect(f["fallback"] == .string("n/a"))
    #expect(f["price"] == .string("19.5"))   // as JSON sources: a string field gets text
    #expect(f["inStock"] == .bool(true))
    let e = try extract(html, Source(name: "s", url: "https://shop.example/", extract: ["p": .meta("og:price", required: true)]))
    #expect(e.records.isEmpty)
    #expect(e.warnings.contains { $0.contains("required field \"p\"") })
  }

  @Test func test_items_readTheirOwnTagsFirst_thenThePage_neverAnotherItem() throws {
    let html = """
      <meta property="og:site_name" content="Shop">
      <script type="application/ld+json">{"@type": "Organization", "name": "Shop Inc"}</script>
      <div class=card><h2>A</h2><meta itemprop="price" content="1.50">
        <script type="application/ld+json">{"@type": "Product", "sku": "a"}</script></div>
      <div class=card><h2>B</h2></div>
      """
    let source = Source(
      name: "s", url: "https://shop.example/",
      extract: [
        "name": "h2", "price": .meta("price", as: .number), "site": .meta("og:site_name"),
        "sku": .jsonLD("Product", pointer: "/sku"), "org": .jsonLD("Organization", pointer: "/name"),
      ],
      items: "div.card")
    let e = try extract(html, source)
    #expect(e.records.count == 2)
    let a = try #require(e.records.first?.fields), b = try #require(e.records.last?.fields)
    #expect(a["price"] == .number(1.5) && a["sku"] == .string("a"))
    #expect(b["price"] == .null && b["sku"] == .null)
    #expect(a["site"] == .string("Shop") && b["site"] == .string("Shop"))
    #expect(a["org"] == .string("Shop Inc") && b["org"] == .string("Shop Inc"))
  }

  @Test func test_hostileInput_neitherCrashesNorHangs() throws {
    let rules: KeyValuePairs<String, FieldRule> = ["p": .jsonLD("Product", pointer: "/offers/price"), "all": .jsonLD(nil, all: true)]
    // Nesting far past the parser's limit.
    let deep = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
    let (f1, w1) = try fields(ld(deep) + ld(#"{"@type": "Product", "offers": {"price": "1"}}"#), rules)
    #expect(f1["p"] == .string("1"))
    #expect(w1.count == 1)
    // Deep but within the limit: every level an object with a type.
    let nested = String(repeating: #"{"@type": "Thing", "x": "#, count: 500) + "1" + String(repeating: "}", count: 500)
    let (f2, _) = try fields(ld(nested), rules)
    if case .array(let nodes)? = f2["all"] { #expect(nodes.count == 500) } else { Issue.record("no nodes") }
    // A 5 MB block: one long string, then many commas and control characters.
    let big = #"{"@type": "Product", "description": ""# + String(repeating: "a\u{01}\n,", count: 1_250_000)
      + #"", "offers": [{"price": "2"},]}"#
    let (f3, w3) = try fields(ld(big), rules)
    #expect(f3["p"] == .string("2"))
    #expect(w3.isEmpty)
    // No closing tag: the script runs to the end of the page.
    let (f4, w4) = try fields(#"<p>x</p><script type="application/ld+json">{"@type": "Product", "offers": {"price": "3""#, rules)
    #expect(f4["p"] == .null)
    #expect(w4.count == 1)
    let (f5, _) = try fields(#"<script type="application/ld+json">{"@type": "Product", "offers": {"price": "4"}}"#, rules)
    #expect(f5["p"] == .string("4"))
    // Deeply nested items, each holding the tags at the bottom: as deep as
    // the parser nests (ParserOptions.maximumDepth, 512 levels with html and
    // body; past it, divs become siblings that do not hold the tags).
    let levels = 500
    let page = String(repeating: "<div>", count: levels) + #"<meta itemprop="price" content="5">"#
      + ld(#"{"@type": "Product", "sku": "n"}"#) + String(repeating: "</div>", count: levels)
    let e = try extract(page, Source(
      name: "s", url: "https://shop.example/",
      extract: ["price": .meta("price", as: .number), "sku": .jsonLD("Product", pointer: "/sku")], items: "div"))
    #expect(!e.records.isEmpty)
    #expect(e.records.allSatisfy { $0.fields["price"] == .number(5) && $0.fields["sku"] == .string("n") })
    // Wrappers only, unbalanced comments.
    let (_, w6) = try fields(ld("<!-- <![CDATA[ /* -->") + ld("*/") + ld("//") + ld("/**/"), rules)
    #expect(w6.isEmpty)
  }

  // MARK: Config

  @Test func test_config_readsRules_andRoundTrips() throws {
    let text = config(extract: #"""
      {"price": {"jsonld": "Product", "pointer": "/offers/price", "type": "number", "required": true},
       "node": {"jsonld": true}, "all": {"jsonld": "Offer", "all": true, "default": []},
       "title": {"meta": "og:title", "regex": "^(.*) — ", "trim": false}, "h1": "h1"}
      """#)
    let c = try ForageConfig.parse(Array(text.utf8))
    let f = c.sources[0].fields
    #expect(f.map(\.name) == ["price", "node", "all", "title", "h1"])
    #expect(f[0].rule == { var r = FieldRule.jsonLD("Product", pointer: "/offers/price", as: .number); r.required = true; return r }())
    #expect(f[1].rule == .jsonLD(nil))
    #expect(f[2].rule.structured == .jsonLD(type: "Offer") && f[2].rule.all && f[2].rule.defaultValue == .array([]))
    #expect(f[3].rule.structured == .meta(name: "og:title") && f[3].rule.regex == "^(.*) — " && !f[3].rule.trim)
    let again = try ForageConfig.parse(Array(c.jsonText.utf8))
    #expect(again == c)
    #expect(c.jsonText.contains(#""jsonld": true"#))
    _ = try CompiledSource(c.sources[0], canonicalizer: .default)
  }

  @Test func test_config_problems() {
    let unknown = problems(config(extract: #"{"price": {"jsnold": "Product"}}"#))
    #expect(unknown.map(\.description).contains(#"sources[0].extract.price.jsnold: unknown key "jsnold" (did you mean "jsonld"?)"#))

    let both = problems(config(extract: #"{"price": {"jsonld": "Product", "css": ".price"}}"#))
    #expect(both.map(\.path) == ["sources[0].extract.price.jsonld"])
    #expect(both.first?.message.contains("cannot be used together") == true)

    let wrong = problems(config(extract: #"""
      {"a": {"jsonld": 3}, "b": {"jsonld": false}, "c": {"meta": true}, "d": {"meta": ""},
       "e": {"jsonld": "Product", "pointer": "offers"}, "f": {"meta": "og:title", "pointer": "/x"},
       "g": {"jsonld": "Product", "attr": "href"}, "h": {"jsonld": "Product", "meta": "og:title"},
       "i": {"jsonld": "Product", "type": "numbr"}, "j": {"jsonld": "Product", "all": "yes"}}
      """#))
    #expect(Set(wrong.map(\.path)) == [
      "sources[0].extract.a.jsonld", "sources[0].extract.b.jsonld", "sources[0].extract.c.meta", "sources[0].extract.d.meta",
      "sources[0].extract.e.pointer", "sources[0].extract.f.pointer", "sources[0].extract.g.attr", "sources[0].extract.h.meta",
      "sources[0].extract.i.type", "sources[0].extract.j.all",
    ])
    #expect(wrong.first { $0.path.hasSuffix("a.jsonld") }?.message.contains("true for any type") == true)
    #expect(wrong.first { $0.path.hasSuffix("i.type") }?.message.contains(#"did you mean "number""#) == true)

    let json = problems(config(extract: #"{"p": {"jsonld": "Product", "pointer": "/p"}}"#, format: "json"))
    #expect(json.map(\.path) == ["sources[0].extract.p.jsonld"])
    let missing = problems(config(extract: #"{"p": {"type": "number"}}"#))
    #expect(missing.map(\.description) == [#"sources[0].extract.p.css: missing: a field needs "css", "jsonld" or "meta""#])
    let pointerAlone = problems(config(extract: #"{"p": {"pointer": "/x", "css": "p"}}"#))
    #expect(pointerAlone.map(\.path) == ["sources[0].extract.p.pointer"])
  }

  @Test func test_rulesBuiltInCode_areChecked() {
    #expect(throws: ConfigError.self) {
      try CompiledSource(Source(name: "s", url: "https://x.org/", format: .json, extract: ["p": .meta("og:title")]), canonicalizer: .default)
    }
    #expect(throws: ConfigError.self) {
      try CompiledSource(Source(name: "s", url: "https://x.org/", extract: ["p": .jsonLD("Product", pointer: "x")]), canonicalizer: .default)
    }
  }

  // MARK: End to end

  @Test func test_job_storesTheJSONLDPrice() async throws {
    let server = try TestServer(routes: [
      "/lamp": Route { _ in .html(StructuredDataTests.shop) }
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let text = #"""
      {"fetch": {"robotsTxt": false}, "sources": [{"name": "lamps", "url": "\#(server.url("/lamp"))", "key": ["sku"], "extract": {
        "sku": {"jsonld": "Product", "pointer": "/sku", "required": true},
        "price": {"jsonld": "Product", "pointer": "/offers/price", "type": "number"},
        "title": {"meta": "og:title"}}}]}
      """#
    let config = try ForageConfig.parse(Array(text.utf8))
    let summary = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(summary.recordsNew == 1)
    #expect(summary.warnings.isEmpty)
    let records = try await allRecords(store)
    let r = try #require(records.first)
    #expect(r.key == "L-7")
    let f = try JSONValue.parse(r.fieldsJSON)
    #expect(f["price"] == .number(1299))
    #expect(f["title"] == .string("Oak Lamp — Shop"))
  }
}
