import Testing
import ForageURL
@testable import Forage

@Suite struct FeedTests {
  let url = WebURL("https://example.com/news/rss")!

  func parse(_ s: String, contentType: String? = nil) throws -> Feed {
    try Feed.parse(Array(s.utf8), url: url, contentType: contentType)
  }

  @Test func test_rss2_fields() throws {
    let feed = try parse("""
      <?xml version="1.0"?><rss version="2.0"><channel><title>News</title><link>/</link>
      <item><title>One</title><link>a/1</link><guid>tag:1</guid><pubDate>Sat, 07 Sep 2002 00:00:01 GMT</pubDate>
      <description>&lt;p&gt;Hi&lt;/p&gt;</description><author>me@example.com (Me)</author>
      <category>x</category><category>y</category>
      <enclosure url="/e.mp3" type="audio/mpeg" length="123"/></item></channel></rss>
      """)
    #expect(feed.format == .rss && !feed.isMalformed)
    let e = try #require(feed.entries.first)
    #expect(e.title == "One")
    #expect(e.link == "https://example.com/news/a/1")
    #expect(e.id == "tag:1")
    #expect(e.published == "2002-09-07T00:00:01Z")
    #expect(e.summary == "<p>Hi</p>" && e.summaryIsHTML)
    #expect(e.author == "Me" && e.authorEmail == "me@example.com")
    #expect(e.categories == ["x", "y"])
    #expect(e.enclosures == [FeedEnclosure(url: "https://example.com/e.mp3", type: "audio/mpeg", length: 123)])
  }

  @Test func test_rdf_atom03_atom10_jsonFeed_detectedFromContent() throws {
    let rdf = try parse("""
      <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
       xmlns:dc="http://purl.org/dc/elements/1.1/"><channel rdf:about="x"><title>T</title></channel>
      <item rdf:about="https://example.com/1"><title>R</title><link>https://example.com/1</link>
      <dc:date>2004-01-01T19:48:21+01:00</dc:date></item></rdf:RDF>
      """)
    #expect(rdf.format == .rdf && rdf.entries.first?.id == "https://example.com/1")
    #expect(rdf.entries.first?.published == "2004-01-01T18:48:21Z")
    let atom03 = try parse("""
      <feed version="0.3" xmlns="http://purl.org/atom/ns#"><entry><title>A</title><id>i</id>
      <link rel="alternate" href="/a"/><issued>2003-12-31T10:14:55Z</issued></entry></feed>
      """)
    #expect(atom03.format == .atom03 && atom03.entries.first?.link == "https://example.com/a")
    let atom = try parse("""
      <feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://other.example/base/"><entry>
      <title type="html">&lt;b&gt;Bold&lt;/b&gt; title</title><id>urn:1</id><link href="p"/>
      <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Hi</p></div></content>
      <author><name>N</name><email>n@x</email><uri>/n</uri></author><category term="c"/></entry></feed>
      """)
    let a = try #require(atom.entries.first)
    #expect(atom.format == .atom && a.title == "Bold title" && a.link == "https://other.example/base/p")
    #expect(a.content == "<p>Hi</p>" && a.contentIsHTML)
    #expect(a.author == "N" && a.authorEmail == "n@x" && a.authorURL == "https://other.example/n")
    let json = try parse("""
      {"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": [{"id": "1", "url": "/j",
       "content_text": "t", "date_published": "2020-01-02T03:04:05-01:00", "tags": ["a"],
       "attachments": [{"url": "/f", "mime_type": "audio/mpeg", "size_in_bytes": 5}]}]}
      """, contentType: "text/html")
    let j = try #require(json.entries.first)
    #expect(json.format == .jsonFeed && j.link == "https://example.com/j" && j.content == "t" && !j.contentIsHTML)
    #expect(j.published == "2020-01-02T04:04:05Z" && j.enclosures.first?.length == 5)
  }

  @Test func test_dates_brokenForms() {
    #expect(FeedDate.iso("Thu, 01 Jan 2004 19:48:21 GMT") == "2004-01-01T19:48:21Z")
    #expect(FeedDate.iso("01 Jan 04 19:48 EST") == "2004-01-02T00:48:00Z")
    #expect(FeedDate.iso("Thursday, January 1, 2004 19:48:21 +0100") == "2004-01-01T18:48:21Z")
    #expect(FeedDate.iso("Thu, 1 Jan 2004 19:48:21 +01:00") == "2004-01-01T18:48:21Z")
    #expect(FeedDate.iso("2004-01-01 19:48:21") == "2004-01-01T19:48:21Z")
    #expect(FeedDate.iso("2004-01-01T19:48:21.123+05:30") == "2004-01-01T14:18:21Z")
    #expect(FeedDate.iso("2004-01-01") == "2004-01-01T00:00:00Z")
    #expect(FeedDate.iso("soon") == nil)
  }

