import ForageHTML
import ForageSupport

/// An element of a leniently read XML document (see `XMLReader`).
///
/// A class so that the reader can append children to open elements; trees
/// never leave the reader's caller, so it is not `Sendable`.
final class XMLElement {
  /// The name as written (`dc:creator`).
  let name: String
  /// The name without its prefix (`creator`).
  let local: String
  /// The namespace URI its prefix (or the default namespace) maps to, "" for none.
  var namespace: String
  /// Attributes as written, in order.
  var attributes: [(name: String, value: String)]
  var children: [XMLNode] = []
  /// Namespace declarations of this element (`xmlns:p` → `p`, `xmlns` → "").
  var declarations: [String: String] = [:]
  /// This element's `xml:base` resolved against its parent's, if any.
  var base: String?
  /// The element this one was read inside (for namespace lookups).
  weak var parentForLookup: XMLElement?

  init(name: String, attributes: [(name: String, value: String)]) {
    self.name = name
    if let colon = name.firstIndex(of: ":") {
      local = String(name[name.index(after: colon)...])
    } else {
      local = name
    }
    namespace = ""
    self.attributes = attributes
  }

  /// The prefix of the name, "" for none.
  var prefix: String {
    guard let colon = name.firstIndex(of: ":") else { return "" }
    return String(name[..<colon])
  }

  /// The value of the attribute named `name` exactly, or by its local name
  /// when no attribute has that exact name.
  func attribute(_ name: String) -> String? {
    if let a = attributes.first(where: { $0.name == name }) { return a.value }
    return attributes.first { a in
      a.name.firstIndex(of: ":").map { String(a.name[a.name.index(after: $0)...]) == name } ?? false
    }?.value
  }

  /// The child elements, in order.
  var elements: [XMLElement] {
    children.compactMap { if case .element(let e) = $0 { return e } else { return nil } }
  }

  /// The first child element with this local name (in `namespace` when given).
  func child(_ local: String, in namespace: String? = nil) -> XMLElement? {
    for case .element(let e) in children where e.local == local && (namespace == nil || e.namespace == namespace!) {
      return e
    }
    return nil
  }

  /// Every child element with this local name (in `namespace` when given).
  func children(_ local: String, in namespace: String? = nil) -> [XMLElement] {
    elements.filter { $0.local == local && (namespace == nil || $0.namespace == namespace!) }
  }

  /// The concatenated text of this element and its descendants.
  var text: String {
    var out = ""
    func walk(_ e: XMLElement) {
      for c in e.children {
        switch c {
        case .text(let t): out += t
        case .element(let child): walk(child)
        }
      }
    }
    walk(self)
    return out
  }

  /// True when some child is an element (markup where text was expected).
  var hasElementChildren: Bool {
    children.contains { if case .element = $0 { return true } else { return false } }
  }

  /// The children written back as markup: text escaped, elements with
  /// their attributes; names lose their prefix when `dropPrefixes` (XHTML
  /// content). HTML void elements without children are written `<br />`.
  func innerMarkup(dropPrefixes: Bool = false) -> String {
    var out = ""
    func write(_ nodes: [XMLNode]) {
      for n in nodes {
        switch n {
        case .text(let t): out += MarkupText.escaped(t, quotes: .none)
        case .element(let e):
          let name = dropPrefixes ? e.local : e.name
          out += "<" + name
          for a in e.attributes where !(dropPrefixes && (a.name == "xmlns" || a.name.hasPrefix("xmlns:"))) {
            out += " " + a.name + "=\"" + MarkupText.escaped(a.value, quotes: .double) + "\""
          }
          if e.children.isEmpty && XMLReader.htmlVoid.contains(e.local.lowercased()) {
            out += " />"
          } else {
            out += ">"
            write(e.children)
            out += "</" + name + ">"
          }
        }
      }
    }
    write(children)
    return out
  }
}

/// A node of an `XMLElement`'s content.
enum XMLNode {
  case element(XMLElement)
  case text(String)
}
