import Foundation
import ForageHTML
import ForageSupport

/// Atom text constructs (`title`, `subtitle`, `rights`, `summary`, Atom 0.3's
/// `tagline` and `copyright`) and `content`, read as their `type` and Atom
/// 0.3's `mode` say.
///
/// - Atom 1.0 (RFC 4287 §3.1, §4.1.3): `type="text"` (the default) is text;
///   `"html"` is HTML escaped into the element (unescaped once by the XML
///   reading); `"xhtml"` is one XHTML `div` whose children are the value, the
///   div itself excluded (prefixed or in the default namespace). `content`
///   may instead name a MIME type: `text/*` is text (`text/html` HTML), an
///   XML type (`+xml`, `/xml`) is inline markup, any other type is base64.
/// - Atom 0.3: `type` is a MIME type (`text/plain` by default, `text/html`,
///   `application/xhtml+xml`), and `mode` says how the value is written:
///   `xml` (the default: inline), `escaped` (escaped markup or text) or
///   `base64` (the bytes of a UTF-8 text of that type).
///
/// Leniency: a 1.0 construct given a MIME type and a 0.3 one given a 1.0
/// token are read by the same table. An html-typed value without child
/// elements and without an explicit `mode="xml"` is read as escaped HTML,
/// as feeds that omit `mode` mean. Base64 that does not decode is a problem
/// of the feed (``Feed/problems`` names the element) and the text as written
/// is kept as text; base64 of a non-text type that is not UTF-8 (an image)
/// is binary, and gives no value without a problem.
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc4287#section-3.1>
extension Feed {
  /// A construct's value and whether it is HTML.
  struct TextConstruct {
    /// The value (trimmed), nil when empty.
    var value: String?
    /// True when `value` is HTML, false when it is text.
    var isHTML: Bool
  }

  /// How a construct's `type` says to read it.
  enum ConstructKind: Equatable {
    case text, html, xhtml, xml, binary
  }

  /// The kind a `type` attribute names (Atom 1.0 tokens or MIME types;
  /// parameters such as `; charset=utf-8` ignored).
  static func constructKind(_ type: String?) -> ConstructKind {
    let full = (type ?? "").trimmed.lowercased()
    let t = full.split(separator: ";", maxSplits: 1).first.map { $0.trimmed } ?? ""
    switch t {
    case "", "text", "text/plain": return .text
    case "html", "text/html": return .html
    case "xhtml", "application/xhtml+xml": return .xhtml
    default: break
    }
    if t.hasPrefix("text/") { return .text }
    if t.hasSuffix("+xml") || t.hasSuffix("/xml") { return .xml }
    // A token that is no MIME type (`plain`, a typo): read as text.
    return t.contains("/") ? .binary : .text
  }

  /// Reads a text construct or `content` element.
  ///
  /// - Parameters:
  ///   - e: the element.
  ///   - location: the element as a person names it (`entry 2's content`),
  ///     for a problem.
  ///   - problems: where a problem of the value (base64 that is not) goes.
  static func textConstruct(_ e: XMLElement, location: String, problems: inout [String]) -> TextConstruct {
    let kind = constructKind(e.attribute("type"))
    let mode = e.attribute("mode")?.trimmed.lowercased()
    if mode == "base64" || kind == .binary {
      return base64Construct(e, kind: kind, location: location, problems: &problems)
    }
    let isHTML = kind == .html || kind == .xhtml
    if mode == "escaped" {
      let written = e.hasElementChildren ? e.innerMarkup() : e.text
      return TextConstruct(value: nonEmpty(written.trimmed), isHTML: isHTML)
    }
    let value: String
    switch kind {
    case .text, .binary:
      value = e.text
    case .html:
      if e.hasElementChildren {
        // HTML wrapped in an XHTML div holding escaped markup: the div's
        // text is the HTML; other markup (not allowed here) is kept as markup.
        if let div = wrapperDiv(e), !div.hasElementChildren {
          value = div.text
        } else {
          value = e.innerMarkup()
        }
      } else if mode == "xml" {
        // Atom 0.3 inline content of an HTML type: its text is text.
        value = MarkupText.escaped(e.text, quotes: .none)
      } else {
        value = e.text
      }
    case .xhtml:
      value = (wrapperDiv(e) ?? e).innerMarkup(dropPrefixes: true)
    case .xml:
      value = e.innerMarkup()
    }
    return TextConstruct(value: nonEmpty(value.trimmed), isHTML: isHTML)
  }

  /// The construct's text: its value with markup reduced to its text
  /// (titles are text).
  static func constructText(_ e: XMLElement, location: String, problems: inout [String]) -> String? {
    let c = textConstruct(e, location: location, problems: &problems)
    guard let v = c.value else { return nil }
    return c.isHTML ? nonEmpty(htmlText(v).trimmed) : v
  }

  /// The XHTML `div` an xhtml construct wraps its value in: the only child
  /// element, named `div`, in the XHTML namespace (or, leniently, in none).
  static func wrapperDiv(_ e: XMLElement) -> XMLElement? {
    let elements = e.elements
    guard elements.count == 1, let div = elements.first, div.local == "div",
      div.namespace == xhtmlNS || div.namespace.isEmpty
    else { return nil }
    return div
  }

  /// A base64 value: decoded, and read as UTF-8 text of the construct's
  /// kind (HTML or text; a binary type gives text).
  private static func base64Construct(
    _ e: XMLElement, kind: ConstructKind, location: String, problems: inout [String]
  ) -> TextConstruct {
    let written = e.text
    guard let bytes = base64Decoded(written) else {
      problems.append("\(location) is marked as base64 but is not valid base64; it was kept as text, as written")
      return TextConstruct(value: nonEmpty(written.trimmed), isHTML: false)
    }
    guard InputDecoder.isValidUTF8(bytes) else {
      // Binary data (an image) is no text: nothing to keep, nothing wrong.
      if kind != .binary {
        problems.append("\(location) is base64 of something that is not UTF-8 text; it was left out")
      }
      return TextConstruct(value: nil, isHTML: false)
    }
    let text = String(decoding: bytes, as: UTF8.self)
    return TextConstruct(value: nonEmpty(text.trimmed), isHTML: kind == .html || kind == .xhtml)
  }

  /// Base64 (RFC 4648) with whitespace ignored and missing padding allowed;
  /// nil when the text is not base64.
  static func base64Decoded(_ text: String) -> [UInt8]? {
    var compact = text.filter { !$0.isWhitespace }
    guard !compact.isEmpty else { return [] }
    switch compact.utf8.count % 4 {
    case 2: compact += "=="
    case 3: compact += "="
    case 1: return nil
    default: break
    }
    return Data(base64Encoded: compact).map { [UInt8]($0) }
  }
}
