import Testing

@testable import ForageTestSupport

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
}
