// The text of nodes: the DOM's `textContent` and a readable `text`.

extension Document {
  /// The DOM `textContent` of node `n`: for a text or comment node its data;
  /// for an element, fragment or the document, the data of all descendant
  /// text nodes in tree order (template contents excluded, as a template's
  /// contents are not its children). A doctype gives "".
  ///
  /// The DOM returns null for a document; this returns its text instead.
  ///
  /// - SeeAlso: <https://dom.spec.whatwg.org/#dom-node-textcontent>
  public func textContent(of n: NodeID) -> String {
    switch kind(n) {
    case .text, .comment: return data(n)
    case .documentType: return ""
    case .element, .document, .documentFragment:
      var out = ""
      var c = following(n, within: n)
      while let node = c {
        if kind(node) == .text { withTextBytes(of: nodes[Int(node.raw)].textRun) { out += String(decoding: $0, as: UTF8.self) } }
        c = following(node, within: n)
      }
      return out
    }
  }

  /// A readable text of node `n`: what a person would read on the page,
  /// with whitespace collapsed and block elements on their own lines.
  ///
  ///     // <div><p>Hello <b>big</b>
  ///     //    world</p><ul><li>one<li>two</ul></div>
  ///     doc.text(of: div)   // "Hello big world\none\ntwo"
  ///
  /// The rules:
  /// - Runs of ASCII whitespace (space, tab, LF, FF, CR) become one space;
  ///   U+00A0 NO-BREAK SPACE is kept as it is.
  /// - The elements of `readableTextBlockElements` (`p`, `div`, `li`,
  ///   `h1`…`h6`, `tr`, `table`, `ul`, `section`…) start and end a line:
  ///   one line break separates a block from what comes before and after,
  ///   never a blank line. Table cells (`td`, `th`) are separated by one
  ///   space.
  /// - `<br>` is a line break of its own (two in a row give a blank line).
  /// - Inside `pre`, `textarea`, `listing` and `plaintext`, whitespace is
  ///   kept as written.
  /// - Descendants that are never rendered are skipped: `script`, `style`,
  ///   `template`, `noscript`, `head` (and its `title`), `iframe`,
  ///   `noembed`, `noframes`, and comments. The node itself is never
  ///   skipped, so the text of a `<script type="application/ld+json">` is
  ///   its JSON.
  /// - Outside preformatted elements no line starts or ends with a space.
  ///   The result never starts with a line break and never ends with
  ///   whitespace.
  /// - A `<template>`'s contents are not its children: its text is "".
  ///
  /// Loosely modeled on the `innerText` getter; unlike it, this needs no
  /// CSS (elements are classified by name only).
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#the-innertext-idl-attribute>
  public func text(of n: NodeID) -> String {
    var writer = ReadableTextWriter()
    switch kind(n) {
    case .text:
      withTextBytes(of: nodes[Int(n.raw)].textRun) { writer.appendText($0, preserving: false) }
      return writer.finish()
    case .comment:
      return collapsingWhitespace(data(n))
    case .documentType:
      return ""
    case .element, .document, .documentFragment:
      break
    }
    var preserveDepth = textClass(of: nodes[Int(n.raw)]) == ReadableClass.preformatted ? 1 : 0

    // A lone text child (a title, a price): its text without the walk,
    // and the stored string itself when the rules would not change it.
    // (Before the copies of `nodes` and `names` below: taking them, and
    // releasing them, was a third of this path's cost.)
    let only = nodes[Int(n.raw)].firstChild
    if only >= 0 && nodes[Int(only)].nextSibling < 0 && nodes[Int(only)].kind == .text {
      return withTextBytes(of: nodes[Int(only)].textRun) { data in
        if isReadableAsIs(data, preserving: preserveDepth > 0) { return String(decoding: data, as: UTF8.self) }
        writer.appendText(data, preserving: preserveDepth > 0)
        return writer.finish()
      }
    }

    let nodes = self.nodes
    let names = self.names
    /// The class of an element (non-HTML elements are inline). Known tag
    /// names come from a table shared by all documents.
    func classOf(_ r: NodeRecord) -> UInt8 {
      guard r.kind == .element && r.namespace == .html else { return ReadableClass.inline }
      let code = Int(r.name)
      return code < readableClassOfKnownNames.count
        ? readableClassOfKnownNames[code] : readableClass(ofName: names[code])
    }

    func leave(_ c: UInt8) {
      switch c {
      case ReadableClass.block: writer.blockBoundary()
      case ReadableClass.preformatted:
        writer.blockBoundary()
        preserveDepth -= 1
      case ReadableClass.cell: writer.space()
      default: break
      }
    }

    // Pre-order walk with explicit enter/leave events: no recursion.
    let root = n.raw
    var next = nodes[Int(root)].firstChild
    while next >= 0 {
      let c = next
      let r = nodes[Int(c)]
      var descend = false
      switch r.kind {
      case .text:
        withTextBytes(of: r.textRun) { writer.appendText($0, preserving: preserveDepth > 0) }
      case .element:
        switch classOf(r) {
        case ReadableClass.skipped: break
        case ReadableClass.lineBreak: writer.lineBreak()
        case ReadableClass.block:
          writer.blockBoundary()
          descend = true
        case ReadableClass.preformatted:
          writer.blockBoundary()
          preserveDepth += 1
          descend = true
        case ReadableClass.cell:
          writer.space()
          descend = true
        default:
          descend = true
        }
      default:
        break
      }
      if descend && r.firstChild >= 0 {
        next = r.firstChild
        continue
      }
      if descend { leave(classOf(r)) }
      // Climb to the next sibling, leaving the elements we finish.
      var cur = c
      next = -1
      while true {
        let s = nodes[Int(cur)].nextSibling
        if s >= 0 {
          next = s
          break
        }
        let p = nodes[Int(cur)].parent
        if p < 0 || p == root { break }
        leave(classOf(nodes[Int(p)]))
        cur = p
      }
    }
    return writer.finish()
  }
}

