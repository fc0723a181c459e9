import Foundation
import Testing
@testable import Forage

/// `ValueConversion.date` over every form it reads, and from many tasks at once.
@Suite struct DateConversionTests {
  static let dates: [(String, String?)] = [
    ("2026-11-29", "2026-11-29"),
    ("2026-11-29T19:33:15Z", "2026-11-29T19:33:15Z"),
    ("2026-11-29T20:33:15+01:00", "2026-11-29T19:33:15Z"),
    ("2026-11-29T19:33:15.250Z", "2026-11-29T19:33:15Z"),
    ("Sun, 29 Nov 2026 19:33:15 GMT", "2026-11-29T19:33:15Z"),
    ("Sun, 29 Nov 2026 21:33:15 +0200", "2026-11-29T19:33:15Z"),
    ("29 Nov 2026 19:33:15 -0000", "2026-11-29T19:33:15Z"),
    ("2026-11-29 19:33:15", "2026-11-29T19:33:15Z"),
    ("2026-11-29T19:33:15", "2026-11-29T19:33:15Z"),
    ("November 29, 2026", "2026-11-29"),
    ("  Nov 29, 2026 ", "2026-11-29"),
    ("yesterday", nil),
    ("2026-13-45T99:99:99Z", nil),
  ]

  @Test(arguments: dates)
  func test_date_normalizesEachFormToUTC(_ input: String, _ expected: String?) {
    #expect(ValueConversion.date(input) == expected)
  }

  /// The shared parsers are used from many tasks at once (pages are
  /// processed in parallel): every answer stays right.
  @Test func test_date_fromManyTasksAtOnce() async {
    let wrong = await withTaskGroup(of: Int.self) { group in
      for t in 0..<8 {
        group.addTask {
          var wrong = 0
          for i in 0..<200 {
            let (input, expected) = Self.dates[(t + i) % Self.dates.count]
            if ValueConversion.date(input) != expected { wrong += 1 }
          }
          return wrong
        }
      }
      return await group.reduce(0, +)
    }
    #expect(wrong == 0)
  }
}
