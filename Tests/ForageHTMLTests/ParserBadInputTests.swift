import ForageSupport
import Testing

@testable import ForageHTML

/// Hostile input: random bytes, truncation, deep nesting, huge attributes,
/// NULs and invalid UTF-8 must never crash, hang or recurse per level.
@Suite struct ParserBadInputTests {
  static let alphabet: [UInt8] = Array("<<<>>//!--&#;x=\"' \n\tabcdiv p table tr td svg math script template select ]]".utf8) + [0, 0x80, 0xC3, 0xE2, 0xFF, 0x0D]
  static let words = ["<div>", "</div>", "<p>", "</p>", "<table>", "<tr>", "<td>", "</table>", "<b>", "</b>", "<a href=x>",
                      "</a>", "<svg>", "</svg>", "<math><mi>", "<template>", "</template>", "<select>", "<option>",
                      "<script>", "</script>", "<!--", "-->", "<![CDATA[", "]]>", "&amp", "&#x", "<frameset>", "<noscript>",
                      "<textarea>", "<plaintext>", "<!DOCTYPE html>", "<caption>", "<col>", "<foreignObject>", "<li>", "\0"]

  /// Found by the fuzzer: a selected option holding the select's own
  /// `<selectedcontent>`. Cloning the option into it copied its own copies
  /// without end; the clone is now taken before the replacement.
  @Test(.timeLimit(.minutes(1))) func test_selectedContentInsideItsOption_endsWithOneCopy() throws {
    let doc = Document.parse(html: "<select><option>X<span><selectedcontent></span><option>Y</select>")
    let selectedContent = try #require(doc.selectFirst(try Selector("select > option > span > selectedcontent")))
    // The clone was taken before the replacement: it holds the
    // selectedcontent as it was then, empty.
    #expect(selectedContent.innerHTML == "X<span><selectedcontent></selectedcontent></span>")
    let fuzzed: [UInt8] = Array("<select><bu".utf8) + [UInt8](repeating: 0, count: 81)
      + Array("</button><option>X<optdco<belect111111111enten><selectedco<button><selectedcontent></button><option>X<option select111111111e".utf8)
      + [UInt8](repeating: 0xFF, count: 12) + Array("d>Y\n".utf8)
    let (fuzzedNodes, _) = Self.walk(Document.parse(fuzzed))
    #expect(fuzzedNodes < 100, "\(fuzzedNodes) nodes")
  }

  /// Text fed to one node between other nodes' text (foster-parented "A"s
  /// before the table, "B"s in the cells) must not be copied whole on each
  /// append: the text buffer stays within a small multiple of the input.
  @Test(.timeLimit(.minutes(1))) func test_alternatingFosterParentedText_staysLinear() throws {
    let reps = 20_000
    let html = "<table><tr>" + String(repeating: "A<td>B</td>", count: reps) + "</table>"
    let doc = Document.parse(html: html)
    let body = try #require(doc.selectFirst(try Selector("body")))
    let fostered = try #require(doc.firstChild(body.id))
    #expect(doc.data(fostered) == String(repeating: "A", count: reps))
    #expect(doc.textBytes.count < 8 * html.utf8.count, "text buffer: \(doc.textBytes.count) bytes for \(html.utf8.count) of input")
  }

  /// Every `<html>` tag adds the attributes the root lacks. With other tags'
  /// attributes in between, the root's list must not be copied whole each
  /// time: the attribute store stays within a small multiple of the input.
  @Test(.timeLimit(.minutes(1))) func test_repeatedHtmlTags_addAttributesLinearly() throws {
    let reps = 20_000
    var html = "<html id=first>"
    for i in 0..<reps { html += "<html a\(i)=\(i) id=later><p x>" }
    let doc = Document.parse(html: html)
    let root = try #require(doc.documentElement)
    let attributes = doc.attributes(root.id)
    #expect(attributes.count == reps + 1)
    #expect(attributes.first?.name == "id" && attributes.first?.value == "first", "an existing attribute is kept")
    #expect(attributes.last?.name == "a\(reps - 1)" && attributes.last?.value == "\(reps - 1)")
    #expect(doc.attributes.count < 8 * (2 * reps + 1), "attribute store: \(doc.attributes.count) entries")
  }

