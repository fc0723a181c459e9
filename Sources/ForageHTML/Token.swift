/// A token of the HTML tokenizer, in public form. (The parser hands its
/// tree builder a leaner internal form whose tag names and attributes point
/// into the document being built.)
///
/// Character data arrives in runs (`characters`), not one token per code
/// point: the tree builder splits a run where an insertion mode treats
/// whitespace, NUL or other characters differently.
///
/// - SeeAlso: <https://html.spec.whatwg.org/#tokenization>
public enum Token: Equatable, Sendable {
  /// A DOCTYPE token. Missing name and identifiers are `nil`, as the spec's
  /// "missing" differs from the empty string.
  case doctype(Doctype)
  /// A start tag; names are lower-cased ASCII, attributes in source order
  /// with duplicates already dropped (a parse error).
  case startTag(Tag)
  /// An end tag; its attributes and self-closing flag are parse errors and
  /// carry no meaning.
  case endTag(Tag)
  /// A comment's data.
  case comment(String)
  /// A run of character data (never empty).
  case characters(String)
  /// End of input.
  case endOfFile
}

/// The DOCTYPE token's fields.
public struct Doctype: Equatable, Sendable {
  public var name: String?
  public var publicIdentifier: String?
  public var systemIdentifier: String?
  public var forceQuirks: Bool

  public init(
    name: String? = nil, publicIdentifier: String? = nil,
    systemIdentifier: String? = nil, forceQuirks: Bool = false
  ) {
    self.name = name
    self.publicIdentifier = publicIdentifier
    self.systemIdentifier = systemIdentifier
    self.forceQuirks = forceQuirks
  }
}

/// A start or end tag token.
public struct Tag: Equatable, Sendable {
  /// The tag name, lower-cased ASCII.
  public var name: String
  /// Attributes in source order, without duplicates.
  public var attributes: [Attribute]
  /// True for `<br/>`-style tags.
  public var selfClosing: Bool
  /// The name's code among the parser's known tag names (`T`), or -1.
  var code: Int32 = -1

  public init(name: String, attributes: [Attribute] = [], selfClosing: Bool = false) {
    self.name = name
    self.attributes = attributes
    self.selfClosing = selfClosing
  }
}

/// An attribute of a tag token or an element.
///
/// `namespace` is `.none` except for the foreign attributes that the tree
/// builder adjusts (`xlink:href`, `xml:lang`, `xmlns`…), where `prefix`
/// keeps the prefix used for serialization.
public struct Attribute: Equatable, Sendable {
  public var name: String
  public var value: String
  public var namespace: AttributeNamespace
  public var prefix: String?

  public init(
    name: String, value: String,
    namespace: AttributeNamespace = .none, prefix: String? = nil
  ) {
    self.name = name
    self.value = value
    self.namespace = namespace
    self.prefix = prefix
  }
}

/// The namespace of an attribute.
public enum AttributeNamespace: UInt8, Sendable {
  case none, xlink, xml, xmlns
}

/// The namespace of an element. (`BitwiseCopyable` lets the parser keep
/// values holding it in plain buffers; a public enum gets no inferred
/// conformance.)
public enum Namespace: UInt8, Sendable, BitwiseCopyable {
  case html, svg, mathml
}
