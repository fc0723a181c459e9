import ForageHTML
import ForageSupport
import ForageURL

// Structured data in HTML pages: JSON-LD blocks and <meta> tags, read by
// `jsonld` and `meta` field rules (docs/configuration.md, "Structured data").

/// A `jsonld` or `meta` rule as extraction uses it: names normalized once
/// per job.
enum StructuredField: Sendable {
  /// `type`: the last segment of the type name, ASCII lower case (nil: any
  /// typed node); `pointer`: the JSON Pointer's reference tokens.
  case jsonLD(type: String?, pointer: [String])
  /// `name`: ASCII lower case; `isURL`: the content is a URL, made absolute.
  case meta(name: String, isURL: Bool)

  init(_ source: StructuredDataSource, pointer: String) {
    switch source {
    case .jsonLD(let type):
      self = .jsonLD(type: type.map(JSONLD.typeKey), pointer: JSONPointer.tokens(pointer))
    case .meta(let name):
      let key = JSONLD.asciiLowercased(name.trimmingWhitespace())
      self = .meta(name: key, isURL: MetaTag.urlNames.contains(key))
    }
  }
}

/// Reading JSON-LD: finding the blocks, tolerating common breakage, and
/// walking nodes.
enum JSONLD {
  /// True when a `<script>`'s `type` attribute names JSON-LD: its essence
  /// (before any `;` parameters, whitespace trimmed) is
  /// `application/ld+json`, ASCII case-insensitively.
  static func isJSONLDScriptType(_ type: String) -> Bool {
    let essence = type.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
    return asciiLowercased(essence.trimmingWhitespace()) == "application/ld+json"
  }

  /// How a type is compared: its last segment (after the last `/`, `#` or
  /// `:`), ASCII lower case. `schema:Product`, `http://schema.org/Product`
  /// and `Product` are all `product`.
  static func typeKey(_ type: String) -> String {
    let t = type.trimmingWhitespace()
    let bytes = Array(t.utf8)
    var start = bytes.count
    while start > 0, bytes[start - 1] != UInt8(ascii: "/"), bytes[start - 1] != UInt8(ascii: "#"),
          bytes[start - 1] != UInt8(ascii: ":") {
      start -= 1
    }
    let local = start < bytes.count ? String(decoding: bytes[start...], as: UTF8.self) : t
    return asciiLowercased(local)
  }

  static func asciiLowercased(_ s: String) -> String {
    guard s.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return s }
    return String(decoding: s.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
  }

  /// Parses one block's text, tolerating what pages commonly get wrong:
  /// wrappers around the JSON (`<!-- -->`, `<![CDATA[ ]]>`, `//` and
  /// `/* */` comment lines holding them), raw control characters inside
  /// strings (a literal line break in a description) and trailing commas
  /// before `}` or `]`. Nil for a block with nothing but wrappers.
  ///
  /// - Throws: `JSONSyntaxError` when the text is still not JSON.
  static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue? {
    let bytes = Array(text.utf8)
    let (lo, hi) = unwrapped(bytes)
    if lo >= hi { return nil }
    return try JSONValue.parse(repaired(bytes[lo..<hi]))
  }

