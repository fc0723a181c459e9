/// The URL record the parser builds: components as ASCII bytes.
///
/// - SeeAlso: <https://url.spec.whatwg.org/#concept-url>
struct URLRecord {
  var scheme: [UInt8] = []
  var special: SpecialScheme?
  var username: [UInt8] = []
  var password: [UInt8] = []
  /// The serialized host; nil when the URL has no host.
  var host: [UInt8]?
  var port: Int?
  /// The serialized path: "/" before each segment, or the opaque path.
  var path: [UInt8] = []
  var hasOpaquePath = false
  var query: [UInt8]?
  var fragment: [UInt8]?

  /// The record of a parsed URL, to resolve against it.
  init(_ url: WebURL) {
    let b = Array(url.href.utf8)
    let l = url.layout
    func cut(_ s: Int32, _ e: Int32) -> [UInt8] { s < e ? Array(b[Int(s)..<Int(e)]) : [] }
    scheme = cut(0, l.schemeEnd)
    special = SpecialScheme(bytes: scheme)
    username = cut(l.usernameStart, l.usernameEnd)
    password = cut(l.passwordStart, l.passwordEnd)
    host = l.hasHost ? cut(l.hostStart, l.hostEnd) : nil
    port = l.port >= 0 ? Int(l.port) : nil
    path = cut(l.pathStart, l.pathEnd)
    hasOpaquePath = l.hasOpaquePath
    query = l.queryStart >= 0 ? cut(l.queryStart, l.queryEnd) : nil
    fragment = l.fragmentStart >= 0 ? cut(l.fragmentStart, Int32(b.count)) : nil
  }

  init() {}

  var isFile: Bool { special == .file }

  /// https://url.spec.whatwg.org/#shorten-a-urls-path
  mutating func shortenPath() {
    if isFile, path.count == 3, path[0] == 0x2F, isNormalizedWindowsDriveLetter(path[1...]) {
      return
    }
    guard let slash = path.lastIndex(of: 0x2F) else { return }
    path.removeSubrange(slash...)
  }

  /// Whether the first path segment is a normalized Windows drive letter.
  var firstSegmentIsNormalizedDriveLetter: Bool {
    path.count >= 3 && path[0] == 0x2F && isNormalizedWindowsDriveLetter(path[1..<3])
      && (path.count == 3 || path[3] == 0x2F)
  }

  /// https://url.spec.whatwg.org/#concept-url-serializer, with the offsets.
  func serialize() throws(URLParseError) -> WebURL {
    var out = [UInt8]()
    out.reserveCapacity(
      scheme.count + (host?.count ?? 0) + path.count + (query?.count ?? 0)
        + (fragment?.count ?? 0) + username.count + password.count + 16)
    var l = URLLayout()
    out += scheme
    l.schemeEnd = Int32(out.count)
    out.append(0x3A)
    l.isSpecial = special != nil
    l.hasOpaquePath = hasOpaquePath
    if let host {
      out += [0x2F, 0x2F]
      l.usernameStart = Int32(out.count)
      out += username
      l.usernameEnd = Int32(out.count)
      l.passwordStart = l.usernameEnd
      if !password.isEmpty {
        out.append(0x3A)
        l.passwordStart = Int32(out.count)
        out += password
      }
      l.passwordEnd = Int32(out.count)
      if !username.isEmpty || !password.isEmpty { out.append(0x40) }
      l.hasHost = true
      l.hostStart = Int32(out.count)
      out += host
      l.hostEnd = Int32(out.count)
      if let port {
        out.append(0x3A)
        appendDecimal(port, to: &out)
        l.port = Int32(port)
      }
    } else {
      let at = Int32(out.count)
      (l.usernameStart, l.usernameEnd, l.passwordStart, l.passwordEnd) = (at, at, at, at)
      (l.hostStart, l.hostEnd) = (at, at)
      if !hasOpaquePath, path.count > 1, path[0] == 0x2F, path[1] == 0x2F {
        out += [0x2F, 0x2E]  // "/." keeps "//x" from reading as a host
      }
    }
    l.pathStart = Int32(out.count)
    out += path
    l.pathEnd = Int32(out.count)
    if let query {
      out.append(0x3F)
      l.queryStart = Int32(out.count)
      out += query
      l.queryEnd = Int32(out.count)
    }
    if let fragment {
      out.append(0x23)
      l.fragmentStart = Int32(out.count)
      out += fragment
    }
    guard out.count < Int32.max else { throw URLParseError(.tooLong) }
    return WebURL(href: String(decoding: out, as: UTF8.self), layout: l)
  }
}

@inline(__always) func isASCIIAlpha(_ b: UInt8) -> Bool { (b | 0x20) &- 0x61 < 26 }
@inline(__always) func isASCIIDigit(_ b: UInt8) -> Bool { b &- 0x30 < 10 }
@inline(__always) func asciiLower(_ b: UInt8) -> UInt8 { b &- 0x41 < 26 ? b | 0x20 : b }

func appendDecimal(_ n: Int, to out: inout [UInt8]) {
  if n >= 10 { appendDecimal(n / 10, to: &out) }
  out.append(UInt8(0x30 + n % 10))
}

/// https://url.spec.whatwg.org/#windows-drive-letter
func isWindowsDriveLetter<C: Collection<UInt8>>(_ s: C) -> Bool {
  guard s.count == 2 else { return false }
  let a = s.first!, b = s[s.index(after: s.startIndex)]
  return isASCIIAlpha(a) && (b == 0x3A || b == 0x7C)
}

/// https://url.spec.whatwg.org/#normalized-windows-drive-letter
func isNormalizedWindowsDriveLetter<C: Collection<UInt8>>(_ s: C) -> Bool {
  guard s.count == 2 else { return false }
  return isASCIIAlpha(s.first!) && s[s.index(after: s.startIndex)] == 0x3A
}

/// https://url.spec.whatwg.org/#start-with-a-windows-drive-letter
func startsWithWindowsDriveLetter(_ s: ArraySlice<UInt8>) -> Bool {
  guard s.count >= 2, isWindowsDriveLetter(s.prefix(2)) else { return false }
  if s.count == 2 { return true }
  switch s[s.startIndex + 2] {
  case 0x2F, 0x5C, 0x3F, 0x23: return true
  default: return false
  }
}

/// https://url.spec.whatwg.org/#single-dot-path-segment
func isSingleDot(_ s: [UInt8]) -> Bool {
  switch s.count {
  case 1: return s[0] == 0x2E
  case 3: return s[0] == 0x25 && s[1] == 0x32 && s[2] | 0x20 == 0x65
  default: return false
  }
}

/// https://url.spec.whatwg.org/#double-dot-path-segment
func isDoubleDot(_ s: [UInt8]) -> Bool {
  func dot(_ i: Int) -> Int? {  // length of a dot ("." or "%2e") at i
    if i < s.count, s[i] == 0x2E { return 1 }
    if i + 2 < s.count, s[i] == 0x25, s[i + 1] == 0x32, s[i + 2] | 0x20 == 0x65 { return 3 }
    return nil
  }
  guard s.count >= 2, s.count <= 6, let a = dot(0), let b = dot(a) else { return false }
  return a + b == s.count
}
