import Testing

@testable import ForageHTML

@Suite struct SelectorMatcherTests {
  static let page = """
    <!DOCTYPE html><html id=html><head id=head><title id=title>T</title></head>\
    <body id=body class="Page main">\
    <div id=d1 class="product featured" data-sku="A-1" lang="en-US">\
    <h2 id=h2a>Tea</h2><span id=p1 class="price">2.50</span><a id=a1 href="/tea">more</a>\
    </div>\
    <div id=d2 class="product" data-sku="B-2" lang="EN">\
    <h2 id=h2b>Coffee</h2><span id=p2 class="price sale">3.00</span><img id=i1 src="c.png">\
    </div>\
    <div id=d3 class="ad"><p id=q1>ad</p></div>\
    <ul id=list><li id=l1>1</li><li id=l2 class=x>2</li><li id=l3>3</li><li id=l4 class=x>4</li><li id=l5>5</li></ul>\
    <p id=e1></p><p id=e2><!--c--></p><p id=e3> </p>\
    <form id=f><input id=c1 type=checkbox checked><input id=c2 type=RADIO checked><input id=c3 type=text checked>\
    <select id=s><option id=o1 selected>a</option><optgroup id=g disabled><option id=o2>b</option></optgroup></select>\
    <fieldset id=fs disabled><legend id=lg><button id=b1>in legend</button></legend><button id=b2>x</button>\
    <fieldset id=fs2><input id=c4></fieldset></fieldset>\
    <button id=b3 disabled>y</button><textarea id=t1></textarea></form>\
    <a id=a2>no href</a><area id=ar href=x>\
    <template id=tp><p id=tpp class=price>hidden</p></template>\
    <svg id=svg><foreignObject id=fo><p id=fop>in svg</p></foreignObject><rect id=rect viewBox="0 0 1 1"/></svg>\
    </body></html>
    """

  let doc = TestTree.parse(SelectorMatcherTests.page)

  /// The ids of the elements `css` selects in the page.
  func ids(_ css: String, in document: Document? = nil) throws -> [String] {
    try (document ?? doc).select(css).map { $0.attr("id") ?? $0.localName }
  }

  @Test func test_typeUniversalIdClass() throws {
    #expect(try ids("h2") == ["h2a", "h2b"])
    #expect(try ids("H2") == ["h2a", "h2b"])
    #expect(try ids("#p2") == ["p2"])
    #expect(try ids(".price") == ["p1", "p2"])
    #expect(try ids(".price.sale") == ["p2"])
    #expect(try ids("span.price#p1") == ["p1"])
    #expect(try ids("#P2") == [])
    #expect(try ids(".PRICE") == [])
    #expect(try ids("ul *") == ["l1", "l2", "l3", "l4", "l5"])
    #expect(try doc.select("*").count > 40)
    #expect(try ids("nosuchtag") == [])
  }

