import Foundation
import ForageHTML
import ForageURL

extension Feed {
  static let atom10NS = "http://www.w3.org/2005/Atom"
  static let atom03NS = "http://purl.org/atom/ns#"
  static let rdfNS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
  static let dcNS = "http://purl.org/dc/elements/1.1/"
  static let contentNS = "http://purl.org/rss/1.0/modules/content/"
  static let xhtmlNS = "http://www.w3.org/1999/xhtml"

  /// Reads a feed of any supported format, detected from the content.
  ///
  ///     let feed = try Feed.parse(body, url: WebURL("https://example.com/rss")!,
  ///                               contentType: "application/rss+xml; charset=utf-8")
  ///
  /// A broken document is read leniently: what can be recovered is, and
  /// `problems` says what was wrong.
  ///
  /// - Parameters:
  ///   - bytes: the document as served.
  ///   - url: the feed's URL: relative links resolve against it (after `xml:base`).
  ///   - contentType: the HTTP `Content-Type`, for its charset only.
  ///   - paths: extension data to read from each entry (``FeedEntry/extensions``).
  /// - Throws: `FeedError` when the document is no feed of a known format.
  public static func parse(
    _ bytes: [UInt8], url: WebURL, contentType: String? = nil, paths: [FeedPath] = []
  ) throws(FeedError) -> Feed {
    var start = 0
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
    while start < bytes.count && (bytes[start] == 0x20 || bytes[start] == 0x0A || bytes[start] == 0x0D || bytes[start] == 0x09) {
      start += 1
    }
    if start < bytes.count && (bytes[start] == UInt8(ascii: "{") || bytes[start] == UInt8(ascii: "[")) {
      return try parseJSONFeed(Array(bytes[start...]), url: url, paths: paths)
    }
    let (utf8, encoding, decodingProblems) = FeedDecoding.decode(bytes, contentType: contentType)
    var reader = XMLReader(utf8: utf8)
    let document = reader.read(base: url.href)
    guard let root = findRoot(document) else {
      throw FeedError("no RSS, RDF or Atom root element: not a feed")
    }
    var feed: Feed
    switch root.local.lowercased() {
    case "rss", "channel":
      feed = Feed(format: .rss)
      feed.version = root.attribute("version")
      readRSS(root, into: &feed, paths: paths)
    case "rdf":
      feed = Feed(format: .rdf)
      readRSS(root, into: &feed, paths: paths)
    default:
      let is03 = root.namespace == atom03NS || (root.namespace != atom10NS && root.attribute("version") == "0.3")
      feed = Feed(format: is03 ? .atom03 : .atom)
      feed.version = is03 ? "0.3" : "1.0"
      readAtom(root, into: &feed, paths: paths)
    }
    feed.encoding = encoding.rawValue
    feed.problems = decodingProblems + reader.problems
    return feed
  }

  /// The feed's root: the first `rss`, `RDF`, `feed` (or `entry`, a lone Atom
  /// entry) element, looking past anything before it.
  private static func findRoot(_ e: XMLElement) -> XMLElement? {
    for child in e.elements {
      switch child.local {
      case "rss", "RDF", "feed", "entry": return child
      case "channel" where e.name.isEmpty: return child
      default: if let r = findRoot(child) { return r }
      }
    }
    return nil
  }

  // MARK: - RSS 0.9x, 2.0 and 1.0

  private static func readRSS(_ root: XMLElement, into feed: inout Feed, paths: [FeedPath]) {
    let channel = root.child("channel") ?? root
    feed.title = text(channel.child("title"))
    feed.link = link(text(channel.child("link")), in: channel)
    feed.updated = date(channel.child("lastBuildDate")) ?? date(channel.child("modified")) ?? date(channel.child("date", in: dcNS))
      ?? date(channel.child("pubDate"))
    feed.author = (text(channel.child("managingEditor")) ?? text(channel.child("creator", in: dcNS))
      ?? text(channel.child("author"))).map { splitAuthor($0).0 ?? $0 }
    // RSS 2.0 puts items in the channel; RSS 1.0 and 0.90 beside it.
    let items = channel.children("item") + (channel === root ? [] : root.children("item"))
    for item in items {
      var entry = rssEntry(item)
      readExtensions(paths, from: item, into: &entry)
      feed.entries.append(entry)
    }
  }

