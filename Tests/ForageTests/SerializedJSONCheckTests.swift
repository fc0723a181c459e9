import ForageSupport
import Testing

@testable import Forage

/// `SerializedJSONCheck`: a text it accepts is exactly what parsing and
/// serializing it again gives, so an export may write it unparsed.
@Suite struct SerializedJSONCheckTests {
  /// Parsed and serialized again; nil when the text does not parse.
  func reserialized(_ text: String) -> String? { (try? JSONValue.parse(text))?.serialized() }

  @Test func test_textsAsTheSerializerWritesThem_areAccepted() {
    var check = SerializedJSONCheck()
    for text in [
      #"{"price":12.5,"tags":["a","b"],"n":null,"t":true,"f":false}"#, "{}", "[]", "0", "-3", "123456789012345",
      "1e+20", "-0.5", "5e-324", "0.1", #""a\"b\\c\nd\re\tf\u0001\u001f""#, "\"caf\u{E9}\"",
      #"{"a":{"b":[{"c":[]}]}}"#,
    ] {
      let accepted = check.isSerialized(text)
      #expect(accepted, "\(text)")
      #expect(reserialized(text) == text, "\(text)")
    }
  }

  /// Each of these would be written otherwise (or does not parse), so an
  /// export parses it.
  @Test func test_otherSpellings_areNot() {
    var check = SerializedJSONCheck()
    for text in [
      #"{"a": 1}"#, " {}", "{} ", #"{"a":1.0}"#, "-0", "01", "1E+20", "1e20", "1234567890123456", #""\/""#,
      #""\u0041""#, #""\u000a""#, #""\u001F""#, #""\b""#, "\"a\u{1}\"", #"{"a":1,"a":2}"#, "{\"caf\u{E9}\":1}", #"{"caf\u00e9":1}"#,
      "[1,]", "{", #"{"a"}"#, "nul", "truex", "", "1e400", #"{"a":1}{}"#,
    ] {
      let accepted = check.isSerialized(text)
      #expect(!accepted, "\(text)")
    }
  }

  /// Random values, serialized, are accepted; random edits of them are
  /// accepted only when they too read back as themselves.
  @Test func test_seededRandomTexts_acceptedOnlyWhenTheyReadBackAsThemselves() {
    let pieces = [
      "a", "B", "\"", "\\", "\n", "\u{1}", "\u{1F}", "é", "e\u{301}", "🙂", " ", "{", "]", ",", ":", "\u{7F}",
    ]
    let numbers: [Double] = [0, 1, -1, 0.5, -0.25, 12.5, 1e15, 1e20, 123_456_789_012_345, Double.leastNonzeroMagnitude, 1.5e-7, 3e300]
    let edits = [" ", "0", "1", ".", "e", "E", "+", "-", "\\", "\"", "u", "{", "}", "[", "]", ",", ":", "n", "/"]
    for seed in 0..<40 {
      var random = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15)
      func string() -> String {
        (0..<Int.random(in: 0..<4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
      }
      func value(_ depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth < 3 ? 7 : 5), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .number(numbers.randomElement(using: &random)!)
        case 3, 4: return .string(string())
        case 5: return .array((0..<Int.random(in: 0..<4, using: &random)).map { _ in value(depth + 1) })
        default:
          var members: [(key: String, value: JSONValue)] = []
          for _ in 0..<Int.random(in: 0..<4, using: &random) {
            let key = Bool.random(using: &random) ? "k\(Int.random(in: 0..<5, using: &random))" : string()
            if !members.contains(where: { $0.key == key }) { members.append((key, value(depth + 1))) }
          }
          return .object(members)
        }
      }
      var check = SerializedJSONCheck()
      for _ in 0..<50 {
        let text = value(0).serialized()
        // Accepted unless a key is not ASCII (then left to the parser).
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
          let accepted = check.isSerialized(text)
          #expect(accepted, "seed \(seed): \(text)")
        }
        var bytes = Array(text.utf8)
        let at = Int.random(in: 0...bytes.count, using: &random)
        let edit = Array(edits.randomElement(using: &random)!.utf8)
        if Bool.random(using: &random) || at == bytes.count {
          bytes.insert(contentsOf: edit, at: at)
        } else {
          bytes.replaceSubrange(at...at, with: edit)
        }
        let edited = String(decoding: bytes, as: UTF8.self)
        if check.isSerialized(edited) {
          #expect(reserialized(edited) == edited, "seed \(seed): \(edited)")
        }
      }
    }
  }
}
