import Foundation
import Testing

@testable import ForageHTML

@Suite struct SerializerTests {
  @Test func test_outerHTML_escapesTextAndAttributes() throws {
    let doc = TestTree.parse(#"<p title="a&amp;b &quot;c&quot; <d> &nbsp;e">1 &lt; 2 &amp;&amp; 3 &gt; 2&nbsp;!</p>"#)
    let p = try #require(doc.documentElement)
    #expect(p.outerHTML == #"<p title="a&amp;b &quot;c&quot; &lt;d&gt; &nbsp;e">1 &lt; 2 &amp;&amp; 3 &gt; 2&nbsp;!</p>"#)
  }

  @Test func test_text_keepsQuotesUnescaped() throws {
    let doc = TestTree.parse(#"<p class='x'>"quoted" 'single'</p>"#)
    #expect(doc.documentElement?.outerHTML == #"<p class="x">"quoted" 'single'</p>"#)
  }

  @Test func test_voidElements_haveNoEndTag() throws {
    let doc = TestTree.parse(#"<div><br><img src="a.png" alt=""><input type=text><hr><wbr></div>"#)
    #expect(doc.documentElement?.innerHTML == #"<br><img src="a.png" alt=""><input type="text"><hr><wbr>"#)
  }

  @Test func test_voidElement_childrenAreNotSerialized() throws {
    // A void element given children by DOM manipulation still serializes
    // without contents, as the spec's "serializes as void" requires.
    let doc = Document()
    let br = doc.createElement("br")
    doc.append(br, to: doc.rootID)
    doc.append(doc.createText("lost"), to: br)
    #expect(doc.outerHTML(of: br) == "<br>")
    #expect(doc.innerHTML(of: br) == "")
  }

  @Test func test_svgVoidNames_getEndTags() throws {
    // `serializes as void` applies to HTML elements only.
    let doc = Document()
    let img = doc.createElement("img", namespace: .svg)
    doc.append(img, to: doc.rootID)
    #expect(doc.outerHTML(of: img) == "<img></img>")
  }

  @Test func test_rawTextParents_areNotEscaped() throws {
    let doc = TestTree.parse(
      "<div><script>if (a < b && c > d) {}</script><style>a > b { }</style><xmp><i>&</i></xmp><noscript>1 < 2</noscript><textarea>1 < 2</textarea></div>"
    )
    #expect(
      doc.documentElement?.innerHTML
        == "<script>if (a < b && c > d) {}</script><style>a > b { }</style><xmp><i>&</i></xmp><noscript>1 &lt; 2</noscript><textarea>1 &lt; 2</textarea>"
    )
  }

  @Test func test_commentsAndDoctype() throws {
    let doc = TestTree.parse("<!DOCTYPE html><!-- top --><html><body><!--in-->x</body></html>")
    #expect(doc.innerHTML(of: doc.rootID) == "<!DOCTYPE html><!-- top --><html><body><!--in-->x</body></html>")
    #expect(doc.outerHTML(of: doc.rootID) == doc.innerHTML(of: doc.rootID))
  }

  @Test func test_outerHTML_ofTextAndComment() throws {
    let doc = TestTree.parse("<p>a &amp; b<!--c--></p><script>a & b</script>")
    let p = try #require(doc.documentElement)
    let text = try #require(doc.firstChild(p.id))
    #expect(doc.outerHTML(of: text) == "a &amp; b")
    let comment = try #require(doc.lastChild(p.id))
    #expect(doc.outerHTML(of: comment) == "<!--c-->")
    let script = try #require(doc.lastChild(doc.rootID))
    #expect(doc.innerHTML(of: script) == "a & b")
  }

  @Test func test_template_serializesItsContents() throws {
    let doc = TestTree.parse("<div><template><p>in <b>template</b></p></template></div>")
    let div = try #require(doc.documentElement)
    #expect(div.innerHTML == "<template><p>in <b>template</b></p></template>")
    let template = try #require(div.children.first)
    #expect(template.innerHTML == "<p>in <b>template</b></p>")
    #expect(doc.children(template.id).map { $0 }.isEmpty)
  }

  @Test func test_foreignAttributes_getTheirPrefixes() throws {
    let doc = Document()
    let svg = doc.createElement(
      "svg", namespace: .svg,
      attributes: [
        Attribute(name: "xmlns", value: "http://www.w3.org/2000/svg", namespace: .xmlns),
        Attribute(name: "xlink", value: "http://www.w3.org/1999/xlink", namespace: .xmlns, prefix: "xmlns"),
        Attribute(name: "viewBox", value: "0 0 1 1"),
      ])
    let use = doc.createElement(
      "use", namespace: .svg,
      attributes: [
        Attribute(name: "href", value: "#a", namespace: .xlink, prefix: "xlink"),
        Attribute(name: "lang", value: "en", namespace: .xml, prefix: "xml"),
      ])
    let fo = doc.createElement("foreignObject", namespace: .svg)
    doc.append(svg, to: doc.rootID)
    doc.append(use, to: svg)
    doc.append(fo, to: svg)
    #expect(
      doc.outerHTML(of: svg)
        == ##"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 1 1"><use xlink:href="#a" xml:lang="en"></use><foreignObject></foreignObject></svg>"##
    )
  }

  @Test func test_nonASCII_isKept() throws {
    let doc = TestTree.parse("<p data-x=\"ünï\">€ 😀 日本</p>")
    #expect(doc.documentElement?.outerHTML == "<p data-x=\"ünï\">€ 😀 日本</p>")
  }

  @Test func test_deepNesting_doesNotOverflowTheStack() throws {
    let depth = 100_000
    let doc = Document()
    var parent = doc.rootID
    for _ in 0..<depth {
      let div = doc.createElement("div")
      doc.append(div, to: parent)
      parent = div
    }
    doc.append(doc.createText("x"), to: parent)
    let html = doc.outerHTML(of: doc.rootID)
    #expect(html.utf8.count == depth * ("<div>".utf8.count + "</div>".utf8.count) + 1)
    let expected = String(repeating: "<div>", count: depth) + "x" + String(repeating: "</div>", count: depth)
    let same = html == expected  // compared outside #expect: the strings are 1 MB
    #expect(same)
    let text = doc.text(of: doc.rootID)
    #expect(text == "x")
    #expect(doc.textContent(of: doc.rootID) == "x")
  }

  @Test func test_siblingsAfterSubtree_areSerialized() throws {
    let doc = TestTree.parse("<ul><li>a<b>b</b></li><li></li><li>c</li></ul>")
    let ul = try #require(doc.documentElement)
    #expect(ul.outerHTML == "<ul><li>a<b>b</b></li><li></li><li>c</li></ul>")
    let second = ul.children[1]
    #expect(second.outerHTML == "<li></li>")
  }
}

// MARK: - With the parser

@Suite struct SerializerParsedTests {
  @Test func test_parsedDocument_serializesImpliedElements() throws {
    let doc = Document.parse(html: "<!DOCTYPE html><title>T</title><p class=a>x &amp; <b>y</b>")
    #expect(
      doc.outerHTML(of: doc.rootID)
        == #"<!DOCTYPE html><html><head><title>T</title></head><body><p class="a">x &amp; <b>y</b></p></body></html>"#)
    #expect(doc.body?.innerHTML == #"<p class="a">x &amp; <b>y</b></p>"#)
  }

