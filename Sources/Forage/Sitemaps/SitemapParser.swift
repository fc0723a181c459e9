import Foundation
import ForageURL

/// One `<url>` of a urlset or `<sitemap>` of an index (or a line of a text
/// sitemap, or an entry of a feed used as a sitemap).
struct SitemapEntry: Sendable, Hashable {
  /// The `<loc>` text, entities decoded and whitespace trimmed.
  var loc: String
  /// The `<lastmod>`, read as the latest instant it may name (see
  /// ``SitemapDate``); nil when absent or unreadable.
  var lastModified: Date?
}

/// What a sitemap file holds, told apart by its content.
struct SitemapDocument: Sendable, Hashable {
  enum Kind: Sendable, Hashable {
    /// `<urlset>`: pages.
    case urlset
    /// `<sitemapindex>`: other sitemaps.
    case index
    /// Plain text, one URL per line: pages.
    case text
    /// An RSS or Atom feed (the protocol accepts them as sitemaps): its entries' links are pages.
    case feed
    /// None of these (an HTML error page, say).
    case unknown(String)
  }

  var kind: Kind
  /// Pages (urlset, text, feed) or sitemaps (index), in document order.
  var entries: [SitemapEntry] = []
  /// True when the file had more than the entry limit: `entries` holds the first ones.
  var cutAtEntryLimit = false
  /// What was wrong, for a person (at most a few, then a count).
  var problems: [String] = []
}

/// Reads sitemap files (sitemaps.org protocol 0.9) leniently, by a single
/// scan rather than a tree: a urlset may hold 50,000 entries in 50 MB, and
/// only `<loc>` and `<lastmod>` of each are wanted.
///
/// The root element decides the kind (`urlset` or `sitemapindex`), matched
/// by local name without regard to case or namespace (a missing or wrong
/// `xmlns` is common). A `<loc>` or `<lastmod>` counts only as a direct child
/// of its `<url>`/`<sitemap>`, so extensions' own `<image:loc>` and the like
/// are not taken for the page. Broken markup is read as far as it goes: an
/// unclosed `<url>` is closed by the next one, a document cut short keeps
/// every entry whose `<loc>` was complete, entities (`&amp;`, numeric
/// references, HTML's named ones) are decoded (by the feeds' ``XMLReader``,
/// whose tokens the scan reads), and a byte order mark,
/// whitespace or comments before the declaration are skipped. A file whose
/// first character is not `<` is read as a text sitemap: one absolute URL
/// per line. An RSS or Atom root is read as a feed (the protocol allows
/// them), through ``Feed/parse(_:url:contentType:)``.
///
/// - SeeAlso: <https://www.sitemaps.org/protocol.html>
enum SitemapParser {
  /// URLs longer than this are skipped (the protocol: "less than 2,048 characters").
  static let maxURLLength = 2_048
  static let maxProblems = 5

