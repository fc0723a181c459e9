/// Text on its way into HTML or XML markup: the characters markup gives a
/// meaning to become character references, so the text shows as itself.
///
///     MarkupText.escaped("Tom & Jerry <3")                  // "Tom &amp; Jerry &lt;3"
///     MarkupText.escaped(#"say "hi""#, quotes: .double)     // "say &quot;hi&quot;"
///
/// The one place that writes `&amp;`, `&lt;`, `&gt;`, `&quot;` and `&#39;`:
/// the HTML report, the feed reader's markup of XHTML content and the test
/// server's pages and feeds call it. (ForageHTML's serializer keeps its own
/// escaping: it is the HTML standard's serialization algorithm, which
/// escapes a different set in text and in attributes.)
///
/// - SeeAlso: <https://www.w3.org/TR/xml/#syntax> (the characters XML
///   reserves), <https://html.spec.whatwg.org/multipage/syntax.html#character-references>
package enum MarkupText {
  /// Which quotation marks are escaped besides `&`, `<` and `>`.
  package enum Quotes: Sendable {
    /// None: text between tags.
    case none
    /// `"` as `&quot;`: a double-quoted attribute value.
    case double
    /// `"` as `&quot;` and `'` as `&#39;`: either kind of attribute, or text
    /// that may end up in one.
    case both
  }

  /// `text` with `&`, `<` and `>` (and the `quotes` chosen) written as
  /// character references. When `replacingControls`, the control characters
  /// HTML does not allow in text (C0 other than tab, line feed and carriage
  /// return, and DEL) become U+FFFD, the replacement character.
  ///
  /// - Complexity: O(n) in the length of `text`; `text` itself is returned,
  ///   unchanged and uncopied, when it holds nothing to escape.
  package static func escaped(_ text: String, quotes: Quotes = .both, replacingControls: Bool = false) -> String {
    func needs(_ u: UInt8) -> Bool {
      switch u {
      case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"): return true
      case UInt8(ascii: "\""): return quotes != .none
      case UInt8(ascii: "'"): return quotes == .both
      case 0x00...0x08, 0x0B, 0x0C, 0x0E...0x1F, 0x7F: return replacingControls
      default: return false
      }
    }
    guard text.utf8.contains(where: needs) else { return text }
    var out = ""
    out.reserveCapacity(text.utf8.count + 16)
    for scalar in text.unicodeScalars {
      guard scalar.isASCII, needs(UInt8(scalar.value)) else {
        out.unicodeScalars.append(scalar)
        continue
      }
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&#39;"
      default: out += "\u{FFFD}"
      }
    }
    return out
  }
}
