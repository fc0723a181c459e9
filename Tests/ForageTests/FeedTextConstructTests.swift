import Foundation
import Testing
import ForageURL
@testable import Forage

/// Atom text constructs read as RFC 4287 §3.1 (and Atom 0.3's `mode`) say,
/// and elements given more than once in an entry (issue 29).
@Suite struct FeedTextConstructTests {
  let url = WebURL("https://example.com/feed")!

  func atom(_ entry: String, feed: String = "") throws -> Feed {
    try Feed.parse(Array("""
      <feed xmlns="http://www.w3.org/2005/Atom">\(feed)<entry>\(entry)</entry></feed>
      """.utf8), url: url)
  }

  func atom03(_ entry: String, feed: String = "") throws -> Feed {
    try Feed.parse(Array("""
      <feed version="0.3" xmlns="http://purl.org/atom/ns#">\(feed)<entry>\(entry)</entry></feed>
      """.utf8), url: url)
  }

  func base64(_ s: String) -> String { Data(s.utf8).base64EncodedString() }

  // MARK: Atom 1.0 types

  @Test func test_atom10_typeText_isTextEvenWhenItLooksLikeMarkup() throws {
    let feed = try atom("""
      <title>History of the &lt;blink&gt; tag</title>
      <summary type="text">a &lt;b&gt; b</summary>
      <content type="text">x &amp; y</content>
      """)
    let e = try #require(feed.entries.first)
    #expect(e.title == "History of the <blink> tag")
    #expect(e.summary == "a <b> b" && !e.summaryIsHTML)
    #expect(e.content == "x & y" && !e.contentIsHTML)
  }

  @Test func test_atom10_typeHTML_isEscapedHTML_andATitleIsItsText() throws {
    let feed = try atom("""
      <title type="html">Example &lt;b&gt;Atom&lt;/b&gt;</title>
      <summary type="html">&lt;p&gt;Hi &amp;amp; bye&lt;/p&gt;</summary>
      """)
    let e = try #require(feed.entries.first)
    #expect(e.title == "Example Atom")
    #expect(e.summary == "<p>Hi &amp; bye</p>" && e.summaryIsHTML)
  }

  @Test func test_atom10_typeXHTML_isTheDivsChildren_defaultNamespace() throws {
    let feed = try atom("""
      <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Example <b>Atom</b> &amp; more</div></content>
      """)
    let e = try #require(feed.entries.first)
    #expect(e.content == "Example <b>Atom</b> &amp; more" && e.contentIsHTML)
  }

  @Test func test_atom10_typeXHTML_isTheDivsChildren_prefixedDiv() throws {
    let feed = try atom("""
      <summary type="xhtml"><xhtml:div xmlns:xhtml="http://www.w3.org/1999/xhtml">Example <xhtml:b>Atom</xhtml:b></xhtml:div></summary>
      <title type="xhtml"><h:div xmlns:h="http://www.w3.org/1999/xhtml">A <h:i>title</h:i></h:div></title>
      """)
    let e = try #require(feed.entries.first)
    #expect(e.summary == "Example <b>Atom</b>" && e.summaryIsHTML)
    #expect(e.title == "A title")
  }

