/// How to extract one field of a record.
///
/// A rule is written as a bare selector (`"h1"`: the text of the first
/// match) or as an object with options:
///
///     let title: FieldRule = "h1.product-title"
///     let price = FieldRule.css(".price", as: .number)
///     let sku = FieldRule.css("div.product", attr: "data-sku", required: true)
///     let tags = FieldRule.css(".tag", all: true)
///     let id = FieldRule.pointer("/data/id", as: .integer)   // JSON sources
///     let cost = FieldRule.jsonLD("Product", pointer: "/offers/price", as: .number)
///     let headline = FieldRule.meta("og:title")
public struct FieldRule: Sendable, Hashable, ExpressibleByStringLiteral {
  /// The CSS selector (HTML sources) or RFC 6901 JSON Pointer (JSON
  /// sources). For a ``StructuredDataSource/jsonLD(type:)`` rule, the JSON
  /// Pointer inside the node (empty: the whole node); unused by a
  /// ``StructuredDataSource/meta(name:)`` rule.
  public var selector: String
  /// Where an HTML field reads structured data (a JSON-LD node or a
  /// `<meta>` tag) instead of matching `selector`; nil for CSS and JSON
  /// Pointer rules.
  public var structured: StructuredDataSource?
  /// Read this attribute instead of the element's text (HTML only).
  public var attr: String?
  /// Collect every match as an array instead of the first one.
  public var all: Bool
  /// The value's type; text is converted, and a failed conversion is an error
  /// for the record (or the default).
  public var type: FieldType
  /// A regular expression applied to the text; the first capture group (or
  /// the whole match when there is none) becomes the value.
  public var regex: String?
  /// Trim surrounding whitespace from text values (default true).
  public var trim: Bool
  /// The value used when nothing matches.
  public var defaultValue: JSONValue?
  /// When true, a page where this field has no value produces no record.
  public var required: Bool

  /// A rule matching `selector` (CSS for HTML, a JSON Pointer for JSON), with the options described on each property.
  public init(
    _ selector: String, attr: String? = nil, all: Bool = false, type: FieldType = .string,
    regex: String? = nil, trim: Bool = true, default defaultValue: JSONValue? = nil,
    required: Bool = false
  ) {
    self.selector = selector
    self.attr = attr
    self.all = all
    self.type = type
    self.regex = regex
    self.trim = trim
    self.defaultValue = defaultValue
    self.required = required
  }

  /// A CSS or JSON Pointer rule written as a string literal: `"title": "h1"`.
  public init(stringLiteral value: String) { self.init(value) }

  /// A CSS rule for HTML sources.
  public static func css(
    _ selector: String, as type: FieldType = .string, attr: String? = nil, all: Bool = false,
    regex: String? = nil, required: Bool = false
  ) -> FieldRule {
    FieldRule(selector, attr: attr, all: all, type: type, regex: regex, required: required)
  }

  /// A JSON Pointer rule for JSON sources.
  public static func pointer(_ pointer: String, as type: FieldType = .string, required: Bool = false) -> FieldRule {
    FieldRule(pointer, type: type, required: required)
  }

  /// A JSON-LD rule for HTML sources: the first node of `nodeType` (nil:
  /// any node with an `@type`) in the page's
  /// `<script type="application/ld+json">` blocks, or the value at `pointer`
  /// inside it (see `docs/configuration.md`, "Structured data").
  ///
  ///     FieldRule.jsonLD("Product", pointer: "/offers/price", as: .number)
  public static func jsonLD(
    _ nodeType: String?, pointer: String = "", as type: FieldType = .string, all: Bool = false, required: Bool = false
  ) -> FieldRule {
    var rule = FieldRule(pointer, all: all, type: type, required: required)
    rule.structured = .jsonLD(type: nodeType)
    return rule
  }

  /// A `<meta>` rule for HTML sources: the `content` of the first `<meta>`
  /// whose `name`, `property` or `itemprop` is `name` (ASCII
  /// case-insensitively).
  ///
  ///     FieldRule.meta("og:title")
  public static func meta(_ name: String, as type: FieldType = .string, all: Bool = false, required: Bool = false) -> FieldRule {
    var rule = FieldRule("", all: all, type: type, required: required)
    rule.structured = .meta(name: name)
    return rule
  }
}

/// Structured data an HTML field reads instead of matching a CSS selector.
public enum StructuredDataSource: Sendable, Hashable {
  /// A node of a `<script type="application/ld+json">` block whose `@type`
  /// is (or includes) this type, compared by its last segment
  /// (`schema:Product` and `https://schema.org/Product` are `Product`);
  /// nil for any node that has an `@type`.
  case jsonLD(type: String?)
  /// The `content` of a `<meta>` tag with this `name`, `property` or
  /// `itemprop` (`og:title`, `description`).
  case meta(name: String)
}

/// The type a field's value is converted to.
public enum FieldType: String, Sendable, Hashable, CaseIterable {
  case string, number, integer, bool, date
}

/// A named field rule; a source's fields keep their declared order (it is
/// the column order of CSV exports).
public struct Field: Sendable, Hashable {
  /// The field's name in each record.
  public var name: String
  /// How the field's value is found.
  public var rule: FieldRule
  /// The field `name` found by `rule`.
  public init(name: String, rule: FieldRule) {
    self.name = name
    self.rule = rule
  }
}