  @Test func test_quirksMode_idAndClassAreCaseInsensitive() throws {
    let quirks = TestTree.parse(#"<div id=Main class="Big Box"><p id=x></p></div>"#, quirks: true)
    #expect(try ids("#main", in: quirks) == ["Main"])
    #expect(try ids(".big.BOX", in: quirks) == ["Main"])
    let standard = TestTree.parse(#"<div id=Main class="Big Box"></div>"#)
    #expect(try ids("#main", in: standard) == [])
    #expect(try ids(".big", in: standard) == [])
    #expect(try ids("#Main.Big", in: standard) == ["Main"])
  }

  @Test func test_attributeSelectors() throws {
    #expect(try ids("[data-sku]") == ["d1", "d2"])
    #expect(try ids("[DATA-SKU]") == ["d1", "d2"])
    #expect(try ids("[data-sku=A-1]") == ["d1"])
    #expect(try ids("[data-sku='a-1']") == [])
    #expect(try ids("[data-sku='a-1' i]") == ["d1"])
    #expect(try ids("[class~=featured]") == ["d1"])
    #expect(try ids("[class~=feat]") == [])
    #expect(try ids("[class~='']") == [])
    #expect(try ids("[lang|=en]") == ["d1", "d2"])  // `lang` values are case-insensitive in HTML
    #expect(try ids("[lang|=en s]") == ["d1"])
    #expect(try ids("[data-sku^=B]") == ["d2"])
    #expect(try ids("[data-sku$='-1']") == ["d1"])
    #expect(try ids("[data-sku*='-']") == ["d1", "d2"])
    #expect(try ids("[data-sku^='']") == [])
    #expect(try ids("[data-sku*='']") == [])
    #expect(try ids("[href='/tea']") == ["a1"])
    #expect(try ids("input[type=radio]") == ["c2"])
    #expect(try ids("input[type=radio s]") == [])
  }

  @Test func test_attributeValue_emptyAndWhitespaceWords() throws {
    let d = TestTree.parse(#"<p id=a title=""></p><p id=b title="x  y"></p><p id=c title="-x"></p>"#)
    #expect(try ids("[title='']", in: d) == ["a"])
    #expect(try ids("[title~=y]", in: d) == ["b"])
    #expect(try ids("[title~='x y']", in: d) == [])
    #expect(try ids("[title|='']", in: d) == ["a", "c"])
  }

  @Test func test_combinators() throws {
    #expect(try ids("div.product > h2") == ["h2a", "h2b"])
    #expect(try ids("body > h2") == [])
    #expect(try ids("body h2") == ["h2a", "h2b"])
    #expect(try ids("h2 + span") == ["p1", "p2"])
    #expect(try ids("h2 + a") == [])
    #expect(try ids("h2 ~ a") == ["a1"])
    #expect(try ids("#l2 ~ li") == ["l3", "l4", "l5"])
    #expect(try ids("#l2 + li") == ["l3"])
    #expect(try ids("html div > span.price") == ["p1", "p2"])
    #expect(try ids("#d1 ~ div h2") == ["h2b"])
    #expect(try ids("div + div + div > p") == ["q1"])
  }

  @Test func test_selectorList_isInDocumentOrderWithoutDuplicates() throws {
    #expect(try ids("img, h2, .product h2") == ["h2a", "h2b", "i1"])
  }

  @Test func test_descendantChains_backtrackCorrectly() throws {
    let d = TestTree.parse("<a id=x><b><a><c><b><d id=t></d></b></c></a></b></a>")
    #expect(try ids("a > b d", in: d) == ["t"])
    #expect(try ids("a > c > b > d", in: d) == ["t"])
    #expect(try ids("b > a > b > d", in: d) == [])
    #expect(try ids("a b a c b d", in: d) == ["t"])
    #expect(try ids("a b a c b a d", in: d) == [])
  }

  @Test func test_siblingChains_backtrackCorrectly() throws {
    let d = TestTree.parse("<div><p id=p1></p><q></q><p id=p2></p><r></r><s id=s1></s></div><x><s id=s2></s></x>")
    #expect(try ids("p + q ~ r + s", in: d) == ["s1"])
    #expect(try ids("p ~ p ~ s", in: d) == ["s1"])
    #expect(try ids("q + p + s", in: d) == [])
    #expect(try ids("div ~ x s", in: d) == ["s2"])
    #expect(try ids("div p ~ s", in: d) == ["s1"])
  }

  @Test func test_notIsWhere() throws {
    #expect(try ids("div:not(.product)") == ["d3"])
    #expect(try ids("li:not(.x, :first-child)") == ["l3", "l5"])
    #expect(try ids(":is(h2, img):not(#h2a)") == ["h2b", "i1"])
    #expect(try ids(":where(.featured, .ad) > *") == ["h2a", "p1", "a1", "q1"])
    #expect(try ids("span:not(div.ad span)") == ["p1", "p2"])
    #expect(try ids(":not(:not(#q1))") == ["q1"])
    #expect(try ids("li:is(ul > :nth-child(2n))") == ["l2", "l4"])
  }

  @Test func test_has() throws {
    #expect(try ids("div:has(img)") == ["d2"])
    #expect(try ids("div:has(> h2 + span.sale)") == ["d2"])
    #expect(try ids("div:has(> p)") == ["d3"])
    #expect(try ids("body:has(> p)") == ["body"])
    #expect(try ids("body:has(> li)") == [])
    #expect(try ids("h2:has(+ span)") == ["h2a", "h2b"])
    #expect(try ids("h2:has(~ img)") == ["h2b"])
    #expect(try ids("div:has(+ div)") == ["d1", "d2"])
    #expect(try ids("div:has(~ ul li.x)") == ["d1", "d2", "d3"])
    #expect(try ids("div:has(+ ul li)") == ["d3"])
    #expect(try ids("li:has(+ li + li.x)") == ["l2"])
    #expect(try ids("div:has(a, img)") == ["d1", "d2"])
    #expect(try ids("div:not(:has(span))") == ["d3"])
    #expect(try ids(":has(> #fop)") == ["fo"])
  }

  @Test func test_nthChildFamily() throws {
    #expect(try ids("li:nth-child(odd)") == ["l1", "l3", "l5"])
    #expect(try ids("li:nth-child(2n)") == ["l2", "l4"])
    #expect(try ids("li:nth-child(-n+2)") == ["l1", "l2"])
    #expect(try ids("li:nth-child(3)") == ["l3"])
    #expect(try ids("li:nth-child(n+4)") == ["l4", "l5"])
    #expect(try ids("li:nth-last-child(1)") == ["l5"])
    #expect(try ids("li:nth-last-child(-n+2)") == ["l4", "l5"])
    #expect(try ids("li:nth-child(1 of .x)") == ["l2"])
    #expect(try ids("li:nth-child(2 of .x)") == ["l4"])
    #expect(try ids("li:nth-last-child(2 of .x)") == ["l2"])
    #expect(try ids("li:nth-child(0n+0)") == [])
    #expect(try ids("li:nth-child(0 of .x)") == [])
    #expect(try ids("li:nth-child(-n of .x)") == [])
    #expect(try ids("li:nth-child(-n+1 of :not(.x))") == ["l1"])
    #expect(try ids("#d1 > :nth-of-type(1)") == ["h2a", "p1", "a1"])
    #expect(try ids("form > input:nth-of-type(2)") == ["c2"])
    #expect(try ids("form > input:nth-last-of-type(1)") == ["c3"])
  }

  @Test func test_nth_onLongSiblingListsAndDetachedElements() throws {
    let d = Document()
    let ul = d.createElement("ul")
    d.append(ul, to: d.rootID)
    let count = 20_000
    for i in 0..<count {
      d.append(d.createElement(i % 4 == 3 ? "p" : "li"), to: ul)
      d.append(d.createText(" "), to: ul)
    }
    #expect(try d.select("li:nth-child(4n+1)").count == count / 4)
    #expect(try d.select("p:nth-of-type(2n)").count == count / 8)
    #expect(try d.select("li:nth-last-of-type(1)").count == 1)
    #expect(try d.select("ul > :nth-last-child(-n+3)").count == 3)
    #expect(try d.select("ul > :only-of-type").isEmpty)
    // A detached element (no parent) is its own only child.
    let lone = d.createElement("b")
    #expect(try Selector(":first-child:last-child:only-of-type:nth-child(1)").matches(Element(d, lone)))
  }

  @Test func test_firstLastOnly() throws {
    #expect(try ids("li:first-child") == ["l1"])
    #expect(try ids("li:last-child") == ["l5"])
    #expect(try ids("#d3 > :only-child") == ["q1"])
    #expect(try ids("title:only-child") == ["title"])
    #expect(try ids("#d1 > :first-of-type") == ["h2a", "p1", "a1"])
    #expect(try ids("#d2 > :last-of-type") == ["h2b", "p2", "i1"])
    #expect(try ids("form > :only-of-type") == ["s", "fs", "b3", "t1"])
    #expect(try ids("html:first-child") == ["html"])
  }

  @Test func test_emptyAndRoot() throws {
    #expect(try ids("p:empty") == ["e1", "e2"])
    #expect(try ids(":root") == ["html"])
    #expect(try ids(":root > body > ul") == ["list"])
  }

  @Test func test_formStates() throws {
    #expect(try ids(":checked") == ["c1", "c2", "o1"])
    #expect(try ids(":disabled") == ["g", "o2", "fs", "b2", "fs2", "c4", "b3"])
    #expect(try ids("form :enabled") == ["c1", "c2", "c3", "s", "o1", "b1", "t1"])
    #expect(try ids("div:enabled, div:disabled") == [])
  }

  @Test func test_links() throws {
    #expect(try ids(":link") == ["a1", "ar"])
    #expect(try ids(":any-link") == ["a1", "ar"])
  }

  @Test func test_templateContents_areNotSearched() throws {
    #expect(try ids("#tpp") == [])
    #expect(try ids("template") == ["tp"])
    #expect(try ids("template p") == [])
    let template = try #require(TestTree.element(doc, id: "tp"))
    #expect(try template.select("p").isEmpty)
  }

  @Test func test_foreignElements_matchCaseSensitively() throws {
    #expect(try ids("foreignObject") == ["fo"])
    #expect(try ids("foreignobject") == [])
    #expect(try ids("FOREIGNOBJECT") == [])
    #expect(try ids("svg > rect") == ["rect"])
    #expect(try ids("SVG") == [])
    #expect(try ids("svg") == ["svg"])
    #expect(try ids("foreignObject > p") == ["fop"])
    #expect(try ids("[viewBox]") == ["rect"])
    #expect(try ids("[viewbox]") == [])
  }

  @Test func test_elementSelect_searchesDescendantsOnly() throws {
    let d1 = try #require(TestTree.element(doc, id: "d1"))
    #expect(try d1.select("*").map { $0.attr("id") ?? "" } == ["h2a", "p1", "a1"])
    #expect(try d1.select("div").isEmpty)
    #expect(try d1.select("body span").map { $0.attr("id") ?? "" } == ["p1"])
    #expect(try d1.select(":scope > a").map { $0.attr("id") ?? "" } == ["a1"])
    #expect(try d1.selectFirst("span, a")?.attr("id") == "p1")
    #expect(try d1.selectFirst("img") == nil)
    let list = try #require(TestTree.element(doc, id: "list"))
    #expect(try list.select(":scope > li:nth-child(2)").map { $0.attr("id") ?? "" } == ["l2"])
  }

  @Test func test_documentSelectFirst_andScope() throws {
    #expect(try doc.selectFirst("li")?.attr("id") == "l1")
    #expect(try doc.selectFirst("nope") == nil)
    #expect(try ids(":scope > body") == ["body"])
  }

  @Test func test_selector_reuseAndMatches() throws {
    let price = try Selector("div.product > .price")
    #expect(doc.select(price).count == 2)
    let other = TestTree.parse(#"<div class=product><b class=price>1</b></div>"#)
    #expect(other.select(price).count == 1)
    let p1 = try #require(TestTree.element(doc, id: "p1"))
    #expect(price.matches(p1))
    #expect(try !Selector("div").matches(p1))
    #expect(try p1.matches("span.price:first-of-type"))
    #expect(price.description == "div.product > .price")
  }

  @Test func test_select_throwsOnBadSelector() throws {
    #expect(throws: SelectorError.self) { try doc.select("div[") }
    #expect(throws: SelectorError.self) { try doc.selectFirst("a:hover") }
    let body = try #require(doc.body)
    #expect(throws: SelectorError.self) { try body.select("::after") }
  }

  @Test func test_deepTree_matchingDoesNotRecursePerLevel() throws {
    let depth = 100_000
    let d = Document()
    var parent = d.rootID
    for i in 0..<depth {
      let e = d.createElement(i % 2 == 0 ? "div" : "span", attributes: i == depth - 1 ? [Attribute(name: "id", value: "leaf")] : [])
      d.append(e, to: parent)
      parent = e
    }
    #expect(try ids("div span div span#leaf", in: d) == ["leaf"])
    #expect(try ids("p span#leaf", in: d) == [])
    #expect(try ids(":has(> #leaf)", in: d) == ["div"])
    #expect(try d.select("div > span > div").count == depth / 2 - 1)
  }

  @Test func test_descendantChain_onDeepTree_isFast() throws {
    // Without the restart pruning this selector takes exponential time.
    let d = Document()
    var parent = d.rootID
    for _ in 0..<200 {
      let e = d.createElement("a")
      d.append(e, to: parent)
      parent = e
    }
    #expect(try d.select("b a a a a a a a a a a a a").isEmpty)
    #expect(try d.select("a a a a a a a a a a a a").count == 189)
  }
}

// MARK: - With the parser

@Suite struct SelectorParsedTests {
  @Test func test_parsedTable_impliedTbody() throws {
    let doc = Document.parse(html: "<table id=t><tr><td>a<td>b</table><p>after")
    #expect(try doc.select("table > tbody > tr > td").map(\.text) == ["a", "b"])
    #expect(try doc.select("table > tr").isEmpty)
    #expect(try doc.selectFirst("td:last-child")?.text == "b")
    #expect(try doc.select("body > *").map(\.localName) == ["table", "p"])
  }

  @Test func test_parsedUpperCaseTags_matchLowerCaseSelectors() throws {
    let doc = Document.parse(html: "<DIV CLASS=Box ID=Main><SPAN DATA-X=1>x</SPAN></DIV>")
    #expect(try doc.select("div#Main.Box > span[data-x='1']").count == 1)
    #expect(try doc.select("DIV SPAN[DATA-X]").count == 1)
  }

  @Test func test_parsedQuirksDocument_idAndClassIgnoreCase() throws {
    let quirks = Document.parse(html: "<div id=Main class=Box></div>")  // no DOCTYPE: quirks mode
    #expect(try quirks.select("#main.box").count == (quirks.quirksMode == .quirks ? 1 : 0))
    let standard = Document.parse(html: "<!DOCTYPE html><div id=Main class=Box></div>")
    #expect(try standard.select("#main.box").isEmpty)
    #expect(try standard.select("#Main.Box").count == 1)
  }

  @Test func test_parsedSVG_matchesCaseSensitively() throws {
    let doc = Document.parse(html: "<svg><foreignObject><p>x</p></foreignObject><clipPath/></svg>")
    #expect(try doc.select("foreignObject > p").count == 1)
    #expect(try doc.select("clipPath").count == 1)
    #expect(try doc.select("clippath").isEmpty)
  }

  /// On every corpus page, `select` agrees with a plain traversal, and
  /// `selectFirst` with `select`.
  @Test(.enabled(if: HTMLPagesTestData.available, "shared/testdata/html-pages not found; skipped"))
  func test_corpus_selectAgreesWithTraversal() throws {
    let all = try Selector("*")
    let links = try Selector("a[href]")
    let firstItems = try Selector("li:first-child")
    for (name, bytes) in HTMLPagesTestData.pages() {
      let doc = Document.parse(bytes)
      var elements: [NodeID] = []
      var n = doc.following(doc.rootID, within: doc.rootID)
      while let c = n {
        if doc.kind(c) == .element { elements.append(c) }
        n = doc.following(c, within: doc.rootID)
      }
      #expect(doc.select(all).map(\.id) == elements, "\(name)")
      let expectedLinks = elements.filter {
        doc.namespace($0) == .html && doc.localName($0) == "a" && doc.attribute($0, "href") != nil
      }
      #expect(doc.select(links).map(\.id) == expectedLinks, "\(name)")
      let expectedFirst = elements.filter { e in
        guard doc.namespace(e) == .html && doc.localName(e) == "li" else { return false }
        var p = doc.previousSibling(e)
        while let s = p, doc.kind(s) != .element { p = doc.previousSibling(s) }
        return p == nil
      }
      #expect(doc.select(firstItems).map(\.id) == expectedFirst, "\(name)")
      #expect(doc.selectFirst(links)?.id == expectedLinks.first, "\(name)")
      // Queries rooted at an element see exactly its subtree.
      for e in elements.enumerated().filter({ $0.offset % 97 == 0 }).map(\.element) {
        var inside: [NodeID] = []
        var n = doc.following(e, within: e)
        while let c = n {
          if doc.kind(c) == .element { inside.append(c) }
          n = doc.following(c, within: e)
        }
        #expect(Element(doc, e).select(all).map(\.id) == inside, "\(name)")
      }
    }
  }

  /// Queries see the tree as it is now: an element moved, added or removed
  /// after an earlier query is found (or not) where it is.
  @Test func test_queries_followChangesToTheTree() throws {
    let doc = Document.parse(html: "<div id=a><p id=p1>1</p></div><div id=b></div>")
    func ids(_ css: String, in doc: Document) throws -> [String] { try doc.select(css).map { $0.attr("id") ?? "" } }
    #expect(try ids("p", in: doc) == ["p1"])
    let a = try #require(TestTree.element(doc, id: "a"))
    let b = try #require(TestTree.element(doc, id: "b"))
    let p1 = try #require(TestTree.element(doc, id: "p1"))
    doc.append(p1.id, to: b.id)
    #expect(try a.select("p").isEmpty)
    #expect(try b.select("p").map { $0.attr("id") } == ["p1"])
    let p2 = doc.createElement("p", attributes: [Attribute(name: "id", value: "p2")])
    doc.insert(p2, into: b.id, before: p1.id)
    #expect(try ids("p", in: doc) == ["p2", "p1"])
    #expect(try b.selectFirst("p")?.attr("id") == "p2")
    doc.remove(p1.id)
    #expect(try ids("div > p", in: doc) == ["p2"])
    // A detached element is searched by walking its own subtree.
    #expect(try p1.select("*").isEmpty)
    doc.append(doc.createElement("span"), to: p1.id)
    #expect(try p1.select("span").count == 1)
    #expect(try ids("span", in: doc).isEmpty)
  }
}

/// The matcher's shortcuts: selectors resolved once against the known tag
/// names, `selectFirst` stopping at the first match, `attr` lookups.
@Suite struct SelectorShortcutTests {
  static let page = """
    <!DOCTYPE html><html lang=en><body class=shop>\
    <my-widget id=w1><x-item id=x1>1</x-item></my-widget>\
    <div class=product id=d1><h1 class=product-title>A</h1><div class=product id=d2>inner</div></div>\
    <ul><li id=l1>1</li><li id=l2>2</li><li id=l3>3</li></ul>\
    <a id=a1 href="/one" DATA-X=y>one</a><a id=a2>none</a><a id=a3 href="">empty</a>\
    </body></html>
    """

  @Test func test_selectFirst_isFirstOfSelect() throws {
    let doc = Document.parse(html: Self.page)
    for css in ["div.product", "li", "a[href]", "x-item", "my-widget x-item", "ul > li:nth-child(2)", "h1, li", "*"] {
      let all = try doc.select(css)
      #expect(try doc.selectFirst(css) == all.first, "\(css)")
      #expect(!all.isEmpty, "\(css)")
    }
    #expect(try doc.selectFirst("table") == nil)
    #expect(try doc.select("div.product").map { $0.attr("id") } == ["d1", "d2"])
    let outer = try #require(try doc.selectFirst("#d1"))
    #expect(try outer.selectFirst(".product")?.attr("id") == "d2")
    #expect(try outer.select("div").map { $0.attr("id") } == ["d2"])
  }

  @Test func test_unknownTypeNames_resolvePerDocument() throws {
    // Names outside the parser's table are interned per document, in
    // different orders: a compiled selector must find each one's code.
    let selector = try Selector("x-item")
    let a = Document.parse(html: "<x-item id=1></x-item>")
    let b = Document.parse(html: "<y-other></y-other><z-other></z-other><x-item id=2></x-item>")
    let c = Document.parse(html: "<p>no such element</p>")
    #expect(a.select(selector).map { $0.attr("id") } == ["1"])
    #expect(b.select(selector).map { $0.attr("id") } == ["2"])
    #expect(c.selectFirst(selector) == nil)
    #expect(try Selector("x-item, li").matches(try #require(try b.selectFirst("x-item"))))
  }

  @Test func test_siblingPositions_withAndWithoutCache() throws {
    let doc = Document.parse(html: Self.page)
    #expect(try doc.select("li:nth-child(odd)").map { $0.attr("id") } == ["l1", "l3"])
    #expect(try doc.select("li:last-of-type").map { $0.attr("id") } == ["l3"])
    #expect(try doc.select(":is(li:only-of-type), li:nth-last-child(1)").map { $0.attr("id") } == ["l3"])
    #expect(try doc.select("ul:has(> li:nth-child(3))").count == 1)
    #expect(try doc.select("li").count == 3)
  }

  @Test func test_attr_caseAndNamespaces() throws {
    let doc = Document.parse(html: Self.page + "<svg viewBox='0 0 1 1'></svg>")
    let a1 = try #require(try doc.selectFirst("#a1"))
    #expect(a1.attr("href") == "/one")
    #expect(a1.attr("HREF") == "/one")
    #expect(a1.attr("data-x") == "y")
    #expect(a1.attr("Data-X") == "y")
    #expect(a1.attr("title") == nil)
    #expect(try doc.selectFirst("#a3")?.attr("href") == "")
    #expect(try doc.selectFirst("#a2")?.attr("href") == nil)
    let svg = try #require(try doc.selectFirst("svg"))
    #expect(svg.attr("viewBox") == "0 0 1 1")
    #expect(svg.attr("viewbox") == nil)
  }

  @Test func test_attributesAddedToHtmlAndBodyLater() throws {
    // A second <html> or <body> tag adds the attributes the element lacks.
    let doc = Document.parse(
      html: "<html lang=en><body class=a><p>x</p><html lang=fr dir=rtl><body class=b id=main data-late=1></body></html>")
    let html = try #require(doc.documentElement)
    let body = try #require(doc.body)
    #expect(html.attr("lang") == "en")
    #expect(html.attr("dir") == "rtl")
    #expect(body.attr("class") == "a")
    #expect(body.attr("id") == "main")
    #expect(body.attr("data-late") == "1")
    #expect(try doc.selectFirst("body#main[data-late]") == body)
    #expect(try doc.selectFirst("html[dir=rtl]") == html)
    #expect(try doc.selectFirst("p")?.text == "x")
  }
}
