import ForageSupport

/// The canonical form of a URL for crawl deduplication, and its stable
/// 64-bit fingerprint.
///
///     let c = URLCanonicalizer.default
///     c.canonical(WebURL("http://EXAMPLE.com:80/a/../b?utm_source=x&id=1#top")!).href
///     // "http://example.com/b?id=1"
///
/// The canonical form is the parsed URL (so scheme and host are lower-cased,
/// the default port and dot segments are gone) with:
/// - the fragment dropped;
/// - percent-encoding normalised in the username, password, path and query:
///   `%XX` of an unreserved character (ASCII letters, digits, `-._~`) is
///   decoded, the hex digits of every other `%XX` are upper-cased;
/// - query parameters removed when their name (the part before `=`, after the
///   normalisation above) matches one of the patterns, ASCII case-insensitively;
///   a pattern is a glob where `*` matches any run of characters and `?` one;
/// - empty parameters (`a=1&&b=2`) removed, and parameters optionally sorted by
///   name (a stable sort on the bytes, so repeated names keep their order);
/// - a query left empty removed (`/p?` becomes `/p`).
public struct URLCanonicalizer: Sendable, Hashable {
  /// Removes `utm_*` parameters and does not sort.
  public static let `default` = URLCanonicalizer()

  /// The glob patterns of query parameter names to remove.
  public let removedQueryParameters: [String]
  /// Whether query parameters are sorted by name.
  public let sortsQueryParameters: Bool
  private let patterns: [[UInt8]]

  /// Creates a canonicalizer.
  ///
  ///     URLCanonicalizer(removingQueryParameters: ["utm_*", "fbclid", "gclid"],
  ///                      sortingQueryParameters: true)
  ///
  /// - Parameters:
  ///   - patterns: globs (`*` any run, `?` one character) matched against
  ///     parameter names, ASCII case-insensitively.
  ///   - sortingQueryParameters: sort the remaining parameters by name.
  public init(removingQueryParameters patterns: [String] = ["utm_*"],
              sortingQueryParameters: Bool = false) {
    self.removedQueryParameters = patterns
    self.sortsQueryParameters = sortingQueryParameters
    self.patterns = patterns.map { Array($0.utf8).map(asciiLower) }
  }

  /// The canonical form of `url`.
  ///
  /// - Complexity: O(n) in the length of the URL, plus the sort when enabled.
  public func canonical(_ url: WebURL) -> WebURL {
    if isCanonicalButFragment(url) { return url.removingFragment }
    return canonicalFully(url)
  }

  /// `canonical` without its shortcut (tests compare the two).
  func canonicalFully(_ url: WebURL) -> WebURL {
    var record = URLRecord(url)
    record.fragment = nil
    record.username = Self.normalizePercentEncoding(record.username)
    record.password = Self.normalizePercentEncoding(record.password)
    record.path = Self.normalizePercentEncoding(record.path)
    if let query = record.query {
      let q = canonicalQuery(Self.normalizePercentEncoding(query))
      record.query = q.isEmpty ? nil : q
    }
    // serialize() fails only past 2 GB; canonicalizing never lengthens a URL.
    let canonical = (try? record.serialize()) ?? url.removingFragment
    // Decoding can spell a Windows drive letter the parser rewrites ("%43|"
    // becomes "C|", parsed as "C:"): a file URL is parsed again, so that the
    // canonical form is a URL's own serialization.
    if record.isFile, let parsed = try? URLParser.parseFully(canonical.href, base: nil) { return parsed }
    return canonical
  }

  /// A fingerprint of the canonical form: equal for URLs with the same
  /// canonical form, and (with overwhelming likelihood) different otherwise.
  ///
  /// Stable across processes, platforms and releases, so it can be stored:
  /// 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3) over
  /// the UTF-8 bytes of the canonical `href`, then the MurmurHash3 64-bit
  /// finalizer (`h ^= h >> 33; h &*= 0xff51afd7ed558ccd; h ^= h >> 33;
  /// h &*= 0xc4ceb9fe1a85ec53; h ^= h >> 33`) so that every bit depends on every
  /// input byte. Store it in SQLite as `Int64(bitPattern:)`.
  public func fingerprint(_ url: WebURL) -> UInt64 {
    if isCanonicalButFragment(url) {
      // Hash the href up to the "#" without building the canonical value.
      let end = url.layout.fragmentStart >= 0 ? Int(url.layout.fragmentStart) - 1 : Int.max
      return Self.fingerprint(ofHref: url.href, end: end)
    }
    return Self.fingerprint(ofHref: canonical(url).href)
  }

  /// The fingerprint function over an already canonical href (its first
  /// `end` bytes).
  static func fingerprint(ofHref href: String, end: Int = .max) -> UInt64 {
    var fnv = StableHash()
    // Over contiguous bytes: this runs for every link of every page.
    var copy = href
    copy.withUTF8 { fnv.combine(UnsafeBufferPointer(rebasing: $0.prefix(end))) }
    var h = fnv.value
    h ^= h >> 33
    h &*= 0xff51_afd7_ed55_8ccd
    h ^= h >> 33
    h &*= 0xc4ce_b9fe_1a85_ec53
    h ^= h >> 33
    return h
  }

