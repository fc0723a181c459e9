// HTML serialization: innerHTML and outerHTML.
//
// https://html.spec.whatwg.org/#serialising-html-fragments
//
// The walk is iterative (an explicit stack of open elements), so a tree
// 100,000 levels deep serializes without deep recursion.

extension Document {
  /// The HTML serialization of node `n` itself: for an element its start
  /// tag, contents and end tag; for a text node its escaped data (raw inside
  /// `script`, `style` and the other raw-text parents); for a comment
  /// `<!--data-->`; for a doctype `<!DOCTYPE name>`; for the document or a
  /// fragment, its children.
  ///
  ///     doc.outerHTML(of: p)   // "<p class=\"a\">Hi &amp; bye</p>"
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#dom-element-outerhtml>
  public func outerHTML(of n: NodeID) -> String {
    var s = HTMLSerializer(document: self)
    switch kind(n) {
    case .document, .documentFragment: s.serializeChildren(of: n)
    default: s.serialize(from: n, siblings: false)
    }
    return s.result()
  }

  /// The HTML serialization of the children of node `n` (of its template
  /// contents for a `<template>`).
  ///
  ///     doc.innerHTML(of: ul)   // "<li>one</li><li>two</li>"
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#html-fragment-serialisation-algorithm>
  public func innerHTML(of n: NodeID) -> String {
    var s = HTMLSerializer(document: self)
    s.serializeChildren(of: n)
    return s.result()
  }
}

extension Element {
  /// The HTML of the element's contents, per the HTML fragment
  /// serialization algorithm.
  ///
  ///     try page.selectFirst("ul")?.innerHTML   // "<li>a</li><li>b</li>"
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#dom-element-innerhtml>
  public var innerHTML: String { document.innerHTML(of: id) }

  /// The HTML of the element itself and its contents.
  ///
  ///     try page.selectFirst("a")?.outerHTML   // "<a href=\"/x\">x</a>"
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#dom-element-outerhtml>
  public var outerHTML: String { document.outerHTML(of: id) }
}

/// The HTML elements that serialize as void (no end tag, no contents).
/// https://html.spec.whatwg.org/#serializes-as-void
let voidSerializedElements: Set<String> = [
  "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input",
  "keygen", "link", "meta", "param", "source", "track", "wbr",
]

/// The HTML elements whose text children are written without escaping
/// (scripting is off, so `noscript` is not among them).
let rawTextSerializedParents: Set<String> = [
  "style", "script", "xmp", "iframe", "noembed", "noframes", "plaintext",
]

/// Classifies interned element names by code, computing each class once,
/// so hot loops index an array instead of hashing names.
struct NameClassifier {
  let names: [String]
  private var cache: [UInt8]
  private let classify: (String) -> UInt8

  init(_ document: Document, _ classify: @escaping (String) -> UInt8) {
    self.names = document.names
    self.cache = Array(repeating: 0, count: document.names.count)
    self.classify = classify
  }

  /// The class of the name with interned code `code`.
  @inline(__always) mutating func callAsFunction(_ code: Int32) -> UInt8 {
    let i = Int(code)
    guard i >= 0 && i < cache.count else { return 0 }
    let c = cache[i]
    if c != 0 { return c &- 1 }
    let computed = classify(names[i])
    cache[i] = computed &+ 1
    return computed
  }
}

/// Writes nodes as HTML into a byte buffer.
struct HTMLSerializer {
  let document: Document
  let nodes: [Document.NodeRecord]
  var out: [UInt8] = []
  /// HTML element name classes: 0 plain, 1 void, 2 raw-text parent,
  /// 3 template.
  var htmlClass: NameClassifier

  static let plain: UInt8 = 0, void: UInt8 = 1, rawText: UInt8 = 2, template: UInt8 = 3

  init(document: Document) {
    self.document = document
    self.nodes = document.nodes
    self.htmlClass = NameClassifier(document) { name in
      if voidSerializedElements.contains(name) { return HTMLSerializer.void }
      if rawTextSerializedParents.contains(name) { return HTMLSerializer.rawText }
      return name == "template" ? HTMLSerializer.template : HTMLSerializer.plain
    }
    out.reserveCapacity(256)
  }

  func result() -> String { String(decoding: out, as: UTF8.self) }

  /// The class of element `n` (HTML elements only; others are plain).
  @inline(__always) mutating func elementClass(_ n: Int32) -> UInt8 {
    let r = nodes[Int(n)]
    guard r.kind == .element && r.namespace == .html else { return Self.plain }
    return htmlClass(r.name)
  }

