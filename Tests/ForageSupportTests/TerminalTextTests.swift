import Testing

@testable import ForageSupport

/// Issue 25: 8-bit control characters (U+0080–U+009F) are escaped wherever
/// 7-bit ones are, before text reaches a terminal.
@Suite struct TerminalTextTests {
  @Test func test_issue25_escaping_writesC0DelAndC1AsEscapes() {
    #expect(TerminalText.escaping("plain é 😀") == "plain é 😀")
    #expect(TerminalText.escaping("a\u{1B}[2Jb") == "a\\u001b[2Jb")
    #expect(TerminalText.escaping("a\u{9B}2Jb\u{85}c\u{7F}") == "a\\u009b2Jb\\u0085c\\u007f")
    #expect(TerminalText.escaping("a\nb\tc") == "a\\u000ab\\u0009c")
    #expect(TerminalText.escaping("a\nb\tc\u{9B}", keepingLines: true) == "a\nb\tc\\u009b")
    // U+00A0 and above are text.
    #expect(TerminalText.escaping("\u{A0}\u{FF}") == "\u{A0}\u{FF}")
  }

  @Test func test_issue25_escapingJSON_stringAndBytesAgree() {
    let json = "{\"a\":\"x\u{9B}31m\u{80}\u{9F}\u{7F}é\"}"
    let expected = #"{"a":"x\u009b31m\u0080\u009f\u007fé"}"#
    #expect(TerminalText.escapingJSON(json) == expected)
    #expect(TerminalText.escapingJSON(Array(json.utf8)) == Array(expected.utf8))
    let clean = Array(#"{"a":"\u001b é"}"#.utf8)
    #expect(TerminalText.escapingJSON(clean) == clean)
    // A C2 lead byte of a character above U+009F is kept.
    #expect(TerminalText.escapingJSON(Array("\u{A9}".utf8)) == Array("\u{A9}".utf8))
  }
}
