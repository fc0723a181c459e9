import ForageHTML
import ForageURL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lenient XML reader of feeds and sitemaps: it reads whatever it is
/// given and lists what was wrong instead of stopping at the first error,
/// as feed and sitemap readers must (real feeds carry HTML entities, bare
/// `&`, unclosed tags, CDATA that never ends and documents cut short).
///
/// Two ways to use it. ``read(base:)`` builds a tree (feeds):
///
///     var reader = XMLReader(utf8: Array("<rss><channel/></rss>".utf8))
///     let root = reader.read()      // the document's children under a nameless root
///     reader.problems               // [] for well-formed input
///
/// or ``next()`` hands out one token at a time, for a reader that keeps only
/// a little of a large document (`SitemapParser`: 50,000 entries in 50 MB):
///
///     while let token = reader.next() {
///       switch token {
///       case .start(let name, _, _): ...
///       case .text: if wanted { reader.readText(into: &text) }   // else skipped, unread
///       ...
///       }
///     }
///
/// The one place XML's character and entity references are decoded (see
/// ``appendReference(to:)``). Not a validating parser: DTDs are read only
/// for their internal general entities (at most 256), processing
/// instructions and comments are skipped.
///
/// - SeeAlso: <https://www.w3.org/TR/xml/>
struct XMLReader {
  /// HTML's void elements: an unclosed one holds no content.
  static let htmlVoid: Set<String> = ["br", "hr", "img", "wbr", "input", "area", "embed", "param", "source", "track", "col"]
  /// Namespaces bound by convention when a feed uses a prefix without declaring it.
  static let conventionalPrefixes: [String: String] = [
    "dc": "http://purl.org/dc/elements/1.1/", "content": "http://purl.org/rss/1.0/modules/content/",
    "atom": "http://www.w3.org/2005/Atom", "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "xml": "http://www.w3.org/XML/1998/namespace",
  ]
  static let maxProblems = 8
  /// The most internal DTD entities kept.
  static let maxEntities = 256

  /// One piece of the document, as ``next()`` reads it.
  enum Token {
    /// A start tag (or an empty-element tag, `selfClosing`); attribute
    /// values decoded, the first of a repeated name kept.
    case start(name: String, attributes: [(name: String, value: String)], selfClosing: Bool)
    /// An end tag; its name is empty for `</>` and the like.
    case end(name: String)
    /// Character data begins here: ``readText(into:)`` reads it, references
    /// decoded; the next call of ``next()`` skips it when it was not read.
    case text
    /// A CDATA section's content (to the end of the input when it never ends).
    case cdata(Range<Int>)
    /// A `<` that starts no markup (`3 < 4`): text for a lenient reader.
    case bareLessThan
  }

  private let b: [UInt8]
  private var i = 0
  /// True after ``next()`` returned `.text` until the text is read or skipped.
  private var textPending = false
  private var entities: [String: String] = [:]
  /// What was wrong, in the order found (at most `maxProblems`, then a count).
  private(set) var problems: [String] = []
  private var extraProblems = 0

  /// A reader of UTF-8 text (decode other encodings first: `FeedDecoding`),
  /// from byte `position` on.
  init(utf8: [UInt8], from position: Int = 0) {
    b = utf8
    i = position
  }

  /// True when the whole input has been read.
  var isAtEnd: Bool { i >= b.count }

  /// The bytes of `range` (a `.cdata` token's).
  func bytes(in range: Range<Int>) -> ArraySlice<UInt8> { b[range] }

  mutating func problem(_ p: String) {
    if problems.contains(p) { return }
    if problems.count < XMLReader.maxProblems { problems.append(p) } else { extraProblems += 1 }
  }

  // MARK: - Tokens

  /// The next token, or nil at the end of the input. Comments, processing
  /// instructions and declarations are skipped (a DOCTYPE's internal
  /// entities kept for the references that follow).
  mutating func next() -> Token? {
    if textPending { skipText() }
    while i < b.count {
      guard b[i] == UInt8(ascii: "<") else {
        textPending = true
        return .text
      }
      if starts("<!--") {
        skip(past: "-->", what: "comment")
      } else if starts("<![CDATA[") {
        i += 9
        if let end = find("]]>") {
          defer { i = end + 3 }
          return .cdata(i..<end)
        }
        problem("CDATA section never ends")
        defer { i = b.count }
        return .cdata(i..<b.count)
      } else if starts("<?") {
        skip(past: "?>", what: "processing instruction")
      } else if starts("<!") {
        readDeclaration()
      } else if starts("</") {
        i += 2
        let name = readName()
        skipUntil(UInt8(ascii: ">"))
        return .end(name: name)
      } else if i + 1 < b.count, XMLReader.isNameStart(b[i + 1]) {
        return readStartTag()
      } else {
        i += 1
        return .bareLessThan
      }
    }
    return nil
  }

