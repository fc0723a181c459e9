// CSS selector queries and the well-known elements of a document.

extension Document {
  /// Returns the elements matching a CSS selector, in document order.
  ///
  ///     let prices = try page.select("div.product > .price")
  ///
  /// Template contents are not searched, as in browsers. `:scope` stands for
  /// the document element here.
  ///
  /// - Throws: `SelectorError` if `css` is not in the supported subset.
  /// - SeeAlso: <https://www.w3.org/TR/selectors-4/>,
  ///   <https://dom.spec.whatwg.org/#dom-parentnode-queryselectorall>
  public func select(_ css: String) throws(SelectorError) -> [Element] {
    select(try Selector(css))
  }

  /// Returns the first element matching a CSS selector in document order,
  /// or nil.
  ///
  ///     let title = try page.selectFirst("h1")?.text
  ///
  /// - Throws: `SelectorError` if `css` is not in the supported subset.
  /// - SeeAlso: <https://dom.spec.whatwg.org/#dom-parentnode-queryselector>
  public func selectFirst(_ css: String) throws(SelectorError) -> Element? {
    selectFirst(try Selector(css))
  }

  /// Returns the elements matching a parsed selector, in document order.
  ///
  ///     let rows = try Selector("tr:has(> td)")
  ///     let count = page.select(rows).count
  public func select(_ selector: Selector) -> [Element] {
    selectElements(selector, under: rootID, scope: documentElementID)
  }

  /// Returns the first element matching a parsed selector, or nil.
  public func selectFirst(_ selector: Selector) -> Element? {
    firstElement(selector, under: rootID, scope: documentElementID)
  }

  /// The elements strictly inside `root` that match, in tree order.
  /// (`scope` is evaluated only when the general matcher runs: the quick
  /// path has no `:scope`.)
  func selectElements(_ selector: Selector, under root: NodeID, scope: @autoclosure () -> NodeID?) -> [Element] {
    let order = elementOrder
    let range = elementRange(under: root, in: order)
    if let quick = selector.compiled.quick, let range {
      return withExtendedLifetime(order) { quickSelect(quick, in: order.entries, range) }
    }
    let matcher = SelectorMatcher(selector, document: self, scope: scope())
    var result: [Element] = []
    // Room for a typical list of links or rows: fewer regrowths.
    result.reserveCapacity(16)
    if let range {
      matcher.collect(in: order, range, into: &result)
    } else {
      matcher.collect(under: root.raw, into: &result)
    }
    return result
  }

  /// The first element strictly inside `root` that matches, in tree order:
  /// the search stops there.
  func firstElement(_ selector: Selector, under root: NodeID, scope: @autoclosure () -> NodeID?) -> Element? {
    let order = elementOrder
    if let range = elementRange(under: root, in: order) {
      let k: Int
      if let quick = selector.compiled.quick {
        k = withExtendedLifetime(order) { quickFirst(quick, in: order.entries, range) }
      } else {
        k = SelectorMatcher(selector, document: self, scope: scope()).firstMatch(in: order, range)
      }
      return k >= 0 ? Element(self, NodeID(raw: order.entries[k].node)) : nil
    }
    let matcher = SelectorMatcher(selector, document: self, scope: scope())
    let n = matcher.firstMatch(after: root.raw, under: root.raw)
    return n >= 0 ? Element(self, NodeID(raw: n)) : nil
  }

  /// The id of the document element: the first element child of the
  /// document node (read from the arena, without a child sequence).
  var documentElementID: NodeID? {
    var c = nodes[0].firstChild
    while c >= 0 {
      if nodes[Int(c)].kind == .element { return NodeID(raw: c) }
      c = nodes[Int(c)].nextSibling
    }
    return nil
  }

  /// The document element (`<html>`): the first element child of the
  /// document node.
  ///
  /// - SeeAlso: <https://dom.spec.whatwg.org/#dom-document-documentelement>
  public var documentElement: Element? {
    for c in children(rootID) where kind(c) == .element { return Element(self, c) }
    return nil
  }

  /// The `<head>` element: the first `head` child of the document element.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#dom-document-head>
  public var head: Element? {
    guard let html = documentElement, html.namespace == .html, html.localName == "html" else { return nil }
    for c in children(html.id) where kind(c) == .element && namespace(c) == .html && localName(c) == "head" {
      return Element(self, c)
    }
    return nil
  }

  /// The body: the first `body` or `frameset` child of the document
  /// element.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#dom-document-body>
  public var body: Element? {
    guard let html = documentElement, html.namespace == .html, html.localName == "html" else { return nil }
    for c in children(html.id) where kind(c) == .element && namespace(c) == .html {
      let name = localName(c)
      if name == "body" || name == "frameset" { return Element(self, c) }
    }
    return nil
  }

  /// The text of the first `<title>` element in tree order (its text
  /// children, with ASCII whitespace stripped and collapsed), or "".
  ///
  ///     Document.parse(html: "<title> A\n  page </title>").title  // "A page"
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#document.title>
  public var title: String {
    var n = following(rootID, within: rootID)
    while let c = n {
      if kind(c) == .element && namespace(c) == .html && localName(c) == "title" {
        var raw = ""
        for child in children(c) where kind(child) == .text { raw += data(child) }
        return collapsingWhitespace(raw)
      }
      n = following(c, within: rootID)
    }
    return ""
  }
}

extension Element {
  /// Returns the descendants of this element that match a CSS selector, in
  /// document order.
  ///
  ///     let cells = try row.select("td")
  ///     let direct = try list.select(":scope > li")
  ///
  /// As with the DOM's `querySelectorAll`, the whole selector may match
  /// outside this element (`div p` finds the `p` descendants of this element
  /// that have some `div` ancestor, which may be above it); only the subject
  /// must be a descendant. `:scope` stands for this element.
  ///
  /// - Throws: `SelectorError` if `css` is not in the supported subset.
  /// - SeeAlso: <https://dom.spec.whatwg.org/#dom-parentnode-queryselectorall>
  public func select(_ css: String) throws(SelectorError) -> [Element] {
    select(try Selector(css))
  }

  /// Returns the first descendant matching a CSS selector, or nil.
  ///
  ///     let price = try product.selectFirst(".price")?.text
  ///
  /// - Throws: `SelectorError` if `css` is not in the supported subset.
  public func selectFirst(_ css: String) throws(SelectorError) -> Element? {
    selectFirst(try Selector(css))
  }

  /// Returns the descendants matching a parsed selector, in document order.
  public func select(_ selector: Selector) -> [Element] {
    document.selectElements(selector, under: id, scope: id)
  }

  /// Returns the first descendant matching a parsed selector, or nil.
  public func selectFirst(_ selector: Selector) -> Element? {
    document.firstElement(selector, under: id, scope: id)
  }

  /// True when this element matches a CSS selector.
  ///
  ///     if try link.matches("a[href$='.pdf' i]") { … }
  ///
  /// - Throws: `SelectorError` if `css` is not in the supported subset.
  public func matches(_ css: String) throws(SelectorError) -> Bool {
    try Selector(css).matches(self)
  }
}
