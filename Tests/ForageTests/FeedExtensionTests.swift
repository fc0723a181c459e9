import Foundation
import Testing
import ForageURL
@testable import Forage

@Suite struct FeedExtensionTests {
  let url = WebURL("https://pod.example/feed.xml")!

  /// A podcast feed whose iTunes namespace is bound to an unusual prefix on one item.
  let podcast = """
    <?xml version="1.0"?>
    <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
         xmlns:media="http://search.yahoo.com/mrss/">
    <channel><title>Pod</title>
      <item><guid>ep1</guid><title>One</title>
        <itunes:duration>3723</itunes:duration><itunes:image href="https://pod.example/1.jpg"/>
        <media:content url="https://pod.example/1a.mp3"/><media:content url="https://pod.example/1b.mp3"/>
      </item>
      <item xmlns:it="http://www.itunes.com/dtds/podcast-1.0.dtd"><guid>ep2</guid><title>Two</title>
        <it:duration>60</it:duration>
      </item>
      <item><guid>ep3</guid><title>Three</title></item>
    </channel></rss>
    """

  func source(_ extract: KeyValuePairs<String, FieldRule>) throws -> CompiledSource {
    var s = Source(name: "pod", feed: url.href)
    s.fields = extract.map { Field(name: $0.key, rule: $0.value) }
    return try CompiledSource(s, canonicalizer: URLCanonicalizer())
  }

  @Test func test_extensionPaths_readElementsAttributesAndEveryMatch() throws {
    var media = FieldRule("media:content/@url")
    media.all = true
    let compiled = try source([
      "duration": FieldRule("itunes:duration", type: .number), "image": "itunes:image/@href", "media": media,
    ])
    let out = Extractor.extractFeed(Array(podcast.utf8), url: url, contentType: nil, source: compiled)
    #expect(out.records.count == 3)
    let one = out.records[0].fields
    #expect(one["duration"] == .number(3723))
    #expect(one["image"] == .string("https://pod.example/1.jpg"))
    #expect(one["media"] == .array([.string("https://pod.example/1a.mp3"), .string("https://pod.example/1b.mp3")]))
    #expect(one["title"] == .string("One"))  // the fixed fields stay
    // Another prefix for the same namespace still matches.
    #expect(out.records[1].fields["duration"] == .number(60))
    #expect(out.records[2].fields["duration"] == .null)
  }

  @Test func test_requiredExtension_dropsEntriesWithoutIt_defaultStandsIn() throws {
    var required = FieldRule("itunes:image/@href")
    required.required = true
    var withDefault = FieldRule("itunes:explicit")
    withDefault.defaultValue = .string("no")
    let compiled = try source(["image": required, "explicit": withDefault])
    let out = Extractor.extractFeed(Array(podcast.utf8), url: url, contentType: nil, source: compiled)
    #expect(out.records.map(\.key) == ["ep1"])
    #expect(out.records[0].fields["explicit"] == .string("no"))
    #expect(out.warnings.contains { $0.contains("required field \"image\"") })
  }

  @Test func test_atomAndJSONFeed_extensions() throws {
    let atom = """
      <feed xmlns="http://www.w3.org/2005/Atom" xmlns:georss="http://www.georss.org/georss">
        <entry><id>a1</id><title>Here</title><georss:point>45.25 -71.92</georss:point></entry></feed>
      """
    let geo = try source(["point": "georss:point"])
    #expect(Extractor.extractFeed(Array(atom.utf8), url: url, contentType: nil, source: geo).records.first?.fields["point"]
      == .string("45.25 -71.92"))
    let json = #"{"version": "https://jsonfeed.org/version/1.1", "items": [{"id": "j1", "_podcast": {"duration": 42}}]}"#
    let pointer = try source(["duration": FieldRule("/_podcast/duration", type: .number)])
    #expect(Extractor.extractFeed(Array(json.utf8), url: url, contentType: nil, source: pointer).records.first?.fields["duration"]
      == .number(42))
  }

  @Test func test_paths_areChecked() {
    #expect(throws: ConfigError.self) { _ = try source(["x": "itunes:image/@href/more"]) }
    #expect(throws: ConfigError.self) { _ = try source(["x": "a//b"]) }
    #expect(throws: ConfigError.self) { _ = try source(["title": "itunes:title"]) }
    if case .failure(let why) = FeedPath.parse("a:b:c") { #expect(why.description.contains("not an element name")) }
  }

  @Test func test_config_feedExtract_readWrittenAndValidated() throws {
    let text = """
      {"sources": [{"name": "pod", "feed": "https://pod.example/feed.xml",
        "extract": {"duration": {"path": "itunes:duration", "type": "number"}, "image": "itunes:image/@href"}}]}
      """
    let config = try ForageConfig.parse(Array(text.utf8))
    #expect(config.sources[0].fields.map(\.name) == ["duration", "image"])
    #expect(try ForageConfig.parse(Array(config.jsonText.utf8)) == config)

    let bad = """
      {"sources": [{"name": "pod", "feed": "https://pod.example/feed.xml",
        "extract": {"title": "x", "d": {"css": "p"}, "i": "itunes:image/@href/x"}}]}
      """
    do {
      _ = try ForageConfig.parse(Array(bad.utf8))
      Issue.record("a bad feed extract was accepted")
    } catch {
      let paths = error.problems.map(\.path)
      #expect(paths.contains("sources[0].extract.title"))
      #expect(paths.contains("sources[0].extract.d.css"))
      #expect(paths.contains("sources[0].extract.i"))
    }
  }
}

@Suite struct FeedLinkTests {
  /// Found by the feed fuzzer: a link that is no URL was kept as its raw
  /// text, though links are documented as absolute URLs.
  @Test func test_linkThatIsNoURL_isLeftOut() throws {
    let atom = Array(#"<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>1</id><author><name>A</name><url>http:"#.utf8)
      + [0x8D, 0x8D] + Array("//one.com/</url></author><link href=\"https://ok.example/a\"/></entry></feed>".utf8)
    let feed = try Feed.parse(atom, url: WebURL("https://example.com/f")!)
    #expect(feed.entries.first?.authorURL == nil)
    #expect(feed.entries.first?.link == "https://ok.example/a")
  }
}

@Suite struct FeedDateRangeTests {
  /// Found by the feed fuzzer: a seven-digit year was read and written as is.
  @Test func test_yearsOutsideFourDigits_areNoDate() {
    #expect(FeedDate.iso("Thu, 01 Jan 2002004 19:48:21 GMT") == nil)
    #expect(FeedDate.iso("Thu, 01 Jan 2004 19:48:21 GMT") == "2004-01-01T19:48:21Z")
    #expect(FeedDate.iso("9999-12-31T23:59:59Z") == "9999-12-31T23:59:59Z")
    #expect(FeedDate.iso("9999-12-31T23:59:59-01:00") == nil)
  }
}
