import Testing
@testable import Forage

@Suite struct JSONValueTests {
  @Test func test_parse_keepsKeyOrderAndTypes() throws {
    let v = try JSONValue.parse(#"{"b": 1, "a": [true, null, "x\u00e9\n"], "c": -2.5e1}"#)
    guard case .object(let m) = v else { Issue.record("not an object"); return }
    #expect(m.map(\.key) == ["b", "a", "c"])
    #expect(v["a"]?[0] == .bool(true))
    #expect(v["a"]?[1] == .null)
    #expect(v["a"]?[2] == .string("xé\n"))
    #expect(v["c"] == .number(-25))
  }

  @Test func test_serialize_sortedKeysIsCanonical() throws {
    let a = try JSONValue.parse(#"{"b": 1, "a": 2}"#)
    let b = try JSONValue.parse(#"{"a": 2, "b": 1}"#)
    #expect(a.serialized(sortedKeys: true) == b.serialized(sortedKeys: true))
    #expect(a.serialized() == #"{"b":1,"a":2}"#)
  }

  /// Both orders written together read exactly as each written alone,
  /// nested objects (sorted only in the canonical form) included.
  @Test func test_serializedInBothOrders_matchesEachOrder() throws {
    let texts = [
      #"{"title": "T", "links": ["b", "a\"q"], "h1": null}"#,
      #"{"z": {"y": 1, "x": [2, {"d": 1, "c": "\n"}]}, "a": [{"k": 0, "j": true}], "m": 1.5}"#,
      #"[{"b": 1, "a": 2}]"#, #""plain""#, "{}", #"{"é": 1, "e": 2, "f": "\u0001"}"#,
    ]
    for text in texts {
      let value = try JSONValue.parse(text)
      let both = value.serializedInBothOrders()
      #expect(both.original == value.serialized(), "\(text)")
      #expect(both.sorted == value.serialized(sortedKeys: true), "\(text)")
    }
  }

  @Test func test_roundTrip_escapes() throws {
    let s = JSONValue.string("quote \" backslash \\ tab \t ctl \u{01} 😀")
    #expect(try JSONValue.parse(s.serialized()) == s)
  }

  @Test func test_surrogatePairs() throws {
    #expect(try JSONValue.parse(#""\ud83d\ude00""#) == .string("😀"))
  }

  @Test(arguments: ["{", "[1,]", "{\"a\" 1}", "01", "\"abc", "tru", "{\"a\":1,\"a\":2}", "[1] x", "\"\\q\""])
  func test_invalid_throws(_ text: String) {
    #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(text) }
  }

  /// Found by the JSON fuzzer: 1E+400 was read as infinity, which serializes
  /// as null, so a value did not survive being written and read again.
  @Test func test_numberBeyondDoubleRange_isAnError() throws {
    #expect(throws: JSONSyntaxError.self) { try JSONValue.parse("1E+400") }
    #expect(throws: JSONSyntaxError.self) { try JSONValue.parse("[-1" + String(repeating: "0", count: 400) + "]") }
    do {
      _ = try JSONValue.parse("{\"a\": 1e999}")
      Issue.record("1e999 parsed")
    } catch {
      #expect(error.message == "the number 1e999 is too large (at most about 1.8e308)")
      #expect(error.column == 7)
    }
    // Tiny numbers round to zero, which writes back.
    let tiny = try JSONValue.parse("1e-400")
    #expect(try JSONValue.parse(tiny.serialized()) == tiny)
    #expect(try JSONValue.parse("1.7976931348623157e308") == .number(.greatestFiniteMagnitude))
  }

  @Test func test_deepNesting_isAnErrorNotACrash() {
    let deep = String(repeating: "[", count: 100_000)
    #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(deep) }
  }

  @Test func test_pointer() throws {
    let v = try JSONValue.parse(#"{"a": {"b/c": [10, {"~k": 3}]}}"#)
    #expect(JSONPointer.resolve("/a/b~1c/0", in: v) == .number(10))
    #expect(JSONPointer.resolve("/a/b~1c/1/~0k", in: v) == .number(3))
    #expect(JSONPointer.resolve("/a/missing", in: v) == nil)
    #expect(JSONPointer.resolve("/a/b~1c/01", in: v) == nil)
    #expect(JSONPointer.resolve("", in: v) == v)
    #expect(JSONPointer.validate("a/b") != nil)
    #expect(JSONPointer.validate("/a~2") != nil)
    #expect(JSONPointer.validate("/a~1b") == nil)
  }
}

@Suite struct ValueConversionTests {
  @Test(arguments: [
    ("$1,299.99", 1299.99), ("12,50 €", 12.5), ("Price: 7", 7), ("-3", -3), ("1.299.999,00", 1_299_999),
    ("€1.299,00", 1299), ("1,234,567", 1_234_567), ("3.5", 3.5), (".5", 0.5), ("$.99", 0.99),
    ("2.5e3", 2500),
  ])
  func test_number(_ text: String, _ expected: Double) {
    #expect(ValueConversion.number(in: text) == expected)
  }

  @Test func test_noNumber() {
    #expect(ValueConversion.number(in: "free") == nil)
    #expect(ValueConversion.convert("3.5", to: .integer) == nil)
    #expect(ValueConversion.convert("4", to: .integer) == .number(4))
  }

  @Test func test_bool() {
    #expect(ValueConversion.convert("Yes", to: .bool) == .bool(true))
    #expect(ValueConversion.convert("off", to: .bool) == .bool(false))
    #expect(ValueConversion.convert("maybe", to: .bool) == nil)
  }

  @Test func test_date() {
    #expect(ValueConversion.convert("2026-11-29", to: .date) == .string("2026-11-29"))
    #expect(ValueConversion.convert("2026-11-29T20:00:00+01:00", to: .date) == .string("2026-11-29T19:00:00Z"))
    #expect(ValueConversion.convert("Sun, 29 Nov 2026 19:00:00 GMT", to: .date) == .string("2026-11-29T19:00:00Z"))
    #expect(ValueConversion.convert("yesterday", to: .date) == nil)
  }
}