  /// The range of `bytes` left once surrounding whitespace and wrappers are
  /// removed, repeatedly (`<!--//--><![CDATA[//><!--` and the like).
  static func unwrapped(_ bytes: [UInt8]) -> (Int, Int) {
    var lo = 0, hi = bytes.count
    func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0C }
    func starts(_ p: StaticString) -> Bool {
      let n = p.utf8CodeUnitCount
      guard hi - lo >= n else { return false }
      for k in 0..<n where bytes[lo + k] != p.utf8Start[k] { return false }
      return true
    }
    func ends(_ p: StaticString) -> Bool {
      let n = p.utf8CodeUnitCount
      guard hi - lo >= n else { return false }
      for k in 0..<n where bytes[hi - n + k] != p.utf8Start[k] { return false }
      return true
    }
    while true {
      let before = (lo, hi)
      while lo < hi, isSpace(bytes[lo]) { lo += 1 }
      while hi > lo, isSpace(bytes[hi - 1]) { hi -= 1 }
      if starts("<!--") { lo += 4 } else if starts("<![CDATA[") { lo += 9 }
      if ends("-->") { hi -= 3 } else if ends("]]>") { hi -= 3 }
      if starts("//") {
        // A comment line: JSON never starts with "/".
        while lo < hi, bytes[lo] != 0x0A, bytes[lo] != 0x0D { lo += 1 }
      } else if starts("/*") {
        var k = lo + 2
        while k + 1 < hi, !(bytes[k] == UInt8(ascii: "*") && bytes[k + 1] == UInt8(ascii: "/")) { k += 1 }
        lo = min(k + 2, hi)
      }
      if ends("*/") {
        // JSON never ends with "/": a trailing comment, dropped from its start.
        var k = hi - 3
        while k > lo, !(bytes[k] == UInt8(ascii: "/") && bytes[k + 1] == UInt8(ascii: "*")) { k -= 1 }
        hi = max(k, lo)
      } else {
        // A last line starting with "//" ("//]]>").
        var k = hi
        while k > lo, bytes[k - 1] != 0x0A, bytes[k - 1] != 0x0D { k -= 1 }
        var first = k
        while first < hi, bytes[first] == 0x20 || bytes[first] == 0x09 { first += 1 }
        if k > lo, first + 1 < hi, bytes[first] == UInt8(ascii: "/"), bytes[first + 1] == UInt8(ascii: "/") { hi = k }
      }
      if (lo, hi) == before || lo >= hi { return (lo, hi) }
    }
  }

  /// The text with raw control characters inside strings escaped and
  /// commas right before `}` or `]` (whitespace aside) removed: one pass.
  static func repaired(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count + 16)
    var inString = false, escaped = false
    var i = bytes.startIndex
    let hex = Array("0123456789abcdef".utf8)
    while i < bytes.endIndex {
      let b = bytes[i]
      i += 1
      if inString {
        if escaped {
          escaped = false
        } else if b == UInt8(ascii: "\\") {
          escaped = true
        } else if b == UInt8(ascii: "\"") {
          inString = false
        } else if b < 0x20 {
          out.append(UInt8(ascii: "\\"))
          switch b {
          case 0x0A: out.append(UInt8(ascii: "n"))
          case 0x0D: out.append(UInt8(ascii: "r"))
          case 0x09: out.append(UInt8(ascii: "t"))
          default: out += [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]]
          }
          continue
        }
        out.append(b)
        continue
      }
      if b == UInt8(ascii: "\"") {
        inString = true
      } else if b == UInt8(ascii: ",") {
        // Each whitespace byte is looked at here at most once more.
        var k = i
        while k < bytes.endIndex, bytes[k] == 0x20 || bytes[k] == 0x0A || bytes[k] == 0x0D || bytes[k] == 0x09 { k += 1 }
        if k < bytes.endIndex, bytes[k] == UInt8(ascii: "}") || bytes[k] == UInt8(ascii: "]") { continue }
      }
      out.append(b)
    }
    return out
  }

  /// A node with an `@type`, and its types as `typeKey` gives them.
  struct TypedNode {
    var types: [String]
    var node: JSONValue
  }

  /// The nodes of a block that have an `@type`, in document order (a node
  /// before the nodes nested in it): top-level arrays, `@graph` arrays and
  /// nested objects (a Product in a WebPage's `mainEntity`) alike.
  /// `@context` is not searched (its term definitions are not nodes), nor
  /// value objects (`{"@value": …, "@type": …}`). Iterative: nesting depth
  /// costs no stack.
  static func typedNodes(in root: JSONValue) -> [TypedNode] {
    var out: [TypedNode] = []
    var stack: [JSONValue] = [root]
    while let v = stack.popLast() {
      switch v {
      case .array(let items):
        for item in items.reversed() where item.isContainer { stack.append(item) }
      case .object(let members):
        if v["@value"] != nil { continue }
        let types: [String]
        switch v["@type"] {
        case .string(let t)?: types = [typeKey(t)]
        case .array(let ts)?: types = ts.compactMap { if case .string(let t) = $0 { return typeKey(t) } else { return nil } }
        default: types = []
        }
        if !types.isEmpty { out.append(TypedNode(types: types, node: v)) }
        for m in members.reversed() where m.key != "@context" && m.value.isContainer { stack.append(m.value) }
      default:
        break
      }
    }
    return out
  }

  /// The values at `tokens` inside `value`, in order, looking through
  /// arrays: a token that is not an index of the array it meets applies to
  /// each element, and an array reached at the end gives its elements.
  /// With `first`, stops at the first value. Nulls are no value; a value
  /// object (`{"@value": …}`) gives its value.
  static func collect(_ tokens: ArraySlice<String>, in value: JSONValue, first: Bool, into out: inout [JSONValue]) {
    switch value {
    case .null:
      return
    case .array(let items):
      if let t = tokens.first, let i = Int(t), String(i) == t {
        if items.indices.contains(i) { collect(tokens.dropFirst(), in: items[i], first: first, into: &out) }
        return
      }
      for item in items {
        collect(tokens, in: item, first: first, into: &out)
        if first && !out.isEmpty { return }
      }
    case .object:
      guard let t = tokens.first else {
        if let inner = value["@value"] { collect(tokens, in: inner, first: first, into: &out) } else { out.append(value) }
        return
      }
      if let next = value[t] { collect(tokens.dropFirst(), in: next, first: first, into: &out) }
    default:
      if tokens.isEmpty { out.append(value) }
    }
  }
}