  private static func rssEntry(_ item: XMLElement) -> FeedEntry {
    var entry = FeedEntry()
    entry.title = text(item.child("title"))
    if let guid = item.child("guid"), let id = text(guid) {
      entry.id = id
      if guid.attribute("isPermaLink")?.lowercased() != "false", item.child("link") == nil {
        entry.link = link(id, in: guid)
      }
    } else if let about = item.attribute("rdf:about") ?? item.attribute("about") {
      entry.id = about
    }
    if let l = item.children("link").first(where: { $0.namespace != atom10NS }), let href = text(l) {
      entry.link = link(href, in: l)
    } else if entry.link == nil, let l = item.child("link", in: atom10NS), let href = l.attribute("href") {
      entry.link = link(href, in: l)
    }
    entry.published = date(item.child("pubDate")) ?? date(item.child("issued")) ?? date(item.child("date", in: dcNS))
    entry.updated = date(item.child("modified")) ?? date(item.child("updated", in: atom10NS)) ?? date(item.child("date", in: dcNS))
    if let d = item.child("description") {
      (entry.summary, entry.summaryIsHTML) = markup(d, assumeHTML: true)
    }
    if let c = item.child("encoded", in: contentNS) {
      (entry.content, entry.contentIsHTML) = markup(c, assumeHTML: true)
    } else if let body = item.child("body"), body.namespace == xhtmlNS {
      entry.content = nonEmpty(body.innerMarkup(dropPrefixes: true).trimmed)
      entry.contentIsHTML = true
    } else if let c = item.child("fullitem") {
      (entry.content, entry.contentIsHTML) = markup(c, assumeHTML: true)
    }
    if let a = item.child("author"), let t = text(a) {
      (entry.author, entry.authorEmail) = splitAuthor(t)
    } else if let c = item.child("creator", in: dcNS) ?? item.child("author", in: dcNS) {
      entry.author = text(c)
    }
    entry.categories = (item.children("category") + item.children("subject", in: dcNS)).compactMap { text($0) }
    for e in item.children("enclosure") {
      guard let u = e.attribute("url"), let abs = link(u, in: e) else { continue }
      entry.enclosures.append(FeedEnclosure(url: abs, type: nonEmpty(e.attribute("type")), length: e.attribute("length").flatMap { Int($0.trimmed) }))
    }
    return entry
  }

  /// "me@example.com (Name)" and "Name (me@example.com)" → ("Name",
  /// "me@example.com"); a bare name stays a name.
  private static func splitAuthor(_ s: String) -> (String?, String?) {
    guard s.contains("@") else { return (s, nil) }
    if let open = s.firstIndex(of: "("), let close = s.lastIndex(of: ")"), open < close {
      var name = s[s.index(after: open)..<close].trimmed
      var email = s[..<open].trimmed
      if name.contains("@") && !email.contains("@") { swap(&name, &email) }
      return (name.isEmpty ? email : name, email.isEmpty ? nil : email)
    }
    if let open = s.firstIndex(of: "<"), let close = s.lastIndex(of: ">"), open < close {
      let email = s[s.index(after: open)..<close].trimmed
      let name = s[..<open].trimmed
      return (name.isEmpty ? email : name, email)
    }
    return (s.trimmed, s.trimmed)
  }

  // MARK: - Atom 0.3 and 1.0

  private static func readAtom(_ root: XMLElement, into feed: inout Feed, paths: [FeedPath]) {
    let entries: [XMLElement]
    if root.local == "entry" {
      entries = [root]
    } else {
      entries = root.children("entry")
      feed.title = atomText(root.child("title"), asText: true)
      feed.link = atomLink(root)
      feed.id = text(root.child("id"))
      feed.updated = date(root.child("updated")) ?? date(root.child("modified"))
      feed.author = root.child("author").flatMap { text($0.child("name")) }
    }
    for e in entries {
      var entry = FeedEntry()
      entry.id = text(e.child("id"))
      entry.title = atomText(e.child("title"), asText: true)
      entry.link = atomLink(e)
      entry.published = date(e.child("published")) ?? date(e.child("issued")) ?? date(e.child("created"))
      entry.updated = date(e.child("updated")) ?? date(e.child("modified"))
      if let s = e.child("summary") {
        entry.summary = atomText(s, asText: false)
        entry.summaryIsHTML = isHTMLConstruct(s)
      }
      if let c = e.child("content") {
        if c.attribute("src") != nil {
          // Content elsewhere (out-of-line): nothing to keep as content.
        } else if let decoded = base64Content(c) {
          entry.content = decoded
        } else {
          entry.content = atomText(c, asText: false)
          entry.contentIsHTML = isHTMLConstruct(c)
        }
      }
      if let a = e.child("author") ?? root.child("author") {
        entry.author = text(a.child("name"))
        entry.authorEmail = text(a.child("email"))
        if let u = a.child("uri") ?? a.child("url"), let t = text(u) { entry.authorURL = link(t, in: u) }
        if entry.author == nil { entry.author = entry.authorEmail }
      }
      entry.categories = e.children("category").compactMap { nonEmpty($0.attribute("term")) ?? text($0) }
      for l in e.children("link") where l.attribute("rel") == "enclosure" {
        guard let h = l.attribute("href"), let abs = link(h, in: l) else { continue }
        entry.enclosures.append(FeedEnclosure(url: abs, type: nonEmpty(l.attribute("type")), length: l.attribute("length").flatMap { Int($0.trimmed) }))
      }
      readExtensions(paths, from: e, into: &entry)
      feed.entries.append(entry)
    }
  }

