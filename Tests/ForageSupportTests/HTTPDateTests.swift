import Testing

@testable import ForageSupport

@Suite struct HTTPDateTests {
  @Test func test_format_matchesRFCExample() {
    #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
    #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
    #expect(HTTPDate.format(1_709_164_800) == "Thu, 29 Feb 2024 00:00:00 GMT")
  }

  @Test func test_parse_invertsFormat() {
    for seconds in stride(from: -86_400 * 400, through: 4_000_000_000, by: 7_777_777) {
      #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds, "seconds \(seconds)")
    }
  }

  @Test func test_parse_rejectsOtherFormats() {
    #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
    #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == nil)
    #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 UTC") == nil)
  }

  @Test func test_parse_acceptsAOneDigitDay_asRetryAfterAlwaysDid() {
    #expect(HTTPDate.parse("Sun, 6 Nov 1994 08:49:37 GMT") == 784_111_777)
  }

  @Test func test_parse_rejectsFieldsOutOfRangeOrNotDigits() {
    #expect(HTTPDate.parse("Sun, 06 Nov 1994 24:00:00 GMT") == nil)
    #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:60:00 GMT") == nil)
    #expect(HTTPDate.parse("Sun, 32 Nov 1994 08:49:37 GMT") == nil)
    #expect(HTTPDate.parse("Sun, +6 Nov 1994 08:49:37 GMT") == nil)
    #expect(HTTPDate.parse("Sun, 06 Nov +994 08:49:37 GMT") == nil)
    #expect(HTTPDate.parse("Sun, 06 Nov 94 08:49:37 GMT") == nil)
    #expect(HTTPDate.parse("Sun, 06 Nov 1994 8:49:37 GMT") == nil)
  }
}
