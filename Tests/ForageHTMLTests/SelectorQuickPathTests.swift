import Testing

@testable import ForageHTML

/// The quick path of selector queries (`QuickSelectors`: one compound of a
/// type, ids, classes and attribute selectors) and `Element.attr`'s
/// lookup must give what the general matcher and the plain lookup give.
@Suite struct SelectorQuickPathTests {
  /// HTML and SVG elements, names and values in mixed case, a namespaced
  /// `xlink:href` next to no-namespace `href`s, classes in several words.
  static let page = """
    <!DOCTYPE html><html lang=en-GB><head><title>t</title></head><body id=Body class="Page  main\tx">
    <div class="product featured" data-sku="A-1" id=d1><h1 class=product-title>T</h1>
    <span class="price sale">1</span><a href="/a" HREF=dup>a</a><a>no href</a><a href="">empty</a>
    <input type=TEXT name=q><input type=checkbox><p lang=en-US title="x y">p</p></div>
    <div class=product data-sku="B-2" data-Extra=E id=d2><span class=PRICE>2</span><A HREF=/b>B</A></div>
    <svg viewBox="0 0 1 1" class="price"><a href=/svg-a>s</a><image xlink:href=/img.png /><rect viewBox=1 viewbox=2 /><foreignObject><a href=/in-fo>f</a></foreignObject></svg>
    <math><mi class=price>m</mi></math><x-widget class=price data-sku=W>w</x-widget>
    </body></html>
    """

  static let selectors = [
    "a[href]", "A[HREF]", "a[HREF]", "[href]", "[href='']", "[href^='']", "[href$='']", "[href*='']",
    "[href='/a']", "[href='/A' i]", "[href='/A']", "[href^='/']", "[href$=a]", "[href*=svg]", "[href|='/in']",
    "div.product", "DIV.PRODUCT", ".product.featured", ".price", ".PRICE", ".sale.price", "span.price",
    "h1.product-title", "#d1", "#D1", "div#d2.product", "[data-sku]", "[DATA-SKU]", "[data-sku=a-1]",
    "[data-sku=a-1 i]", "[data-sku^=B]", "[data-sku$='-2']", "[data-sku*='-']", "[data-extra]", "[data-Extra]",
    "[data-missing]", "[viewBox]", "[viewbox]", "[VIEWBOX]", "svg[viewBox]", "rect[viewbox]", "rect[viewBox='1']",
    "[type=text]", "[type=text s]", "[type=TEXT s]", "input[type=checkbox]", "[lang|=en]", "[lang|=EN]",
    "[title~=y]", "[title~='x y']", "[class~=main]", "[class~=MAIN]", "[class~='']", "*", "*.price", "a, span",
    "span, a[href], #d1", "image", "rect", "foreignObject", "mi.price", "[name]", "body.page", "body.main.x",
    "x-widget", "X-Widget.price", "x-widget[data-sku], rect", "nosuch-tag", "RECT", "foreignobject",
  ]

  /// The matches of `css` as the general matcher finds them, walking the
  /// tree from `root` (no quick path, no element index).
  func general(_ selector: Selector, in doc: Document, under root: NodeID, scope: NodeID?) -> [NodeID] {
    let matcher = SelectorMatcher(selector, document: doc, scope: scope)
    var out: [Element] = []
    matcher.collect(under: root.raw, into: &out)
    return out.map(\.id)
  }

  func check(_ doc: Document, _ css: String) throws {
    let selector = try Selector(css)
    #expect(selector.compiled.quick != nil, "\(css) takes the quick path")
    let expected = general(selector, in: doc, under: doc.rootID, scope: doc.documentElementID)
    #expect(doc.select(selector).map(\.id) == expected, "\(css)")
    #expect(doc.selectFirst(selector)?.id == expected.first, "\(css)")
    // Scoped to each element: the element index's range of its subtree.
    var n = doc.following(doc.rootID, within: doc.rootID)
    while let e = n {
      if doc.kind(e) == .element {
        let inside = general(selector, in: doc, under: e, scope: e)
        let element = Element(doc, e)
        #expect(element.select(selector).map(\.id) == inside, "\(css) under \(element.localName)")
        #expect(element.selectFirst(selector)?.id == inside.first, "\(css) under \(element.localName)")
      }
      n = doc.following(e, within: doc.rootID)
    }
  }

  @Test func test_quickPath_matchesGeneralMatcher() throws {
    let doc = Document.parse(html: Self.page)
    #expect(try doc.select("a[href]").count == 5)
    #expect(try doc.select("[href]").count == 5)  // not the image's xlink:href
    for css in Self.selectors { try check(doc, css) }
  }

  @Test func test_quickPath_quirksMode() throws {
    let doc = Document.parse(html: String(Self.page.dropFirst("<!DOCTYPE html>".count)))
    #expect(doc.quirksMode == .quirks)
    #expect(try doc.select(".PRICE").count == 5)
    #expect(try doc.select("#D1").count == 1)
    for css in Self.selectors { try check(doc, css) }
  }

