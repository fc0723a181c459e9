/// A JSON syntax error with its line and column (1-based).
public struct JSONSyntaxError: Error, CustomStringConvertible, Sendable {
  /// What is wrong with the text.
  public var message: String
  /// The line it is on (1-based).
  public var line: Int
  /// The column it is at (1-based).
  public var column: Int
  /// The position and the message: `line 3, column 7: expected ':'`.
  public var description: String { "line \(line), column \(column): \(message)" }
}

extension JSONValue {
  /// Parses JSON text (RFC 8259). Objects keep their key order; duplicate
  /// keys are an error, as they usually hide a mistake in a config.
  ///
  /// - Throws: `JSONSyntaxError` naming the line and column.
  public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
    try parse(Array(text.utf8))
  }

  /// Parses JSON from UTF-8 bytes. A leading UTF-8 byte order mark, which
  /// some editors write, is skipped (RFC 8259 allows ignoring it).
  ///
  /// - Throws: `JSONSyntaxError` naming the line and column.
  public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
    var p = JSONParser(bytes: bytes)
    p.skipWhitespace()
    let v = try p.value(depth: 0)
    p.skipWhitespace()
    if p.i < bytes.count { throw p.error("unexpected text after the JSON value") }
    return v
  }
}

/// A recursive-descent parser with a depth limit (hostile input cannot
/// overflow the stack).
struct JSONParser {
  let bytes: [UInt8]
  /// Where the text starts: after a UTF-8 byte order mark, if any.
  let start: Int
  var i: Int
  static let maxDepth = 512

  init(bytes: [UInt8]) {
    self.bytes = bytes
    start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    i = start
  }

  func error(_ message: String) -> JSONSyntaxError {
    var line = 1, column = 1
    for b in bytes[start..<max(start, min(i, bytes.count))] {
      if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
    }
    return JSONSyntaxError(message: message, line: line, column: column)
  }

  mutating func skipWhitespace() {
    while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
  }

  mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONValue {
    guard depth < JSONParser.maxDepth else { throw error("nesting deeper than \(JSONParser.maxDepth) levels") }
    guard i < bytes.count else { throw error("unexpected end of input, expected a value") }
    switch bytes[i] {
    case UInt8(ascii: "{"): return try object(depth: depth)
    case UInt8(ascii: "["): return try array(depth: depth)
    case UInt8(ascii: "\""): return .string(try string())
    case UInt8(ascii: "t"): try literal("true"); return .bool(true)
    case UInt8(ascii: "f"): try literal("false"); return .bool(false)
    case UInt8(ascii: "n"): try literal("null"); return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
    default:
      throw error("unexpected character '\(Character(Unicode.Scalar(bytes[i])))', expected a value")
    }
  }

  mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
    let n = word.utf8CodeUnitCount
    let w = UnsafeBufferPointer(start: word.utf8Start, count: n)
    guard i + n <= bytes.count, bytes[i..<i + n].elementsEqual(w) else {
      throw error("invalid literal, expected '\(word)'")
    }
    i += n
  }

  mutating func object(depth: Int) throws(JSONSyntaxError) -> JSONValue {
    i += 1
    var members: [(key: String, value: JSONValue)] = []
    // Duplicates are looked for among the members so far while they are few
    // (a record's fields: a set cost more than the scan), in a set past that.
    var seen: Set<String>?
    skipWhitespace()
    if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
    while true {
      skipWhitespace()
      guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw error("expected a member name in double quotes") }
      let keyStart = i
      let key = try string()
      let duplicate: Bool
      if members.count < 16 {
        duplicate = members.contains { $0.key == key }
      } else {
        if seen == nil { seen = Set(members.map(\.key)) }
        duplicate = !seen!.insert(key).inserted
      }
      if duplicate {
        i = keyStart
        throw error("duplicate key \"\(key)\"")
      }
      skipWhitespace()
      guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw error("expected ':' after member name") }
      i += 1
      skipWhitespace()
      members.append((key, try value(depth: depth + 1)))
      skipWhitespace()
      guard i < bytes.count else { throw error("unexpected end of input in an object") }
      if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
      if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
      throw error("expected ',' or '}' in an object")
    }
  }

  mutating func array(depth: Int) throws(JSONSyntaxError) -> JSONValue {
    i += 1
    var items: [JSONValue] = []
    skipWhitespace()
    if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
    while true {
      skipWhitespace()
      items.append(try value(depth: depth + 1))
      skipWhitespace()
      guard i < bytes.count else { throw error("unexpected end of input in an array") }
      if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
      if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
      throw error("expected ',' or ']' in an array")
    }
  }

  mutating func number() throws(JSONSyntaxError) -> Double {
    let start = i
    if bytes[i] == UInt8(ascii: "-") { i += 1 }
    func digits(_ i: inout Int, _ bytes: [UInt8]) -> Int {
      let s = i
      while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
      return i - s
    }
    let intDigits = digits(&i, bytes)
    if intDigits == 0 { throw error("invalid number") }
    if intDigits > 1, bytes[start + (bytes[start] == UInt8(ascii: "-") ? 1 : 0)] == 0x30 {
      throw error("invalid number: leading zero")
    }
    if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
      i += 1
      if digits(&i, bytes) == 0 { throw error("invalid number: digits expected after '.'") }
    }
    if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
      i += 1
      if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
      if digits(&i, bytes) == 0 { throw error("invalid number: digits expected in exponent") }
    }
    // A whole number of up to 15 digits is exact as a Double: read directly.
    if intDigits <= 15, i - start == intDigits + (bytes[start] == UInt8(ascii: "-") ? 1 : 0) {
      var n: Int64 = 0
      for b in bytes[(i - intDigits)..<i] { n = n * 10 + Int64(b - 0x30) }
      return bytes[start] == UInt8(ascii: "-") ? -Double(n) : Double(n)
    }
    guard let d = Double(String(decoding: bytes[start..<i], as: UTF8.self)) else { throw error("invalid number") }
    // Past Double's range (1e400) the value would be infinity, which JSON
    // cannot write back (RFC 8259 §6 lets a parser limit the range).
    guard d.isFinite else {
      let text = String(decoding: bytes[start..<min(i, start + 40)], as: UTF8.self)
      i = start
      throw error("the number \(text) is too large (at most about 1.8e308)")
    }
    return d
  }

  mutating func string() throws(JSONSyntaxError) -> String {
    i += 1
    // Most strings have no escape: made from their bytes at once.
    let start = i
    while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\"), bytes[i] >= 0x20 { i += 1 }
    if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
      i += 1
      return String(decoding: bytes[start..<i - 1], as: UTF8.self)
    }
    var out = Array(bytes[start..<i])
    while true {
      guard i < bytes.count else { throw error("unterminated string") }
      let b = bytes[i]
      if b == UInt8(ascii: "\"") { i += 1; break }
      if b < 0x20 { throw error("control character in a string (escape it)") }
      if b != UInt8(ascii: "\\") { out.append(b); i += 1; continue }
      i += 1
      guard i < bytes.count else { throw error("unterminated escape") }
      let e = bytes[i]
      i += 1
      switch e {
      case UInt8(ascii: "\""): out.append(0x22)
      case UInt8(ascii: "\\"): out.append(0x5C)
      case UInt8(ascii: "/"): out.append(0x2F)
      case UInt8(ascii: "b"): out.append(0x08)
      case UInt8(ascii: "f"): out.append(0x0C)
      case UInt8(ascii: "n"): out.append(0x0A)
      case UInt8(ascii: "r"): out.append(0x0D)
      case UInt8(ascii: "t"): out.append(0x09)
      case UInt8(ascii: "u"):
        var scalar = try hex4()
        if (0xD800..<0xDC00).contains(scalar), i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"),
           bytes[i + 1] == UInt8(ascii: "u") {
          let save = i
          i += 2
          let low = try hex4()
          if (0xDC00..<0xE000).contains(low) {
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
          } else { i = save }
        }
        let u = Unicode.Scalar(scalar) ?? "\u{FFFD}"
        out.append(contentsOf: Array(String(u).utf8))
      default: throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))'")
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
    guard i + 4 <= bytes.count else { throw error("incomplete \\u escape") }
    var v: UInt32 = 0
    for _ in 0..<4 {
      let b = bytes[i]
      let d: UInt32
      switch b {
      case 0x30...0x39: d = UInt32(b - 0x30)
      case 0x41...0x46: d = UInt32(b - 0x41 + 10)
      case 0x61...0x66: d = UInt32(b - 0x61 + 10)
      default: throw error("invalid hex digit in \\u escape")
      }
      v = v << 4 | d
      i += 1
    }
    return v
  }
}