  @Test func test_parsedSVG_keepsAdjustedNamesAndPrefixes() throws {
    let doc = Document.parse(
      html: ##"<svg viewbox="0 0 1 1" xlink:href="#a"><foreignobject><p>x</p></foreignobject></svg>"##)
    #expect(
      doc.body?.innerHTML
        == ##"<svg viewBox="0 0 1 1" xlink:href="#a"><foreignObject><p>x</p></foreignObject></svg>"##)
  }

  @Test func test_parsedTemplate_roundTrips() throws {
    let html = "<template><tr><td>cell</td></tr></template>"
    let doc = Document.parse(html: html)
    #expect(doc.head?.innerHTML == html)
  }

  @Test func test_deeplyNestedParsedDocument_serializes() throws {
    let depth = 100_000
    // Without the depth limit: the serializer walks any depth without recursion.
    let doc = Document.parse(
      html: String(repeating: "<span>", count: depth) + "x", options: ParserOptions(maximumDepth: .max))
    let html = doc.body?.innerHTML ?? ""
    let expected = String(repeating: "<span>", count: depth) + "x" + String(repeating: "</span>", count: depth)
    let same = html == expected
    #expect(same)
  }

  /// Serializing a parsed page and parsing the result again gives the same
  /// serialization, for every page of the shared corpus.
  @Test(.enabled(if: HTMLPagesTestData.available, "shared/testdata/html-pages not found; skipped"))
  func test_corpus_serializationIsStableUnderReparsing() throws {
    var unstable: [String] = []
    for (name, bytes) in HTMLPagesTestData.pages() {
      let first = Document.parse(bytes)
      let html = first.outerHTML(of: first.rootID)
      let second = Document.parse(html: html)
      if second.outerHTML(of: second.rootID) != html { unstable.append(name) }
    }
    #expect(unstable.isEmpty, "serialization changes on reparsing: \(unstable)")
  }
}

/// The pages of `../shared/testdata/html-pages` (relative to the
/// repository root, found from this file's path), or none when absent.
enum HTMLPagesTestData {
  static let root: String? = {
    var candidates = [#filePath]
    if let real = realpath(#filePath, nil) {
      candidates.append(String(cString: real))
      free(real)
    }
    for file in candidates {
      var dir = URL(fileURLWithPath: file).deletingLastPathComponent()
      while dir.path != "/" {
        if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
          let data = dir.appendingPathComponent("../shared/testdata/html-pages").standardizedFileURL.path
          if FileManager.default.fileExists(atPath: data) { return data }
          break
        }
        dir = dir.deletingLastPathComponent()
      }
    }
    return nil
  }()

