import ForageURL

/// A parsed robots.txt file (RFC 9309): its groups and `Sitemap` lines.
///
///     let file = RobotsTxt(Array("User-agent: *\nDisallow: /private/\n".utf8))
///     let rules = file.rules(for: "Forage")
///     rules.isAllowed(path: "/private/x")   // false
///
/// Parsing never fails: lines that are not rules are skipped, as the RFC asks. Only
/// the first 500 KiB are read (§2.5).
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9309>
public struct RobotsTxt: Sendable, Hashable {
  struct Group: Sendable, Hashable {
    var agents: [String] = []
    var rules: [RobotsRules.Rule] = []
    var crawlDelay: Duration?
  }

  var groups: [Group] = []
  /// The `Sitemap` URLs, in order (they are not tied to any group).
  public private(set) var sitemaps: [String] = []

  /// Parses robots.txt bytes (UTF-8; a BOM is skipped).
  public init(_ bytes: some Collection<UInt8>) {
    var data = Array(bytes.prefix(FetchDefaults.robotsMaxSize))
    // A UTF-8 byte order mark, even cut short, is skipped.
    for bom in [[0xEF, 0xBB, 0xBF], [0xEF, 0xBB], [0xEF]] as [[UInt8]] where data.starts(with: bom) {
      data.removeFirst(bom.count)
      break
    }
    var current: Group?
    var sawRule = false
    for line in Self.lines(data) {
      guard let (key, value) = Self.keyValue(line) else { continue }
      switch key {
      case .userAgent:
        // §2.2.1: user-agent lines after rules start a new group.
        if sawRule || current == nil {
          if let current { groups.append(current) }
          current = Group()
          sawRule = false
        }
        current?.agents.append(Self.agentToken(value))
      case .allow, .disallow:
        guard current != nil else { continue }  // rules before any group are ignored
        sawRule = true
        if !value.isEmpty {
          current?.rules.append(
            RobotsRules.Rule(pattern: RobotsRules.normalize(Array(value.utf8)), allow: key == .allow))
        }
      case .crawlDelay:
        guard current != nil else { continue }
        sawRule = true
        if let seconds = Double(String(decoding: value.utf8, as: UTF8.self)), seconds >= 0,
          seconds < 86_400
        {
          current?.crawlDelay = .milliseconds(Int64(seconds * 1000))
        }
      case .sitemap:
        if !value.isEmpty { sitemaps.append(value) }
      }
    }
    if let current { groups.append(current) }
  }

  /// The rules for a crawler whose product token is `productToken` (such as `Forage`):
  /// every group naming it (case-insensitively) merged, else every `*` group merged,
  /// else allow all (§2.2.1).
  public func rules(for productToken: String) -> RobotsRules {
    let token = productToken.lowercased()
    var matched = groups.filter { $0.agents.contains(token) }
    if matched.isEmpty { matched = groups.filter { $0.agents.contains("*") } }
    var rules = RobotsRules(rules: matched.flatMap(\.rules))
    rules.crawlDelay = matched.compactMap(\.crawlDelay).max()
    rules.sitemaps = sitemaps
    return rules
  }

  private enum Key { case userAgent, allow, disallow, sitemap, crawlDelay }

  /// Splits on CR, LF or CRLF and drops comments.
  private static func lines(_ data: [UInt8]) -> [ArraySlice<UInt8>] {
    var result: [ArraySlice<UInt8>] = []
    var start = 0
    var i = 0
    while i < data.count {
      let byte = data[i]
      if byte == 0x0A || byte == 0x0D {
        result.append(data[start..<i])
        if byte == 0x0D, i + 1 < data.count, data[i + 1] == 0x0A { i += 1 }
        start = i + 1
      }
      i += 1
    }
    if start < data.count { result.append(data[start...]) }
    return result.map { line in
      if let hash = line.firstIndex(of: UInt8(ascii: "#")) { return line[..<hash] }
      return line
    }
  }

  /// `key: value`, also accepting a missing colon and common misspellings of keys.
  private static func keyValue(_ line: ArraySlice<UInt8>) -> (Key, String)? {
    let text = String(decoding: line, as: UTF8.self).trimmingSpaces
    guard !text.isEmpty else { return nil }
    let rawKey: Substring
    let rawValue: Substring
    if let colon = text.firstIndex(of: ":") {
      rawKey = text[..<colon]
      rawValue = text[text.index(after: colon)...]
    } else if let space = text.firstIndex(where: { $0 == " " || $0 == "\t" }) {
      rawKey = text[..<space]
      rawValue = text[space...]
    } else {
      return nil
    }
    let value = String(rawValue).trimmingSpaces
    switch String(rawKey).trimmingSpaces.lowercased() {
    case "user-agent", "useragent", "user agent": return (.userAgent, value)
    case "allow": return (.allow, value)
    case "disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw":
      return (.disallow, value)
    case "sitemap", "site-map": return (.sitemap, value)
    case "crawl-delay", "crawldelay": return (.crawlDelay, value)
    default: return nil
    }
  }

  /// The product token of a user-agent line: `*`, or its leading letters, `-` and `_`,
  /// lowercased (`FooBot/1.2` → `foobot`).
  private static func agentToken(_ value: String) -> String {
    if value.hasPrefix("*") { return "*" }
    return String(value.prefix { $0.isASCII && ($0.isLetter || $0 == "-" || $0 == "_") })
      .lowercased()
  }
}

