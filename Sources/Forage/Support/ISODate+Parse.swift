import Foundation

extension ISODate {
  /// The instant ISO 8601 text names, read directly (no formatter): a date
  /// (`2026-11-29`, midnight UTC), or a date and time with seconds, an
  /// optional fraction and a zone (`2026-11-29T19:33:15Z`,
  /// `2026-11-29T19:33:15.250+01:00`; `t`, `z` and a space for `T` too).
  /// Without a zone the time is read as UTC, as Forage stores its dates.
  /// Nil for any other text.
  ///
  /// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc3339#section-5.6>
  static func parse(_ text: String) -> Date? {
    var text = text
    return text.withUTF8 { parse(bytes: $0) }
  }

  private static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> Date? {
    var i = 0
    /// `count` digits at `i`, as a number.
    func digits(_ count: Int) -> Int? {
      guard i + count <= b.count else { return nil }
      var n = 0
      for j in i..<(i + count) {
        let d = Int(b[j]) - 0x30
        guard d >= 0, d <= 9 else { return nil }
        n = n * 10 + d
      }
      i += count
      return n
    }
    func expect(_ c: UInt8) -> Bool {
      guard i < b.count, b[i] == c else { return false }
      i += 1
      return true
    }
    guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
      let day = digits(2), (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
    else { return nil }
    let days = daysFromCivil(year: year, month: month, day: day)
    if i == b.count { return Date(timeIntervalSince1970: Double(days) * 86_400) }
    guard b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: "t") || b[i] == UInt8(ascii: " ") else { return nil }
    i += 1
    guard let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2), expect(UInt8(ascii: ":")),
      let second = digits(2), hour < 24, minute < 60, second < 61
    else { return nil }
    var fraction = 0.0
    if i < b.count, b[i] == UInt8(ascii: ".") {
      i += 1
      var scale = 0.1
      let start = i
      while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
        fraction += Double(b[i] - 0x30) * scale
        scale /= 10
        i += 1
      }
      guard i > start else { return nil }
    }
    var offset = 0
    if i < b.count {
      switch b[i] {
      case UInt8(ascii: "Z"), UInt8(ascii: "z"): i += 1
      case UInt8(ascii: "+"), UInt8(ascii: "-"):
        let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
        i += 1
        guard let h = digits(2), expect(UInt8(ascii: ":")), let m = digits(2), h < 24, m < 60 else { return nil }
        offset = sign * (h * 3600 + m * 60)
      default: return nil
      }
    }
    guard i == b.count else { return nil }
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
    return Date(timeIntervalSince1970: Double(seconds) + fraction)
  }

  private static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  /// Days from 1970-01-01 to a proleptic Gregorian date (the inverse of
  /// `civil`, in the same March-based eras).
  private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let monthIndex = month > 2 ? month - 3 : month + 9
    let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}
