import Testing

@testable import ForageHTML

/// Text nodes keep their data as runs of `Document.textBytes`: these check
/// the cases where runs are merged, copied, shared or filtered.
@Suite struct TextRunTests {
  /// The data of every text node under `n`, in tree order.
  func texts(_ doc: Document, under n: NodeID) -> [String] {
    var out: [String] = []
    var c = doc.following(n, within: n)
    while let node = c {
      if doc.kind(node) == .text { out.append(doc.data(node)) }
      c = doc.following(node, within: n)
    }
    return out
  }

  @Test func test_characterReferences_mergeIntoOneTextNode() throws {
    // Text, a reference and more text arrive as separate runs; they are
    // one text node.
    let doc = Document.parse(html: "<p>a &amp; b&#33;&lt;c</p>")
    let p = try #require(try doc.selectFirst("p"))
    #expect(texts(doc, under: p.id) == ["a & b!<c"])
    #expect(p.text == "a & b!<c")
    #expect(p.innerHTML == "a &amp; b!&lt;c")
  }

  @Test func test_textAroundComment_staysTwoNodes() throws {
    let doc = Document.parse(html: "<p>one<!--x-->two</p>")
    let p = try #require(try doc.selectFirst("p"))
    #expect(texts(doc, under: p.id) == ["one", "two"])
    #expect(p.text == "onetwo")
    #expect(p.textContent == "onetwo")
  }

  @Test func test_fosterParentedText_mergesWithTextBeforeTable() throws {
    // "b" is foster-parented before the table, next to "a": the text node
    // "a" is no longer at the end of the buffer, so it is copied, not
    // extended in place.
    let doc = Document.parse(html: "<div>a<table>b<tr><td>c</td></tr>d</table>e</div>")
    let div = try #require(try doc.selectFirst("div"))
    #expect(texts(doc, under: div.id) == ["abd", "c", "e"])
    #expect(div.outerHTML == "<div>abd<table><tbody><tr><td>c</td></tr></tbody></table>e</div>")
  }

  @Test func test_tableWhitespace_staysInTable() throws {
    let doc = Document.parse(html: "<table> \n <tr><td>x</td></tr></table>")
    let table = try #require(try doc.selectFirst("table"))
    #expect(texts(doc, under: table.id) == [" \n ", "x"])
  }

  @Test func test_leadingNewlineOfPre_isDropped() throws {
    let doc = Document.parse(html: "<pre>\n\nkeep</pre><textarea>\nx</textarea>")
    #expect(try doc.selectFirst("pre")?.textContent == "\nkeep")
    #expect(try doc.selectFirst("textarea")?.textContent == "x")
  }

  @Test func test_nulCharacters_areRemovedOrReplaced() throws {
    let doc = Document.parse(html: "<p>a\u{0}b</p><svg><text>c\u{0}d</text></svg>")
    #expect(try doc.selectFirst("p")?.textContent == "ab")
    #expect(try doc.selectFirst("text")?.textContent == "c\u{FFFD}d")
  }

  @Test func test_appendData_onParsedText_growsOnlyThatNode() throws {
    let doc = Document.parse(html: "<p>one</p><p>two</p>")
    let ps = try doc.select("p")
    try #require(ps.count == 2)
    let first = try #require(doc.firstChild(ps[0].id))
    doc.appendData(first, "+more")
    #expect(doc.data(first) == "one+more")
    #expect(ps[1].text == "two")
    let last = try #require(doc.firstChild(ps[1].id))
    doc.appendData(last, "!")
    doc.appendData(last, "?")
    #expect(doc.data(last) == "two!?")
    #expect(doc.data(first) == "one+more")
  }

  @Test func test_createText_andComments() throws {
    let doc = Document()
    let div = doc.createElement("div")
    doc.append(div, to: doc.rootID)
    let t = doc.createText("  héllo  ")
    doc.append(t, to: div)
    let c = doc.createComment("note")
    doc.append(c, to: div)
    doc.appendData(c, "!")
    #expect(doc.data(t) == "  héllo  ")
    #expect(doc.data(c) == "note!")
    #expect(doc.text(of: div) == "héllo")
    #expect(doc.text(of: t) == "héllo")
    #expect(doc.textContent(of: div) == "  héllo  ")
    #expect(doc.outerHTML(of: div) == "<div>  héllo  <!--note!--></div>")
    #expect(doc.data(div) == "")
    #expect(doc.data(doc.createText("")) == "")
  }

  @Test func test_loneTextChild_matchesGeneralRules() throws {
    // The fast path (one text child) must give what the walk gives.
    let cases: [(String, String)] = [
      ("<span>plain</span>", "plain"),
      ("<span>two words</span>", "two words"),
      ("<span>  padded  </span>", "padded"),
      ("<span>a  b\tc\nd</span>", "a b c d"),
      ("<span> </span>", ""),
      ("<span>£12.50&nbsp;€</span>", "£12.50\u{A0}€"),
      ("<pre>  kept  \n</pre>", "  kept"),
      ("<pre>x</pre>", "x"),
      ("<textarea>a  b</textarea>", "a  b"),
    ]
    for (markup, expected) in cases {
      let doc = Document.parse(html: markup)
      let e = try #require(try doc.selectFirst("span, pre, textarea"))
      #expect(e.text == expected, "\(markup)")
    }
  }

  @Test func test_title_andEmptyPseudoClass() throws {
    let doc = Document.parse(html: "<title> A\n page </title><p id=a></p><p id=b>x</p>")
    #expect(doc.title == "A page")
    #expect(try doc.select("p:empty").map { $0.attr("id") } == ["a"])
    let b = try #require(try doc.selectFirst("#b"))
    let t = doc.createText("")
    doc.append(t, to: try #require(try doc.selectFirst("#a")).id)
    #expect(try doc.select("p:empty").map { $0.attr("id") } == ["a"])
    #expect(b.text == "x")
  }

  @Test func test_selectedContent_clonesShareTextButGrowApart() throws {
    let doc = Document.parse(
      html: "<select><button><selectedcontent></selectedcontent></button><option selected>Pick <b>me</b></option></select>")
    let clone = try #require(try doc.selectFirst("selectedcontent"))
    let option = try #require(try doc.selectFirst("option"))
    #expect(clone.textContent == "Pick me")
    #expect(option.textContent == "Pick me")
    // The clone's text node shares the option's run; growing one copies.
    let cloneText = try #require(doc.firstChild(clone.id))
    doc.appendData(cloneText, "!")
    #expect(clone.textContent == "Pick !me")
    #expect(option.textContent == "Pick me")
  }
}