  // MARK: - Broken feeds: recovered, reported as malformed

  @Test func test_broken_undeclaredEntities() throws {
    let feed = try parse("<rss><channel><item><title>Caf&eacute;&nbsp;one</title></item></channel></rss>")
    #expect(feed.entries.first?.title == "Café\u{A0}one")
    #expect(feed.problems.contains { $0.contains("undeclared entity") })
  }

  @Test func test_broken_bareAmpersand() throws {
    let feed = try parse("<rss><channel><item><title>Fish & Chips</title><link>/?a=1&b=2</link></item></channel></rss>")
    #expect(feed.entries.first?.title == "Fish & Chips")
    #expect(feed.entries.first?.link == "https://example.com/?a=1&b=2")
    #expect(feed.problems.contains { $0.contains("bare &") })
  }

  @Test func test_broken_wrongAndMissingEncodingDeclaration() throws {
    // Latin-1 bytes declared UTF-8.
    var bytes = Array(#"<?xml version="1.0" encoding="utf-8"?><rss><channel><item><title>Caf"#.utf8)
    bytes += [0xE9] + Array("</title></item></channel></rss>".utf8)
    let wrong = try Feed.parse(bytes, url: url)
    #expect(wrong.entries.first?.title == "Café" && wrong.isMalformed)
    // An unknown label.
    let unknown = try parse(#"<?xml version="1.0" encoding="latin-9000"?><rss><channel><item><title>x</title></item></channel></rss>"#)
    #expect(unknown.entries.count == 1 && unknown.problems.contains { $0.contains("latin-9000") })
    // windows-1251 declared, HTTP charset wins over it.
    var cyr = Array(#"<?xml version="1.0" encoding="windows-1251"?><rss><channel><item><title>"#.utf8)
    cyr += [0xCF, 0xF0, 0xE8] + Array("</title></item></channel></rss>".utf8)
    #expect(try Feed.parse(cyr, url: url).entries.first?.title == "При")
    #expect(try Feed.parse(cyr, url: url, contentType: "application/xml; charset=koi8-r").entries.first?.title != "При")
  }

  @Test func test_broken_byteOrderMark() throws {
    let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("<rss><channel><item><title>é</title></item></channel></rss>".utf8)
    let feed = try Feed.parse(bytes, url: url)
    #expect(feed.entries.first?.title == "é" && !feed.isMalformed)
    var utf16: [UInt8] = [0xFF, 0xFE]
    for u in "<rss><channel><item><title>é</title></item></channel></rss>".utf16 { utf16 += [UInt8(u & 0xFF), UInt8(u >> 8)] }
    #expect(try Feed.parse(utf16, url: url).entries.first?.title == "é")
  }

  @Test func test_broken_truncatedDocument_keepsReadableEntries() throws {
    let feed = try parse("<rss><channel><item><title>One</title><guid>1</guid></item><item><title>Two</title><guid>2</guid></item><item><title>Thr")
    #expect(feed.entries.map(\.id) == ["1", "2", nil])
    #expect(feed.entries.prefix(2).map(\.title) == ["One", "Two"])
    #expect(feed.problems.contains { $0.contains("truncated") })
  }

  @Test func test_broken_unterminatedCDATA() throws {
    let feed = try parse("<rss><channel><item><title>One</title><description><![CDATA[<p>text")
    #expect(feed.entries.first?.title == "One")
    #expect(feed.entries.first?.summary == "<p>text")
    #expect(feed.problems.contains { $0.contains("CDATA") })
  }

  @Test func test_broken_htmlWhereTextWasPromised() throws {
    let feed = try parse("<rss><channel><item><title>A <b>bold</b> move</title><description><p>Para<br>line</description></item></channel></rss>")
    let e = try #require(feed.entries.first)
    #expect(e.title == "A bold move")
    #expect(e.summary == "<p>Para<br />line</p>" && e.summaryIsHTML)
    #expect(feed.isMalformed)
  }

  @Test func test_notAFeed_throws() {
    #expect(throws: FeedError.self) { try parse("<!doctype html><html><body><p>hello</p></body></html>") }
    #expect(throws: FeedError.self) { try parse("{\"hello\": 1}") }
  }
}
