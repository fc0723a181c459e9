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
    feed.problems = decodingProblems + reader.problems + feed.problems
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
    feed.title = first(channel, "title", text)
    feed.link = rssLink(channel)
    if let d = channel.children("description").first(where: { text($0) != nil }) {
      (feed.subtitle, feed.subtitleIsHTML) = markup(d, assumeHTML: true)
    }
    feed.rights = first(channel, "copyright", text) ?? first(channel, "rights", in: dcNS, text)
    feed.updated = first(channel, "lastBuildDate", date) ?? first(channel, "modified", date)
      ?? first(channel, "date", in: dcNS, date) ?? first(channel, "pubDate", date)
    feed.author = (first(channel, "managingEditor", text) ?? first(channel, "creator", in: dcNS, text)
      ?? first(channel, "author", text)).map { splitAuthor($0).0 ?? $0 }
    // RSS 2.0 puts items in the channel; RSS 1.0 and 0.90 beside it.
    let items = channel.children("item") + (channel === root ? [] : root.children("item"))
    for item in items {
      var entry = rssEntry(item)
      readExtensions(paths, from: item, into: &entry)
      feed.entries.append(entry)
    }
  }

  /// An RSS channel's or item's page: its first RSS `link` with a URL (not
  /// an `atom:link`), else (`guid`, for an item) its Atom alternate link.
  private static func rssLink(_ e: XMLElement, guid: String? = nil) -> String? {
    let links = e.children("link")
    return links.lazy.filter { $0.namespace != atom10NS }.compactMap { l in text(l).flatMap { link($0, in: l) } }.first
      ?? guid ?? atomLink(links.filter { $0.namespace == atom10NS })
  }

  private static func rssEntry(_ item: XMLElement) -> FeedEntry {
    var entry = FeedEntry()
    entry.title = first(item, "title", text)
    var permalink: String?
    if let (id, guid) = first(item, "guid", { g in text(g).map { ($0, g) } }) {
      entry.id = id
      if guid.attribute("isPermaLink")?.lowercased() != "false" { permalink = link(id, in: guid) }
    } else if let about = item.attribute("rdf:about") ?? item.attribute("about") {
      entry.id = about
    }
    // The item's own link, else a guid that is a permalink, else an atom:link.
    entry.link = rssLink(item, guid: permalink)
    entry.published = first(item, "pubDate", date) ?? first(item, "issued", date) ?? first(item, "date", in: dcNS, date)
    entry.updated = first(item, "modified", date) ?? first(item, "updated", in: atom10NS, date)
      ?? first(item, "date", in: dcNS, date)
    if let d = item.children("description").first(where: { markup($0, assumeHTML: true).0 != nil }) {
      (entry.summary, entry.summaryIsHTML) = markup(d, assumeHTML: true)
    }
    if let c = item.children("encoded", in: contentNS).first(where: { markup($0, assumeHTML: true).0 != nil }) {
      (entry.content, entry.contentIsHTML) = markup(c, assumeHTML: true)
    } else if let body = item.child("body"), body.namespace == xhtmlNS {
      entry.content = nonEmpty(body.innerMarkup(dropPrefixes: true).trimmed)
      entry.contentIsHTML = true
    } else if let c = item.child("fullitem") {
      (entry.content, entry.contentIsHTML) = markup(c, assumeHTML: true)
    }
    entry.rights = first(item, "rights", in: dcNS, text)
    if let t = first(item, "author", text) {
      (entry.author, entry.authorEmail) = splitAuthor(t)
    } else {
      entry.author = first(item, "creator", in: dcNS, text) ?? first(item, "author", in: dcNS, text)
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
    var problems: [String] = []
    if root.local == "entry" {
      entries = [root]
    } else {
      entries = root.children("entry")
      feed.title = first(root, "title") { constructText($0, location: "the feed's title", problems: &problems) }
      if let c = firstConstruct(root, ["subtitle", "tagline"], location: "the feed's subtitle", problems: &problems) {
        (feed.subtitle, feed.subtitleIsHTML) = (c.value, c.isHTML)
      }
      if let c = firstConstruct(root, ["rights", "copyright"], location: "the feed's rights", problems: &problems) {
        (feed.rights, feed.rightsIsHTML) = (c.value, c.isHTML)
      }
      feed.link = atomLink(root.children("link"))
      feed.id = first(root, "id", text)
      feed.updated = first(root, "updated", date) ?? first(root, "modified", date)
      feed.author = root.child("author").flatMap { first($0, "name", text) }
    }
    for (n, e) in entries.enumerated() {
      let at = "entry \(n + 1)"
      var entry = FeedEntry()
      entry.id = first(e, "id", text)
      entry.title = first(e, "title") { constructText($0, location: "\(at)'s title", problems: &problems) }
      entry.link = atomLink(e.children("link"))
      entry.published = first(e, "published", date) ?? first(e, "issued", date) ?? first(e, "created", date)
      entry.updated = first(e, "updated", date) ?? first(e, "modified", date)
      if let c = firstConstruct(e, ["summary"], location: "\(at)'s summary", problems: &problems) {
        (entry.summary, entry.summaryIsHTML) = (c.value, c.isHTML)
      }
      // Content elsewhere (out-of-line, `src`): nothing to keep as content.
      let inline = e.children("content").filter { $0.attribute("src") == nil }
      if let c = firstConstruct(inline, location: "\(at)'s content", problems: &problems) {
        (entry.content, entry.contentIsHTML) = (c.value, c.isHTML)
      }
      if let c = firstConstruct(e, ["rights", "copyright"], location: "\(at)'s rights", problems: &problems) {
        (entry.rights, entry.rightsIsHTML) = (c.value, c.isHTML)
      }
      if let a = e.child("author") ?? root.child("author") {
        entry.author = first(a, "name", text)
        entry.authorEmail = first(a, "email", text)
        if let (t, u) = first(a, "uri", { u in text(u).map { ($0, u) } }) ?? first(a, "url", { u in text(u).map { ($0, u) } }) {
          entry.authorURL = link(t, in: u)
        }
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
    feed.problems += problems
  }

  /// The first of the elements named `names` (in that order of names, each
  /// in document order) whose construct has a value.
  private static func firstConstruct(
    _ parent: XMLElement, _ names: [String], location: String, problems: inout [String]
  ) -> TextConstruct? {
    for name in names {
      if let c = firstConstruct(parent.children(name), location: location, problems: &problems) { return c }
    }
    return nil
  }

  /// The first of `elements` whose construct has a value.
  private static func firstConstruct(
    _ elements: [XMLElement], location: String, problems: inout [String]
  ) -> TextConstruct? {
    for e in elements {
      let c = textConstruct(e, location: location, problems: &problems)
      if c.value != nil { return c }
    }
    return nil
  }

  /// Reads each path's values from an entry's element.
  private static func readExtensions(_ paths: [FeedPath], from e: XMLElement, into entry: inout FeedEntry) {
    for path in paths where path.pointer == nil {
      entry.extensions[path.description] = path.values(in: e).map(JSONValue.string)
    }
  }

  /// The entry's (or feed's) page among its Atom `link`s: of the
  /// `alternate` links (a link without `rel` is one), the first whose
  /// `type` is HTML (`text/html`, `application/xhtml+xml`) or not given,
  /// else the first; absolute, its text when a broken feed gives no `href`.
  static func atomLink(_ links: [XMLElement]) -> String? {
    func href(_ l: XMLElement) -> String? { link(l.attribute("href") ?? text(l), in: l) }
    let alternates = links.filter { l in
      let rel = (l.attribute("rel") ?? "alternate").trimmed.lowercased()
      return rel == "alternate" || rel == "http://www.iana.org/assignments/relation/alternate"
    }
    let pages = alternates.filter { l in
      guard let type = l.attribute("type") else { return true }
      let kind = constructKind(type)
      return kind == .html || kind == .xhtml
    }
    return pages.lazy.compactMap(href).first ?? alternates.lazy.compactMap(href).first
  }

  // MARK: - Helpers

  /// The first of `parent`'s children named `local` (in `namespace` when
  /// given) that `read` gives a value for: an element given more than once
  /// resolves to its first occurrence with a value.
  static func first<T>(
    _ parent: XMLElement, _ local: String, in namespace: String? = nil, _ read: (XMLElement) -> T?
  ) -> T? {
    for case .element(let e) in parent.children where e.local == local && (namespace == nil || e.namespace == namespace!) {
      if let v = read(e) { return v }
    }
    return nil
  }

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
