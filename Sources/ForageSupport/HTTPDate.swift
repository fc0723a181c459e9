/// IMF-fixdate formatting and parsing (`Sun, 06 Nov 1994 08:49:37 GMT`), by hand so it
/// does not depend on locale or `DateFormatter`.
///
/// The one owner of HTTP dates: the engine reads `Retry-After` with it (ForageHTTP's
/// `RetryPolicy`), and the test server writes `Last-Modified` and reads
/// `If-Modified-Since` with it. It lives here, not in ForageHTTP, because the test
/// server depends on nothing but this target.
///
///     HTTPDate.format(784_111_777)                       // "Sun, 06 Nov 1994 08:49:37 GMT"
///     HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")    // 784111777
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9110#name-date-time-formats>
package enum HTTPDate {
  static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
  static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

  /// Formats seconds since 1970 (UTC) as an IMF-fixdate.
  package static func format(_ seconds: Int) -> String {
    let dayNumber = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    let secondOfDay = seconds - dayNumber * 86_400
    let (year, month, day) = civil(fromDays: dayNumber)
    let weekday = days[((dayNumber % 7) + 7) % 7]
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(weekday), \(two(day)) \(months[month - 1]) \(year) "
      + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
  }

  /// Parses an IMF-fixdate into seconds since 1970 (UTC); nil for anything else (the
  /// obsolete formats included, and fields out of range). A one-digit day is accepted.
  package static func parse(_ text: String) -> Int? {
    func digits(_ s: Substring) -> Bool { s.utf8.allSatisfy { $0 &- 0x30 < 10 } }
    let parts = text.split(separator: " ")
    guard parts.count == 6, parts[5] == "GMT", parts[0].count == 4, parts[0].hasSuffix(","),
      digits(parts[1]), let day = Int(parts[1]), (1...2).contains(parts[1].count),
      let monthIndex = months.firstIndex(of: String(parts[2])),
      digits(parts[3]), let year = Int(parts[3]), parts[3].count == 4
    else { return nil }
    let clock = parts[4].split(separator: ":")
    guard clock.count == 3, clock.allSatisfy({ $0.count == 2 && digits($0) }),
      let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
      (1...31).contains(day), hour < 24, minute < 60, second < 61
    else { return nil }
    return days(fromCivil: year, monthIndex + 1, day) * 86_400 + hour * 3600 + minute * 60 + second
  }

  /// Days since 1970-01-01 for a proleptic Gregorian date (eras of 400 years).
  static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let shiftedMonth = month > 2 ? month - 3 : month + 9  // March = 0
    let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The inverse of ``days(fromCivil:_:_:)``.
  static func civil(fromDays n: Int) -> (year: Int, month: Int, day: Int) {
    let z = n + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }
}
