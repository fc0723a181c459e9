import Testing
import ForageHTML
import ForageURL
@testable import Forage

/// A `number` (or `integer`) field whose text does not read as a number
/// counts as missing: left out of the record, not stored as null (issue 29).
@Suite struct NumberFieldTests {
  let shop = Source(
    name: "s", url: "https://shop.example/",
    extract: [
      "title": "h1", "price": .css(".price", as: .number), "stock": .css(".stock", as: .integer),
      "rating": .css(".rating", as: .number),
    ])

  @Test func test_issue29_numberFieldWithoutANumber_isLeftOut_notNull() throws {
    for text in ["Call for price", "", "   ", "n/a"] {
      let e = try extract("<h1>Lamp</h1><span class=price>\(text)</span><b class=stock>few</b>", shop)
      let fields = try #require(e.records.first?.fields, "\(text.debugDescription)")
      #expect(fields["title"] == .string("Lamp"))
      #expect(fields["price"] == nil, "\(text.debugDescription)")
      #expect(fields["stock"] == nil)
      // A field whose element is not on the page stays null, as before.
      #expect(fields["rating"] == .null)
    }
    let priced = try extract("<h1>Lamp</h1><span class=price>$12.50</span><b class=stock>3</b>", shop)
    #expect(priced.records.first?.fields["price"] == .number(12.5))
    #expect(priced.records.first?.fields["stock"] == .number(3))
  }

  @Test func test_issue29_requiredNumberWithoutANumber_dropsTheRecord_defaultStandsIn() throws {
    let required = Source(
      name: "s", url: "https://shop.example/", extract: ["title": "h1", "price": .css(".price", as: .number, required: true)])
    let e = try extract("<h1>Lamp</h1><span class=price>Call for price</span>", required)
    #expect(e.records.isEmpty)
    #expect(e.warnings.contains { $0.contains("required field \"price\"") })
    let withDefault = Source(
      name: "s", url: "https://shop.example/",
      extract: ["price": FieldRule(".price", type: .number, default: .number(0))])
    #expect(try extract("<span class=price>Call for price</span>", withDefault).records.first?.fields["price"] == .number(0))
  }

  @Test func test_issue29_numberRegexThatMatchesNothing_isMissing() throws {
    let source = Source(
      name: "s", url: "https://shop.example/",
      extract: ["title": "h1", "price": .css(".price", as: .number, regex: #"Price: (\d+)"#)])
    let e = try extract("<h1>Lamp</h1><span class=price>Sold out</span>", source)
    #expect(e.records.first?.fields["price"] == nil)
    #expect(e.records.first?.fields["title"] == .string("Lamp"))
  }

  @Test func test_issue29_unreadableNumber_jsonMetaAndFeedFieldsAlike() throws {
    // JSON: a string that is no number, and a boolean, are missing; null stays null.
    let json = Source(
      name: "j", url: "https://api.example/", format: .json,
      extract: ["a": .pointer("/a", as: .number), "b": .pointer("/b", as: .number), "c": .pointer("/c", as: .number)])
    let compiled = try CompiledSource(json, canonicalizer: .default)
    let u = try #require(WebURL("https://api.example/1"))
    let value = try JSONValue.parse(Array(#"{"a": "call us", "b": true, "c": null}"#.utf8))
    let out = Extractor.extractJSON(value, url: u, canonical: u, source: compiled)
    let fields = try #require(out.records.first?.fields)
    #expect(fields["a"] == nil && fields["b"] == nil && fields["c"] == .null)
    // A <meta> field.
    let meta = Source(name: "m", url: "https://shop.example/", extract: ["price": .meta("price", as: .number)])
    #expect(try extract(#"<meta name=price content="ask">"#, meta).records.first?.fields["price"] == nil)
    // A feed extension field.
    var feed = Source(name: "pod", feed: "https://pod.example/feed.xml")
    feed.fields = [Field(name: "duration", rule: FieldRule("itunes:duration", type: .number))]
    let podcast = """
      <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
      <item><guid>1</guid><itunes:duration>unknown</itunes:duration></item><item><guid>2</guid></item></channel></rss>
      """
    let records = Extractor.extractFeed(
      Array(podcast.utf8), url: try #require(WebURL("https://pod.example/feed.xml")), contentType: nil,
      source: try CompiledSource(feed, canonicalizer: .default)
    ).records
    #expect(records.count == 2)
    #expect(records[0].fields["duration"] == nil)
    #expect(records[1].fields["duration"] == .null)
  }
}
