// How a document stores attributes: names as interned codes, values as runs
// of one byte buffer. The public `Attribute` (two Strings) is made only when
// asked for.

/// An attribute as the document stores it: 16 bytes, no reference counted
/// field. Its name is a code (`Document.attributeName(_:)`: the common
/// names have the fixed codes of `A`), its value a run of
/// `Document.attributeBytes`. Making and freeing one costs no allocation;
/// the tokenizer used to make two Strings per attribute, which with the
/// teardown of the array of them was a tenth of parsing a small page.
struct StoredAttribute {
  var name: Int32
  var valueStart: Int32
  var valueCount: Int32
  var namespace: AttributeNamespace
  var prefix: AttributePrefix

  /// A placeholder for spare room (see `Document.grow`).
  static let empty = StoredAttribute(name: 0, valueStart: 0, valueCount: 0, namespace: .none, prefix: .none)
}

/// The prefixes the tree builder gives foreign attributes (`xlink:href`,
/// `xml:lang`, `xmlns:xlink`); nothing else has one.
///
/// - SeeAlso: <https://html.spec.whatwg.org/#adjust-foreign-attributes>
enum AttributePrefix: UInt8 {
  case none, xlink, xml, xmlns

  init?(_ text: String?) {
    switch text {
    case nil: self = .none
    case "xlink": self = .xlink
    case "xml": self = .xml
    case "xmlns": self = .xmlns
    default: return nil
    }
  }

  var text: String? {
    switch self {
    case .none: return nil
    case .xlink: return "xlink"
    case .xml: return "xml"
    case .xmlns: return "xmlns"
    }
  }
}

/// The attribute names common on real pages, with fixed codes: every
/// document's name table starts with them, so the tokenizer finds a code
/// without hashing and selectors know the codes of `id` and `class` ahead.
enum A {
  static let names: [String] = [
    "id", "class", "href", "src", "alt", "rel", "for", "type", "name", "role", "lang", "style", "title",
    "width", "value", "height", "target", "action", "method", "srcset", "content", "charset", "loading",
    "property", "tabindex", "datetime", "aria-label", "color", "face", "size", "encoding", "selected",
    "multiple",
  ]
  static let index: [String: Int32] = {
    var index: [String: Int32] = [:]
    for (i, name) in names.enumerated() { index[name] = Int32(i) }
    return index
  }()

  static let id: Int32 = 0
  static let `class`: Int32 = 1
  static let type: Int32 = 7
  static let color: Int32 = 27
  static let face: Int32 = 28
  static let size: Int32 = 29

  /// The code of the common name spelled by `n` bytes at `p`, or -1.
  @inline(__always)
  static func code(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int32 {
    @inline(__always) func matches(_ s: StaticString) -> Bool {
      let q = s.utf8Start
      var i = 0
      while i < n {
        if p[i] != q[i] { return false }
        i += 1
      }
      return true
    }
    switch n {
    case 2: return matches("id") ? 0 : -1
    case 3:
      if matches("src") { return 3 }
      if matches("alt") { return 4 }
      if matches("rel") { return 5 }
      if matches("for") { return 6 }
      return -1
    case 4:
      if matches("href") { return 2 }
      if matches("type") { return 7 }
      if matches("name") { return 8 }
      if matches("role") { return 9 }
      if matches("lang") { return 10 }
      if matches("face") { return 28 }
      if matches("size") { return 29 }
      return -1
    case 5:
      if matches("class") { return 1 }
      if matches("style") { return 11 }
      if matches("title") { return 12 }
      if matches("width") { return 13 }
      if matches("value") { return 14 }
      if matches("color") { return 27 }
      return -1
    case 6:
      if matches("height") { return 15 }
      if matches("target") { return 16 }
      if matches("action") { return 17 }
      if matches("method") { return 18 }
      if matches("srcset") { return 19 }
      return -1
    case 7:
      if matches("content") { return 20 }
      if matches("charset") { return 21 }
      if matches("loading") { return 22 }
      return -1
    case 8:
      if matches("property") { return 23 }
      if matches("tabindex") { return 24 }
      if matches("datetime") { return 25 }
      if matches("encoding") { return 30 }
      if matches("selected") { return 31 }
      if matches("multiple") { return 32 }
      return -1
    case 10:
      return matches("aria-label") ? 26 : -1
    default:
      return -1
    }
  }
}

extension Document {
  /// The code of attribute name `name`, interning it when new.
  func internAttributeName(_ name: String) -> Int32 {
    if let code = attributeNameCode(name) { return code }
    let code = Int32(A.names.count + extraAttributeNames.count)
    extraAttributeNames.append(name)
    if extraAttributeNames.count > Self.linearNameLimit {
      if extraAttributeIndex.isEmpty {
        for (i, n) in extraAttributeNames.enumerated() { extraAttributeIndex[n] = Int32(A.names.count + i) }
      } else {
        extraAttributeIndex[name] = code
      }
    }
    return code
  }

