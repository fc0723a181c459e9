import Testing

@testable import ForageSupport

/// Issue 28: one owner for markup escaping, which the report, the feed
/// reader's XHTML markup and the test server's pages all call.
@Suite struct MarkupTextTests {
  @Test func test_issue28_escaped_writesTheReservedCharactersAsReferences() {
    #expect(MarkupText.escaped("Tom & Jerry <3 >") == "Tom &amp; Jerry &lt;3 &gt;")
    #expect(MarkupText.escaped(#"a "b" 'c'"#) == "a &quot;b&quot; &#39;c&#39;")
    #expect(MarkupText.escaped(#"a "b" 'c'"#, quotes: .double) == "a &quot;b&quot; 'c'")
    #expect(MarkupText.escaped(#"a "b" 'c'"#, quotes: .none) == #"a "b" 'c'"#)
    // An escaped reference is escaped again: the text shows as written.
    #expect(MarkupText.escaped("&amp;") == "&amp;amp;")
  }

  @Test func test_issue28_escaped_keepsOtherTextAsItIs() {
    #expect(MarkupText.escaped("plain é 😀 e\u{301}") == "plain é 😀 e\u{301}")
    #expect(MarkupText.escaped("<é😀>") == "&lt;é😀&gt;")
    #expect(MarkupText.escaped("") == "")
  }

  @Test func test_issue28_replacingControls_keepsTabsAndLineBreaks() {
    #expect(MarkupText.escaped("a\u{1B}b\u{7F}c", replacingControls: true) == "a\u{FFFD}b\u{FFFD}c")
    #expect(MarkupText.escaped("a\tb\nc\rd", replacingControls: true) == "a\tb\nc\rd")
    // Without the option, control characters are left to the caller.
    #expect(MarkupText.escaped("a\u{1B}b") == "a\u{1B}b")
  }
}
