/// A URL parsed and serialized as the WHATWG URL Standard says (as browsers do).
///
///     let page = WebURL("https://Example.com:443/a/../b?q=1#top")!
///     page.href            // "https://example.com/b?q=1#top"
///     page.resolving("c")  // https://example.com/c
///
/// The value is stored compactly as its serialization (`href`, always ASCII)
/// plus the offsets of its components, so reading a component is a slice.
/// Two values are equal when their serializations are equal.
///
/// - SeeAlso: <https://url.spec.whatwg.org/#concept-basic-url-parser>
public struct WebURL: Sendable {
  /// The full serialization.
  ///
  /// - SeeAlso: <https://url.spec.whatwg.org/#concept-url-serializer>
  public let href: String
  /// Where each component sits in `href` (UTF-8 offsets; `href` is ASCII).
  let layout: URLLayout

  init(href: String, layout: URLLayout) {
    self.href = href
    self.layout = layout
  }

  /// Parses `string`, resolved against `base` when given; nil when it is not a URL.
  ///
  ///     WebURL("../c", base: WebURL("http://h/a/b/")!)?.href  // "http://h/a/c"
  public init?(_ string: String, base: WebURL? = nil) {
    guard let url = try? URLParser.parse(string, base: base) else { return nil }
    self = url
  }

  /// Parses `string`, resolved against `base` when given.
  ///
  ///     let url = try WebURL(parsing: "https://[::1]:8080/")
  ///
  /// - Throws: `URLParseError` saying why the string is not a URL and at which
  ///   UTF-8 offset the parser gave up.
  /// - SeeAlso: <https://url.spec.whatwg.org/#concept-basic-url-parser>
  public init(parsing string: String, base: WebURL? = nil) throws(URLParseError) {
    self = try URLParser.parse(string, base: base)
  }

  @inline(__always)
  func slice(_ start: Int32, _ end: Int32) -> String {
    if start >= end { return "" }
    let u = href.utf8
    let s = u.index(u.startIndex, offsetBy: Int(start))
    let e = u.index(s, offsetBy: Int(end - start))
    return String(Substring(href[s..<e]))
  }

  /// The scheme, lower-cased, without the colon ("https").
  public var scheme: String { slice(0, layout.schemeEnd) }

  /// True for `http:` and `https:` URLs, the ones a crawler fetches (such a
  /// URL always has a host). Reads the serialized scheme in place.
  public var isHTTP: Bool {
    let end = Int(layout.schemeEnd)
    guard end == 4 || end == 5 else { return false }
    return href.utf8.starts(with: "http".utf8) && (end == 4 || href.utf8.dropFirst(4).first == UInt8(ascii: "s"))
  }

  /// The username, percent-encoded; empty when absent.
  public var username: String { slice(layout.usernameStart, layout.usernameEnd) }

  /// The password, percent-encoded; empty when absent.
  public var password: String { slice(layout.passwordStart, layout.passwordEnd) }

  /// The serialized host ("example.com", "[::1]", "127.0.0.1"); nil when the
  /// URL has no host (as `mailto:` or `file` URLs resolved without one), "" for
  /// an empty host (`file:///x`).
  public var host: String? {
    layout.hasHost ? slice(layout.hostStart, layout.hostEnd) : nil
  }

  /// The port; nil when absent or equal to the scheme's default port.
  public var port: Int? { layout.port >= 0 ? Int(layout.port) : nil }

  /// The port, or the scheme's default port (http 80, https 443, ws 80,
  /// wss 443, ftp 21); nil when neither exists.
  public var effectivePort: Int? {
    if let port { return port }
    return SpecialScheme(scheme).flatMap { $0.defaultPort }
  }

  /// The serialized path ("/a/b"), or the opaque path of a URL such as
  /// `mailto:someone@example.com`.
  public var path: String { slice(layout.pathStart, layout.pathEnd) }

