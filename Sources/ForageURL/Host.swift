/// The host parser and serializers: domains, IPv4 (with its decimal, octal
/// and hex number forms), IPv6 (with "::" compression) and opaque hosts.
///
/// - SeeAlso: <https://url.spec.whatwg.org/#host-parsing>
enum HostParser {
  /// Parses a host and returns its serialization.
  ///
  /// - Throws: `URLParseError` when the host is not valid; `offset` is the end of
  ///   the host in the input.
  /// - SeeAlso: <https://url.spec.whatwg.org/#concept-host-parser>
  static func parse(_ input: [UInt8], isOpaque: Bool, at offset: Int) throws(URLParseError) -> [UInt8] {
    if input.first == 0x5B {
      guard input.last == 0x5D, input.count >= 2 else { throw URLParseError(.ipv6, at: offset) }
      guard let address = parseIPv6(input[1..<(input.count - 1)]) else {
        throw URLParseError(.ipv6, at: offset)
      }
      return serializeIPv6(address)
    }
    if isOpaque { return try parseOpaqueHost(input, at: offset) }
    // Fast path: plain lower-case ASCII letters, digits, "-" and "." is a
    // domain whose ASCII form is itself (unless a label is "xn--...").
    var plain = true
    for b in input {
      if !((b &- 0x61 < 26) || isASCIIDigit(b) || b == 0x2D || b == 0x2E) {
        plain = false
        break
      }
    }
    var ascii: [UInt8]
    if plain && !hasPunycodeLabel(input) {
      ascii = input
    } else {
      let domain = percentDecode(input)
      guard let result = IDNA.domainToASCII(domain) else {
        throw URLParseError(.domainToASCII, at: offset)
      }
      ascii = result
      for b in ascii where isForbiddenDomainCodePoint(b) {
        throw URLParseError(.domainInvalidCodePoint, at: offset)
      }
    }
    if endsInANumber(ascii) {
      guard let v4 = parseIPv4(ascii) else { throw URLParseError(.ipv4, at: offset) }
      return serializeIPv4(v4)
    }
    return ascii
  }

  static func hasPunycodeLabel(_ s: [UInt8]) -> Bool {
    var i = 0
    while i + 3 < s.count {
      if (i == 0 || s[i - 1] == 0x2E), s[i] | 0x20 == 0x78, s[i + 1] | 0x20 == 0x6E,
        s[i + 2] == 0x2D, s[i + 3] == 0x2D
      {
        return true
      }
      i += 1
    }
    return false
  }

  /// https://url.spec.whatwg.org/#forbidden-host-code-point
  @inline(__always)
  static func isForbiddenHostCodePoint(_ b: UInt8) -> Bool {
    switch b {
    case 0x00, 0x09, 0x0A, 0x0D, 0x20, 0x23, 0x2F, 0x3A, 0x3C, 0x3E, 0x3F, 0x40, 0x5B, 0x5C,
      0x5D, 0x5E, 0x7C:
      return true
    default: return false
    }
  }

  /// https://url.spec.whatwg.org/#forbidden-domain-code-point
  @inline(__always)
  static func isForbiddenDomainCodePoint(_ b: UInt8) -> Bool {
    isForbiddenHostCodePoint(b) || b <= 0x1F || b == 0x25 || b == 0x7F
  }

  /// https://url.spec.whatwg.org/#concept-opaque-host-parser
  static func parseOpaqueHost(_ input: [UInt8], at offset: Int) throws(URLParseError) -> [UInt8] {
    var out = [UInt8]()
    out.reserveCapacity(input.count)
    for b in input {
      if isForbiddenHostCodePoint(b) { throw URLParseError(.hostInvalidCodePoint, at: offset) }
      out.appendEncoding(b, .c0Control)
    }
    return out
  }

  /// https://url.spec.whatwg.org/#ends-in-a-number-checker
  static func endsInANumber(_ s: [UInt8]) -> Bool {
    var end = s.count
    if end > 0, s[end - 1] == 0x2E {
      end -= 1
      if end == 0 { return false }  // the only part was empty
    }
    var start = end
    while start > 0, s[start - 1] != 0x2E { start -= 1 }
    let last = s[start..<end]
    if last.isEmpty { return false }
    if last.allSatisfy(isASCIIDigit) { return true }
    return parseIPv4Number(last) != nil
  }

  /// https://url.spec.whatwg.org/#ipv4-number-parser
  /// Values beyond 2^32 are clamped (they fail later in any case).
  static func parseIPv4Number(_ input: ArraySlice<UInt8>) -> UInt64? {
    if input.isEmpty { return nil }
    var s = input
    var radix: UInt64 = 10
    if s.count >= 2, s[s.startIndex] == 0x30, s[s.startIndex + 1] | 0x20 == 0x78 {
      s = s.dropFirst(2)
      radix = 16
    } else if s.count >= 2, s[s.startIndex] == 0x30 {
      s = s.dropFirst(1)
      radix = 8
    }
    var value: UInt64 = 0
    for b in s {
      let d: UInt64
      if radix == 16 {
        guard let h = hexValue(b) else { return nil }
        d = UInt64(h)
      } else {
        guard isASCIIDigit(b) else { return nil }
        d = UInt64(b - 0x30)
        if d >= radix { return nil }
      }
      value = min(value * radix + d, 1 << 40)
    }
    return value
  }