  /// Up to this many uncommon names are looked up by a scan, without a
  /// dictionary (most pages have a few `data-` names: one allocation less).
  static let linearNameLimit = 16

  /// The code of attribute name `name` when it is common or some attribute
  /// of this document has it, else nil (then no element has it).
  func attributeNameCode(_ name: String) -> Int32? {
    var copy = name
    let common = copy.withUTF8 { $0.isEmpty ? -1 : A.code($0.baseAddress!, $0.count) }
    if common >= 0 { return common }
    return uncommonAttributeNameCode(name)
  }

  /// The code of `name` when it is not one of the common names of `A`
  /// (`attributeNameCode` without the common names' test).
  func uncommonAttributeNameCode(_ name: String) -> Int32? {
    if extraAttributeNames.count > Self.linearNameLimit { return extraAttributeIndex[name] }
    for (i, n) in extraAttributeNames.enumerated() where n == name { return Int32(A.names.count + i) }
    return nil
  }

  /// `Element.attr`: the value of element `n`'s no-namespace attribute
  /// `name`, looked up ASCII case-insensitively on HTML elements, or nil.
  ///
  /// A common name in lower case (`href`, `class`) is coded straight from
  /// its bytes: lower-casing would not change it, so neither the test for
  /// upper case nor a lower-cased copy is needed. Other names take the
  /// general way (upper case lowered with `lowercased()` as before).
  func attributeValue(_ n: Int32, lookingUp name: String) -> String? {
    let r = nodes[Int(n)]
    guard r.attributeCount > 0 else { return nil }
    var code = withBytes(name) { $0.isEmpty ? -1 : A.code($0.baseAddress!, $0.count) }
    if code < 0 {
      if r.namespace == .html && hasASCIIUppercase(name) {
        guard let c = attributeNameCode(name.lowercased()) else { return nil }
        code = c
      } else {
        guard let c = uncommonAttributeNameCode(name) else { return nil }
        code = c
      }
    }
    let i = attributeIndex(n, code: code)
    return i >= 0 ? value(attributes[i]) : nil
  }

  /// The attribute name with code `code`.
  func attributeName(_ code: Int32) -> String {
    code < A.names.count ? A.names[Int(code)] : extraAttributeNames[Int(code) - A.names.count]
  }

  /// Stores `a`: its name interned, its value appended to `attributeBytes`.
  func store(_ a: Attribute) -> StoredAttribute {
    let start = Int32(attributeBytes.count)
    attributeBytes.append(contentsOf: a.value.utf8)
    return StoredAttribute(
      name: internAttributeName(a.name), valueStart: start, valueCount: Int32(attributeBytes.count) - start,
      namespace: a.namespace, prefix: AttributePrefix(a.prefix) ?? .none)
  }

  /// The public form of a stored attribute.
  func attribute(_ a: StoredAttribute) -> Attribute {
    Attribute(name: attributeName(a.name), value: value(a), namespace: a.namespace, prefix: a.prefix.text)
  }

  /// A stored attribute's value as a String.
  func value(_ a: StoredAttribute) -> String {
    guard a.valueCount > 0 else { return "" }
    // The bytes are copied straight into the new string's storage; like
    // `String(decoding:as:)` this repairs ill-formed UTF-8 with U+FFFD (the
    // tokenizer stores none), and it cost about 30 instructions less per
    // value (`Element.attr` on a page's links).
    let source = UnsafeRawPointer(attributeBytes.base + Int(a.valueStart))
    let count = Int(a.valueCount)
    return String(unsafeUninitializedCapacity: count) { out in
      out.baseAddress!.initialize(from: source.assumingMemoryBound(to: UInt8.self), count: count)
      return count
    }
  }

  /// True when two stored attributes have the same name, namespace, prefix
  /// and value (the "same attributes" of the list of active formatting
  /// elements' Noah's Ark clause).
  func sameAttribute(_ x: StoredAttribute, _ y: StoredAttribute) -> Bool {
    guard x.name == y.name && x.namespace == y.namespace && x.prefix == y.prefix && x.valueCount == y.valueCount else {
      return false
    }
    if x.valueStart == y.valueStart { return true }
    let b = attributeBytes.base
    var i = 0
    while i < Int(x.valueCount) {
      if b[Int(x.valueStart) + i] != b[Int(y.valueStart) + i] { return false }
      i += 1
    }
    return true
  }

  /// The index in `attributes` of element `n`'s attribute with name code
  /// `code` and no namespace, or -1.
  @inline(__always)
  func attributeIndex(_ n: Int32, code: Int32) -> Int {
    let r = nodes[Int(n)]
    var i = Int(r.attributeStart)
    let end = i + Int(r.attributeCount)
    while i < end {
      if attributes[i].name == code && attributes[i].namespace == .none { return i }
      i += 1
    }
    return -1
  }
}
