/// A fast path for the common case: an http(s), ws(s) or ftp URL, or a
/// relative reference against one, that is already in serialized form
/// (lower-case scheme and host, plain ASCII host, no credentials, no
/// characters needing percent-encoding, no dot segments, no default port).
/// Then the parser's output is the input itself (or the base's prefix plus
/// the reference), so only the offsets are computed, in one scan, without
/// copying components. Anything else returns nil and takes the full parser.
/// `URLParserFastPathTests` checks both paths agree.
enum FastPath {
  /// Byte classes: which ASCII bytes stand for themselves in each component.
  static let hostOK: UInt8 = 1, pathOK: UInt8 = 2, queryOK: UInt8 = 4, fragmentOK: UInt8 = 8

  static let table: [UInt8] = {
    var t = [UInt8](repeating: 0, count: 256)
    for b in 0x21...0x7E {
      let byte = UInt8(b)
      let lowerAlnum = (byte >= 0x61 && byte <= 0x7A) || isASCIIDigit(byte)
      if lowerAlnum || byte == 0x2D || byte == 0x2E { t[b] |= hostOK }
      if !PercentEncodeSet.path.contains(byte) && byte != 0x5C && byte != 0x3F && byte != 0x23 {
        t[b] |= pathOK
      }
      if !PercentEncodeSet.specialQuery.contains(byte) && byte != 0x23 { t[b] |= queryOK }
      if !PercentEncodeSet.fragment.contains(byte) { t[b] |= fragmentOK }
    }
    return t
  }()

  static func parse(_ string: String, base: WebURL?) -> WebURL? {
    let result: WebURL?? = string.utf8.withContiguousStorageIfAvailable { b in
      if b.count >= Int(Int32.max) / 2 { return nil }  // offsets are Int32
      // With a scheme the base does not matter, but for "http:x" against an
      // http base, which is relative: absolute() only takes "scheme://".
      if schemeLength(b) != nil { return absolute(b, string) }
      if let base { return relative(b, string, base) }
      return nil
    }
    return result ?? nil
  }

  /// The length of a scheme and its ":" at the start, or nil.
  @inline(__always)
  static func schemeLength(_ b: UnsafeBufferPointer<UInt8>) -> Int? {
    guard !b.isEmpty, isASCIIAlpha(b[0]) else { return nil }
    var i = 1
    while i < b.count {
      let c = b[i]
      if c == 0x3A { return i + 1 }
      guard isASCIIAlpha(c) || isASCIIDigit(c) || c == 0x2B || c == 0x2D || c == 0x2E else {
        return nil
      }
      i += 1
    }
    return nil
  }

  /// An absolute URL already in serialized form: href is the input.
  static func absolute(_ b: UnsafeBufferPointer<UInt8>, _ string: String) -> WebURL? {
    // The lazy table read once per call: inside the loops each read of the
    // static went through its one-time-initialization check.
    let table = Self.table
    guard let colon = schemeLength(b).map({ $0 - 1 }),
      let special = SpecialScheme(bytes: UnsafeBufferPointer(rebasing: b[0..<colon])),
      special != .file,
      colon + 2 < b.count, b[colon + 1] == 0x2F, b[colon + 2] == 0x2F
    else { return nil }
    var l = URLLayout()
    l.schemeEnd = Int32(colon)
    l.isSpecial = true
    l.hasHost = true
    var i = colon + 3
    let hostStart = i
    // Host: [a-z0-9.-]+; labels "xn--..." and hosts ending in a number
    // (IPv4 forms) take the full parser.
    var labelStart = i
    var lastLabel = (i, i)
    while i < b.count, table[Int(b[i])] & hostOK != 0 {
      if b[i] == 0x2E {
        if i > labelStart { lastLabel = (labelStart, i) }
        labelStart = i + 1
      } else if i == labelStart, b[i] == 0x78, i + 3 < b.count, b[i + 1] == 0x6E,
        b[i + 2] == 0x2D, b[i + 3] == 0x2D
      {
        return nil
      }
      i += 1
    }
    if i > labelStart { lastLabel = (labelStart, i) }
    guard i > hostStart else { return nil }
    let (ls, le) = lastLabel
    if le > ls, isASCIIDigit(b[ls]) {
      // Maybe a number: only an IPv4 address already in its serialized form
      // stays here, the rest takes the full parser.
      guard isSerializedIPv4(UnsafeBufferPointer(rebasing: b[hostStart..<i])) else { return nil }
    }
    let at32 = Int32(hostStart)
    (l.usernameStart, l.usernameEnd, l.passwordStart, l.passwordEnd) = (at32, at32, at32, at32)
    l.hostStart = at32
    l.hostEnd = Int32(i)
    if i < b.count, b[i] == 0x3A {
      i += 1
      let portStart = i
      var port = 0
      while i < b.count, isASCIIDigit(b[i]), i - portStart < 5 {
        port = port * 10 + Int(b[i] - 0x30)
        i += 1
      }
      guard i > portStart, b[portStart] != 0x30, port <= 65535, port != special.defaultPort
      else { return nil }
      l.port = Int32(port)
    }
    guard i < b.count, b[i] == 0x2F else { return nil }
    guard scanPathQueryFragment(b, from: i, into: &l) else { return nil }
    return WebURL(href: string, layout: l)
  }