  static var available: Bool { root != nil }

  /// (file name, bytes) of every `.html` page, sorted by name.
  static func pages() -> [(String, [UInt8])] {
    guard let root, let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return [] }
    return names.sorted().filter { $0.hasSuffix(".html") }.compactMap { name in
      FileManager.default.contents(atPath: root + "/" + name).map { (name, [UInt8]($0)) }
    }
  }
}

// MARK: - Test tree builder

/// Builds test documents from a small, strict markup (no implied tags, no
/// error recovery) with the DOM's building primitives, so the serializer,
/// text and selector tests do not depend on the HTML parser.
///
/// - `<name a=1 b="2" c='3' d>` opens an element (HTML names and attribute
///   names are lower-cased; inside `<svg>` and `<math>` elements get that
///   namespace and keep their case; `xlink:`, `xml:` and `xmlns` attributes
///   get their namespaces). HTML void elements and `<x/>` close at once.
/// - `</name>` closes the nearest open element of that name.
/// - `<!--data-->`, `<!DOCTYPE name>`.
/// - Text, with `&amp; &lt; &gt; &quot; &#39; &nbsp;` decoded; the contents
///   of `script`, `style`, `textarea`, `title`, `xmp`, `iframe`, `noembed`,
///   `noframes` and `noscript` are raw up to their end tag.
/// - `<template>` children go into its contents fragment.
enum TestTree {
  static let void: Set<String> = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
  ]
  static let raw: Set<String> = [
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
  ]

