import Foundation
import ForageStore
import Testing

@testable import Forage

/// Issue 25: `forage changes` shows control characters from pages as
/// escapes, the 8-bit ones (U+009B, a terminal's CSI) as the 7-bit ones.
@Suite struct Issue25ChangeTextTests {
  static func hasRawControl(_ s: String) -> Bool {
    s.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) }
  }

  @Test func test_issue25_changeLinesAndJSONEscapeEightBitControls() throws {
    let long = "A long description\u{9B}2J that goes on\u{1B}[31m for a while\u{85}and then some more words here."
    let change = RecordChange(
      id: 1, source: "shop", key: "Lamp\u{9B}31m", kind: .changed, url: "https://x.org/\u{9B}",
      beforeJSON: #"{"title":"Old\u009b","text":"short"}"#,
      afterJSON: "{\"title\":\"New\u{9B}\",\"text\":\(JSONValue.string(long).serialized())}",
      at: Date(timeIntervalSince1970: 1_000), run: nil)
    for colour in [false, true] {
      let lines = ChangeText.lines(change, colour: colour)
      let text = lines.joined(separator: "\n").replacingOccurrences(of: "\u{1B}[", with: "")  // the colours themselves
      #expect(!Self.hasRawControl(text), "\(text.debugDescription)")
      #expect(lines[0].contains("Lamp\\u009b31m"), "\(lines[0])")
      #expect(text.contains("\\u009b2J") && text.contains("\\u001b[31m") && text.contains("\\u0085"), "\(text)")
    }
    let json = ChangeText.json(change)
    #expect(!Self.hasRawControl(json), "\(json.debugDescription)")
    #expect(json.contains(#""key":"Lamp\u009b31m""#))
    // Still the same JSON.
    #expect(try JSONValue.parse(json)["key"] == .string("Lamp\u{9B}31m"))
  }
}
