import Foundation

/// Reads the dates feeds carry (RFC 822 and RFC 3339 as specified, and the
/// broken forms found in practice: no weekday or a wrong one, full month
/// names, two-digit years, no seconds, no zone, `+00:00` zones in RFC 822,
/// a space for the `T`) and writes them as ISO 8601 UTC.
///
///     FeedDate.iso("Sat, 07 Sep 2002 00:00:01 GMT")   // "2002-09-07T00:00:01Z"
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc822#section-5>,
///   <https://www.rfc-editor.org/rfc/rfc3339>
enum FeedDate {
  private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
  private static let zones: [String: Int] = [
    "ut": 0, "utc": 0, "gmt": 0, "z": 0, "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6,
    "pst": -8, "pdt": -7, "bst": 1, "cet": 1, "cest": 2, "ist": 0, "a": -1, "m": -12, "n": 1, "y": 12,
  ]

  /// The date as `yyyy-MM-ddTHH:mm:ssZ`, or nil when it cannot be read or
  /// falls outside the years 1000–9999 (four digits; found by the feed
  /// fuzzer: "2002004" was read as a year).
  static func iso(_ text: String) -> String? {
    guard let seconds = parse(text), (civil(1000, 1, 1)..<civil(10000, 1, 1)).contains(seconds) else { return nil }
    return ISODate.string(Date(timeIntervalSince1970: TimeInterval(seconds)))
  }

  /// Seconds since 1970 in UTC, or nil.
  static func parse(_ text: String) -> Int64? {
    let t = Array(text.utf8.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A }.reversed().drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A }.reversed())
    guard t.count >= 4, t.count < 100 else { return nil }
    if let v = iso8601(t) { return v }
    return rfc822(String(decoding: t, as: UTF8.self))
  }

  /// `2003-12-31T10:14:55Z`, `2003-12-31 10:14:55+01:00`, `2003-12-31T10:14Z`,
  /// `2003-12-31`, `2003-12`, `2003`, `20031231T101455Z`.
  private static func iso8601(_ t: [UInt8]) -> Int64? {
    var i = 0
    func digits(_ n: Int) -> Int? {
      guard i + n <= t.count else { return nil }
      var v = 0
      for k in 0..<n {
        let c = t[i + k]
        guard c >= 0x30 && c <= 0x39 else { return nil }
        v = v * 10 + Int(c - 0x30)
      }
      i += n
      return v
    }
    func eat(_ c: Character) -> Bool {
      if i < t.count && t[i] == c.asciiValue! { i += 1; return true }
      return false
    }
    guard let year = digits(4) else { return nil }
    var month = 1, day = 1, hour = 0, minute = 0, second = 0, offset = 0
    let dashed = eat("-")
    if dashed || i < t.count {
      guard let m = digits(2) else { return i == 4 && t.count == 4 ? civil(year, 1, 1) : nil }
      month = m
      if dashed { _ = eat("-") }
      if let d = digits(2) { day = d }
    }
    if i < t.count && (t[i] == UInt8(ascii: "T") || t[i] == UInt8(ascii: "t") || t[i] == 0x20) {
      i += 1
      while i < t.count && t[i] == 0x20 { i += 1 }
      guard let h = digits(2) else { return nil }
      hour = h
      _ = eat(":")
      guard let m = digits(2) else { return nil }
      minute = m
      if eat(":") || (i < t.count && t[i] >= 0x30 && t[i] <= 0x39) { second = digits(2) ?? 0 }
      if eat(".") || eat(",") { while i < t.count && t[i] >= 0x30 && t[i] <= 0x39 { i += 1 } }
      while i < t.count && t[i] == 0x20 { i += 1 }
      if i < t.count {
        let c = t[i]
        if c == UInt8(ascii: "Z") || c == UInt8(ascii: "z") {
          i += 1
        } else if c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
          i += 1
          guard let oh = digits(2) else { return nil }
          _ = eat(":")
          let om = digits(2) ?? 0
          offset = (oh * 60 + om) * (c == UInt8(ascii: "-") ? -1 : 1)
        } else {
          let rest = String(decoding: t[i...], as: UTF8.self).lowercased()
          guard let z = zones[rest] else { return nil }
          offset = z * 60
          i = t.count
        }
      }
    }
    guard i == t.count, (1...12).contains(month), (1...31).contains(day), hour <= 24, minute < 60, second <= 60 else {
      return nil
    }
    return civil(year, month, day) + Int64(hour * 3600 + minute * 60 + second) - Int64(offset * 60)
  }

  /// RFC 822 and its relatives, read as words in any order: a month name,
  /// a day, a year, a time, a zone; the weekday is ignored.
  private static func rfc822(_ text: String) -> Int64? {
    var words: [Substring] = []
    var current = ""
    func push() { if !current.isEmpty { words.append(Substring(current)); current = "" } }
    for c in text.lowercased() {
      if c == " " || c == "," || c == "\t" || (c == "." && !current.contains(":")) || c == "\n" {
        push()
      } else if (c == "+" || c == "-") && !current.isEmpty && current.allSatisfy({ $0.isNumber || $0 == ":" }) {
        push()
        current.append(c)
      } else {
        current.append(c)
      }
    }
    push()
    var month: Int?, day: Int?, year: Int?, hour = 0, minute = 0, second = 0, offset = 0
    for w in words {
      if w.contains(":") && w.first?.isNumber == true {
        let parts = w.split(separator: ":").map { Int($0) }
        guard parts.count >= 2, let h = parts[0], let m = parts[1] else { return nil }
        hour = h
        minute = m
        second = parts.count > 2 ? (parts[2] ?? 0) : 0
      } else if (w.first == "+" || w.first == "-") && w.count >= 3 {
        let digits = w.dropFirst().filter(\.isNumber)
        guard let v = Int(digits) else { continue }
        let (oh, om) = digits.count <= 2 ? (v, 0) : (v / 100, v % 100)
        offset = (oh * 60 + om) * (w.first == "-" ? -1 : 1)
      } else if let n = Int(w) {
        if w.count >= 3 || n > 31 { year = n } else if day == nil { day = n } else if year == nil { year = n }
      } else if let m = months.firstIndex(where: { w.hasPrefix($0) }), w.count >= 3 {
        month = m + 1
      } else if let z = zones[String(w)] {
        offset = z * 60
      }
    }
    guard let month, let day, var year, (1...31).contains(day), year <= 9999, hour <= 24, minute < 60, second <= 60 else {
      return nil
    }
    if year < 100 { year += year < 50 ? 2000 : 1900 }
    return civil(year, month, day) + Int64(hour * 3600 + minute * 60 + second) - Int64(offset * 60)
  }

  /// Seconds from 1970-01-01 to midnight UTC of a proleptic Gregorian date.
  private static func civil(_ y: Int, _ m: Int, _ d: Int) -> Int64 {
    // Howard Hinnant's days_from_civil.
    let y = Int64(m <= 2 ? y - 1 : y)
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let mp = Int64(m > 2 ? m - 3 : m + 9)
    let doy = (153 * mp + 2) / 5 + Int64(d) - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return (era * 146_097 + doe - 719_468) * 86_400
  }
}