  /// Walks the tree without recursion; returns (nodes, depth of the
  /// last-child chain).
  static func walk(_ doc: Document) -> (Int, Int) {
    var count = 0
    var maxDepth = 0
    var n: NodeID? = doc.rootID
    while let c = n {
      count += 1
      n = doc.following(c, within: doc.rootID)
    }
    // Depth along the last-child chain (the deep-nesting shape).
    var d = 0
    var cur: NodeID? = doc.rootID
    while let c = cur { d += 1; cur = doc.lastChild(c) }
    maxDepth = d
    return (count, maxDepth)
  }

  static func hasHTMLRoot(_ doc: Document) -> Bool {
    doc.children(doc.rootID).contains { doc.kind($0) == .element && doc.localName($0) == "html" }
  }

  /// Input past the parser's limit is cut at a character boundary (never
  /// inside "é") and the document says so; shorter input is whole.
  @Test func test_inputPastTheLimit_isCutAtACharacter_andSaidSo() throws {
    let html = Array("<p>h\u{E9}llo</p>".utf8)  // "é" is bytes 4 and 5
    let cut = Document.parse(html, options: ParserOptions(maximumInputSize: 5))
    #expect(cut.inputWasTruncated)
    #expect(try #require(cut.selectFirst(Selector("p"))).text == "h")
    let whole = Document.parse(html, options: ParserOptions(maximumInputSize: html.count))
    #expect(!whole.inputWasTruncated)
    #expect(try #require(whole.selectFirst(Selector("p"))).text == "h\u{E9}llo")
    // A fragment too.
    let (fragment, root) = Document.parseFragment(html: "h\u{E9}llo", context: "p", options: ParserOptions(maximumInputSize: 2))
    #expect(fragment.inputWasTruncated && fragment.text(of: root) == "h")
    // No option goes past the largest input.
    #expect(ParserOptions(maximumInputSize: .max).maximumInputSize == ParserOptions.largestInput)
  }

  @Test func test_randomBytes_neverCrash() {
    for seed in UInt64(1)...60 {
      var rng = SplitMix64(seed: seed)
      let length = Int(rng.next() % 3000)
      var bytes: [UInt8] = []
      bytes.reserveCapacity(length)
      for _ in 0..<length {
        if rng.next() % 4 == 0 { bytes.append(UInt8(truncatingIfNeeded: rng.next())) }
        else { bytes.append(Self.alphabet[Int(rng.next() % UInt64(Self.alphabet.count))]) }
      }
      let doc = Document.parse(bytes)
      #expect(Self.hasHTMLRoot(doc), "seed \(seed)")
      #expect(Self.walk(doc).0 >= 4, "seed \(seed)")
    }
  }

  @Test func test_randomTagSoup_neverCrash_documentsAndFragments() {
    let contexts: [(String, Namespace)] = [("div", .html), ("td", .html), ("tr", .html), ("table", .html), ("select", .html),
                                            ("template", .html), ("title", .html), ("svg", .svg), ("mi", .mathml), ("html", .html)]
    for seed in UInt64(1)...80 {
      var rng = SplitMix64(seed: seed &* 7919)
      var s = ""
      for _ in 0..<Int(rng.next() % 200) {
        s += Self.words[Int(rng.next() % UInt64(Self.words.count))]
        if rng.next() % 3 == 0 { s += "x" }
      }
      let doc = Document.parse(html: s)
      #expect(Self.hasHTMLRoot(doc), "seed \(seed)")
      let (ctx, ns) = contexts[Int(seed % UInt64(contexts.count))]
      let (frag, root) = Document.parseFragment(html: s, context: ctx, contextNamespace: ns)
      #expect(frag.localName(root) == "html", "seed \(seed)")
    }
  }