extension JSONValue {
  fileprivate var isContainer: Bool {
    switch self {
    case .array, .object: return true
    default: return false
    }
  }
}

/// A `<meta>` tag with a `content` attribute.
struct MetaTag {
  var element: NodeID
  /// Its `name`, `property` and `itemprop` tokens (each split at
  /// whitespace, as RDFa's `property` and `itemprop` are lists), ASCII
  /// lower case.
  var names: [String]
  var content: String

  /// Names whose content is a URL: made absolute against the page's base URL.
  static let urlNames: Set<String> = [
    "og:url", "og:image", "og:image:url", "og:image:secure_url", "og:video", "og:video:url", "og:video:secure_url",
    "og:audio", "og:audio:url", "og:audio:secure_url", "twitter:image", "twitter:image:src", "twitter:player",
    "url", "image", "thumbnailurl", "contenturl",
  ]
}

/// The structured data of one HTML page, read the first time a field asks
/// for it: JSON-LD blocks are parsed once per page (a malformed one warns
/// once), `<meta>` tags collected once, and neither when no field reads them.
///
/// In a source with `items`, an item's lookups search the blocks and tags
/// inside the item first, then those outside every item; never another
/// item's.
struct PageStructuredData {
  // Literals known to be valid: compiled once.
  static let scriptSelector = try! Selector("script[type]")
  static let metaSelector = try! Selector("meta[content]")
  static let eitherSelector = try! Selector("script, meta")

  struct Block {
    var element: NodeID
    var nodes: [JSONLD.TypedNode]
  }

  let document: Document
  let url: WebURL
  /// The source's items, when it has `items`.
  let items: [Element]?
  private var blocks: [Block]?
  private var metas: [MetaTag]?
  /// For each item, the `script` and `meta` elements inside it (or it);
  /// and all of those together.
  private var ownByItem: [Set<NodeID>]?
  private var insideItems: Set<NodeID> = []

  init(document: Document, url: WebURL, items: [Element]?) {
    self.document = document
    self.url = url
    self.items = items
  }

  /// The nodes of type `type` (nil: any typed node), in document order;
  /// only the first unless `all`.
  mutating func jsonLDNodes(type: String?, all: Bool, item: Int?, warnings: inout [String]) -> [JSONValue] {
    let blocks = loadBlocks(warnings: &warnings)
    var out: [JSONValue] = []
    for group in groups(blocks, id: \.element, item: item) {
      for block in group {
        for n in block.nodes where type.map({ t in n.types.contains(t) }) ?? true {
          out.append(n.node)
          if !all { return out }
        }
      }
      if !out.isEmpty { return out }
    }
    return out
  }

  /// The contents of the `<meta>` tags named `name` (ASCII lower case), in
  /// document order; only the first unless `all`.
  mutating func metaContents(name: String, all: Bool, item: Int?) -> [String] {
    let metas = loadMetas()
    var out: [String] = []
    for group in groups(metas, id: \.element, item: item) {
      for m in group where m.names.contains(name) {
        out.append(m.content)
        if !all { return out }
      }
      if !out.isEmpty { return out }
    }
    return out
  }

  /// Where an item looks, in order: its own elements, then those outside
  /// every item. Outside items, the whole list.
  private mutating func groups<T>(_ list: [T], id: KeyPath<T, NodeID>, item: Int?) -> [[T]] {
    guard let item, let items else { return [list] }
    if ownByItem == nil {
      // From each script and meta up through its ancestors, rather than
      // searching each item: nested items would make that quadratic.
      var index: [NodeID: Int] = [:]
      for (i, e) in items.enumerated() where index[e.id] == nil { index[e.id] = i }
      var own = [Set<NodeID>](repeating: [], count: items.count)
      for e in document.select(PageStructuredData.eitherSelector) {
        var node: NodeID? = e.id
        while let n = node {
          if let i = index[n] {
            own[i].insert(e.id)
            insideItems.insert(e.id)
          }
          node = document.parent(n)
        }
      }
      ownByItem = own
    }
    let own = ownByItem![item]
    let inside = insideItems
    return [list.filter { own.contains($0[keyPath: id]) }, list.filter { !inside.contains($0[keyPath: id]) }]
  }