  /// Reads each path's values from an entry's element.
  private static func readExtensions(_ paths: [FeedPath], from e: XMLElement, into entry: inout FeedEntry) {
    for path in paths where path.pointer == nil {
      entry.extensions[path.description] = path.values(in: e).map(JSONValue.string)
    }
  }

  /// The `alternate` link (a link without `rel` is one), absolute; its
  /// text when a broken feed gives no `href`.
  private static func atomLink(_ e: XMLElement) -> String? {
    for l in e.children("link") where (l.attribute("rel") ?? "alternate") == "alternate" {
      if let href = l.attribute("href") ?? text(l) { return link(href, in: l) }
    }
    return nil
  }

  /// Atom content of a MIME type that is neither text nor XML is base64
  /// (RFC 4287 §4.1.3.3); decoded when it is text in UTF-8.
  private static func base64Content(_ e: XMLElement) -> String? {
    guard let type = e.attribute("type")?.lowercased(), type.contains("/"), !type.hasPrefix("text/"),
      !type.hasSuffix("+xml"), !type.hasSuffix("/xml"), !type.contains("html")
    else { return nil }
    let compact = e.text.filter { !$0.isWhitespace }
    guard let data = Data(base64Encoded: compact) else { return nil }
    let bytes = [UInt8](data)
    guard InputDecoder.isValidUTF8(bytes) else { return nil }
    return nonEmpty(String(decoding: bytes, as: UTF8.self).trimmed)
  }

  private static func isHTMLConstruct(_ e: XMLElement) -> Bool {
    let type = (e.attribute("type") ?? "text").lowercased()
    if e.attribute("mode") == "escaped" { return true }
    return type == "html" || type == "xhtml" || type.contains("html")
  }

  /// An Atom text construct: text as text; `html` unescaped once (it is
  /// HTML); `xhtml` the inner markup of its `div`. With `asText`, markup is
  /// reduced to its text (titles are text).
  private static func atomText(_ e: XMLElement?, asText: Bool) -> String? {
    guard let e else { return nil }
    let type = (e.attribute("type") ?? "text").lowercased()
    var html: String
    if type == "xhtml" || type.hasSuffix("xhtml+xml") {
      let div = e.child("div") ?? e
      html = div.innerMarkup(dropPrefixes: true)
    } else if type == "html" || type.contains("html") || e.attribute("mode") == "escaped" {
      // HTML wrapped in an XHTML div holding escaped markup: the div's text is the HTML.
      let only = e.elements.count == 1 ? e.elements[0] : nil
      if let div = only, div.local == "div", div.namespace == xhtmlNS, !div.hasElementChildren {
        html = div.text
      } else {
        html = e.hasElementChildren ? e.innerMarkup() : e.text
      }
    } else {
      return nonEmpty(e.text.trimmed)
    }
    if asText { html = htmlText(html) }
    return nonEmpty(html.trimmed)
  }

  // MARK: - Helpers

  /// The trimmed text of an element; markup inside it (HTML where text was
  /// promised) contributes its text.
  static func text(_ e: XMLElement?) -> String? {
    guard let e else { return nil }
    if e.hasElementChildren { return nonEmpty(htmlText(e.innerMarkup()).trimmed) }
    return nonEmpty(e.text.trimmed)
  }

  /// An RSS description or content: HTML by convention (escaped, in CDATA,
  /// or — broken — as raw markup), kept as HTML.
  private static func markup(_ e: XMLElement, assumeHTML: Bool) -> (String?, Bool) {
    let value = e.hasElementChildren ? e.innerMarkup() : e.text
    return (nonEmpty(value.trimmed), assumeHTML)
  }

  /// The readable text of an HTML fragment.
  static func htmlText(_ html: String) -> String {
    guard html.contains("<") || html.contains("&") else { return html }
    let doc = Document.parse(html: html)
    return doc.text(of: doc.rootID)
  }

  private static func date(_ e: XMLElement?) -> String? {
    guard let t = text(e) else { return nil }
    return FeedDate.iso(t)
  }

  /// `href` resolved against the element's `xml:base` (which already holds
  /// the feed's URL at the root); nil when it is empty or no URL.
  static func link(_ href: String?, in e: XMLElement) -> String? {
    guard let href = nonEmpty(href?.trimmed) else { return nil }
    let base = e.base.flatMap { WebURL($0) }
    return WebURL(href, base: base)?.href
  }

  static func nonEmpty(_ s: String?) -> String? {
    guard let s, !s.isEmpty else { return nil }
    return s
  }
}

extension StringProtocol {
  /// The string without leading and trailing whitespace.
  var trimmed: String {
    let scalars = unicodeScalars
    guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
    let last = scalars.lastIndex { !$0.properties.isWhitespace }!
    return String(String.UnicodeScalarView(scalars[first...last]))
  }
}