  @Test func test_truncatedDocuments_everyPrefixParses() {
    let page = """
      <!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>T &amp; t</title>
      <script>if (a < b && c) { document.write("<p>") }</script><style>p{color:red}</style></head>
      <body><table><tr><td>1<td>2</table><svg viewBox="0 0 1 1"><foreignObject><p>x</p></foreignObject></svg>
      <!-- c --><template><li>t</template><select><option selected>o</select><textarea>
      a</textarea>&notin;&#x1F600;&#128512;<a href="?a=1&b=2">l</a></body></html>
      """
    let bytes = Array(page.utf8)
    var i = 0
    while i <= bytes.count {
      let doc = Document.parse(Array(bytes[0..<i]))
      #expect(Self.hasHTMLRoot(doc), "prefix \(i)")
      i += 3
    }
  }

  @Test func test_deepNesting_100000Levels_noStackOverflow() {
    let depth = 100_000
    for (open, close) in [("<div>", "</div>"), ("<b>", "</b>"), ("<x-y>", "</x-z>"), ("<span><a>", "</a>")] {
      let html = String(repeating: open, count: depth) + "x" + String(repeating: close, count: depth)
      let doc = Document.parse(html: html)
      #expect(Self.hasHTMLRoot(doc), "\(open)")
      let (nodes, _) = Self.walk(doc)
      #expect(nodes > 1000, "\(open): \(nodes) nodes")
    }
    // Without the depth limit (ParserOptions.maximumDepth), the tree is as
    // deep as the markup, and walking it still needs no deep recursion.
    let unlimited = ParserOptions(maximumDepth: .max)
    let divs = Document.parse(html: String(repeating: "<div>", count: depth), options: unlimited)
    #expect(Self.walk(divs).1 >= depth, "div chain depth")
    let svg = Document.parse(html: "<svg>" + String(repeating: "<g>", count: depth), options: unlimited)
    #expect(Self.walk(svg).1 >= depth)
    let tables = Document.parse(html: String(repeating: "<table><tr><td>", count: 10_000))
    #expect(Self.hasHTMLRoot(tables))
  }

  @Test func test_hugeAttributes_andManyAttributes() {
    let big = String(repeating: "v", count: 2_000_000)
    let doc = Document.parse(html: "<p title=\"\(big)\" data-x=\(big)>")
    var found = false
    var n: NodeID? = doc.rootID
    while let c = n {
      if doc.localName(c) == "p" { found = doc.attribute(c, "title")?.utf8.count == big.utf8.count }
      n = doc.following(c, within: doc.rootID)
    }
    #expect(found)
    var tag = "<p"
    for i in 0..<20_000 { tag += " a\(i % 5000)=\(i)" }
    let many = Document.parse(html: tag + ">")
    var count = -1
    n = many.rootID
    while let c = n {
      if many.localName(c) == "p" { count = many.attributes(c).count }
      n = many.following(c, within: many.rootID)
    }
    #expect(count == 5000)  // duplicates dropped, first value kept
  }

  @Test func test_nulBytes_everywhere() {
    let s = "\0<\0p \0a\0=\0\"\0\">\0&\0;<script>\0</script><svg>\0<![CDATA[\0]]></svg><!--\0--><textarea>\0</textarea>"
    let doc = Document.parse(html: s, options: ParserOptions(collectErrors: true))
    #expect(Self.hasHTMLRoot(doc))
    #expect(doc.parseErrorCount > 0)
    #expect(doc.parseErrors.count == doc.parseErrorCount)
  }

  @Test func test_invalidUTF8_neverCrash() {
    for seed in UInt64(1)...30 {
      var rng = SplitMix64(seed: seed ^ 0xABCDEF)
      var bytes = Array("<meta charset=utf-8><p title=\"".utf8)
      for _ in 0..<500 { bytes.append(UInt8(truncatingIfNeeded: rng.next()) | 0x80) }
      bytes += Array("\">".utf8)
      let doc = Document.parse(bytes)
      #expect(doc.encoding == "UTF-8", "seed \(seed)")
      #expect(Self.hasHTMLRoot(doc), "seed \(seed)")
    }
  }
}
