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
  /// `p[0 ..< count]`, or nil (see `NamedReferenceTable.longestMatch`).
  static func longestMatch(_ p: UnsafePointer<UInt8>, _ count: Int) -> Int? {
    NamedReferenceTable.shared.longestMatch(p, count)
  }

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

/// The named character references in plain memory, for the tokenizer: a
/// lookup has no lazy-global checks and retains no arrays (reading
/// `NamedCharacterReferences.decoded` copied its four arrays, a retain and a
/// release each, on every `&name`). The tokenizer keeps a reference to the
/// one shared instance, which lives for the whole process and is never
/// written after `init`, hence `@unchecked Sendable`.
final class NamedReferenceTable: @unchecked Sendable {
  static let shared = NamedReferenceTable()

  /// All names, concatenated and sorted; name `i` is
  /// `blob[starts[i] ..< starts[i + 1]]`.
  private let blob: UnsafeMutablePointer<UInt8>
  private let starts: UnsafeMutablePointer<Int32>
  /// The replacement of entry `i`: one or two scalars (second 0 when absent).
  let first: UnsafeMutablePointer<UInt32>
  let second: UnsafeMutablePointer<UInt32>
  /// For each first byte `b`, the entries starting with it:
  /// `ranges[2b] ..< ranges[2b + 1]`.
  private let ranges: UnsafeMutablePointer<Int32>
  /// The longest name, in bytes.
  let longest: Int

  private init() {
    let t = NamedCharacterReferences.decoded
    func copy<E>(_ a: [E]) -> UnsafeMutablePointer<E> {
      let p = UnsafeMutablePointer<E>.allocate(capacity: max(a.count, 1))
      a.withUnsafeBufferPointer { if let b = $0.baseAddress { p.initialize(from: b, count: a.count) } }
      return p
    }
    blob = copy(t.blob)
    starts = copy(t.starts)
    first = copy(t.first)
    second = copy(t.second)
    longest = t.longest
    var r = [Int32](repeating: 0, count: 512)
    var i = 0
    while i < t.first.count {
      let b = Int(t.blob[Int(t.starts[i])])
      var j = i
      while j < t.first.count && Int(t.blob[Int(t.starts[j])]) == b { j += 1 }
      r[2 * b] = Int32(i)
      r[2 * b + 1] = Int32(j)
      i = j
    }
    ranges = copy(r)
  }

  /// The length in bytes of entry `i`'s name.
  @inline(__always) func length(_ i: Int) -> Int { Int(starts[i + 1] - starts[i]) }

  /// The index of the longest entry whose name is a prefix of
  /// `p[0 ..< count]`, or nil.
  ///
  /// Names are sorted, so the entries starting with the first byte form one
  /// range; each candidate length is a binary search inside it, longest
  /// first.
  func longestMatch(_ p: UnsafePointer<UInt8>, _ count: Int) -> Int? {
    guard count > 0 else { return nil }
    let low = Int(ranges[2 * Int(p[0])]), high = Int(ranges[2 * Int(p[0]) + 1])
    guard low < high else { return nil }
    var length = count
    while length > 0 {
      var lo = low, hi = high - 1
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
