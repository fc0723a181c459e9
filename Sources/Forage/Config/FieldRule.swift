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
public struct FieldRule: Sendable, Hashable, ExpressibleByStringLiteral {
  /// The CSS selector (HTML sources) or RFC 6901 JSON Pointer (JSON sources).
  public var selector: String
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
}

/// The type a field's value is converted to.
public enum FieldType: String, Sendable, Hashable, CaseIterable {
  case string, number, integer, bool, date
}

/// A named field rule; a source's fields keep their declared order (it is
/// the column order of CSV exports).
public struct Field: Sendable, Hashable {
  public var name: String
  public var rule: FieldRule
  public init(name: String, rule: FieldRule) {
    self.name = name
    self.rule = rule
  }
}
