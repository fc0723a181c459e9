/// A handle to an element of a `Document`.
///
///     for product in try page.select("div.product") {
///       print(product.attr("data-sku") ?? "-", product.text)
///     }
public struct Element {
  /// The document that holds the element.
  public let document: Document
  /// The element's address in its document.
  public let id: NodeID

  /// Wraps `id`, which must be an element of `document`.
  public init(_ document: Document, _ id: NodeID) {
    self.document = document
    self.id = id
  }

  /// The local name (`div`, `svg`, `foreignObject`).
  public var localName: String { document.localName(id) }
  /// The element's namespace.
  public var namespace: Namespace { document.namespace(id) }
  /// The attributes, in source order.
  public var attributes: [Attribute] { document.attributes(id) }

  /// The value of an attribute, looked up ASCII case-insensitively on HTML
  /// elements, or nil when absent.
  public func attr(_ name: String) -> String? {
    document.attributeValue(id.raw, lookingUp: name)
  }

  /// The parent element, if the parent is an element.
  public var parent: Element? {
    guard let p = document.parent(id), document.kind(p) == .element else { return nil }
    return Element(document, p)
  }

  /// The child elements, in order.
  public var children: [Element] {
    document.children(id).filter { document.kind($0) == .element }.map { Element(document, $0) }
  }
}

extension Element: Hashable {
  public static func == (a: Element, b: Element) -> Bool { a.document === b.document && a.id == b.id }
  public func hash(into h: inout Hasher) { h.combine(ObjectIdentifier(document)); h.combine(id) }
}

/// True when `s` has a byte in `A`…`Z`.
@inline(__always) func hasASCIIUppercase(_ s: String) -> Bool {
  withBytes(s) { bytes in
    for b in bytes where b &- 0x41 < 26 { return true }
    return false
  }
}
