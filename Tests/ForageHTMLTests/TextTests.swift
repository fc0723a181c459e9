import Testing

@testable import ForageHTML

@Suite struct TextTests {
  @Test func test_textContent_concatenatesDescendantText() throws {
    let doc = TestTree.parse("<div>  a <b>b</b>\n<!--no--><script>s()</script> c </div>")
    let div = try #require(doc.documentElement)
    #expect(div.textContent == "  a b\ns() c ")
  }

  @Test func test_textContent_ofTextCommentDoctype() throws {
    let doc = TestTree.parse("<!DOCTYPE html><!--note--><p>x</p>")
    let nodes = Array(doc.children(doc.rootID))
    #expect(doc.textContent(of: nodes[0]) == "")
    #expect(doc.textContent(of: nodes[1]) == "note")
    #expect(doc.textContent(of: nodes[2]) == "x")
    #expect(doc.textContent(of: doc.rootID) == "x")
  }

  @Test func test_textContent_skipsTemplateContents() throws {
    let doc = TestTree.parse("<div>a<template>hidden</template>b</div>")
    #expect(doc.documentElement?.textContent == "ab")
    #expect(doc.documentElement?.text == "ab")
  }

  @Test func test_text_collapsesWhitespace() throws {
    let doc = TestTree.parse("<span>\n  Hello,\t\t<b> big </b>  world \n</span>")
    #expect(doc.documentElement?.text == "Hello, big world")
  }

  @Test func test_text_inlineElementsDoNotAddSpaces() throws {
    let doc = TestTree.parse("<p><span>ab</span><span>cd</span><a href=x>ef</a></p>")
    #expect(doc.documentElement?.text == "abcdef")
  }

  @Test func test_text_blocksAreSeparatedByOneNewline() throws {
    let doc = TestTree.parse(
      "<div><h1>Title</h1>\n  <p>First <i>para</i>.</p><p>Second</p><ul><li>one</li><li> two </li></ul>tail</div>")
    #expect(doc.documentElement?.text == "Title\nFirst para.\nSecond\none\ntwo\ntail")
  }

  @Test func test_text_nestedBlocksDoNotMakeBlankLines() throws {
    let doc = TestTree.parse("<div><div><div><p>a</p></div></div><div><p>b</p></div></div>")
    #expect(doc.documentElement?.text == "a\nb")
  }

  @Test func test_text_brIsALineBreak() throws {
    let doc = TestTree.parse("<p>line 1<br>line 2 <br><br>line 4<br></p>")
    #expect(doc.documentElement?.text == "line 1\nline 2\n\nline 4")
  }

  @Test func test_text_tableCellsAndRows() throws {
    let doc = TestTree.parse(
      "<table><tr><th>Name</th><th>Price</th></tr><tr><td>Tea</td><td>2.50</td></tr></table>")
    #expect(doc.documentElement?.text == "Name Price\nTea 2.50")
  }

  @Test func test_text_skipsScriptStyleTemplateNoscriptHead() throws {
    let doc = TestTree.parse(
      "<html><head><title>T</title><style>p{}</style></head><body><script>var a;</script><p>seen</p><noscript>js off</noscript><template>t</template><!--c--></body></html>"
    )
    #expect(doc.documentElement?.text == "seen")
    #expect(doc.text(of: doc.rootID) == "seen")
  }

  @Test func test_text_ofSkippedElementItself_isItsContents() throws {
    let doc = TestTree.parse(#"<script type="application/ld+json">{"a": 1}</script>"#)
    #expect(doc.documentElement?.text == #"{"a": 1}"#)
    #expect(doc.documentElement?.textContent == #"{"a": 1}"#)
  }

  @Test func test_text_preKeepsWhitespace() throws {
    let doc = TestTree.parse("<div>before<pre>  a\n    b  c\n</pre>after</div>")
    #expect(doc.documentElement?.text == "before\n  a\n    b  c\nafter")
  }

  @Test func test_text_nbspIsKept() throws {
    let doc = TestTree.parse("<p>12&nbsp;€</p>")
    #expect(doc.documentElement?.text == "12\u{A0}€")
  }

  @Test func test_text_ofTextNodeAndComment() throws {
    let doc = TestTree.parse("<p>  a   b </p><!--  c   d -->")
    let p = try #require(doc.documentElement)
    let text = try #require(doc.firstChild(p.id))
    #expect(doc.text(of: text) == "a b")
    let comment = try #require(doc.lastChild(doc.rootID))
    #expect(doc.text(of: comment) == "c d")
  }

  @Test func test_title_isCollapsedTextOfFirstTitle() throws {
    let doc = TestTree.parse(
      "<html><head><title>\n  My   <page>\n</title><title>second</title></head><body></body></html>")
    #expect(doc.title == "My <page>")
    #expect(Document().title == "")
  }

  @Test func test_documentElementHeadBody() throws {
    let doc = TestTree.parse("<!DOCTYPE html><html><head></head><body><p>x</p></body></html>")
    #expect(doc.documentElement?.localName == "html")
    #expect(doc.head?.localName == "head")
    #expect(doc.body?.localName == "body")
    let frames = TestTree.parse("<html><head></head><frameset></frameset></html>")
    #expect(frames.body?.localName == "frameset")
    let empty = Document()
    #expect(empty.documentElement == nil)
    #expect(empty.body == nil)
    #expect(empty.head == nil)
  }

  @Test func test_text_emptyElement() throws {
    let doc = TestTree.parse("<div> \n </div>")
    #expect(doc.documentElement?.text == "")
  }
}

// MARK: - With the parser

@Suite struct TextParsedTests {
  @Test func test_parsedPage_textAndTitle() throws {
    let doc = Document.parse(
      html: """
        <!DOCTYPE html><title> Shop  &amp; more </title>
        <style>p { color: red }</style>
        <h1>Tea</h1><p>Green   tea,<br>loose
        leaf.</p><ul><li>50 g<li>100 g</ul><script>track()</script>
        """)
    #expect(doc.title == "Shop & more")
    #expect(doc.body?.text == "Tea\nGreen tea,\nloose leaf.\n50 g\n100 g")
    #expect(doc.text(of: doc.rootID) == "Tea\nGreen tea,\nloose leaf.\n50 g\n100 g")
    #expect(doc.body?.textContent.contains("track()") == true)
  }

  @Test func test_parsedPre_dropsLeadingNewlineAndKeepsSpacing() throws {
    let doc = Document.parse(html: "<pre>\n  x = 1\n  y = 2\n</pre>")
    #expect(try doc.selectFirst("pre")?.text == "  x = 1\n  y = 2")
  }
}