  /// True for four dot-separated decimal numbers of at most 255 without
  /// leading zeros ("127.0.0.1"): the IPv4 parser would serialize such a
  /// host to itself.
  ///
  /// - SeeAlso: <https://url.spec.whatwg.org/#concept-ipv4-serializer>
  static func isSerializedIPv4(_ host: UnsafeBufferPointer<UInt8>) -> Bool {
    var parts = 0, value = 0, digits = 0
    for c in host {
      if c == 0x2E {
        guard digits > 0 else { return false }
        parts += 1
        (value, digits) = (0, 0)
      } else {
        guard isASCIIDigit(c), !(digits == 1 && value == 0) else { return false }
        value = value * 10 + Int(c - 0x30)
        digits += 1
        guard value <= 255 else { return false }
      }
    }
    return parts == 3 && digits > 0
  }

  /// Scans path (starting at its "/"), query and fragment; fills their
  /// offsets; false when a byte or a dot segment needs the full parser.
  @inline(__always)
  static func scanPathQueryFragment(
    _ b: UnsafeBufferPointer<UInt8>, from start: Int, into l: inout URLLayout,
    shift: Int = 0, startIn component: UInt8 = pathOK
  ) -> Bool {
    let table = Self.table  // once per call (see `absolute`)
    var i = start
    let n = b.count
    if component == pathOK {
      l.pathStart = Int32(shift + i)
      var segmentStart = i
      while i < n {
        let c = b[i]
        if table[Int(c)] & pathOK == 0 { break }
        if c == 0x2F {
          if i > segmentStart, mayBeDotSegment(b, segmentStart, i) { return false }
          segmentStart = i + 1
        }
        i += 1
      }
      if i > segmentStart, mayBeDotSegment(b, segmentStart, i) { return false }
      l.pathEnd = Int32(shift + i)
    }
    if component != fragmentOK, i < n, b[i] == 0x3F {
      i += 1
      l.queryStart = Int32(shift + i)
      while i < n, table[Int(b[i])] & queryOK != 0 { i += 1 }
      l.queryEnd = Int32(shift + i)
    }
    if i < n, b[i] == 0x23 {
      i += 1
      l.fragmentStart = Int32(shift + i)
      while i < n, table[Int(b[i])] & fragmentOK != 0 { i += 1 }
    }
    return i == n
  }

  /// Conservative: true for ".", "..", and anything short starting with "."
  /// or "%2".
  @inline(__always)
  static func mayBeDotSegment(_ b: UnsafeBufferPointer<UInt8>, _ s: Int, _ e: Int) -> Bool {
    if e - s > 6 { return false }
    return b[s] == 0x2E || (b[s] == 0x25 && e - s >= 3 && b[s + 1] == 0x32)
  }

