import ForageSupport
import Foundation

/// Conversions of extracted text to a field's type.
enum ValueConversion {
  /// Converts text to `type`; nil when it cannot.
  static func convert(_ text: String, to type: FieldType) -> JSONValue? {
    switch type {
    case .string: return .string(text)
    case .number: return number(in: text).map(JSONValue.number)
    case .integer:
      guard let n = number(in: text), n == n.rounded() else { return nil }
      return .number(n)
    case .bool: return bool(text).map(JSONValue.bool)
    case .date: return date(text).map(JSONValue.string)
    }
  }

  /// Converts a JSON value (from a JSON source) to `type`.
  static func convert(_ value: JSONValue, to type: FieldType) -> JSONValue? {
    switch (value, type) {
    case (.string(let s), _): return convert(s, to: type)
    case (.number, .number): return value
    case (.number(let n), .integer): return n == n.rounded() ? value : nil
    case (.number(let n), .string): return .string(JSONValue.format(n))
    case (.bool, .bool): return value
    case (.bool(let b), .string): return .string(b ? "true" : "false")
    case (.null, _): return nil
    case (_, .string): return .string(value.serialized())
    default: return nil
    }
  }

  /// The first number written in `text`: `"$1,299.99"` → 1299.99,
  /// `"12,50 €"` → 12.5 (a lone comma followed by 1–2 digits is a decimal
  /// comma), `"-3"` → -3.
  static func number(in text: String) -> Double? {
    let bytes = Array(text.utf8)
    var i = 0
    while i < bytes.count, !(bytes[i] >= 0x30 && bytes[i] <= 0x39) { i += 1 }
    guard i < bytes.count else { return nil }
    // ".5" and "$.99": a separator right before the first digit starts the number.
    if i > 0, bytes[i - 1] == UInt8(ascii: ".") || bytes[i - 1] == UInt8(ascii: ",") {
      i -= 1
    }
    let negative = i > 0 && (bytes[i - 1] == UInt8(ascii: "-") || (i > 1 && bytes[i - 1] == 0x20 && bytes[i - 2] == UInt8(ascii: "-")))
    var j = i
    while j < bytes.count, (bytes[j] >= 0x30 && bytes[j] <= 0x39) || bytes[j] == UInt8(ascii: ",") || bytes[j] == UInt8(ascii: ".") { j += 1 }
    var token = String(decoding: bytes[i..<j], as: UTF8.self)
    if token.first == "," { token = "." + token.dropFirst() }
    while token.hasSuffix(",") || token.hasSuffix(".") { token.removeLast() }
    token = normalizeSeparators(token)
    if j < bytes.count, bytes[j] == UInt8(ascii: "e") || bytes[j] == UInt8(ascii: "E") {
      var k = j + 1
      if k < bytes.count, bytes[k] == UInt8(ascii: "-") || bytes[k] == UInt8(ascii: "+") { k += 1 }
      let digitsStart = k
      while k < bytes.count, bytes[k] >= 0x30, bytes[k] <= 0x39 { k += 1 }
      if k > digitsStart { token += String(decoding: bytes[j..<k], as: UTF8.self) }
    }
    guard let v = Double(token) else { return nil }
    return negative ? -v : v
  }

  /// Decides which of `,` and `.` is the decimal separator: when both
  /// appear, the last one; a lone comma followed by one or two digits; a lone
  /// dot. The other is a thousands separator and is removed.
  static func normalizeSeparators(_ token: String) -> String {
    let bytes = Array(token.utf8)
    let comma = UInt8(ascii: ","), dot = UInt8(ascii: ".")
    let lastComma = bytes.lastIndex(of: comma)
    let lastDot = bytes.lastIndex(of: dot)
    var decimal: UInt8?   // the byte that separates decimals, if any
    switch (lastComma, lastDot) {
    case (let c?, let d?): decimal = c > d ? comma : dot
    case (let c?, nil):
      let commas = bytes.reduce(0) { $0 + ($1 == comma ? 1 : 0) }
      decimal = commas == 1 && bytes.count - c - 1 <= 2 ? comma : nil
    case (nil, _?):
      let dots = bytes.reduce(0) { $0 + ($1 == dot ? 1 : 0) }
      decimal = dots == 1 ? dot : nil
    case (nil, nil): return token
    }
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    for b in bytes {
      if b == decimal { out.append(dot) } else if b != comma && b != dot { out.append(b) }
    }
    return String(decoding: out, as: UTF8.self)
  }

  static func bool(_ text: String) -> Bool? {
    switch text.lowercased() {
    case "true", "yes", "1", "on", "y": return true
    case "false", "no", "0", "off", "n": return false
    default: return nil
    }
  }

  /// Normalizes a date to ISO 8601: `2026-11-29` stays a date; a date-time
  /// (ISO 8601 or RFC 2822 / HTTP date) becomes UTC `2026-11-29T19:33:15Z`.
  static func date(_ text: String) -> String? {
    let t = text.trimmingWhitespace()
    if t.count == 10, t.utf8.enumerated().allSatisfy({ i, b in (i == 4 || i == 7) ? b == UInt8(ascii: "-") : (b >= 0x30 && b <= 0x39) }) {
      return t
    }
    return DateParsers.shared.withLock { $0.date(from: t) }.map { d, hasTime in hasTime ? format(d) : dateOnly(d) }
  }

  static func format(_ d: Date) -> String { ISODate.string(d) }

  static func dateOnly(_ d: Date) -> String { ISODate.dateOnly(d) }
}

/// The formatters `ValueConversion.date` tries, made once: creating them
/// costs far more than parsing with them.
///
/// Only used under the lock of ``shared``: ICU's parsers keep state while
/// they parse.
private struct DateParsers {
  static let shared = Locked(DateParsers())

  private let iso: [ISO8601DateFormatter]
  /// Patterns of HTTP, RFC 2822 and common page dates; true when the pattern has a time.
  private let patterns: [(DateFormatter, Bool)]

  private init() {
    iso = [[.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds]].map { (options: ISO8601DateFormatter.Options) in
      let f = ISO8601DateFormatter()
      f.formatOptions = options
      return f
    }
    patterns = [
      "EEE, dd MMM yyyy HH:mm:ss zzz", "EEE, d MMM yyyy HH:mm:ss Z", "d MMM yyyy HH:mm:ss Z", "yyyy-MM-dd HH:mm:ss",
      "yyyy-MM-dd'T'HH:mm:ss", "MMMM d, yyyy", "MMM d, yyyy",
    ].map { pattern in
      let f = DateFormatter()
      f.locale = Locale(identifier: "en_US_POSIX")
      f.timeZone = TimeZone(identifier: "UTC")
      f.dateFormat = pattern
      return (f, pattern.contains("HH"))
    }
  }

  /// The first reading of `text` that parses, and whether it had a time of day.
  func date(from text: String) -> (Date, Bool)? {
    for f in iso {
      if let d = f.date(from: text) { return (d, true) }
    }
    for (f, hasTime) in patterns {
      if let d = f.date(from: text) { return (d, hasTime) }
    }
    return nil
  }
}

extension FieldType {
  /// True for `number` and `integer`: a field whose text must read as a
  /// number, and is missing (not null) when it does not.
  var isNumeric: Bool { self == .number || self == .integer }
}
