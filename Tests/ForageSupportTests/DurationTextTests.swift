import Testing

@testable import ForageSupport

@Suite struct DurationTextTests {
  @Test func test_parsing_everyUnit() {
    #expect(Duration(parsing: "500ms") == .milliseconds(500))
    #expect(Duration(parsing: "30s") == .seconds(30))
    #expect(Duration(parsing: "1.5m") == .seconds(90))
    #expect(Duration(parsing: "6h") == .seconds(6 * 3600))
    #expect(Duration(parsing: "1d") == .seconds(86_400))
    #expect(Duration(parsing: " 15m\n") == .seconds(900))
  }

  @Test func test_parsing_rejectsWhatIsNotADuration() {
    for text in ["", "m", "15", "-1s", "1 x", "infs", "nanms", "1e300d", "s30"] {
      #expect(Duration(parsing: text) == nil, "\(text)")
    }
  }

  @Test func test_trimmingWhitespace() {
    #expect("abc".trimmingWhitespace() == "abc")
    #expect(" \t a b \n\u{00A0}".trimmingWhitespace() == "a b")
    #expect("   ".trimmingWhitespace() == "")
  }
}