  @Test func test_atom10_contentMIMETypes_textPlain_xml_andBinaryBase64() throws {
    let plain = try atom(#"<content type="text/plain">a &lt;b&gt;</content>"#)
    #expect(plain.entries[0].content == "a <b>" && !plain.entries[0].contentIsHTML)
    let html = try atom(#"<content type="text/html">&lt;p&gt;x&lt;/p&gt;</content>"#)
    #expect(html.entries[0].content == "<p>x</p>" && html.entries[0].contentIsHTML)
    let text = try atom(#"<content type="application/octet-stream">\#(base64("Example <b>Atom</b>"))</content>"#)
    #expect(text.entries[0].content == "Example <b>Atom</b>" && !text.entries[0].contentIsHTML)
    // An image is binary: no content, and nothing wrong with the feed.
    let image = try atom(#"<content type="image/png">iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB/w==</content>"#)
    #expect(image.entries[0].content == nil && !image.isMalformed)
  }

  // MARK: Atom 0.3 modes

  @Test func test_atom03_modeEscaped_textPlainIsText_notHTML() throws {
    let feed = try atom03("""
      <title type="text/plain" mode="escaped">AT&amp;T &lt;news&gt;</title>
      <summary type="text/plain" mode="escaped">a &lt;b&gt; b</summary>
      <content type="text/html" mode="escaped">&lt;p&gt;Hi&lt;/p&gt;</content>
      """)
    let e = try #require(feed.entries.first)
    #expect(e.title == "AT&T <news>")
    #expect(e.summary == "a <b> b" && !e.summaryIsHTML)
    #expect(e.content == "<p>Hi</p>" && e.contentIsHTML)
  }

  @Test func test_atom03_modeBase64_decodesToUTF8TextOfItsType() throws {
    let feed = try atom03("""
      <title type="text/plain" mode="base64">\(base64("Café news"))</title>
      <summary type="text/plain" mode="base64">\(base64("a <b> b"))</summary>
      <content type="text/html" mode="base64">
        \(base64("<p>History of the &lt;blink&gt; tag</p>"))
      </content>
      """)
    let e = try #require(feed.entries.first)
    #expect(e.title == "Café news")
    #expect(e.summary == "a <b> b" && !e.summaryIsHTML)
    #expect(e.content == "<p>History of the &lt;blink&gt; tag</p>" && e.contentIsHTML)
    #expect(!feed.isMalformed)
  }

  @Test func test_atom03_modeXML_isInlineMarkup() throws {
    let feed = try atom03("""
      <content type="application/xhtml+xml" mode="xml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Hi <em>there</em></p></div></content>
      <summary type="text/html" mode="xml">a &lt;b&gt; b</summary>
      """)
    let e = try #require(feed.entries.first)
    #expect(e.content == "<p>Hi <em>there</em></p>" && e.contentIsHTML)
    // Inline (not escaped) content of an HTML type: its text is text.
    #expect(e.summary == "a &lt;b&gt; b" && e.summaryIsHTML)
  }

  @Test func test_atom03_defaultsAreTextPlainInline() throws {
    let feed = try atom03("<summary>a &lt;b&gt; b</summary>")
    #expect(feed.entries[0].summary == "a <b> b" && !feed.entries[0].summaryIsHTML)
  }

  @Test func test_base64ThatIsNot_isAProblemNamingTheElement_andKeptAsText() throws {
    let feed = try atom03(#"<content type="text/html" mode="base64">not base64 at all!</content>"#)
    #expect(feed.entries[0].content == "not base64 at all!" && !feed.entries[0].contentIsHTML)
    #expect(feed.problems == ["entry 1's content is marked as base64 but is not valid base64; it was kept as text, as written"])
    let notUTF8 = try atom03(#"<summary type="text/plain" mode="base64">/w==</summary>"#)
    #expect(notUTF8.entries[0].summary == nil)
    #expect(notUTF8.problems.first?.hasPrefix("entry 1's summary is base64 of something that is not UTF-8") == true)
  }

  // MARK: Feed-level constructs

  @Test func test_feedSubtitleAndRights_atom10_atom03_rss() throws {
    let a = try atom("<id>x</id>", feed: """
      <subtitle type="html">Example &lt;b&gt;Atom&lt;/b&gt;</subtitle>
      <rights type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">History of the &lt;blink&gt; tag</div></rights>
      """)
    #expect(a.subtitle == "Example <b>Atom</b>" && a.subtitleIsHTML)
    #expect(a.rights == "History of the &lt;blink&gt; tag" && a.rightsIsHTML)
    let old = try atom03(#"<rights>Entry rights</rights>"#, feed: """
      <tagline>A tagline</tagline><copyright type="text/html" mode="escaped">&lt;i&gt;(c)&lt;/i&gt; me</copyright>
      """)
    #expect(old.subtitle == "A tagline" && !old.subtitleIsHTML)
    #expect(old.rights == "<i>(c)</i> me" && old.rightsIsHTML)
    #expect(old.entries[0].rights == "Entry rights" && !old.entries[0].rightsIsHTML)
    let rss = try Feed.parse(Array("""
      <rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>T</title>
      <description>&lt;p&gt;About&lt;/p&gt;</description><copyright>(c) 2026</copyright>
      <item><title>i</title><dc:rights>CC BY</dc:rights></item></channel></rss>
      """.utf8), url: url)
    #expect(rss.subtitle == "<p>About</p>" && rss.subtitleIsHTML && rss.rights == "(c) 2026")
    #expect(rss.entries[0].rights == "CC BY")
  }

  // MARK: An element given more than once

  @Test func test_atom_repeatedElements_firstWithAValue() throws {
    let feed = try atom("""
      <id></id><id>urn:first</id><id>urn:second</id>
      <title type="html"></title><title>First</title><title>Second</title>
      <updated>not a date</updated><updated>2026-01-02T03:04:05Z</updated><updated>2027-01-01T00:00:00Z</updated>
      <summary>One</summary><summary>Two</summary>
      <content src="https://example.com/elsewhere"/><content>Inline</content>
      """)
    let e = try #require(feed.entries.first)
    #expect(e.id == "urn:first" && e.title == "First" && e.updated == "2026-01-02T03:04:05Z")
    #expect(e.summary == "One" && e.content == "Inline")
  }

  @Test func test_atom_alternateLinks_firstHTMLOne_elseFirstAlternate() throws {
    let feed = try Feed.parse(Array("""
      <feed xmlns="http://www.w3.org/2005/Atom">
      <entry><link rel="self" href="/self"/><link rel="alternate" type="application/pdf" href="/a.pdf"/>
        <link rel="alternate" type="text/html" href="/a.html"/><link href="/b.html"/></entry>
      <entry><link rel="alternate" type="application/pdf" href="/c.pdf"/><link rel="alternate" type="audio/mpeg" href="/c.mp3"/></entry>
      <entry><link rel="related" href="/r"/><link rel="ALTERNATE" href="/d"/></entry>
      </feed>
      """.utf8), url: url)
    #expect(feed.entries.map(\.link) == ["https://example.com/a.html", "https://example.com/c.pdf", "https://example.com/d"])
  }

  @Test func test_rss_repeatedElements_firstWithAValue() throws {
    let feed = try Feed.parse(Array("""
      <rss version="2.0"><channel><title>T</title>
      <item><title></title><title>First</title><title>Second</title>
      <guid>g1</guid><guid>g2</guid><link></link><link>/one</link><link>/two</link>
      <pubDate>sometime</pubDate><pubDate>Sat, 07 Sep 2002 00:00:01 GMT</pubDate><pubDate>Sun, 08 Sep 2002 00:00:01 GMT</pubDate>
      <description>First summary</description><description>Second summary</description></item>
      </channel></rss>
      """.utf8), url: url)
    let e = try #require(feed.entries.first)
    #expect(e.title == "First" && e.id == "g1" && e.link == "https://example.com/one")
    #expect(e.published == "2002-09-07T00:00:01Z" && e.summary == "First summary")
  }

  @Test func test_rss_atomSelfLinkBeforeLink_theLinkIsThePage() throws {
    let feed = try Feed.parse(Array("""
      <rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel>
      <atom:link href="https://example.com/feed.xml" rel="self" type="application/rss+xml"/>
      <link>https://example.com/</link><title>T</title>
      <item><title>i</title><atom:link rel="self" href="/i.xml"/><atom:link rel="alternate" href="/i.html"/></item>
      </channel></rss>
      """.utf8), url: url)
    #expect(feed.link == "https://example.com/")
    #expect(feed.entries[0].link == "https://example.com/i.html")
  }
}