  /// True when canonicalizing only drops the fragment: no "%" before the
  /// fragment, and a query (if any) with no empty or removed parameter, in
  /// order when sorting.
  private func isCanonicalButFragment(_ url: WebURL) -> Bool {
    let l = url.layout
    let end = Int(l.queryStart >= 0 ? l.queryEnd : l.pathEnd)
    let result: Bool? = url.href.utf8.withContiguousStorageIfAvailable { b in
      for i in Int(l.usernameStart)..<end where b[i] == 0x25 { return false }
      guard l.queryStart >= 0 else { return true }
      let qs = Int(l.queryStart)
      if qs == end { return false }  // empty query: dropped
      var start = qs
      var previousName: UnsafeBufferPointer<UInt8>.SubSequence?
      while start <= end {
        var stop = start
        while stop < end, b[stop] != 0x26 { stop += 1 }
        if stop == start { return false }  // empty parameter
        var nameEnd = start
        while nameEnd < stop, b[nameEnd] != 0x3D { nameEnd += 1 }
        let name = b[start..<nameEnd]
        if patterns.contains(where: { globMatch($0, name) }) { return false }
        if sortsQueryParameters {
          if let previousName, name.lexicographicallyPrecedes(previousName) { return false }
          previousName = name
        }
        start = stop + 1
      }
      return true
    }
    return result ?? false
  }

  /// Decodes `%XX` of unreserved characters; upper-cases other `%xx`.
  ///
  /// A hex digit is not decoded right after a `%` that starts no escape
  /// (`%%35%30`), nor after such a `%` and one hex digit: it would make a new
  /// escape (`%50`) out of text that was not one, which changes the URL's
  /// meaning and makes canonicalizing twice differ from once.
  static func normalizePercentEncoding(_ s: [UInt8]) -> [UInt8] {
    guard s.contains(0x25) else { return s }
    var out = [UInt8]()
    out.reserveCapacity(s.count)
    var i = 0
    var lastLoneSign = -3  // where in `out` the last "%" that starts no escape is
    while i < s.count {
      if s[i] == 0x25, i + 2 < s.count, let h = hexValue(s[i + 1]), let l = hexValue(s[i + 2]) {
        let v = h << 4 | l
        let unreserved = isASCIIAlpha(v) || isASCIIDigit(v) || v == 0x2D || v == 0x2E || v == 0x5F || v == 0x7E
        let makesEscape = hexValue(v) != nil
          && (lastLoneSign == out.count - 1 || (lastLoneSign == out.count - 2 && hexValue(out[out.count - 1]) != nil))
        if unreserved && !makesEscape {
          out.append(v)
        } else {
          out += [0x25, hexUpper[Int(h)], hexUpper[Int(l)]]
        }
        i += 3
      } else {
        if s[i] == 0x25 { lastLoneSign = out.count }
        out.append(s[i])
        i += 1
      }
    }
    return out
  }

  private func canonicalQuery(_ query: [UInt8]) -> [UInt8] {
    if patterns.isEmpty && !sortsQueryParameters && !query.isEmpty
      && !query.contains(0x26) { return query }
    var params = query.split(separator: 0x26, omittingEmptySubsequences: true)
    if !patterns.isEmpty {
      params.removeAll { param in
        let name = param.prefix { $0 != 0x3D }
        return patterns.contains { globMatch($0, name) }
      }
    }
    if sortsQueryParameters {
      // Array's sort is not stable: sort indices to keep equal names in order.
      let names = params.map { $0.prefix { $0 != 0x3D } }
      let order = params.indices.sorted { a, b in
        names[a].lexicographicallyPrecedes(names[b]) || (names[a].elementsEqual(names[b]) && a < b)
      }
      params = order.map { params[$0] }
    }
    var out = [UInt8]()
    out.reserveCapacity(query.count)
    for (i, param) in params.enumerated() {
      if i > 0 { out.append(0x26) }
      out += param
    }
    return out
  }
}

/// Glob match with `*` and `?`; `pattern` is lower-case, `name` is compared
/// ASCII case-insensitively.
func globMatch<P: RandomAccessCollection<UInt8>, N: RandomAccessCollection<UInt8>>(
  _ pattern: P, _ name: N
) -> Bool where P.Index == Int, N.Index == Int {
  var p = pattern.startIndex, n = name.startIndex
  var starP = -1, starN = -1
  while n < name.endIndex {
    if p < pattern.endIndex, pattern[p] == 0x2A {
      starP = p
      starN = n
      p += 1
    } else if p < pattern.endIndex, pattern[p] == 0x3F || pattern[p] == asciiLower(name[n]) {
      p += 1
      n += 1
    } else if starP >= 0 {
      p = starP + 1
      starN += 1
      n = starN
    } else {
      return false
    }
  }
  while p < pattern.endIndex, pattern[p] == 0x2A { p += 1 }
  return p == pattern.endIndex
}