  static func parse(_ markup: String, quirks: Bool = false) -> Document {
    let doc = Document()
    if quirks { doc.quirksMode = .quirks }
    let s = Array(markup.unicodeScalars)
    var i = 0
    // Stack of open elements: (element, name as written, container for children).
    var open: [(id: NodeID, name: String, container: NodeID)] = []
    var container: NodeID { open.last?.container ?? doc.rootID }
    var textBuffer = ""

    func flushText() {
      guard !textBuffer.isEmpty else { return }
      doc.append(doc.createText(decode(textBuffer)), to: container)
      textBuffer = ""
    }
    func starts(_ prefix: String, at j: Int) -> Bool {
      let p = Array(prefix.unicodeScalars)
      guard j + p.count <= s.count else { return false }
      for k in 0..<p.count where String(s[j + k]).lowercased() != String(p[k]).lowercased() { return false }
      return true
    }
    func isSpace(_ c: Unicode.Scalar) -> Bool { c == " " || c == "\n" || c == "\t" }

    while i < s.count {
      if s[i] == "<" && starts("<!--", at: i) {
        flushText()
        var j = i + 4
        while j < s.count && !starts("-->", at: j) { j += 1 }
        doc.append(doc.createComment(String(String.UnicodeScalarView(s[(i + 4)..<j]))), to: container)
        i = j + 3
      } else if s[i] == "<" && starts("<!doctype", at: i) {
        flushText()
        var j = i + 9
        while j < s.count && isSpace(s[j]) { j += 1 }
        var name = ""
        while j < s.count && s[j] != ">" {
          name.unicodeScalars.append(s[j])
          j += 1
        }
        doc.append(doc.createDoctype(Doctype(name: name.lowercased())), to: container)
        i = j + 1
      } else if s[i] == "<" && i + 1 < s.count && s[i + 1] == "/" {
        flushText()
        var j = i + 2
        var name = ""
        while j < s.count && s[j] != ">" {
          name.unicodeScalars.append(s[j])
          j += 1
        }
        i = j + 1
        if let k = open.lastIndex(where: { $0.name.lowercased() == name.lowercased() }) {
          open.removeSubrange(k...)
        }
      } else if s[i] == "<" && i + 1 < s.count && s[i + 1].properties.isAlphabetic {
        flushText()
        var j = i + 1
        var written = ""
        while j < s.count && !isSpace(s[j]) && s[j] != ">" && s[j] != "/" {
          written.unicodeScalars.append(s[j])
          j += 1
        }
        let parentNamespace = open.last.map { doc.namespace($0.id) } ?? .html
        let parentName = open.last.map { doc.localName($0.id) } ?? ""
        var namespace: Namespace = parentNamespace
        if parentNamespace == .svg && parentName == "foreignObject" { namespace = .html }
        if written.lowercased() == "svg" { namespace = .svg }
        if written.lowercased() == "math" { namespace = .mathml }
        let name = namespace == .html ? written.lowercased() : written
        var attributes: [Attribute] = []
        var selfClosing = false
        while j < s.count && s[j] != ">" {
          if isSpace(s[j]) {
            j += 1
            continue
          }
          if s[j] == "/" {
            selfClosing = true
            j += 1
            continue
          }
          var attrName = ""
          while j < s.count && !isSpace(s[j]) && s[j] != "=" && s[j] != ">" && !(s[j] == "/" && j + 1 < s.count && s[j + 1] == ">") {
            attrName.unicodeScalars.append(s[j])
            j += 1
          }
          var value = ""
          if j < s.count && s[j] == "=" {
            j += 1
            if j < s.count && (s[j] == "\"" || s[j] == "'") {
              let q = s[j]
              j += 1
              while j < s.count && s[j] != q {
                value.unicodeScalars.append(s[j])
                j += 1
              }
              j += 1
            } else {
              while j < s.count && !isSpace(s[j]) && s[j] != ">" {
                value.unicodeScalars.append(s[j])
                j += 1
              }
            }
          }
          value = decode(value)
          if namespace == .html { attrName = attrName.lowercased() }
          if attrName.hasPrefix("xlink:") {
            attributes.append(Attribute(name: String(attrName.dropFirst(6)), value: value, namespace: .xlink, prefix: "xlink"))
          } else if attrName.hasPrefix("xml:") {
            attributes.append(Attribute(name: String(attrName.dropFirst(4)), value: value, namespace: .xml, prefix: "xml"))
          } else if attrName == "xmlns" {
            attributes.append(Attribute(name: "xmlns", value: value, namespace: .xmlns))
          } else if attrName.hasPrefix("xmlns:") {
            attributes.append(Attribute(name: String(attrName.dropFirst(6)), value: value, namespace: .xmlns, prefix: "xmlns"))
          } else {
            attributes.append(Attribute(name: attrName, value: value))
          }
        }
        i = j + 1
        let element = doc.createElement(name, namespace: namespace, attributes: attributes)
        doc.append(element, to: container)
        if selfClosing || (namespace == .html && void.contains(name)) { continue }
        if namespace == .html && raw.contains(name) {
          var k = i
          while k < s.count && !starts("</\(name)", at: k) { k += 1 }
          let content = String(String.UnicodeScalarView(s[i..<k]))
          if !content.isEmpty {
            doc.append(doc.createText(name == "textarea" || name == "title" ? decode(content) : content), to: element)
          }
          while k < s.count && s[k] != ">" { k += 1 }
          i = k + 1
          continue
        }
        open.append((element, name, doc.templateContents(element) ?? element))
      } else {
        textBuffer.unicodeScalars.append(s[i])
        i += 1
      }
    }
    flushText()
    return doc
  }

  static func decode(_ s: String) -> String {
    guard s.contains("&") else { return s }
    return
      s
      .replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&quot;", with: "\"")
      .replacing("&#39;", with: "'").replacing("&nbsp;", with: "\u{A0}").replacing("&amp;", with: "&")
  }

  /// The first element (in tree order) with the given `id` attribute.
  static func element(_ doc: Document, id: String) -> Element? {
    var n = doc.following(doc.rootID, within: doc.rootID)
    while let c = n {
      if doc.kind(c) == .element && doc.attribute(c, "id") == id { return Element(doc, c) }
      n = doc.following(c, within: doc.rootID)
    }
    return nil
  }
}
