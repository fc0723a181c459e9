/// The table of named character references, decoded at first use from the
/// generated string in `NamedCharacterReferences.swift`.
///
/// - SeeAlso: <https://html.spec.whatwg.org/#named-character-references>
enum NamedCharacterReferences {
  struct Table: Sendable {
    /// All names (without '&'), concatenated, sorted by bytes.
    var blob: [UInt8] = []
    /// `blob[starts[i] ..< starts[i + 1]]` is name `i`.
    var starts: [Int32] = []
    /// The replacement: one or two scalars (second 0 when absent).
    var first: [UInt32] = []
    var second: [UInt32] = []
    /// The longest name, in bytes.
    var longest = 0
  }

  static let decoded: Table = {
    var t = Table()
    t.blob.reserveCapacity(16_000)
    var name: [UInt8] = []
    var cps: [UInt32] = []
    var value: UInt32 = 0
    var inName = true
    func finish(_ t: inout Table) {
      guard !name.isEmpty else { return }
      cps.append(value)
      t.starts.append(Int32(t.blob.count))
      t.blob.append(contentsOf: name)
      t.longest = max(t.longest, name.count)
      t.first.append(cps[0])
      t.second.append(cps.count > 1 ? cps[1] : 0)
      name.removeAll(keepingCapacity: true)
      cps.removeAll(keepingCapacity: true)
      value = 0
      inName = true
    }
    for b in table.utf8 {
      if b == UInt8(ascii: " ") || b == UInt8(ascii: "\n") {
        finish(&t)
      } else if inName {
        if b == UInt8(ascii: "=") { inName = false } else { name.append(b) }
      } else if b == UInt8(ascii: ".") {
        cps.append(value)
        value = 0
      } else {
        let d: UInt32 = b <= 0x39 ? UInt32(b - 0x30) : UInt32(b - 0x41 + 10)
        value = value << 4 | d
      }
    }
    finish(&t)
    t.starts.append(Int32(t.blob.count))
    return t
  }()

  /// The index of the longest entry whose name is a prefix of
  /// `p[0 ..< count]`, or nil.
  ///
  /// Names are sorted, so the entries starting with the first byte form one
  /// range (`firstByteRanges`); each candidate length is a binary search
  /// inside it, longest first.
  static func longestMatch(_ p: UnsafePointer<UInt8>, _ count: Int) -> Int? {
    guard count > 0 else { return nil }
    let t = decoded
    let r = firstByteRanges[Int(p[0])]
    guard r.0 < r.1 else { return nil }
    return t.blob.withUnsafeBufferPointer { blob in
      t.starts.withUnsafeBufferPointer { starts in
        var length = count
        while length > 0 {
          var lo = Int(r.0), hi = Int(r.1) - 1
          while lo <= hi {
            let mid = (lo + hi) >> 1
            let s = Int(starts[mid])
            let n = Int(starts[mid + 1]) - s
            let m = min(n, length)
            var order = 0
            var i = 0
            while i < m {
              let a = blob[s + i], b = p[i]
              if a != b { order = a < b ? -1 : 1; break }
              i += 1
            }
            if order == 0 { order = n == length ? 0 : (n < length ? -1 : 1) }
            if order == 0 { return mid }
            if order < 0 { lo = mid + 1 } else { hi = mid - 1 }
          }
          length -= 1
        }
        return nil
      }
    }
  }

  /// For each first byte, the range of entries starting with it.
  static let firstByteRanges: [(Int32, Int32)] = {
    let t = decoded
    var r = [(Int32, Int32)](repeating: (0, 0), count: 256)
    var i = 0
    while i < t.first.count {
      let b = Int(t.blob[Int(t.starts[i])])
      var j = i
      while j < t.first.count && Int(t.blob[Int(t.starts[j])]) == b { j += 1 }
      r[b] = (Int32(i), Int32(j))
      i = j
    }
    return r
  }()

  /// The index of the entry whose name is exactly `p[0 ..< count]`, or nil.
  static func lookup(_ p: UnsafePointer<UInt8>, _ count: Int, in t: Table) -> Int? {
    var lo = 0
    var hi = t.first.count - 1
    return t.blob.withUnsafeBufferPointer { blob -> Int? in
      while lo <= hi {
        let mid = (lo + hi) >> 1
        let s = Int(t.starts[mid])
        let n = Int(t.starts[mid + 1]) - s
        var order = 0
        let m = min(n, count)
        var i = 0
        while i < m {
          let a = blob[s + i]
          let b = p[i]
          if a != b { order = a < b ? -1 : 1; break }
          i += 1
        }
        if order == 0 { order = n == count ? 0 : (n < count ? -1 : 1) }
        if order == 0 { return mid }
        if order < 0 { lo = mid + 1 } else { hi = mid - 1 }
      }
      return nil
    }
  }
}

/// Replacements for numeric references to C1 controls (0x80–0x9F), as in
/// windows-1252; 0 where the code point is kept.
///
/// - SeeAlso: <https://html.spec.whatwg.org/#numeric-character-reference-end-state>
let c1Replacements: [UInt32] = [
  0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
  0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
  0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
  0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
]
