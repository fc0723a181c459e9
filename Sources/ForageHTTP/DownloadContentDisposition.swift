import ForageURL

/// A `Content-Disposition` response header (RFC 6266): the disposition type and the
/// file name the server suggests, `filename*` (RFC 8187, any language, UTF-8 or
/// ISO-8859-1) preferred over `filename`.
///
///     ContentDisposition(#"attachment; filename="a.txt"; filename*=UTF-8''%E2%82%AC.txt"#)?.filename  // "€.txt"
///
/// The name is returned as the server wrote it, path separators and all: it is a
/// suggestion from the network, and whoever uses it must make it safe first.
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc6266>,
///   <https://www.rfc-editor.org/rfc/rfc8187>
public struct ContentDisposition: Sendable, Hashable {
  /// The disposition type, lowercased: `attachment`, `inline` or an extension.
  public var type: String
  /// The suggested file name: the decoded `filename*` when it is valid, else
  /// `filename`; nil when neither is given (or both are empty).
  public var filename: String?

  /// Parses a header value; nil when it has no disposition type.
  ///
  /// Lenient where servers commonly err: a quoted `filename*`, a name with raw
  /// non-ASCII bytes, parameters repeated (the first one counts), a stray `;`.
  public init?(_ header: String) {
    let parts = Self.split(header)
    guard let first = parts.first else { return nil }
    let type = first.trimmingOWS().lowercased()
    guard !type.isEmpty, !type.contains("=") else { return nil }
    self.type = type
    var plain: String?
    var extended: String?
    var seen: Set<String> = []
    for part in parts.dropFirst() {
      guard let eq = part.firstIndex(of: "=") else { continue }
      let name = part[..<eq].trimmingOWS().lowercased()
      guard seen.insert(name).inserted else { continue }
      let raw = part[part.index(after: eq)...].trimmingOWS()
      let value = Self.unquote(raw)
      switch name {
      case "filename": plain = value
      case "filename*": extended = Self.decodeExtendedValue(value)
      default: break
      }
    }
    filename = [extended, plain].compactMap { $0 }.first { !$0.isEmpty }
  }

  /// The header split at semicolons outside quoted strings.
  static func split(_ header: String) -> [Substring] {
    var parts: [Substring] = []
    var start = header.startIndex
    var i = header.startIndex
    var quoted = false
    while i < header.endIndex {
      let c = header[i]
      if quoted {
        if c == "\\" {
          i = header.index(after: i)
          if i == header.endIndex { break }
        } else if c == "\"" {
          quoted = false
        }
      } else if c == "\"" {
        quoted = true
      } else if c == ";" {
        parts.append(header[start..<i])
        start = header.index(after: i)
      }
      i = header.index(after: i)
    }
    parts.append(header[start...])
    return parts
  }

  /// A token as is, or a quoted-string without its quotes and escapes (RFC 9110 §5.6.4).
  static func unquote(_ raw: Substring) -> String {
    guard raw.first == "\"" else { return String(raw) }
    var out = ""
    var i = raw.index(after: raw.startIndex)
    while i < raw.endIndex {
      let c = raw[i]
      if c == "\"" { break }
      if c == "\\" {
        i = raw.index(after: i)
        if i == raw.endIndex { break }
      }
      out.append(raw[i])
      i = raw.index(after: i)
    }
    return out
  }

  /// An RFC 8187 `ext-value` (`charset'language'pct-encoded`) decoded; nil when it is
  /// malformed, names a charset other than UTF-8 or ISO-8859-1, or is not valid in it.
  static func decodeExtendedValue(_ value: String) -> String? {
    let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
    guard pieces.count == 3 else { return nil }
    let charset = pieces[0].lowercased()
    let utf8 = Array(pieces[2].utf8)
    // attr-char or pct-encoded only (RFC 8187 §3.2.1); anything else makes the value invalid.
    guard utf8.allSatisfy({ $0 == UInt8(ascii: "%") || isAttrChar($0) }),
      let bytes = percentDecodeStrictly(utf8)
    else { return nil }
    switch charset {
    case "utf-8":
      let text = String(decoding: bytes, as: UTF8.self)
      // Invalid UTF-8 decodes with replacement characters: not the bytes given.
      return text.utf8.elementsEqual(bytes) ? text : nil
    case "iso-8859-1":
      return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    default:
      return nil
    }
  }

  private static func isAttrChar(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return Array("!#$&+-.^_`|~".utf8).contains(b)
    }
  }
}
