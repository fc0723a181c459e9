import Testing
@testable import Forage

/// The JSON parser's quick paths (strings without escapes made from their
/// bytes at once, duplicate keys found by a scan while an object is small)
/// give what the general paths give.
@Suite struct JSONParserStringsAndKeysTests {
  @Test func test_stringsWithAndWithoutEscapes_parseTheSame() throws {
    let value = try JSONValue.parse(#"["plain", "caf\u00e9 \"q\" \\ \n", "é😀", "", "tail\t"]"#)
    #expect(value == .array([.string("plain"), .string("café \"q\" \\ \n"), .string("é😀"), .string(""), .string("tail\t")]))
  }

  @Test func test_aControlCharacterOrAnOpenString_isStillAnError() {
    #expect(throws: JSONSyntaxError.self) { try JSONValue.parse("[\"a\u{01}b\"]") }
    #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(#"["never closed"#) }
    #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(#"["escaped then open \n"#) }
  }

  @Test func test_duplicateKeys_areFound_inSmallAndLargeObjects() throws {
    for count in [2, 15, 16, 17, 40] {
      let members = (0..<count).map { #""k\#($0)":\#($0)"# }
      let ok = "{" + members.joined(separator: ",") + "}"
      guard case .object(let parsed) = try JSONValue.parse(ok) else {
        Issue.record("not an object")
        continue
      }
      #expect(parsed.count == count)
      let twice = "{" + (members + [#""k\#(count - 1)":0"#]).joined(separator: ",") + "}"
      #expect(throws: JSONSyntaxError.self, "\(count) members") { try JSONValue.parse(twice) }
      do {
        _ = try JSONValue.parse(twice)
      } catch {
        #expect(error.message == "duplicate key \"k\(count - 1)\"")
      }
    }
  }

  @Test func test_wholeNumbers_readDirectly_equalThoseReadAsText() throws {
    let texts = ["0", "-0", "7", "-42", "123456789012345", "-999999999999999", "1234567890123456", "12.5", "1e3", "-0.25"]
    for text in texts {
      #expect(try JSONValue.parse(text) == .number(Double(text)!), "\(text)")
    }
    #expect(try JSONValue.parse("-0") == .number(-0.0))
    #expect(throws: JSONSyntaxError.self) { try JSONValue.parse("012") }
  }
}