extension Document {
  /// The `ReadableClass` of node record `r` (non-HTML elements and other
  /// nodes are inline), for `text(of:)`'s node itself.
  func textClass(of r: NodeRecord) -> UInt8 {
    guard r.kind == .element && r.namespace == .html else { return ReadableClass.inline }
    let code = Int(r.name)
    return code < readableClassOfKnownNames.count
      ? readableClassOfKnownNames[code] : readableClass(ofName: names[code])
  }
}

/// How `Document.text(of:)` treats an HTML element.
enum ReadableClass {
  static let inline: UInt8 = 0
  static let block: UInt8 = 1
  static let cell: UInt8 = 2
  static let skipped: UInt8 = 3
  static let lineBreak: UInt8 = 4
  /// A block whose whitespace is kept.
  static let preformatted: UInt8 = 5
}

extension Element {
  /// A readable text of the element: whitespace collapsed, block elements
  /// on their own lines, scripts and styles left out. See
  /// `Document.text(of:)` for the exact rules.
  ///
  ///     let price = try page.selectFirst(".price")?.text   // "12.50 €"
  public var text: String { document.text(of: id) }

  /// The DOM `textContent`: all descendant text, as written.
  ///
  /// - SeeAlso: <https://dom.spec.whatwg.org/#dom-node-textcontent>
  public var textContent: String { document.textContent(of: id) }
}

/// The `ReadableClass` of an HTML element named `name`.
func readableClass(ofName name: String) -> UInt8 {
  if readableTextSkipped.contains(name) { return ReadableClass.skipped }
  if name == "br" { return ReadableClass.lineBreak }
  if readableTextPreformatted.contains(name) { return ReadableClass.preformatted }
  if readableTextBlockElements.contains(name) { return ReadableClass.block }
  if name == "td" || name == "th" { return ReadableClass.cell }
  return ReadableClass.inline
}

/// The `ReadableClass` of the parser's known tag names, by code (`T`):
/// every document interns them first, with these codes.
let readableClassOfKnownNames: [UInt8] = T.names.map(readableClass(ofName:))

/// Elements that start and end a line in `Document.text(of:)`.
let readableTextBlockElements: Set<String> = [
  "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
  "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
  "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend",
  "li", "listing", "main", "menu", "nav", "ol", "option", "p", "plaintext", "pre", "search",
  "section", "summary", "table", "tbody", "tfoot", "thead", "tr", "ul", "textarea", "select",
  "optgroup",
]

/// Elements whose whitespace `Document.text(of:)` keeps as written.
let readableTextPreformatted: Set<String> = ["pre", "textarea", "listing", "plaintext"]

