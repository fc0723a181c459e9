import Foundation

/// ISO 8601 text of an instant in UTC, written directly: making an
/// `ISO8601DateFormatter` costs far more than formatting with it, and
/// exports format two dates per record.
///
///     ISODate.string(Date(timeIntervalSince1970: 0))                 // "1970-01-01T00:00:00Z"
///     ISODate.string(d, milliseconds: true)                          // "2026-11-29T19:33:15.250Z"
///     ISODate.dateOnly(d)                                            // "2026-11-29"
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc3339#section-5.6>
enum ISODate {
  /// `yyyy-MM-ddTHH:mm:ssZ`, or `yyyy-MM-ddTHH:mm:ss.SSSZ` with
  /// `milliseconds` (the instant rounded to the nearest millisecond, which
  /// keeps the store's millisecond dates exact).
  static func string(_ date: Date, milliseconds: Bool = false) -> String {
    let t = date.timeIntervalSince1970
    let totalMS = milliseconds ? Int64((t * 1000).rounded()) : Int64(t.rounded(.down)) * 1000
    let (seconds, ms) = floorDivide(totalMS, 1000)
    let (days, secondOfDay) = floorDivide(seconds, 86_400)
    var out = civil(days)
    out += "T" + pad(Int(secondOfDay / 3600), 2) + ":" + pad(Int(secondOfDay / 60 % 60), 2) + ":"
      + pad(Int(secondOfDay % 60), 2)
    if milliseconds { out += "." + pad(Int(ms), 3) }
    return out + "Z"
  }

  /// `yyyy-MM-dd` of the instant's UTC day.
  static func dateOnly(_ date: Date) -> String {
    civil(floorDivide(Int64(date.timeIntervalSince1970.rounded(.down)), 86_400).0)
  }

  /// The proleptic Gregorian date `days` after 1970-01-01, as `yyyy-MM-dd`.
  /// Days are counted in 400-year eras of 146,097 days, each starting on
  /// March 1 so that the leap day ends a year.
  private static func civil(_ days: Int64) -> String {
    let z = days + 719_468  // days since 0000-03-01
    let (era, dayOfEra) = floorDivide(z, 146_097)
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153  // 0 = March
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return pad(Int(year), 4) + "-" + pad(Int(month), 2) + "-" + pad(Int(day), 2)
  }

  private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
    let r = a % b
    return r < 0 ? (a / b - 1, r + b) : (a / b, r)
  }

  private static func pad(_ n: Int, _ width: Int) -> String {
    let digits = String(abs(n))
    let sign = n < 0 ? "-" : ""
    return sign + String(repeating: "0", count: max(0, width - digits.count)) + digits
  }
}