  /// Elements made through the API can hold what the parser never makes:
  /// two attributes of one name, upper-case names on HTML elements.
  @Test func test_quickPath_duplicateAndUpperCaseAttributes() throws {
    let doc = Document()
    let html = doc.createElement("html")
    doc.append(html, to: doc.rootID)
    let attributes: [[Attribute]] = [
      [Attribute(name: "href", value: "1"), Attribute(name: "href", value: "2")],
      [Attribute(name: "class", value: "b"), Attribute(name: "class", value: "a")],
      [Attribute(name: "HREF", value: "up"), Attribute(name: "Data-X", value: "dx")],
      [Attribute(name: "href", value: "x", namespace: .xlink, prefix: "xlink"), Attribute(name: "href", value: "y")],
      [Attribute(name: "data-x", value: "1"), Attribute(name: "data-x", value: "2"), Attribute(name: "id", value: "i")],
    ]
    for list in attributes {
      doc.append(doc.createElement("a", attributes: list), to: html)
      doc.append(doc.createElement("a", namespace: .svg, attributes: list), to: html)
    }
    for css in [
      "a[href]", "[href='1']", "[href='2']", "[href=y]", "[href=x]", ".a", ".b", "a.b", "[HREF]", "[data-x]", "[data-x='2']",
      "[Data-X]", "[data-X]", "#i", "[class=b]",
    ] {
      try check(doc, css)
    }
  }

  /// The element index copies attribute ranges: adding attributes to an
  /// element after a query must not leave the next query on stale ones.
  @Test func test_quickPath_seesAttributesAddedAfterAQuery() throws {
    let doc = Document.parse(html: #"<p id=a>1</p><p id=b class=x>2</p>"#)
    let marked = try Selector("p[data-new]")
    #expect(doc.select(marked).isEmpty)
    let a = try #require(try doc.selectFirst("#a"))
    doc.addMissingAttributes(a.id, [Attribute(name: "data-new", value: "1"), Attribute(name: "class", value: "x y")])
    #expect(doc.select(marked).map { $0.attr("id") } == ["a"])
    #expect(try doc.select(".x").map { $0.attr("id") } == ["a", "b"])
    #expect(try doc.selectFirst("p.y")?.attr("id") == "a")
  }

  /// Attribute values made into Strings: empty, small, long, not ASCII.
  @Test func test_attr_values() throws {
    let long = String(repeating: "/product/x.html?utm_source=", count: 3)
    let doc = Document.parse(html: "<p a=\"\" b=x c=\"café ☕ 𝄞\" d=\"\(long)\" e=&eacute;&#x1F600;>")
    let p = try #require(try doc.selectFirst("p"))
    #expect(p.attr("a") == "")
    #expect(p.attr("b") == "x")
    #expect(p.attr("c") == "café ☕ 𝄞")
    #expect(p.attr("d") == long)
    #expect(p.attr("e") == "é😀")
    #expect(p.attributes.map(\.value) == ["", "x", "café ☕ 𝄞", long, "é😀"])
  }

  @Test func test_generalPath_forOtherSelectors() throws {
    for css in ["div > a", "a:first-child", "a[href] span", ":scope", ".a\\ b"] {
      #expect(try Selector(css).compiled.quick == nil, "\(css)")
    }
    let doc = Document.parse(html: #"<custom-tag class=x id=c></custom-tag><p class="a b">"#)
    #expect(try doc.select("custom-tag.x").map { $0.attr("id") } == ["c"])
    #expect(try doc.select("CUSTOM-TAG, p").count == 2)
    #expect(try Selector("custom-tag.x").compiled.quick != nil)
    #expect(try doc.select(".a\\ b").isEmpty)
  }

  /// What `Element.attr` did before its fast path: lower-case the name on
  /// HTML elements when it has an upper-case ASCII letter.
  func referenceAttr(_ e: Element, _ name: String) -> String? {
    if e.namespace == .html && name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) {
      return e.document.attribute(e.id, name.lowercased())
    }
    return e.document.attribute(e.id, name)
  }

  @Test func test_attr_matchesPlainLookup() throws {
    let parsed = Document.parse(html: Self.page)
    let built = Document()
    let root = built.createElement("html")
    built.append(root, to: built.rootID)
    for (ns, names) in [(Namespace.html, ["HREF", "Data-X"]), (.svg, ["viewBox", "HREF"])] {
      let attributes = names.map { Attribute(name: $0, value: $0) } + [Attribute(name: "href", value: "xl", namespace: .xlink)]
      built.append(built.createElement("a", namespace: ns, attributes: attributes), to: root)
    }
    let names = [
      "href", "HREF", "Href", "class", "CLASS", "id", "data-sku", "DATA-SKU", "data-extra", "data-Extra",
      "data-x", "Data-X", "viewBox", "viewbox", "VIEWBOX", "xlink:href", "", "title", "type", "nope", "ÉTÉ",
    ]
    for doc in [parsed, built] {
      var n = doc.following(doc.rootID, within: doc.rootID)
      while let id = n {
        if doc.kind(id) == .element {
          let e = Element(doc, id)
          for name in names {
            #expect(e.attr(name) == referenceAttr(e, name), "\(e.localName) \(name)")
          }
        }
        n = doc.following(id, within: doc.rootID)
      }
    }
    let a = try #require(try parsed.selectFirst("a[href]"))
    #expect(a.attr("HREF") == "/a")
    #expect(a.attr("href") == "/a")
    let rect = try #require(try parsed.selectFirst("rect"))
    #expect(rect.attr("viewBox") == "1")
    #expect(rect.attr("viewbox") == nil)
  }
}