  /// Reads the character data at the reader's position, up to the next
  /// `<`, onto `out`, references decoded.
  mutating func readText(into out: inout [UInt8]) {
    textPending = false
    while i < b.count {
      let c = b[i]
      if c == UInt8(ascii: "<") { return }
      if c == UInt8(ascii: "&") {
        appendReference(to: &out)
      } else {
        out.append(c)
        i += 1
      }
    }
  }

  /// Skips the character data at the reader's position, unread.
  private mutating func skipText() {
    textPending = false
    let from = i
    i = b.withUnsafeBufferPointer { p in
      guard let base = p.baseAddress, from < p.count,
        let hit = memchr(base + from, Int32(UInt8(ascii: "<")), p.count - from)
      else { return p.count }
      return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
    }
  }

  private mutating func readStartTag() -> Token {
    i += 1
    let name = readName()
    var attributes: [(name: String, value: String)] = []
    var selfClosing = false
    attributes: while true {
      skipSpace()
      guard i < b.count else { break }
      switch b[i] {
      case UInt8(ascii: ">"): i += 1; break attributes
      case UInt8(ascii: "/"):
        i += 1
        if i < b.count && b[i] == UInt8(ascii: ">") { i += 1; selfClosing = true; break attributes }
      case UInt8(ascii: "<"):
        problem("<\(name)> tag not closed")
        break attributes
      default:
        let a = readName()
        if a.isEmpty { i += 1; continue }
        skipSpace()
        var value = ""
        if i < b.count && b[i] == UInt8(ascii: "=") {
          i += 1
          skipSpace()
          value = readAttributeValue()
        } else {
          problem("attribute \(a) without a value")
        }
        if !attributes.contains(where: { $0.name == a }) { attributes.append((a, value)) }
      }
    }
    return .start(name: name, attributes: attributes, selfClosing: selfClosing)
  }

  // MARK: - The tree

  /// Reads the whole input into a tree under a root element with an empty
  /// name, whose `base` (for `xml:base`) is `base`.
  mutating func read(base: String? = nil) -> XMLElement {
    let root = XMLElement(name: "", attributes: [])
    root.base = base
    var stack = [root]
    var text: [UInt8] = []
    func flush(_ stack: [XMLElement], _ text: inout [UInt8]) {
      guard !text.isEmpty else { return }
      stack.last!.children.append(.text(String(decoding: text, as: UTF8.self)))
      text.removeAll(keepingCapacity: true)
    }
    while let token = next() {
      switch token {
      case .text:
        readText(into: &text)
      case .cdata(let range):
        text.append(contentsOf: b[range])
      case .bareLessThan:
        problem("a bare < in text")
        text.append(UInt8(ascii: "<"))
      case .end(let name):
        guard !name.isEmpty else {
          problem("an end tag without a name")
          continue
        }
        flush(stack, &text)
        if let k = stack.lastIndex(where: { $0.name == name }), k > 0 {
          if k < stack.count - 1 {
            let unclosed = stack[(k + 1)...].filter { !XMLReader.htmlVoid.contains($0.local.lowercased()) }
            if let first = unclosed.first { problem("<\(first.name)> not closed before </\(name)>") }
          }
          stack.removeSubrange(k...)
        } else {
          problem("</\(name)> closes nothing")
        }
      case .start(let name, let attributes, let selfClosing):
        flush(stack, &text)
        let e = XMLElement(name: name, attributes: attributes)
        let parent = stack.last!
        parent.children.append(.element(e))
        bind(e, parent: parent)
        if !selfClosing {
          if XMLReader.htmlVoid.contains(e.local.lowercased()) && e.prefix.isEmpty && !closes(name) {
            // `<br>` in unescaped HTML: holds nothing.
          } else {
            stack.append(e)
          }
        }
      }
    }
    flush(stack, &text)
    if stack.count > 1 {
      problem("the document ends before </\(stack[1].name)> (truncated)")
    }
    if extraProblems > 0 { problems.append("and \(extraProblems) more") }
    return root
  }

  // MARK: - Namespaces and xml:base

