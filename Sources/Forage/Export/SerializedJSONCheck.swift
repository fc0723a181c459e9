/// Tells whether a JSON text is exactly what parsing it and serializing the
/// value again (`JSONValue.serialized()`) would give, without building the
/// value: compact, strings escaped only as the serializer escapes them,
/// numbers as it formats them, no key twice in an object. A record's stored
/// fields are (they were written so), and an export writes such text as it
/// is instead of parsing it.
///
///     var check = SerializedJSONCheck()
///     check.isSerialized(#"{"price":12.5,"tags":["a"]}"#)   // true
///     check.isSerialized(#"{"price": 12.5}"#)               // false: a space
///     check.isSerialized(#"{"price":1.0}"#)                 // false: written 1
///
/// It errs only one way: a text it is unsure of (a key with non-ASCII
/// letters, whose duplicates the parser finds by canonical equivalence; an
/// object of very many members; deep nesting) is not, and is parsed.
struct SerializedJSONCheck {
  /// The byte ranges of the keys of the objects being read, innermost last.
  private var keys: [Range<Int>] = []
  /// The most members an object may have for its keys to be compared here.
  static let maxKeys = 64
  /// Nesting past this is left to the parser (which allows 512 levels).
  static let maxDepth = 256

  /// A check; one may be used for many texts (it keeps a small buffer).
  init() {}

  /// Whether `text` is one JSON value as `JSONValue.serialized()` writes it.
  mutating func isSerialized(_ text: String) -> Bool {
    if let answer = text.utf8.withContiguousStorageIfAvailable({ isSerialized($0) }) { return answer }
    var copy = text
    return copy.withUTF8 { isSerialized($0) }
  }

  private mutating func isSerialized(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    keys.removeAll(keepingCapacity: true)
    var i = 0
    return value(bytes, &i, depth: 0) && i == bytes.count
  }

  private mutating func value(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, depth: Int) -> Bool {
    guard i < b.count, depth < Self.maxDepth else { return false }
    switch b[i] {
    case UInt8(ascii: "{"): return object(b, &i, depth: depth)
    case UInt8(ascii: "["):
      i += 1
      if i < b.count, b[i] == UInt8(ascii: "]") {
        i += 1
        return true
      }
      while true {
        guard value(b, &i, depth: depth + 1), i < b.count else { return false }
        if b[i] == UInt8(ascii: "]") {
          i += 1
          return true
        }
        guard b[i] == UInt8(ascii: ",") else { return false }
        i += 1
      }
    case UInt8(ascii: "\""): return string(b, &i, asciiOnly: false)
    case UInt8(ascii: "t"): return literal("true", b, &i)
    case UInt8(ascii: "f"): return literal("false", b, &i)
    case UInt8(ascii: "n"): return literal("null", b, &i)
    default: return number(b, &i)
    }
  }

  private mutating func object(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, depth: Int) -> Bool {
    i += 1
    if i < b.count, b[i] == UInt8(ascii: "}") {
      i += 1
      return true
    }
    let first = keys.count
    defer { keys.removeSubrange(first...) }
    while true {
      let start = i
      guard i < b.count, b[i] == UInt8(ascii: "\""), string(b, &i, asciiOnly: true) else { return false }
      let key = start..<i
      // Keys are written one way (ASCII, the serializer's escapes), so two
      // are the same key exactly when their bytes are.
      guard keys.count - first < Self.maxKeys else { return false }
      for other in keys[first...] where other.count == key.count {
        if UnsafeBufferPointer(rebasing: b[other]).elementsEqual(UnsafeBufferPointer(rebasing: b[key])) { return false }
      }
      keys.append(key)
      guard i < b.count, b[i] == UInt8(ascii: ":") else { return false }
      i += 1
      guard value(b, &i, depth: depth + 1), i < b.count else { return false }
      if b[i] == UInt8(ascii: "}") {
        i += 1
        return true
      }
      guard b[i] == UInt8(ascii: ",") else { return false }
      i += 1
    }
  }

  /// A string literal as `JSONText.writeString` writes one: `"`, `\` and
  /// controls escaped (`\n`, `\r`, `\t`, else `\u00xx` in lower-case hex),
  /// nothing else.
  private func string(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, asciiOnly: Bool) -> Bool {
    i += 1
    while i < b.count {
      let c = b[i]
      switch c {
      case UInt8(ascii: "\""):
        i += 1
        return true
      case UInt8(ascii: "\\"):
        guard i + 1 < b.count else { return false }
        switch b[i + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
          i += 2
        case UInt8(ascii: "u"):
          guard i + 5 < b.count, b[i + 2] == UInt8(ascii: "0"), b[i + 3] == UInt8(ascii: "0"),
            let high = Self.lowerHex(b[i + 4]), high <= 1, let low = Self.lowerHex(b[i + 5])
          else { return false }
          let scalar = high * 16 + low
          guard scalar != 0x09, scalar != 0x0A, scalar != 0x0D else { return false }
          i += 6
        default: return false
        }
      default:
        guard c >= 0x20, !asciiOnly || c < 0x80 else { return false }
        i += 1
      }
    }
    return false
  }

  private static func lowerHex(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - 0x30
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - 0x61 + 10
    default: return nil
    }
  }

  private func literal(_ word: StaticString, _ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
    let n = word.utf8CodeUnitCount
    guard i + n <= b.count,
      UnsafeBufferPointer(rebasing: b[i..<i + n]).elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: n))
    else { return false }
    i += n
    return true
  }

  /// A number as `JSONValue.format` writes it: a whole one of up to 15
  /// digits as digits (no `-0`, no leading zero), any other as the
  /// shortest text that reads back as the same `Double`.
  private func number(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
    let start = i
    while i < b.count, Self.isNumberByte(b[i]) { i += 1 }
    guard i > start else { return false }
    let token = UnsafeBufferPointer(rebasing: b[start..<i])
    let negative = token[0] == UInt8(ascii: "-")
    let digits = token.dropFirst(negative ? 1 : 0)
    if !digits.isEmpty, digits.count <= 15, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
      // Digits only: as written when there is no leading zero and no "-0".
      return digits.first != UInt8(ascii: "0") || (digits.count == 1 && !negative)
    }
    let text = String(decoding: token, as: UTF8.self)
    guard let d = Double(text), d.isFinite else { return false }
    return JSONValue.format(d) == text
  }

  private static func isNumberByte(_ c: UInt8) -> Bool {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
      UInt8(ascii: "e"), UInt8(ascii: "E"):
      return true
    default: return false
    }
  }
}