  /// Reads `bytes` as a sitemap, keeping at most `maxEntries` entries.
  ///
  /// - Parameter url: the file's URL, for feeds' relative links.
  static func parse(_ bytes: [UInt8], url: WebURL? = nil, maxEntries: Int = Sitemap.maxURLs) -> SitemapDocument {
    // UTF-16 (with a byte order mark) is rare but legal XML: made UTF-8 first.
    if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
      let (utf8, _, _) = FeedDecoding.decode(bytes, contentType: nil)
      return parseUTF8(utf8, url: url, maxEntries: maxEntries)
    }
    return parseUTF8(bytes, url: url, maxEntries: maxEntries)
  }

  private static func parseUTF8(_ bytes: [UInt8], url: WebURL?, maxEntries: Int) -> SitemapDocument {
    var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    while start < bytes.count && isSpace(bytes[start]) { start += 1 }
    if start == bytes.count { return SitemapDocument(kind: .unknown("the file is empty")) }
    if bytes[start] != UInt8(ascii: "<") { return readText(bytes, from: start, maxEntries: maxEntries) }
    var reader = XMLReader(utf8: bytes, from: start)
    var scanner = Scanner(maxEntries: maxEntries)
    var document = scanner.scan(&reader)
    if case .unknown(let root) = document.kind, ["rss", "feed", "rdf", "rdf:rdf"].contains(root.lowercased()),
      let url
    {
      document = readFeed(bytes, url: url, maxEntries: maxEntries)
    } else if case .unknown(let root) = document.kind {
      document.kind = .unknown("the root element is <\(root)>, not <urlset> or <sitemapindex>")
    }
    return document
  }

  // MARK: Text sitemaps

  /// One URL per line; blank lines are skipped, other lines reported.
  private static func readText(_ bytes: [UInt8], from start: Int, maxEntries: Int) -> SitemapDocument {
    var document = SitemapDocument(kind: .text)
    var notURLs = 0
    var tooLong = 0
    var i = start
    bytes.withUnsafeBufferPointer { b in
      while i < b.count {
        var end = i
        while end < b.count && b[end] != 0x0A && b[end] != 0x0D { end += 1 }
        var lo = i
        var hi = end
        while lo < hi && isSpace(b[lo]) { lo += 1 }
        while hi > lo && isSpace(b[hi - 1]) { hi -= 1 }
        i = end + 1
        guard hi > lo else { continue }
        if hi - lo > maxURLLength {
          tooLong += 1
          continue
        }
        let line = String(decoding: UnsafeBufferPointer(rebasing: b[lo..<hi]), as: UTF8.self)
        let lower = line.prefix(8).lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
          notURLs += 1
          continue
        }
        if document.entries.count == maxEntries {
          document.cutAtEntryLimit = true
          return
        }
        document.entries.append(SitemapEntry(loc: line))
      }
    }
    if document.entries.isEmpty && notURLs > 0 {
      document.kind = .unknown("neither XML nor a list of URLs")
      return document
    }
    if notURLs > 0 { document.problems.append("\(notURLs) line\(notURLs == 1 ? " is" : "s are") not an http(s) URL") }
    if tooLong > 0 { document.problems.append("\(tooLong) line\(tooLong == 1 ? " is" : "s are") over \(maxURLLength) characters") }
    return document
  }

  // MARK: Feeds

  private static func readFeed(_ bytes: [UInt8], url: WebURL, maxEntries: Int) -> SitemapDocument {
    let feed: Feed
    do {
      feed = try Feed.parse(bytes, url: url)
    } catch {
      return SitemapDocument(kind: .unknown("\(error)"))
    }
    var document = SitemapDocument(kind: .feed)
    for entry in feed.entries {
      guard let link = entry.link, !link.isEmpty else { continue }
      if document.entries.count == maxEntries {
        document.cutAtEntryLimit = true
        break
      }
      let date = (entry.updated ?? entry.published).flatMap(FeedDate.parse)
      document.entries.append(
        SitemapEntry(loc: link, lastModified: date.map { Date(timeIntervalSince1970: TimeInterval($0)) }))
    }
    document.problems = Array(feed.problems.prefix(maxProblems))
    return document
  }

  static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

  // MARK: XML

  /// The single pass over an XML sitemap, over the feed reader's tokens
  /// (``XMLReader/next()``): the tokenizer and its reference decoding are
  /// the feeds', only what is kept differs. Text outside `<loc>` and
  /// `<lastmod>` is skipped unread.
  struct Scanner {
    let maxEntries: Int
    var document = SitemapDocument(kind: .unknown(""))
    /// Open elements' local names, lowercased (the root first); no more
    /// than `maxOpen` (a sitemap nests four deep; a deeper document is
    /// broken, and its end tags are not worth matching).
    var open: [String] = []
    static let maxOpen = 32
    /// The index in `open` of the `<url>`/`<sitemap>` being read, if any.
    var entryLevel: Int?
    var loc: String?
    var lastmod: String?
    /// What the text being gathered will be: "loc", "lastmod", or nil (ignored).
    var capturing: String?
    var text: [UInt8] = []
    var withoutLoc = 0
    var tooLong = 0
    var badMarkup = 0

    init(maxEntries: Int) {
      self.maxEntries = maxEntries
    }

    mutating func scan(_ reader: inout XMLReader) -> SitemapDocument {
      var rootSeen = false
      scanning: while let token = reader.next() {
        switch token {
        case .text:
          // Kept only inside <loc> or <lastmod>, and a loc far over the limit is not worth gathering.
          if capturing != nil && text.count <= SitemapParser.maxURLLength * 2 { reader.readText(into: &text) }
        case .cdata(let range):
          if capturing != nil { text.append(contentsOf: reader.bytes(in: range)) }
        case .bareLessThan:
          // A bare < in text: kept as text.
          badMarkup += 1
          if capturing != nil { text.append(UInt8(ascii: "<")) }
        case .end(let name):
          endCapture()
          close(Scanner.localName(name))
        case .start(let name, _, let selfClosing):
          endCapture()
          let local = Scanner.localName(name)
          if !rootSeen {
            rootSeen = true
            switch local {
            case "urlset": document.kind = .urlset
            case "sitemapindex": document.kind = .index
            default:
              document.kind = .unknown(local)
              break scanning
            }
            open.append(local)
            continue
          }
          if !start(local, selfClosing: selfClosing) { break scanning }
        }
      }
      if reader.isAtEnd {
        // The end of the input: an entry whose <loc> was read is kept.
        capturing = nil
        finishEntry()
        if let root = open.first { problem("the document ends before </\(root)> (truncated)") }
      }
      if withoutLoc > 0 { problem("\(withoutLoc) entr\(withoutLoc == 1 ? "y has" : "ies have") no <loc>") }
      if tooLong > 0 { problem("\(tooLong) URL\(tooLong == 1 ? " is" : "s are") over \(SitemapParser.maxURLLength) characters") }
      if badMarkup > 0 { problem("\(badMarkup) stray < in text") }
      return document
    }

    mutating func problem(_ p: String) {
      if document.problems.count < SitemapParser.maxProblems { document.problems.append(p) }
    }

    /// A start tag: returns false when the entry limit stops the scan.
    mutating func start(_ name: String, selfClosing: Bool) -> Bool {
      let entryTag = document.kind == .index ? "sitemap" : "url"
      if name == entryTag {
        // An unclosed entry is closed by the next one.
        if let level = entryLevel {
          open.removeSubrange(level...)
          finishEntry()
        }
        if document.entries.count >= maxEntries {
          document.cutAtEntryLimit = true
          return false
        }
        if !selfClosing && open.count < Scanner.maxOpen {
          entryLevel = open.count
          open.append(name)
        }
        return true
      }
      if let level = entryLevel, open.count == level + 1, name == "loc" || name == "lastmod" {
        if !selfClosing {
          capturing = name
          text.removeAll(keepingCapacity: true)
        }
      }
      if !selfClosing && open.count < Scanner.maxOpen { open.append(name) }
      return true
    }

    /// An end tag: closes the innermost open element of that name (and what
    /// is open inside it); one that closes nothing is ignored.
    mutating func close(_ name: String) {
      guard let k = open.lastIndex(of: name) else { return }
      if let level = entryLevel, k <= level {
        open.removeSubrange(k...)
        finishEntry()
      } else {
        open.removeSubrange(k...)
      }
    }

    /// Ends the text being gathered: it becomes the entry's loc or lastmod.
    mutating func endCapture() {
      guard let what = capturing else { return }
      capturing = nil
      var lo = 0
      var hi = text.count
      while lo < hi && SitemapParser.isSpace(text[lo]) { lo += 1 }
      while hi > lo && SitemapParser.isSpace(text[hi - 1]) { hi -= 1 }
      let value = String(decoding: text[lo..<hi], as: UTF8.self)
      if what == "loc" {
        if loc == nil { loc = value }
      } else if lastmod == nil {
        lastmod = value
      }
    }

    mutating func finishEntry() {
      defer {
        entryLevel = nil
        loc = nil
        lastmod = nil
      }
      guard entryLevel != nil else { return }
      guard let loc, !loc.isEmpty else {
        withoutLoc += 1
        return
      }
      if loc.utf8.count > SitemapParser.maxURLLength {
        tooLong += 1
        return
      }
      document.entries.append(SitemapEntry(loc: loc, lastModified: lastmod.flatMap(SitemapDate.parse)))
    }

    /// A tag's local name, lowercased (`image:LOC` → `loc`): the root and
    /// its children are matched without regard to prefix or case.
    static func localName(_ name: String) -> String {
      var name = name
      // Most names have neither a prefix nor upper case: returned as they are, uncopied.
      let changed: String? = name.withUTF8 { p in
        var start = 0
        for k in 0..<p.count where p[k] == UInt8(ascii: ":") { start = k + 1 }
        let local = UnsafeBufferPointer(rebasing: p[start...])
        guard start > 0 || local.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return nil }
        return String(unsafeUninitializedCapacity: local.count) { out in
          for k in 0..<local.count { out[k] = local[k] >= 0x41 && local[k] <= 0x5A ? local[k] | 0x20 : local[k] }
          return local.count
        }
      }
      return changed ?? name
    }
  }
}

