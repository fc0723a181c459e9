import ForageSupport
import Testing

@testable import ForageHTML

/// Issue 25, part 3: deep nesting was quadratic. The parser caps the tree's
/// depth (`ParserOptions.maximumDepth`), its walks over the stack of open
/// elements and the list of active formatting elements stay bounded, and the
/// selector matcher remembers its long walks. No test here reads a clock:
/// they count the parser's and the matcher's steps, or check the tree.
@Suite struct DeepNestingTests {
  /// The depth of every element (the `html` element is at depth 1) and the
  /// number of elements named `name`.
  static func shape(_ doc: Document, counting name: String) -> (maxDepth: Int, named: Int) {
    var depth = [Int](repeating: 0, count: doc.nodes.count)
    var maxDepth = 0
    var named = 0
    var n = doc.following(doc.rootID, within: doc.rootID)
    while let c = n {
      if doc.kind(c) == .element {
        let d = (doc.parent(c).map { depth[Int($0.raw)] } ?? 0) + 1
        depth[Int(c.raw)] = d
        maxDepth = max(maxDepth, d)
        if doc.localName(c) == name { named += 1 }
      }
      n = doc.following(c, within: doc.rootID)
    }
    return (maxDepth, named)
  }

  static func nested(_ tag: String, _ count: Int, text: String = "x") -> String {
    "<!doctype html><body>" + String(repeating: "<\(tag)>\(text)", count: count)
      + String(repeating: "</\(tag)>", count: count)
  }

  @Test func test_issue25_60000NestedSpans_treeIsCappedAndKeepsEverything() throws {
    let n = 60_000
    let doc = Document.parse(html: Self.nested("span", n))
    let (maxDepth, spans) = Self.shape(doc, counting: "span")
    #expect(maxDepth <= ParserOptions.defaultMaximumDepth, "depth \(maxDepth)")
    #expect(maxDepth >= ParserOptions.defaultMaximumDepth - 1, "depth \(maxDepth)")
    #expect(spans == n)
    let body = try #require(doc.body)
    #expect(doc.textContent(of: body.id) == String(repeating: "x", count: n))
  }

  @Test func test_issue25_depthLimitIsAnOption() {
    let doc = Document.parse(html: Self.nested("div", 300), options: ParserOptions(maximumDepth: 40))
    let (maxDepth, divs) = Self.shape(doc, counting: "div")
    #expect(maxDepth == 40)
    #expect(divs == 300)
    // Within the limit, nothing changes.
    let shallow = Document.parse(html: Self.nested("div", 30), options: ParserOptions(maximumDepth: 40))
    #expect(Self.shape(shallow, counting: "div").maxDepth == 32)
  }

  /// Elements the insertion modes rely on are never closed early: nested
  /// tables past the limit still parse as tables, the tree stays bounded.
  @Test func test_issue25_nestedTablesPastTheLimit_stayBounded() {
    let doc = Document.parse(
      html: String(repeating: "<table><tr><td>x", count: 400), options: ParserOptions(maximumDepth: 64))
    let (maxDepth, tables) = Self.shape(doc, counting: "table")
    #expect(tables == 400)
    #expect(maxDepth <= 70, "depth \(maxDepth)")
  }

  @Test func test_issue25_deepPage_bodyDivCountIsRight() throws {
    let n = 20_000
    #expect(try Document.parse(html: Self.nested("div", n)).select("body div").count == n)
    let unlimited = Document.parse(html: Self.nested("div", n), options: ParserOptions(maximumDepth: .max))
    #expect(Self.shape(unlimited, counting: "div").maxDepth == n + 2)
    #expect(try unlimited.select("body div").count == n)
    #expect(try unlimited.select("div div").count == n - 1)
    #expect(try unlimited.select("html > body div").count == n)
  }

  // MARK: Work counted

  /// The matcher's steps for `css` over `doc` (a fresh matcher).
  static func matcherSteps(_ doc: Document, _ css: String) throws -> (count: Int, steps: Int) {
    let matcher = SelectorMatcher(try Selector(css), document: doc, scope: nil)
    var found: [Element] = []
    matcher.collect(under: doc.rootID.raw, into: &found)
    return (found.count, matcher.memo?.steps ?? 0)
  }

  /// Without the depth limit, `body div` over a chain of nested divs costs
  /// a few steps per element, not one per ancestor.
  @Test func test_issue25_descendantCombinator_isLinearOnADeepChain() throws {
    #if DEBUG
      let n = 8_000
      let doc = Document.parse(html: Self.nested("div", n), options: ParserOptions(maximumDepth: .max))
      for css in ["body div", "body div div", "html div", ":is(body) div"] {
        let (count, steps) = try Self.matcherSteps(doc, css)
        #expect(count == (css == "body div div" ? n - 1 : n), "\(css)")
        #expect(steps < 4 * n, "\(css): \(steps) steps for \(n) elements")
      }
      // A selector that matches nothing walks to the root once per element.
      let (none, steps) = try Self.matcherSteps(doc, "section div")
      #expect(none == 0)
      #expect(steps < 8 * n, "section div: \(steps) steps")
    #endif
  }