  /// A reference resolved against a special base with a host.
  static func relative(_ b: UnsafeBufferPointer<UInt8>, _ string: String, _ base: WebURL)
    -> WebURL?
  {
    let table = Self.table  // once per call (see `absolute`)
    let bl = base.layout
    guard bl.isSpecial, bl.hasHost, !bl.hasOpaquePath, !b.isEmpty,
      !(bl.schemeEnd == 4 && base.href.utf8.starts(with: "file".utf8))  // drive letters
    else { return nil }
    let first = b[0]
    let cut: Int  // how much of the base href to keep
    var l = bl
    let component: UInt8
    switch first {
    case 0x2F:  // "/path"
      if b.count >= 2, b[1] == 0x2F {
        // "//host/path": the base's scheme with this authority.
        let absolute = base.scheme + ":" + string
        return absolute.utf8.withContiguousStorageIfAvailable { ab in
          FastPath.absolute(ab, absolute)
        } ?? nil
      }
      guard b.count < 2 || b[1] != 0x5C else { return nil }
      cut = Int(bl.pathStart)
      component = pathOK
    case 0x3F:  // "?query"
      cut = Int(bl.pathEnd)
      component = queryOK
    case 0x23:  // "#fragment"
      cut = Int(bl.queryStart >= 0 ? bl.queryEnd : bl.pathEnd)
      l.queryStart = bl.queryStart
      l.queryEnd = bl.queryEnd
      component = fragmentOK
    default:
      guard first != 0x5C, table[Int(first)] & pathOK != 0 else { return nil }
      // "page.html", "./page.html", "../../page.html": leading "./" are
      // skipped, each leading "../" removes a segment of the base's folder,
      // then the rest replaces the base's last path segment.
      var skip = 0, ups = 0
      while true {
        if skip + 1 < b.count, b[skip] == 0x2E, b[skip + 1] == 0x2F {
          skip += 2
        } else if skip + 2 < b.count, b[skip] == 0x2E, b[skip + 1] == 0x2E, b[skip + 2] == 0x2F {
          skip += 3
          ups += 1
        } else {
          break
        }
      }
      if skip < b.count, b[skip] == 0x2F || b[skip] == 0x5C { return nil }
      let pathStart = Int(bl.pathStart)
      let slash: Int? = base.href.utf8.withContiguousStorageIfAvailable { hb in
        var last = Int(bl.pathEnd) - 1
        while last >= pathStart, hb[last] != 0x2F { last -= 1 }
        // The folder is hb[pathStart...last]; "../" drops its last segment.
        while ups > 0, last > pathStart {
          last -= 1
          while hb[last] != 0x2F { last -= 1 }
          ups -= 1
        }
        return last
      }
      guard let slash, slash >= pathStart else { return nil }
      return relative(UnsafeBufferPointer(rebasing: b[skip...]), cut: slash + 1, l, base)
    }
    return relative(b, cut: cut, l, base, component: component)
  }

  /// The base's href up to `cut`, then the reference `b` (from `component`).
  static func relative(
    _ b: UnsafeBufferPointer<UInt8>, cut: Int, _ layout: URLLayout, _ base: WebURL,
    component: UInt8 = pathOK
  ) -> WebURL? {
    var l = layout
    if component != fragmentOK { (l.queryStart, l.queryEnd) = (-1, -1) }
    l.fragmentStart = -1
    if component == pathOK {
      // The scan starts at the reference; the path starts at the base's path.
      var tmp = l
      guard scanPathQueryFragment(b, from: 0, into: &tmp, shift: cut) else { return nil }
      // A path-relative reference must not make a dot segment either.
      l.pathEnd = tmp.pathEnd
      (l.queryStart, l.queryEnd, l.fragmentStart) = (tmp.queryStart, tmp.queryEnd, tmp.fragmentStart)
    } else {
      if component == queryOK { l.pathEnd = Int32(cut) }
      guard scanPathQueryFragment(b, from: 0, into: &l, shift: cut, startIn: component) else {
        return nil
      }
    }
    let total = cut + b.count
    guard total < Int32.max else { return nil }
    let href = base.href.utf8.withContiguousStorageIfAvailable { hb in
      String(unsafeUninitializedCapacity: total) { out in
        _ = out.initialize(fromContentsOf: UnsafeBufferPointer(rebasing: hb[0..<cut]))
        _ = UnsafeMutableBufferPointer(rebasing: out[cut..<total]).initialize(fromContentsOf: b)
        return total
      }
    }
    guard let href else { return nil }
    return WebURL(href: href, layout: l)
  }
}