  private mutating func loadBlocks(warnings: inout [String]) -> [Block] {
    if let blocks { return blocks }
    let scripts = document.select(PageStructuredData.scriptSelector).filter {
      $0.attr("type").map(JSONLD.isJSONLDScriptType) ?? false
    }
    var out: [Block] = []
    for (i, script) in scripts.enumerated() {
      do {
        guard let json = try JSONLD.parse(document.textContent(of: script.id)) else { continue }
        out.append(Block(element: script.id, nodes: JSONLD.typedNodes(in: json)))
      } catch {
        if warnings.count < 5 {
          warnings.append("\(url.href): JSON-LD block \(i + 1) of \(scripts.count) is not valid JSON and was skipped (\(error.message))")
        }
      }
    }
    blocks = out
    return out
  }

  private mutating func loadMetas() -> [MetaTag] {
    if let metas { return metas }
    var out: [MetaTag] = []
    for e in document.select(PageStructuredData.metaSelector) {
      guard let content = e.attr("content") else { continue }
      var names: [String] = []
      for attr in ["name", "property", "itemprop"] {
        guard let v = e.attr(attr) else { continue }
        names += v.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0C}" })
          .map { JSONLD.asciiLowercased(String($0)) }
      }
      if !names.isEmpty { out.append(MetaTag(element: e.id, names: names, content: content)) }
    }
    metas = out
    return out
  }
}

extension Extractor {
  /// The value of a `jsonld` or `meta` field (nil when there is none);
  /// `item` is the item's index in a source with `items`.
  static func structuredValue(
    _ f: CompiledSource.CompiledField, _ spec: StructuredField, item: Int?, page: inout PageStructuredData, base: WebURL,
    warnings: inout [String], unreadable: inout Bool
  ) -> JSONValue? {
    var values: [JSONValue] = []
    switch spec {
    case .jsonLD(let type, let pointer):
      for node in page.jsonLDNodes(type: type, all: f.rule.all, item: item, warnings: &warnings) {
        var found: [JSONValue] = []
        JSONLD.collect(pointer[...], in: node, first: !f.rule.all, into: &found)
        for v in found {
          if let c = jsonLDValue(v, field: f, warnings: &warnings, unreadable: &unreadable) { values.append(c) }
        }
      }
    case .meta(let name, let isURL):
      for content in page.metaContents(name: name, all: f.rule.all, item: item) {
        let text = isURL ? (base.resolving(content.trimmingWhitespace())?.href ?? content) : content
        if let c = convert(text, field: f, warnings: &warnings, unreadable: &unreadable) { values.append(c) }
      }
    }
    return f.rule.all ? (values.isEmpty ? nil : .array(values)) : values.first
  }

  /// A JSON-LD value as the field's type: text through the usual
  /// conversion (trim, regex, type); numbers and booleans converted
  /// directly (through their text when there is a regex); objects and
  /// arrays kept as JSON for `string` fields without a regex.
  static func jsonLDValue(
    _ v: JSONValue, field f: CompiledSource.CompiledField, warnings: inout [String], unreadable: inout Bool
  ) -> JSONValue? {
    switch v {
    case .null:
      return nil
    case .string(let s):
      return convert(s, field: f, warnings: &warnings, unreadable: &unreadable)
    case .number(let n):
      if f.regex == nil, let c = ValueConversion.convert(v, to: f.rule.type) { return c }
      return convert(JSONValue.format(n), field: f, warnings: &warnings, unreadable: &unreadable)
    case .bool(let b):
      if f.regex == nil, let c = ValueConversion.convert(v, to: f.rule.type) { return c }
      return convert(b ? "true" : "false", field: f, warnings: &warnings, unreadable: &unreadable)
    case .array, .object:
      if f.rule.type == .string && f.regex == nil { return v }
      if f.rule.type.isNumeric { unreadable = true }
      if warnings.count < 5 {
        warnings.append("field \"\(f.name)\": cannot read \(v.typeName) as \(f.rule.type.rawValue)")
      }
      return nil
    }
  }
}