  @Test func test_issue25_subsequentSiblingCombinator_isLinearOnALongRun() throws {
    #if DEBUG
      let n = 8_000
      let html = "<body>" + String(repeating: "<p>x</p>", count: n / 2) + "<h2>t</h2>"
        + String(repeating: "<p>y</p>", count: n / 2)
      let doc = Document.parse(html: html)
      let (count, steps) = try Self.matcherSteps(doc, "h2 ~ p")
      #expect(count == n / 2)
      #expect(steps < 8 * n, "\(steps) steps")
      let (none, noneSteps) = try Self.matcherSteps(doc, "h3 ~ p")
      #expect(none == 0)
      #expect(noneSteps < 8 * n, "\(noneSteps) steps")
    #endif
  }

  /// `div:has(span)` on a chain of nested divs: every div's subtree is
  /// searched once in all, not once per div.
  @Test func test_issue25_has_isLinearOnADeepChain() throws {
    #if DEBUG
      let n = 6_000
      let mid = n / 2
      let html = "<body>" + String(repeating: "<div>", count: mid) + "<span>s</span>"
        + String(repeating: "<div>", count: n - mid)
      let doc = Document.parse(html: html, options: ParserOptions(maximumDepth: .max))
      let (count, steps) = try Self.matcherSteps(doc, "div:has(span)")
      #expect(count == mid)
      #expect(steps < 16 * n, "\(steps) steps for \(n) divs")
      // The same answers as the plain search, on a small tree.
      let small = Document.parse(html: "<div id=a><div id=b><span></span></div><div id=c></div></div>")
      #expect(try small.select("div:has(span)").map { $0.attr("id") ?? "" } == ["a", "b"])
    #endif
  }

  /// Parsing steps over two sizes of one shape: linear work doubles, quadratic
  /// work quadruples.
  static func parserSteps(_ make: (Int) -> String, _ n: Int, options: ParserOptions = ParserOptions()) -> (Int, Int) {
    let small = Document.parse(html: make(n), options: options)
    let large = Document.parse(html: make(2 * n), options: options)
    return (small.parserWalkSteps, large.parserWalkSteps)
  }

  @Test func test_issue25_parserWalks_areLinearWhateverTheShape() {
    #if DEBUG
      let n = 3_000
      let shapes: [(String, (Int) -> String)] = [
        // An element open under a special one, then end tags for it: each
        // "any other end tag" walks down to the special element.
        ("end tags past a special element", { k in
          "<body><x-a><div>" + String(repeating: "<span>", count: k) + String(repeating: "</x-a>", count: k)
        }),
        // `<li>` looks for an open li down to the first special element.
        ("list items under deep spans", { k in
          "<body>" + String(repeating: "<span>", count: k) + String(repeating: "<li></li>", count: k)
        }),
        // Noah's Ark compares each new formatting element with the list.
        ("unclosed formatting elements", { k in
          "<body>" + (0..<k).map { "<b class=c\($0)>x" }.joined()
        }),
        ("headings end tags under deep spans", { k in
          "<body><div>" + String(repeating: "<span>", count: k) + String(repeating: "</h1>", count: k)
        }),
      ]
      for (name, make) in shapes {
        let (small, large) = Self.parserSteps(make, n)
        #expect(large <= 3 * small + 1000, "\(name): \(small) steps, then \(large) for twice the input")
      }
    #endif
  }

  /// Unclosed formatting elements with distinct attributes, reconstructed
  /// for every later paragraph: the number of elements stays linear in the
  /// input (the list of active formatting elements is bounded).
  @Test func test_issue25_reconstructedFormatting_staysLinear() {
    func page(_ k: Int) -> String {
      "<body><p>" + (0..<k).map { "<i title=t\($0)>" }.joined() + "</p>" + String(repeating: "<p>x</p>", count: k)
    }
    func elements(_ k: Int) -> Int {
      let doc = Document.parse(html: page(k))
      return doc.nodes.count
    }
    let small = elements(1_000)
    let large = elements(2_000)
    #expect(large <= 3 * small, "\(small) nodes, then \(large) for twice the input")
  }

  // MARK: Stopping

  @Test func test_issue25_shouldStop_endsTheParseEarly() {
    let html = Self.nested("div", 50_000)
    let asked = Counter()
    let doc = Document.parse(
      html: html, options: ParserOptions(shouldStop: { asked.increment() >= 2 }))
    #expect(doc.parseWasInterrupted)
    #expect(asked.value == 2)
    let divs = Self.shape(doc, counting: "div").named
    #expect(divs > 0 && divs < 50_000, "\(divs) divs")
    let whole = Document.parse(html: html, options: ParserOptions(shouldStop: { false }))
    #expect(!whole.parseWasInterrupted)
    #expect(Self.shape(whole, counting: "div").named == 50_000)
  }
}

/// A counter for `shouldStop` closures.
final class Counter: Sendable {
  private let count = Locked(0)
  var value: Int { count.withLock { $0 } }
  func increment() -> Int {
    count.withLock { c in
      c += 1
      return c
    }
  }
}
