/// Punycode (RFC 3492): the encoding of Unicode labels as ASCII ("xn--...").
///
///     Punycode.encode(Array("bücher".unicodeScalars).map(\.value))  // "bcher-kva"
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc3492>
enum Punycode {
  static let base: UInt32 = 36, tMin: UInt32 = 1, tMax: UInt32 = 26
  static let skew: UInt32 = 38, damp: UInt32 = 700
  static let initialBias: UInt32 = 72, initialN: UInt32 = 0x80

  /// https://www.rfc-editor.org/rfc/rfc3492#section-6.1
  static func adapt(_ delta: UInt32, _ numPoints: UInt32, _ firstTime: Bool) -> UInt32 {
    var delta = firstTime ? delta / damp : delta / 2
    delta += delta / numPoints
    var k: UInt32 = 0
    while delta > ((base - tMin) * tMax) / 2 {
      delta /= base - tMin
      k += base
    }
    return k + (base - tMin + 1) * delta / (delta + skew)
  }

  @inline(__always)
  static func threshold(_ k: UInt32, _ bias: UInt32) -> UInt32 {
    k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
  }

  @inline(__always)
  static func digit(_ d: UInt32) -> UInt8 {
    d < 26 ? UInt8(0x61 + d) : UInt8(0x30 + d - 26)
  }

  /// Encodes code points; nil on overflow (labels far beyond DNS sizes).
  ///
  /// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc3492#section-6.3>
  static func encode(_ input: [UInt32]) -> [UInt8]? {
    var output = [UInt8]()
    for c in input where c < 0x80 { output.append(UInt8(c)) }
    let b = UInt32(output.count)
    var h = b
    if b > 0 { output.append(0x2D) }
    var n = initialN, delta: UInt32 = 0, bias = initialBias
    while h < UInt32(input.count) {
      var m = UInt32.max
      for c in input where c >= n && c < m { m = c }
      let (mul, o1) = (m - n).multipliedReportingOverflow(by: h + 1)
      let (sum, o2) = delta.addingReportingOverflow(mul)
      if o1 || o2 { return nil }
      delta = sum
      n = m
      for c in input {
        if c < n {
          let (d, o) = delta.addingReportingOverflow(1)
          if o { return nil }
          delta = d
        }
        if c == n {
          var q = delta
          var k = base
          while true {
            let t = threshold(k, bias)
            if q < t { break }
            output.append(digit(t + (q - t) % (base - t)))
            q = (q - t) / (base - t)
            k += base
          }
          output.append(digit(q))
          bias = adapt(delta, h + 1, h == b)
          delta = 0
          h += 1
        }
      }
      delta += 1
      n += 1
    }
    return output
  }

  /// Decodes ASCII to code points; nil when the input is not valid Punycode.
  ///
  /// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc3492#section-6.2>
  static func decode(_ input: ArraySlice<UInt8>) -> [UInt32]? {
    var output = [UInt32]()
    var rest = input[...]
    if let dash = input.lastIndex(of: 0x2D) {
      for c in input[input.startIndex..<dash] {
        guard c < 0x80 else { return nil }
        output.append(UInt32(c))
      }
      rest = input[(dash + 1)...]
    }
    var n = initialN, i: UInt32 = 0, bias = initialBias
    var pos = rest.startIndex
    while pos < rest.endIndex {
      let oldI = i
      var w: UInt32 = 1
      var k = base
      while true {
        guard pos < rest.endIndex else { return nil }
        let c = rest[pos]
        pos += 1
        let d: UInt32
        switch c {
        case 0x41...0x5A: d = UInt32(c - 0x41)
        case 0x61...0x7A: d = UInt32(c - 0x61)
        case 0x30...0x39: d = UInt32(c - 0x30) + 26
        default: return nil
        }
        let (dw, o1) = d.multipliedReportingOverflow(by: w)
        let (ni, o2) = i.addingReportingOverflow(dw)
        if o1 || o2 { return nil }
        i = ni
        let t = threshold(k, bias)
        if d < t { break }
        let (nw, o3) = w.multipliedReportingOverflow(by: base - t)
        if o3 { return nil }
        w = nw
        k += base
      }
      let count = UInt32(output.count) + 1
      bias = adapt(i - oldI, count, oldI == 0)
      let (nn, o) = n.addingReportingOverflow(i / count)
      if o { return nil }
      n = nn
      i %= count
      if n < 0x80 || n > 0x10FFFF || (0xD800...0xDFFF).contains(n) { return nil }
      output.insert(n, at: Int(i))
      i += 1
    }
    return output
  }
}