  /// The first child to serialize as `n`'s contents: a template's
  /// contents fragment stands in for the template.
  mutating func firstContentChild(_ n: Int32) -> Int32 {
    if elementClass(n) == Self.template, let contents = document.templateContents(NodeID(raw: n)) {
      return nodes[Int(contents.raw)].firstChild
    }
    return nodes[Int(n)].firstChild
  }

  mutating func serializeChildren(of n: NodeID) {
    if elementClass(n.raw) == Self.void { return }
    let first = firstContentChild(n.raw)
    guard first >= 0 else { return }
    serialize(from: NodeID(raw: first), siblings: true)
  }

  /// Serializes `start` (and, when `siblings`, its following siblings)
  /// with their subtrees.
  mutating func serialize(from start: NodeID, siblings: Bool) {
    var open: [Int32] = []
    var next = start.raw
    while true {
      if next >= 0 {
        let n = next
        let r = nodes[Int(n)]
        switch r.kind {
        case .element:
          writeStartTag(n)
          if elementClass(n) != Self.void {
            let child = firstContentChild(n)
            if child >= 0 {
              open.append(n)
              next = child
              continue
            }
            writeEndTag(n)
          }
        case .text:
          writeText(n)
        case .comment:
          append("<!--")
          append(document.data(NodeID(raw: n)))
          append("-->")
        case .documentType:
          append("<!DOCTYPE ")
          append(document.doctype(NodeID(raw: n))?.name ?? "")
          append(">")
        case .document, .documentFragment:
          break
        }
        next = open.isEmpty && !siblings ? -1 : r.nextSibling
      } else {
        guard let element = open.popLast() else { return }
        writeEndTag(element)
        next = open.isEmpty && !siblings ? -1 : nodes[Int(element)].nextSibling
      }
    }
  }

  @inline(__always) mutating func append(_ s: String) {
    var s = s
    s.withUTF8 { out.append(contentsOf: $0) }
  }

  mutating func writeStartTag(_ n: Int32) {
    out.append(0x3C)  // <
    append(document.localName(NodeID(raw: n)))
    for a in document.attributes(NodeID(raw: n)) {
      out.append(0x20)
      switch a.namespace {
      case .none:
        break
      case .xml:
        append("xml:")
      case .xlink:
        append("xlink:")
      case .xmlns:
        if a.name != "xmlns" { append("xmlns:") }
      }
      append(a.name)
      out.append(0x3D)  // =
      out.append(0x22)  // "
      writeEscaped(a.value, attributeMode: true)
      out.append(0x22)
    }
    out.append(0x3E)  // >
  }

  mutating func writeEndTag(_ n: Int32) {
    out.append(0x3C)
    out.append(0x2F)
    append(document.localName(NodeID(raw: n)))
    out.append(0x3E)
  }

  mutating func writeText(_ n: Int32) {
    let p = nodes[Int(n)].parent
    let raw = p >= 0 && elementClass(p) == Self.rawText
    document.withTextBytes(of: nodes[Int(n)].textRun) { bytes in
      if raw {
        out.append(contentsOf: bytes)
      } else {
        writeEscaped(bytes, attributeMode: false)
      }
    }
  }

  /// https://html.spec.whatwg.org/#escapingString
  mutating func writeEscaped(_ s: String, attributeMode: Bool) {
    var s = s
    s.withUTF8 { writeEscaped($0, attributeMode: attributeMode) }
  }

  /// `writeEscaped(_:attributeMode:)` on UTF-8 bytes.
  mutating func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, attributeMode: Bool) {
    var runStart = 0
    var i = 0
    let count = bytes.count
    while i < count {
      let b = bytes[i]
      let replacement: StaticString?
      var width = 1
      switch b {
      case 0x26: replacement = "&amp;"
      case 0x3C: replacement = "&lt;"
      case 0x3E: replacement = "&gt;"
      case 0x22 where attributeMode: replacement = "&quot;"
      case 0xC2 where i + 1 < count && bytes[i + 1] == 0xA0:
        // U+00A0 NO-BREAK SPACE is C2 A0 in UTF-8.
        replacement = "&nbsp;"
        width = 2
      default: replacement = nil
      }
      if let replacement {
        if i > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
        out.append(contentsOf: UnsafeBufferPointer(start: replacement.utf8Start, count: replacement.utf8CodeUnitCount))
        i += width
        runStart = i
      } else {
        i += 1
      }
    }
    if count > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<count])) }
  }
}