  /// Resolves `e`'s namespace and `xml:base` in the scope of `parent`.
  private mutating func bind(_ e: XMLElement, parent: XMLElement) {
    for a in e.attributes {
      if a.name == "xmlns" { e.declarations[""] = a.value }
      else if a.name.hasPrefix("xmlns:") { e.declarations[String(a.name.dropFirst(6))] = a.value }
    }
    e.parentForLookup = parent
    let prefix = e.prefix
    if let ns = e.lookup(prefix) {
      e.namespace = ns
    } else if !prefix.isEmpty {
      e.namespace = XMLReader.conventionalPrefixes[prefix] ?? ""
      problem("undeclared namespace prefix \(prefix):")
    }
    if let base = e.attribute("xml:base") {
      if let parentBase = parent.base.flatMap({ WebURL($0) }), let u = WebURL(base, base: parentBase) {
        e.base = u.href
      } else {
        e.base = base
      }
    } else {
      e.base = parent.base
    }
  }

  // MARK: - Lexing

  private func starts(_ s: StaticString) -> Bool {
    let n = s.utf8CodeUnitCount
    guard i + n <= b.count else { return false }
    for k in 0..<n where b[i + k] != s.utf8Start[k] { return false }
    return true
  }

  private func find(_ s: StaticString, from: Int? = nil) -> Int? {
    let n = s.utf8CodeUnitCount
    var k = from ?? i
    let first = s.utf8Start[0]
    while k + n <= b.count {
      if b[k] == first {
        var all = true
        for j in 1..<n where b[k + j] != s.utf8Start[j] { all = false; break }
        if all { return k }
      }
      k += 1
    }
    return nil
  }

  private mutating func skip(past s: StaticString, what: String) {
    if let end = find(s, from: i + 2) {
      i = end + s.utf8CodeUnitCount
    } else {
      problem("\(what) never ends")
      i = b.count
    }
  }

  /// True when `</name>` appears later (a void-named element that a feed does close).
  private func closes(_ name: String) -> Bool {
    let needle = Array(("</" + name).utf8)
    var k = i
    while k + needle.count <= b.count {
      if b[k] == needle[0] && Array(b[k..<(k + needle.count)]) == needle { return true }
      if b[k] == UInt8(ascii: "<") && k + 1 < b.count && XMLReader.isNameStart(b[k + 1]) { return false }
      k += 1
    }
    return false
  }

  private mutating func skipSpace() {
    while i < b.count && (b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D) { i += 1 }
  }

  private mutating func skipUntil(_ c: UInt8) {
    while i < b.count && b[i] != c { i += 1 }
    if i < b.count { i += 1 }
  }