/// Elements whose contents `Document.text(of:)` leaves out.
let readableTextSkipped: Set<String> = [
  "script", "style", "template", "noscript", "head", "iframe", "noembed", "noframes",
]

/// True when `ReadableTextWriter` would give `s` back unchanged for a lone
/// run of text: when `preserving`, no trailing space, tab or LF; else no
/// ASCII whitespace but single inner spaces.
func isReadableAsIs(_ s: String, preserving: Bool) -> Bool {
  withBytes(s) { isReadableAsIs($0, preserving: preserving) }
}

/// `isReadableAsIs(_:preserving:)` on UTF-8 bytes.
func isReadableAsIs(_ b: UnsafeBufferPointer<UInt8>, preserving: Bool) -> Bool {
  guard let last = b.last else { return true }
  if preserving { return last != 0x20 && last != 0x0A && last != 0x09 }
  if b[0] == 0x20 || last == 0x20 { return false }
  var previous: UInt8 = 0
  for c in b {
    if c == 0x20 {
      if previous == 0x20 { return false }
    } else if isASCIIWhitespace(c) {
      return false
    }
    previous = c
  }
  return true
}

/// `s` with runs of ASCII whitespace collapsed to one space and the ends
/// trimmed. https://infra.spec.whatwg.org/#strip-and-collapse-ascii-whitespace
func collapsingWhitespace(_ s: String) -> String {
  if isReadableAsIs(s, preserving: false) { return s }
  var writer = ReadableTextWriter()
  writer.appendText(s, preserving: false)
  return writer.finish()
}

/// Accumulates readable text: collapses whitespace and merges the line
/// breaks that blocks ask for.
struct ReadableTextWriter {
  private var bytes: [UInt8] = []
  /// A space is due before the next visible character.
  private var pendingSpace = false
  /// Line breaks due before the next visible character.
  private var pendingBreaks = 0

  /// Appends text; ASCII whitespace collapses unless `preserving`.
  mutating func appendText(_ text: String, preserving: Bool) {
    withBytes(text) { appendText($0, preserving: preserving) }
  }

  /// Appends UTF-8 text; ASCII whitespace collapses unless `preserving`.
  /// Runs of visible bytes are copied at once.
  mutating func appendText(_ text: UnsafeBufferPointer<UInt8>, preserving: Bool) {
    let n = text.count
    if bytes.isEmpty { bytes.reserveCapacity(n) }
    if preserving {
      // Everything is kept; pending breaks or spaces go before it.
      if n > 0 {
        flush()
        bytes.append(contentsOf: text)
      }
      return
    }
    var i = 0
    while i < n {
      if isASCIIWhitespace(text[i]) {
        pendingSpace = true
        i += 1
        continue
      }
      let start = i
      i += 1
      while i < n && !isASCIIWhitespace(text[i]) { i += 1 }
      flush()
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[start..<i]))
    }
  }

  /// A block starts or ends: at least one line break before more text.
  mutating func blockBoundary() {
    pendingBreaks = max(pendingBreaks, 1)
    pendingSpace = false
  }

  /// A `<br>`: one more line break.
  mutating func lineBreak() {
    pendingBreaks += 1
    pendingSpace = false
  }

  /// A soft separator (between table cells).
  mutating func space() {
    pendingSpace = true
  }

  private mutating func flush() {
    if bytes.isEmpty {
      pendingBreaks = 0
      pendingSpace = false
      return
    }
    if pendingBreaks > 0 {
      // No line ends with a space; a line break already written (by
      // preformatted text) counts towards the breaks due.
      while let last = bytes.last, last == 0x20 { bytes.removeLast() }
      let written = bytes.last == 0x0A ? 1 : 0
      bytes.append(contentsOf: repeatElement(0x0A, count: max(0, pendingBreaks - written)))
    } else if pendingSpace, let last = bytes.last, last != 0x0A, last != 0x20 {
      bytes.append(0x20)
    }
    pendingBreaks = 0
    pendingSpace = false
  }

  /// The text, without trailing whitespace.
  mutating func finish() -> String {
    while let last = bytes.last, last == 0x20 || last == 0x0A || last == 0x09 { bytes.removeLast() }
    return String(decoding: bytes, as: UTF8.self)
  }
}