  /// https://url.spec.whatwg.org/#concept-ipv4-parser
  static func parseIPv4(_ input: [UInt8]) -> UInt32? {
    var parts = input.split(separator: 0x2E, omittingEmptySubsequences: false)
    if parts.last?.isEmpty == true, parts.count > 1 { parts.removeLast() }
    if parts.count > 4 { return nil }
    var numbers = [UInt64]()
    for part in parts {
      guard let v = parseIPv4Number(part) else { return nil }
      numbers.append(v)
    }
    for v in numbers.dropLast() where v > 255 { return nil }
    let last = numbers.last!
    if last >= (1 as UInt64) << (8 * (5 - UInt64(numbers.count))) { return nil }
    var address = last
    for (i, v) in numbers.dropLast().enumerated() {
      address += v << (8 * (3 - UInt64(i)))
    }
    return UInt32(address)
  }

  /// https://url.spec.whatwg.org/#concept-ipv4-serializer
  static func serializeIPv4(_ a: UInt32) -> [UInt8] {
    var out = [UInt8]()
    for shift in stride(from: 24, through: 0, by: -8) {
      appendDecimal(Int((a >> UInt32(shift)) & 0xFF), to: &out)
      if shift > 0 { out.append(0x2E) }
    }
    return out
  }

  /// https://url.spec.whatwg.org/#concept-ipv6-parser
  static func parseIPv6(_ input: ArraySlice<UInt8>) -> [UInt16]? {
    var address = [UInt16](repeating: 0, count: 8)
    var pieceIndex = 0
    var compress: Int?
    let s = Array(input)
    var p = 0
    func c(_ i: Int) -> Int { i < s.count ? Int(s[i]) : -1 }
    if c(p) == 0x3A {
      if c(p + 1) != 0x3A { return nil }
      p += 2
      pieceIndex += 1
      compress = pieceIndex
    }
    while c(p) != -1 {
      if pieceIndex == 8 { return nil }
      if c(p) == 0x3A {
        if compress != nil { return nil }
        p += 1
        pieceIndex += 1
        compress = pieceIndex
        continue
      }
      var value = 0, length = 0
      while length < 4, p < s.count, let h = hexValue(s[p]) {
        value = value * 16 + Int(h)
        p += 1
        length += 1
      }
      if c(p) == 0x2E {
        if length == 0 { return nil }
        p -= length
        if pieceIndex > 6 { return nil }
        var numbersSeen = 0
        while c(p) != -1 {
          var piece: Int?
          if numbersSeen > 0 {
            if c(p) == 0x2E && numbersSeen < 4 { p += 1 } else { return nil }
          }
          guard p < s.count, isASCIIDigit(s[p]) else { return nil }
          while p < s.count, isASCIIDigit(s[p]) {
            let number = Int(s[p] - 0x30)
            if let v = piece {
              if v == 0 { return nil }
              piece = v * 10 + number
            } else {
              piece = number
            }
            if piece! > 255 { return nil }
            p += 1
          }
          address[pieceIndex] = address[pieceIndex] &* 0x100 &+ UInt16(piece!)
          numbersSeen += 1
          if numbersSeen == 2 || numbersSeen == 4 { pieceIndex += 1 }
        }
        if numbersSeen != 4 { return nil }
        break
      } else if c(p) == 0x3A {
        p += 1
        if c(p) == -1 { return nil }
      } else if c(p) != -1 {
        return nil
      }
      address[pieceIndex] = UInt16(value)
      pieceIndex += 1
    }
    if let compress {
      var swaps = pieceIndex - compress
      pieceIndex = 7
      while pieceIndex != 0 && swaps > 0 {
        address.swapAt(pieceIndex, compress + swaps - 1)
        pieceIndex -= 1
        swaps -= 1
      }
    } else if pieceIndex != 8 {
      return nil
    }
    return address
  }

  /// https://url.spec.whatwg.org/#concept-ipv6-serializer (with the brackets)
  static func serializeIPv6(_ a: [UInt16]) -> [UInt8] {
    // The first longest run of two or more zero pieces is compressed.
    var compress = -1, bestLen = 1
    var i = 0
    while i < 8 {
      if a[i] == 0 {
        var j = i
        while j < 8, a[j] == 0 { j += 1 }
        if j - i > bestLen {
          bestLen = j - i
          compress = i
        }
        i = j
      } else {
        i += 1
      }
    }
    var out: [UInt8] = [0x5B]
    let hex = Array("0123456789abcdef".utf8)
    var ignore0 = false
    for index in 0..<8 {
      if ignore0 && a[index] == 0 { continue }
      ignore0 = false
      if compress == index {
        out += index == 0 ? [0x3A, 0x3A] : [0x3A]
        ignore0 = true
        continue
      }
      let v = a[index]
      var started = false
      for shift in stride(from: 12, through: 0, by: -4) {
        let d = Int((v >> UInt16(shift)) & 0xF)
        if d != 0 || started || shift == 0 {
          out.append(hex[d])
          started = true
        }
      }
      if index != 7 { out.append(0x3A) }
    }
    out.append(0x5D)
    return out
  }
}
