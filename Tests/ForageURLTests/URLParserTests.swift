import Testing

@testable import ForageURL

struct URLParserTests {
  /// Random strings over bytes that matter to the parser: parsing never
  /// traps, and a parsed URL's href parses to itself (idempotence).
  @Test func test_randomInputs_parseAndReparseToTheSameHref() {
    let alphabet = Array("ab:/\\?#@[]%2e.1fFx-~ \t\u{0}é例ＡSX".unicodeScalars)
    let bases = [nil, WebURL("http://h/a/b?q#f"), WebURL("file:///C:/x/y"),
      WebURL("foo://h/a"), WebURL("mailto:x")]
    for seed in 0..<3000 {
      var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1
      var s = ["http://", "https:", "file:", "foo:", "", "//", "x:"][seed % 7]
      for _ in 0..<(seed % 24) {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        s.unicodeScalars.append(alphabet[Int(state % UInt64(alphabet.count))])
      }
      let base = bases[seed % bases.count]
      guard let url = WebURL(s, base: base) else { continue }
      let again = WebURL(url.href)
      #expect(again?.href == url.href, "seed \(seed): \(s.debugDescription) -> \(url.href)")
      #expect(again?.layout == url.layout, "seed \(seed): \(s.debugDescription)")
    }
  }
}
