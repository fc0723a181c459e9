import Foundation
import ForageSupport
import ForageURL

/// A link found on a page, resolved and ready for the frontier.
struct CrawlLink: Sendable {
  /// The absolute URL, without its fragment (what a page's stored links hold).
  let url: WebURL
  /// The canonical form's serialization: what the frontier fetches.
  let canonicalHref: String
  /// The canonical form's fingerprint: what identifies the page.
  let fingerprint: UInt64
  /// Whether the source's scope admits it, depth aside (`sameHost`,
  /// `allowedDomains`, `include`, `exclude`).
  let allowed: Bool

  /// Resolves what `source` needs to know about `url` (fragmentless, http or https).
  init(_ url: WebURL, source: CompiledSource) {
    self.url = url
    let canonical = source.canonicalizer.canonical(url)
    canonicalHref = canonical.href
    fingerprint = source.canonicalizer.fingerprint(canonical)
    allowed = source.admits(url)
  }

  /// The part of a trimmed `href` before its first "#", when it has one
  /// and every href with that part resolves to the same URL once its
  /// fragment is removed (the URL parser ends the path or query at the
  /// first "#", whatever comes after). Nil without a "#" (nothing to share:
  /// such hrefs go to the crawl's own memo), and when the part ends in a
  /// space or control character, which the parser would trim from the part
  /// alone but encode in the whole (`"a #x"` is `a%20`, `"a "` is `a`).
  ///
  /// - SeeAlso: <https://url.spec.whatwg.org/#concept-basic-url-parser>
  static func fragmentlessKey(_ href: String) -> Substring? {
    let found: Int? = href.utf8.withContiguousStorageIfAvailable { b in
      for i in b.indices where b[i] == UInt8(ascii: "#") {
        return i > 0 && b[i - 1] <= 0x20 ? nil : i
      }
      return nil
    } ?? nil
    guard let offset = found else { return nil }
    return Substring(href.utf8.prefix(offset))
  }

  /// True when `href` starts with a scheme other than http or https
  /// (`mailto:`, `javascript:`, `tel:`): it resolves to that scheme, so it
  /// is no link to follow and need not be parsed. False when in doubt (no
  /// scheme, or bytes the URL parser would strip first, such as a tab).
  ///
  /// - SeeAlso: <https://url.spec.whatwg.org/#scheme-start-state>
  static func namesOtherScheme(_ href: String) -> Bool {
    var u = href.utf8[...]
    while let c = u.first, c <= 0x20, c != 0x09, c != 0x0A, c != 0x0D { u = u.dropFirst() }
    guard let first = u.first, (first | 0x20) >= 0x61, (first | 0x20) <= 0x7A else { return false }
    var length = 0
    for c in u {
      if c == UInt8(ascii: ":") { break }
      let lower = c | 0x20
      let alpha = lower >= 0x61 && lower <= 0x7A
      guard alpha || (c >= 0x30 && c <= 0x39) || c == 0x2B || c == 0x2D || c == 0x2E else { return false }
      length += 1
    }
    guard length < u.count else { return false }  // no ":"
    let scheme = u.prefix(length)
    func isScheme(_ name: StaticString) -> Bool {
      length == name.utf8CodeUnitCount
        && zip(scheme, UnsafeBufferPointer(start: name.utf8Start, count: length)).allSatisfy { $0 | 0x20 == $1 }
    }
    return !isScheme("http") && !isScheme("https")
  }
}

/// The links a crawl already resolved, shared by the tasks of one source.
///
/// Most links of a site repeat on every page (navigation, footer,
/// breadcrumbs); resolving, canonicalizing and fingerprinting each of them
/// again per page costs more than parsing the rest of a small page. Only
/// hrefs whose resolution depends on the base URL's origin alone are kept:
/// absolute `http://` and `https://` URLs and root-relative paths (`/a/b`),
/// keyed by that origin and the raw attribute value. A relative path
/// (`../b.html`) depends on the page's path and is always resolved.
final class LinkMemo: Sendable {
  struct Key: Hashable {
    /// The base URL's origin as numbered by ``originID(_:)``; 0 for
    /// absolute hrefs, which need no origin.
    var origin: Int
    /// Compared as bytes: two spellings of "é" are two URLs.
    var href: UTF8Key
  }

  /// The remembered links, and the numbers given to origins.
  private struct Memo {
    var entries: [Key: CrawlLink?] = [:]
    var origins: [String: Int] = [:]
  }

  private let memo = Locked(Memo())
  /// Past this many entries new links are no longer remembered: the links
  /// worth remembering (navigation, footer) come first, and a crawl of
  /// millions of distinct links must not grow without bound.
  let capacity: Int

  init(capacity: Int = 10_000) {
    self.capacity = capacity
  }

  /// A number for `origin` (`https://example.com:8443`), the same each time,
  /// never 0; nil once 1,000 origins are numbered (pages that point
  /// `<base href>` everywhere are resolved without the memo).
  func originID(_ origin: String) -> Int? {
    memo.withLock { m in
      if let id = m.origins[origin] { return id }
      guard m.origins.count < 1_000 else { return nil }
      let id = m.origins.count + 1
      m.origins[origin] = id
      return id
    }
  }

  /// The memo key for `href` on a page whose base URL's origin is numbered
  /// `origin`, or nil when the resolution depends on more than the origin.
  static func key(_ href: String, origin: Int) -> Key? {
    let u = href.utf8
    guard let first = u.first else { return nil }
    if first == UInt8(ascii: "/") {
      // "//host/x" names another authority and "/\x" is read as "//" in
      // special schemes: only a single slash is origin-relative.
      let second = u.dropFirst().first
      guard second != UInt8(ascii: "/"), second != UInt8(ascii: "\\") else { return nil }
      return Key(origin: origin, href: UTF8Key(href))
    }
    if first == UInt8(ascii: "h"), u.starts(with: "https://".utf8) || u.starts(with: "http://".utf8) {
      return Key(origin: 0, href: UTF8Key(href))
    }
    return nil
  }

  /// The remembered link for `key`: `.some(nil)` when the href is known to
  /// yield no followable link, nil when it was never seen.
  func lookup(_ key: Key) -> CrawlLink?? {
    lookup([key])[0]
  }

  /// Remembers what `key` resolved to (nil: nothing to follow).
  func remember(_ link: CrawlLink?, for key: Key) {
    let one: [Key: CrawlLink?] = [key: link]
    remember(one)
  }

  /// The remembered links for `keys` (see ``lookup(_:)``; nil for a nil
  /// key), under one lock.
  func lookup(_ keys: [Key?]) -> [CrawlLink??] {
    memo.withLock { m in keys.map { $0.flatMap { m.entries[$0] } } }
  }

  /// Remembers what each key resolved to, under one lock, while there is room.
  func remember(_ links: [Key: CrawlLink?]) {
    memo.withLock { m in
      for (key, link) in links where m.entries.count < capacity { m.entries[key] = .some(link) }
    }
  }
}
