import Testing

@testable import ForageHTML

/// Encoding sniffing and decoding.
/// https://html.spec.whatwg.org/#determining-the-character-encoding
@Suite struct EncodingTests {
  func text(_ doc: Document) -> String {
    var out = ""
    var n: NodeID? = doc.rootID
    while let c = n {
      if doc.kind(c) == .text { out += doc.data(c) }
      n = doc.following(c, within: doc.rootID)
    }
    return out
  }

  @Test func test_labels_mapPerEncodingStandard() {
    #expect(InputDecoder.encoding(forLabel: " Latin1 ") == .windows1252)
    #expect(InputDecoder.encoding(forLabel: "ISO-8859-1") == .windows1252)
    #expect(InputDecoder.encoding(forLabel: "us-ascii") == .windows1252)
    #expect(InputDecoder.encoding(forLabel: "UTF8") == .utf8)
    #expect(InputDecoder.encoding(forLabel: "utf-16") == .utf16LE)
    #expect(InputDecoder.encoding(forLabel: "utf-16be") == .utf16BE)
    #expect(InputDecoder.encoding(forLabel: "shift_jis") == .shiftJIS)
    #expect(InputDecoder.encoding(forLabel: "x-user-defined") == .xUserDefined)
  }

  @Test func test_labels_trimAsciiWhitespaceIncludingCRLF() {
    #expect(InputDecoder.encoding(forLabel: "\r\nutf-8\r\n") == .utf8)
    #expect(InputDecoder.encoding(forLabel: "\t\u{0C}WINDOWS-1252 ") == .windows1252)
    #expect(InputDecoder.encoding(forLabel: "") == nil)
    #expect(InputDecoder.encoding(forLabel: "utf-8x") == nil)
  }

  @Test func test_metaPrescan_skipsOtherTagsAttributesAndComments() {
    // A '>' inside a quoted value of another tag does not end that tag.
    let a = Array("<a title='<meta charset=utf-16be>' href=x><meta charset=latin1><p>".utf8) + [0xE9]
    #expect(Document.parse(a).encoding == "windows-1252")
    // Declarations inside comments are ignored; the first real one wins.
    let b = Array("<!-- <meta charset=latin1> --><meta charset=utf-8><meta charset=latin1><p>é".utf8)
    #expect(Document.parse(b).encoding == "UTF-8")
    // http-equiv after content still makes the pragma; duplicates are ignored.
    let c = Array("<meta content='text/html;charset=\"latin1\"' content='x' http-equiv=CONTENT-TYPE><p>".utf8) + [0xE9]
    #expect(Document.parse(c).encoding == "windows-1252")
    // Past the first 1024 bytes nothing counts.
    let d = Array((String(repeating: " ", count: 1024) + "<meta charset=latin1><p>é").utf8)
    #expect(Document.parse(d).encoding == "UTF-8")
  }

  @Test func test_metaPrescan_repeatedAttributeIsSkipped() {
    // The first charset of a <meta> counts; a repeated one is skipped.
    let a = Array("<meta charset=koi8-r charset=utf-8><p>".utf8) + [0xC1]
    #expect(Document.parse(a).encoding == "KOI8-R")
    // A repeated http-equiv cannot make the pragma the first one did not.
    let b = Array("<meta http-equiv=refresh http-equiv=content-type content='text/html; charset=koi8-r'><p>".utf8) + [0xC1]
    #expect(Document.parse(b).encoding == "windows-1252")
  }

  @Test func test_bom_winsOverEverything() {
    let utf8 = [0xEF, 0xBB, 0xBF] + Array("<p>é".utf8)
    let doc = Document.parse(utf8, transportEncoding: "windows-1252")
    #expect(doc.encoding == "UTF-8")
    #expect(text(doc) == "é")

    var le: [UInt8] = [0xFF, 0xFE]
    for u in "<p>h€".utf16 { le.append(UInt8(u & 0xFF)); le.append(UInt8(u >> 8)) }
    let d2 = Document.parse(le)
    #expect(d2.encoding == "UTF-16LE")
    #expect(text(d2) == "h€")

    var be: [UInt8] = [0xFE, 0xFF]
    for u in "<p>😀".utf16 { be.append(UInt8(u >> 8)); be.append(UInt8(u & 0xFF)) }
    let d3 = Document.parse(be)
    #expect(d3.encoding == "UTF-16BE")
    #expect(text(d3) == "😀")
  }

  @Test func test_transportCharset_fromContentType() {
    let doc = Document.parse([0x3C, 0x70, 0x3E, 0x80, 0xE9], transportEncoding: "text/html; charset=ISO-8859-1")
    #expect(doc.encoding == "windows-1252")
    #expect(text(doc) == "€é")
  }

  @Test func test_metaPrescan_charsetAndHttpEquiv() {
    let a = Array("<!-- x --><meta charset=\"windows-1252\"><p>".utf8) + [0xE9]
    #expect(Document.parse(a).encoding == "windows-1252")
    #expect(text(Document.parse(a)) == "é")
    let b = Array("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=latin1\"><p>".utf8) + [0xE9]
    #expect(Document.parse(b).encoding == "windows-1252")
    // content= without http-equiv is not a declaration.
    let c = Array("<meta content=\"text/html; charset=latin1\"><p>é".utf8)
    #expect(Document.parse(c).encoding == "UTF-8")
    // A meta that declares UTF-16 means UTF-8.
    let d = Array("<meta charset=utf-16><p>é".utf8)
    #expect(Document.parse(d).encoding == "UTF-8")
  }

  @Test func test_noDeclaration_validUTF8IsUTF8_elseWindows1252() {
    #expect(Document.parse(Array("<p>héllo".utf8)).encoding == "UTF-8")
    let latin = Document.parse([0x3C, 0x70, 0x3E, 0x68, 0xE9])
    #expect(latin.encoding == "windows-1252")
    #expect(text(latin) == "hé")
  }

  @Test func test_invalidUTF8_becomesReplacementCharacters() {
    let bytes: [UInt8] = [0x61, 0xF0, 0x80, 0x80, 0x62, 0xC3, 0x63, 0xED, 0xA0, 0x80, 0x64]
    let out = String(decoding: InputDecoder.decode(bytes, as: .utf8), as: UTF8.self)
    #expect(out == "a\u{FFFD}\u{FFFD}\u{FFFD}b\u{FFFD}c\u{FFFD}\u{FFFD}\u{FFFD}d")
    let truncated = String(decoding: InputDecoder.decode([0x61, 0xE2, 0x82], as: .utf8), as: UTF8.self)
    #expect(truncated == "a\u{FFFD}")
  }

  @Test func test_newlines_normalized() {
    let doc = Document.parse(Array("<pre>\r\na\r\nb\rc</pre>".utf8))
    #expect(text(doc) == "a\nb\nc")
    var le: [UInt8] = []
    for u in "a\r\nb\rc".utf16 { le.append(UInt8(u & 0xFF)); le.append(UInt8(u >> 8)) }
    #expect(String(decoding: InputDecoder.decode(le, as: .utf16LE), as: UTF8.self) == "a\nb\nc")
  }

  @Test func test_utf16_loneSurrogatesAndOddLength() {
    let le: [UInt8] = [0x61, 0x00, 0x00, 0xD8, 0x62, 0x00, 0x63]
    #expect(String(decoding: InputDecoder.decode(le, as: .utf16LE), as: UTF8.self) == "a\u{FFFD}b\u{FFFD}")
  }
}
