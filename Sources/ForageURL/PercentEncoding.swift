/// The percent-encode sets of the URL Standard, as one bit table over ASCII.
///
/// Every byte at or above 0x80 (any non-ASCII code point's UTF-8) is in every
/// set, so percent-encoding a code point is percent-encoding each byte.
///
/// - SeeAlso: <https://url.spec.whatwg.org/#percent-encoded-bytes>
struct PercentEncodeSet: Sendable {
  let bit: UInt8

  /// https://url.spec.whatwg.org/#c0-control-percent-encode-set
  static let c0Control = PercentEncodeSet(bit: 1)
  /// https://url.spec.whatwg.org/#fragment-percent-encode-set
  static let fragment = PercentEncodeSet(bit: 2)
  /// https://url.spec.whatwg.org/#query-percent-encode-set
  static let query = PercentEncodeSet(bit: 4)
  /// https://url.spec.whatwg.org/#special-query-percent-encode-set
  static let specialQuery = PercentEncodeSet(bit: 8)
  /// https://url.spec.whatwg.org/#path-percent-encode-set
  static let path = PercentEncodeSet(bit: 16)
  /// https://url.spec.whatwg.org/#userinfo-percent-encode-set
  static let userinfo = PercentEncodeSet(bit: 32)
  /// https://url.spec.whatwg.org/#component-percent-encode-set
  static let component = PercentEncodeSet(bit: 64)

  /// For each ASCII byte, the bits of the sets that contain it.
  static let table: [UInt8] = {
    var t = [UInt8](repeating: 0, count: 128)
    func add(_ sets: [PercentEncodeSet], _ chars: String) {
      for set in sets {
        for b in chars.utf8 { t[Int(b)] |= set.bit }
      }
    }
    let all: [PercentEncodeSet] = [
      .c0Control, .fragment, .query, .specialQuery, .path, .userinfo, .component,
    ]
    // C0 controls and U+007F are in every set (non-ASCII is handled in
    // `contains`). Fragment and query both extend the C0 control set; the
    // others extend query in a chain: path, userinfo, component.
    for b in 0..<0x20 { add(all, String(UnicodeScalar(UInt8(b)))) }
    add(all, "\u{7F}")
    add([.fragment], " \"<>`")
    add([.query, .specialQuery, .path, .userinfo, .component], " \"#<>")
    add([.specialQuery], "'")
    add([.path, .userinfo, .component], "?^`{}")
    add([.userinfo, .component], "/:;=@[\\]|")
    add([.component], "$%&+,")
    return t
  }()

  @inline(__always)
  func contains(_ byte: UInt8) -> Bool {
    byte >= 0x80 || PercentEncodeSet.table[Int(byte)] & bit != 0
  }
}

let hexUpper: [UInt8] = Array("0123456789ABCDEF".utf8)

extension Array where Element == UInt8 {
  /// Appends `byte`, percent-encoded when it is in `set`.
  @inline(__always)
  mutating func appendEncoding(_ byte: UInt8, _ set: PercentEncodeSet) {
    if set.contains(byte) {
      append(0x25)
      append(hexUpper[Int(byte >> 4)])
      append(hexUpper[Int(byte & 0xF)])
    } else {
      append(byte)
    }
  }
}

/// The value of an ASCII hex digit, or nil.
@inline(__always)
func hexValue(_ b: UInt8) -> UInt8? {
  switch b {
  case 0x30...0x39: b - 0x30
  case 0x41...0x46: b - 0x41 + 10
  case 0x61...0x66: b - 0x61 + 10
  default: nil
  }
}

/// Percent-decodes bytes: "%XX" with two hex digits becomes one byte, any
/// other "%" stays.
///
///     percentDecode(Array("a%20b%zz".utf8))   // "a b%zz"
///
/// The one percent-decoder of the package: URL hosts, download names and
/// `Content-Disposition` filenames (``percentDecodeStrictly(_:)``) use it.
///
/// - SeeAlso: <https://url.spec.whatwg.org/#percent-decode>
package func percentDecode<C: RandomAccessCollection<UInt8>>(_ input: C) -> [UInt8]
where C.Index == Int {
  var out = [UInt8]()
  out.reserveCapacity(input.count)
  var i = input.startIndex
  let end = input.endIndex
  while i < end {
    let b = input[i]
    if b == 0x25, i + 2 < end, let h = hexValue(input[i + 1]), let l = hexValue(input[i + 2]) {
      out.append(h << 4 | l)
      i += 3
    } else {
      out.append(b)
      i += 1
    }
  }
  return out
}

/// Percent-decodes bytes as ``percentDecode(_:)`` does, but a "%" not followed
/// by two hex digits makes the whole input invalid (nil), as RFC 8187's
/// `ext-value` requires.
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc8187#section-3.2.1>
package func percentDecodeStrictly<C: RandomAccessCollection<UInt8>>(_ input: C) -> [UInt8]?
where C.Index == Int {
  var i = input.startIndex
  while let sign = input[i...].firstIndex(of: 0x25) {
    guard sign + 2 < input.endIndex, hexValue(input[sign + 1]) != nil, hexValue(input[sign + 2]) != nil
    else { return nil }
    i = sign + 3
  }
  return percentDecode(input)
}
