import Foundation
import Testing

@testable import ForageURL

/// The fast path must give exactly what the full parser gives (href and
/// every offset) whenever it takes a URL.
struct URLParserFastPathTests {
  /// Compares both paths; returns whether the fast path took the input.
  @discardableResult
  func agree(_ input: String, base: WebURL?, sourceLocation: SourceLocation = #_sourceLocation)
    -> Bool
  {
    guard let fast = FastPath.parse(input, base: base) else { return false }
    let full = try? URLParser.parseFully(input, base: base)
    #expect(fast.href == full?.href, "\(input.debugDescription) base \(base?.href ?? "nil")",
      sourceLocation: sourceLocation)
    #expect(fast.layout == full?.layout, "\(input.debugDescription) base \(base?.href ?? "nil")",
      sourceLocation: sourceLocation)
    return true
  }

  @Test func test_fastPath_takesCommonURLs() {
    let base = WebURL("https://www.example.com/category/shoes/index.html?x=1#f")!
    #expect(agree("https://www.example.com/products/item-12345?ref=home&utm_source=news", base: nil))
    #expect(agree("http://example.com:8080/a/b?c#d", base: nil))
    #expect(agree("http://127.0.0.1:8080/product/1.html", base: nil))
    #expect(agree("http://1.2.3.4/", base: nil))
    #expect(agree("http://0.0.0.0/", base: nil))
    #expect(agree("http://255.255.255.255/x", base: nil))
    #expect(agree("/products/item?ref=home", base: base))
    #expect(agree("item-99.html", base: base))
    #expect(agree("a/b/c.html?q#z", base: base))
    #expect(agree("?page=3", base: base))
    #expect(agree("#top", base: base))
    #expect(agree("https://other.example/x", base: base))
    #expect(agree("//cdn.example.net/img/a.png", base: base))
    #expect(agree("../listing/page/2", base: base))
    #expect(agree("./a/b", base: base))
    #expect(agree("../../../../x?y#z", base: base))
    #expect(agree("../", base: base))
    #expect(agree("./", base: base))
    for b in ["http://h", "http://h/", "http://h//a/b", "http://h/a/b/", "http://h/a//b"] {
      for ref in ["../x", "../../x", "./../x", "../", "x/../", ".././y"] {
        agree(ref, base: WebURL(b)!)
      }
    }
  }

  @Test func test_fastPath_leavesTrickyURLsToTheFullParser() {
    let base = WebURL("https://h/a/b")!
    for input in [
      "HTTP://h/", "http://H/", "http://h", "http://h:80/", "http://h:0080/", "http://01.2.3.4/", "http://1.2.3.04/",
      "http://1.2.3.256/", "http://1.2.3/", "http://1.2.3.4.5/", "http://1.2.3.4./", "http://1..2.3/",
      "http://a.1.2.3/", "http://1.2.3.4x/",
      "http://0x7f.1/", "http://xn--bcher-kva.de/", "http://u@h/", "http://h/a/../b",
      "http://h/%2e/b", "http://h/a b", "http://h/\\x", " http://h/", "http://h/é",
      "file:///x", "http:x",
    ] {
      #expect(!agree(input, base: nil), "\(input)")
    }
    for ref in ["", "/\\x", "..//x", ".//x", ".", "..", "http:x", " x", "x\ty", "\\x", "./.", "a/.."] {
      #expect(!agree(ref, base: base), "\(ref.debugDescription)")
    }
  }

  @Test func test_fastPath_agreesOnConformanceData() throws {
    guard let file = WHATWGURLTests.dataFile else {
      print("../shared/testdata/whatwg-url missing: skipped")
      return
    }
    let entries = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [Any] ?? []
    var taken = 0
    var bases: Set<String> = []
    var inputs: [String] = []
    for case let c as [String: Any] in entries {
      guard let input = c["input"] as? String else { continue }
      inputs.append(input)
      let base = (c["base"] as? String).flatMap { WebURL($0) }
      if let b = c["base"] as? String { bases.insert(b) }
      if agree(input, base: base) { taken += 1 }
    }
    // Every input against every base, for more combinations.
    for b in bases.sorted() {
      guard let base = WebURL(b) else { continue }
      for input in inputs where agree(input, base: base) { taken += 1 }
    }
    #expect(taken > 100)
  }

  @Test func test_fastPath_agreesOnGeneratedReferences() {
    // Pieces that combine into many valid and invalid references; the seed
    // is the loop index, printed on failure through the input text.
    let pieces = ["a", "/", "//", ".", "..", "?", "#", "./", "../", "../../", "%2e", "%2E", "x.html", ":", "8080",
      "h", "\\", "Z", "~", "%", "0x1", "9", "@", "-", "xn--", "&", "="]
    let bases = ["http://h/", "https://h:8443/a/b?q#f", "ws://h/a/", "http://u:p@h/a",
      "ftp://h/a/b/"].map { WebURL($0)! }
    var seed: UInt64 = 42
    var taken = 0
    for _ in 0..<5000 {
      var s = ""
      seed = seed &* 6364136223846793005 &+ 1442695040888963407
      var r = seed >> 20
      for _ in 0..<(1 + Int(r % 7)) {
        r /= 7
        s += pieces[Int(r % UInt64(pieces.count))]
        r /= UInt64(pieces.count)
      }
      for (input, base) in [(s, bases[Int(seed % 5)]), ("http://" + s, nil), ("https://h/" + s, nil)]
      where agree(input, base: base) {
        taken += 1
      }
    }
    #expect(taken > 1000)
  }
}