/// `<lastmod>` values: W3C Datetime (a profile of ISO 8601) and the broken
/// forms feeds also carry (read by `FeedDate`).
///
/// A value without a time names a whole day (or month, or year), and is read
/// as the end of it in UTC: a page changed "on 2024-05-01" may have changed
/// after a fetch that morning, so it is not taken as older than that fetch.
///
/// - SeeAlso: <https://www.w3.org/TR/NOTE-datetime>
enum SitemapDate {
  /// The latest instant `text` may name, or nil when it is not a date.
  static func parse(_ text: String) -> Date? {
    let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard let seconds = FeedDate.parse(t) else { return nil }
    let dateOnly = !t.contains(where: { $0 == "T" || $0 == "t" || $0 == " " || $0 == ":" })
    var end = seconds
    if dateOnly {
      let parts = t.split(separator: "-")
      switch parts.count {
      case 1:
        if let year = Int(parts[0]), let next = FeedDate.parse(String(format: "%04d", year + 1)) { end = next }
      case 2:
        if let year = Int(parts[0]), let month = Int(parts[1]) {
          let (y, m) = month == 12 ? (year + 1, 1) : (year, month + 1)
          if let next = FeedDate.parse(String(format: "%04d-%02d", y, m)) { end = next }
        }
      default:
        end = seconds + 86_400
      }
    }
    return Date(timeIntervalSince1970: TimeInterval(end))
  }
}