  /// Calls `body` with the path's UTF-8 bytes, read in place (no `String`
  /// is made for it).
  package func withPathUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    var href = href
    let start = Int(layout.pathStart), end = Int(layout.pathEnd)
    return href.withUTF8 { all in body(UnsafeBufferPointer(rebasing: all[start..<max(start, end)])) }
  }

  /// The query, without "?"; nil when absent ("" when present but empty).
  public var query: String? {
    layout.queryStart >= 0 ? slice(layout.queryStart, layout.queryEnd) : nil
  }

  /// The fragment, without "#"; nil when absent.
  public var fragment: String? {
    layout.fragmentStart >= 0
      ? slice(layout.fragmentStart, Int32(href.utf8.count)) : nil
  }

  /// True for the special schemes: ftp, file, http, https, ws, wss.
  ///
  /// - SeeAlso: <https://url.spec.whatwg.org/#special-scheme>
  public var isSpecial: Bool { layout.isSpecial }

  /// True when the path is opaque (the URL cannot be a base for relative
  /// paths), as in `mailto:a@b` or `javascript:void(0)`.
  public var hasOpaquePath: Bool { layout.hasOpaquePath }

  /// The ASCII serialization of the URL's origin ("https://example.com:8443"),
  /// "null" for an opaque origin (file, data, javascript, ...).
  ///
  /// - SeeAlso: <https://url.spec.whatwg.org/#concept-url-origin>
  public var origin: String {
    // An http(s) URL without credentials starts with its origin: a default
    // port is never serialized (one slice instead of three strings joined).
    if isHTTP && layout.usernameStart == layout.usernameEnd && layout.passwordStart == layout.passwordEnd {
      return slice(0, layout.pathStart)
    }
    switch scheme {
    case "http", "https", "ws", "wss", "ftp":
      var out = scheme + "://" + (host ?? "")
      if let port { out += ":" + String(port) }
      return out
    case "blob":
      guard let inner = WebURL(path), inner.isHTTP
      else { return "null" }
      return inner.origin
    default:
      return "null"
    }
  }

  /// The HTTP request-target: path plus "?" and query when present ("/a?b=1").
  public var pathAndQuery: String {
    let end = layout.queryStart >= 0 ? layout.queryEnd : layout.pathEnd
    return slice(layout.pathStart, end)
  }

  /// Resolves a reference (as an `href` attribute) against this URL;
  /// the same as `WebURL(reference, base: self)`.
  ///
  ///     WebURL("https://h/a/b")!.resolving("?x")?.href  // "https://h/a/b?x"
  public func resolving(_ reference: String) -> WebURL? {
    WebURL(reference, base: self)
  }

  /// This URL without its fragment.
  public var removingFragment: WebURL {
    guard layout.fragmentStart >= 0 else { return self }
    var l = layout
    l.fragmentStart = -1
    let cut = Int(layout.fragmentStart) - 1   // the "#"
    let u = href.utf8
    let s = String(Substring(href[u.startIndex..<u.index(u.startIndex, offsetBy: cut)]))
    return WebURL(href: s, layout: l)
  }
}

extension WebURL: Hashable {
  public static func == (a: WebURL, b: WebURL) -> Bool { a.href == b.href }
  public func hash(into hasher: inout Hasher) { hasher.combine(href) }
}

extension WebURL: CustomStringConvertible {
  /// The `href`.
  public var description: String { href }
}

extension WebURL: Codable {
  /// Decodes a URL from its string form.
  ///
  /// - Throws: `DecodingError.dataCorrupted` when the string is not a URL.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    let string = try container.decode(String.self)
    do {
      self = try URLParser.parse(string, base: nil)
    } catch {
      throw DecodingError.dataCorruptedError(
        in: container, debugDescription: "not a URL: \(error)")
    }
  }

  /// Encodes the URL as its `href` string.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(href)
  }
}

/// Offsets of the components inside `href` (UTF-8, `href` is ASCII).
/// Absent components have start -1 (query, fragment) or a flag (host).
struct URLLayout: Sendable, Equatable {
  var schemeEnd: Int32 = 0
  var usernameStart: Int32 = 0
  var usernameEnd: Int32 = 0
  var passwordStart: Int32 = 0
  var passwordEnd: Int32 = 0
  var hostStart: Int32 = 0
  var hostEnd: Int32 = 0
  var port: Int32 = -1
  var pathStart: Int32 = 0
  var pathEnd: Int32 = 0
  var queryStart: Int32 = -1
  var queryEnd: Int32 = -1
  var fragmentStart: Int32 = -1
  var hasHost = false
  var isSpecial = false
  var hasOpaquePath = false
}