  static func isNameStart(_ c: UInt8) -> Bool {
    (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || c == UInt8(ascii: "_") || c == UInt8(ascii: ":") || c >= 0x80
  }

  static func isNameChar(_ c: UInt8) -> Bool {
    isNameStart(c) || (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
  }

  private mutating func readName() -> String {
    let start = i
    while i < b.count && XMLReader.isNameChar(b[i]) { i += 1 }
    return String(decoding: b[start..<i], as: UTF8.self)
  }

  private mutating func readAttributeValue() -> String {
    var out: [UInt8] = []
    guard i < b.count else { return "" }
    let q = b[i]
    if q == UInt8(ascii: "\"") || q == UInt8(ascii: "'") {
      i += 1
      while i < b.count && b[i] != q {
        if b[i] == UInt8(ascii: "&") { appendReference(to: &out) } else {
          out.append(b[i] == 0x0A || b[i] == 0x09 ? 0x20 : b[i])
          i += 1
        }
      }
      if i < b.count { i += 1 } else { problem("an attribute value never ends") }
    } else {
      problem("an attribute value without quotes")
      while i < b.count && b[i] != 0x20 && b[i] != 0x0A && b[i] != 0x09 && b[i] != UInt8(ascii: ">") {
        if b[i] == UInt8(ascii: "&") { appendReference(to: &out) } else { out.append(b[i]); i += 1 }
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// An `&` that starts no reference: kept as text, and reported.
  private mutating func bareAmpersand(to out: inout [UInt8]) {
    problem("a bare & in text")
    out.append(UInt8(ascii: "&"))
    i += 1
  }

  /// Reads `&…` at the reader's position onto `out`: a character reference
  /// (C1 controls read as windows-1252, as HTML does; zero as U+FFFD), one
  /// of XML's five, an entity of the internal DTD, an HTML named reference
  /// (reported: XML does not declare it; without `;` too) or a bare `&`
  /// (reported, kept as text). An unknown `&name;` is kept as written.
  private mutating func appendReference(to out: inout [UInt8]) {
    var k = i + 1
    if k < b.count && b[k] == UInt8(ascii: "#") {
      k += 1
      let hex = k < b.count && (b[k] == UInt8(ascii: "x") || b[k] == UInt8(ascii: "X"))
      if hex { k += 1 }
      let start = k
      while k < b.count && (hex ? b[k].isHexDigit : (b[k] >= 0x30 && b[k] <= 0x39)) { k += 1 }
      if k > start, k - start <= 8, let v = UInt32(String(decoding: b[start..<k], as: UTF8.self), radix: hex ? 16 : 10) {
        var scalar = Unicode.Scalar(v) ?? "\u{FFFD}"
        if v == 0 { scalar = "\u{FFFD}" }
        if (0x80...0x9F).contains(v) {
          // As HTML does: windows-1252's meaning of C1 controls.
          let mapped = InputDecoder.decode([UInt8(v)], as: .windows1252)
          out.append(contentsOf: mapped)
        } else {
          out.append(contentsOf: Array(String(scalar).utf8))
        }
        if k < b.count && b[k] == UInt8(ascii: ";") { k += 1 } else { problem("a character reference without ;") }
        i = k
        return
      }
      return bareAmpersand(to: &out)
    }
    let start = k
    while k < b.count && k - start < 40 && XMLReader.isNameChar(b[k]) { k += 1 }
    guard k > start, k < b.count, b[k] == UInt8(ascii: ";") else {
      // `&nbsp` without `;` is still HTML's reference when the name is known.
      if k > start, let v = HTMLNamedReference.value(of: String(decoding: b[start..<k], as: UTF8.self), semicolon: false) {
        problem("an entity reference without ;")
        out.append(contentsOf: Array(v.utf8))
        i = k
        return
      }
      return bareAmpersand(to: &out)
    }
    let name = String(decoding: b[start..<k], as: UTF8.self)
    i = k + 1
    switch name {
    case "amp": out.append(UInt8(ascii: "&"))
    case "lt": out.append(UInt8(ascii: "<"))
    case "gt": out.append(UInt8(ascii: ">"))
    case "quot": out.append(UInt8(ascii: "\""))
    case "apos": out.append(UInt8(ascii: "'"))
    default:
      if let v = entities[name] {
        out.append(contentsOf: Array(v.utf8))
      } else if let v = HTMLNamedReference.value(of: name) {
        problem("undeclared entity &\(name);")
        out.append(contentsOf: Array(v.utf8))
      } else {
        problem("unknown entity &\(name);")
        out.append(contentsOf: b[(start - 1)..<i])
      }
    }
  }

  /// Reads `<!DOCTYPE …>` (keeping its internal general entities) or any
  /// other `<!…>` declaration.
  private mutating func readDeclaration() {
    i += 2
    var depth = 0
    while i < b.count {
      let c = b[i]
      if c == UInt8(ascii: "[") { depth += 1; i += 1 }
      else if c == UInt8(ascii: "]") { depth -= 1; i += 1 }
      else if c == UInt8(ascii: ">") && depth <= 0 { i += 1; return }
      else if depth > 0 && starts("<!ENTITY") {
        i += 8
        skipSpace()
        if i < b.count && b[i] == UInt8(ascii: "%") { skipUntil(UInt8(ascii: ">")); continue }
        let name = readName()
        skipSpace()
        if i < b.count && (b[i] == UInt8(ascii: "\"") || b[i] == UInt8(ascii: "'")) {
          let value = readAttributeValue()
          if !name.isEmpty && entities[name] == nil && entities.count < XMLReader.maxEntities { entities[name] = value }
        }
        skipUntil(UInt8(ascii: ">"))
      } else if depth > 0 && starts("<!--") {
        skip(past: "-->", what: "comment")
      } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
        i += 1
        while i < b.count && b[i] != c { i += 1 }
        i += 1
      } else {
        i += 1
      }
    }
    problem("a declaration never ends")
  }
}

extension XMLElement {
  /// The namespace `prefix` maps to in scope, or nil when undeclared.
  func lookup(_ prefix: String) -> String? {
    var e: XMLElement? = self
    while let x = e {
      if let ns = x.declarations[prefix] { return ns }
      e = x.parentForLookup
    }
    if prefix == "xml" { return XMLReader.conventionalPrefixes["xml"] }
    return prefix.isEmpty ? "" : nil
  }
}

extension UInt8 {
  fileprivate var isHexDigit: Bool {
    (self >= 0x30 && self <= 0x39) || (self >= 0x61 && self <= 0x66) || (self >= 0x41 && self <= 0x46)
  }
}