/// The robots.txt rules that apply to one crawler, ready to match paths.
///
///     let rules = RobotsTxt(bytes).rules(for: "Forage")
///     if rules.isAllowed(url) { … }
///
/// The longest matching rule wins; on a tie `Allow` wins; with no match the path is
/// allowed; `/robots.txt` is always allowed (RFC 9309 §2.2.2, §2.4).
public struct RobotsRules: Sendable, Hashable {
  struct Rule: Sendable, Hashable {
    /// Normalized: non-ASCII octets percent-encoded, hex digits uppercase.
    var pattern: [UInt8]
    var allow: Bool
  }

  var rules: [Rule]
  /// The `Crawl-delay` of the matched groups (not in RFC 9309, widely used); the
  /// fetcher treats it as a minimum per-host delay.
  public var crawlDelay: Duration?
  /// The file's `Sitemap` URLs.
  public var sitemaps: [String] = []
  /// Set when these rules disallow everything because robots.txt could not be
  /// had (5xx, 429, a network failure): what went wrong, for a person. RFC 9309
  /// §2.3.1.3 treats such a site as fully disallowed until it answers.
  public var unreachable: String?

  init(rules: [Rule]) { self.rules = rules }

  /// Allows everything (no robots.txt, or a 4xx answer for it).
  public static let allowAll = RobotsRules(rules: [])
  /// Allows nothing (robots.txt unreachable: 5xx or network failure).
  public static let disallowAll = RobotsRules(rules: [Rule(pattern: Array("/".utf8), allow: false)])

  /// True when the rules allow fetching `url`.
  public func isAllowed(_ url: WebURL) -> Bool {
    if url.path == "/robots.txt" { return true }
    return isAllowed(path: url.pathAndQuery)
  }

  /// True when the rules allow fetching `path` (path and query, as sent in the request
  /// line, such as `/a/b?c=d`). The path must already be percent-encoded (a
  /// ``WebURL``'s is); only the case of its escapes is normalized.
  public func isAllowed(path: String) -> Bool {
    let target = Self.normalize(Array(path.utf8), encodeNonASCII: false)
    var best: Rule?
    for rule in rules where Self.matches(rule.pattern, target) {
      if let current = best {
        if rule.pattern.count > current.pattern.count
          || (rule.pattern.count == current.pattern.count && rule.allow && !current.allow)
        {
          best = rule
        }
      } else {
        best = rule
      }
    }
    return best?.allow ?? true
  }

  /// Percent-encodes octets outside US-ASCII and uppercases the hex digits of existing
  /// escapes, so that patterns and paths compare octet by octet (§2.2.2).
  static func normalize(_ bytes: [UInt8], encodeNonASCII: Bool = true) -> [UInt8] {
    let hex = Array("0123456789ABCDEF".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var i = 0
    while i < bytes.count {
      let byte = bytes[i]
      if byte >= 0x80 && encodeNonASCII {
        out.append(UInt8(ascii: "%"))
        out.append(hex[Int(byte >> 4)])
        out.append(hex[Int(byte & 15)])
      } else if byte == UInt8(ascii: "%"), i + 2 < bytes.count, isHex(bytes[i + 1]),
        isHex(bytes[i + 2])
      {
        out.append(byte)
        out.append(upper(bytes[i + 1]))
        out.append(upper(bytes[i + 2]))
        i += 2
      } else {
        out.append(byte)
      }
      i += 1
    }
    return out
  }

  private static func isHex(_ b: UInt8) -> Bool {
    (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x66)
  }
  private static func upper(_ b: UInt8) -> UInt8 { b >= 0x61 && b <= 0x7A ? b - 0x20 : b }

  /// True when `pattern` matches a prefix of `path`: `*` matches any run of octets,
  /// a final `$` anchors the end.
  ///
  /// The pattern is cut at its `*`s into literal pieces: the first must start
  /// the path, each later one is found at its leftmost place after the one
  /// before (the leftmost place leaves the most room for the rest), and with
  /// `$` the last one must end the path. Each piece is found with
  /// Knuth–Morris–Pratt, so a match costs time linear in the pattern and the
  /// path, whatever a hostile robots.txt puts in its lines.
  static func matches(_ pattern: [UInt8], _ path: [UInt8]) -> Bool {
    var body = pattern[...]
    let anchored = body.last == UInt8(ascii: "$")
    if anchored { body = body.dropLast() }
    let pieces = body.split(separator: UInt8(ascii: "*"), omittingEmptySubsequences: false)
    // The first piece: at the start of the path.
    let first = pieces[0]
    guard path.starts(with: first) else { return false }
    var position = first.count
    if pieces.count == 1 { return !anchored || position == path.count }
    // The middle pieces: leftmost, in order.
    for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
      guard let end = find(piece, in: path, from: position) else { return false }
      position = end
    }
    let last = pieces[pieces.count - 1]
    if anchored {
      // The last piece ends the path, after everything before it.
      return path.count - last.count >= position && path[(path.count - last.count)...].elementsEqual(last)
    }
    return last.isEmpty || find(last, in: path, from: position) != nil
  }

  /// Where the first occurrence of `needle` at or after `start` ends, or nil.
  private static func find(_ needle: ArraySlice<UInt8>, in haystack: [UInt8], from start: Int) -> Int? {
    let n = Array(needle)
    guard !n.isEmpty else { return start }
    guard haystack.count - start >= n.count else { return nil }
    // Knuth–Morris–Pratt: the longest proper border of each prefix of `n`.
    var border = [Int](repeating: 0, count: n.count)
    var k = 0
    for i in 1..<n.count {
      while k > 0 && n[i] != n[k] { k = border[k - 1] }
      if n[i] == n[k] { k += 1 }
      border[i] = k
    }
    var matched = 0
    for i in start..<haystack.count {
      while matched > 0 && haystack[i] != n[matched] { matched = border[matched - 1] }
      if haystack[i] == n[matched] { matched += 1 }
      if matched == n.count { return i + 1 }
    }
    return nil
  }
}
