import Foundation
import ForageHTML

/// Picks a feed document's character encoding as XML does: a byte order
/// mark, then the HTTP charset, then the XML declaration, else UTF-8; and
/// decodes it with the HTML parser's decoders.
///
/// Lenient where feeds are wrong: an unknown or missing declaration on
/// bytes that are not UTF-8 reads them as windows-1252, and bytes declared
/// as a single-byte encoding that are in fact UTF-8 read as UTF-8; both
/// are reported.
///
/// - SeeAlso: <https://www.w3.org/TR/xml/#sec-guessing>,
///   <https://www.rfc-editor.org/rfc/rfc7303#section-3.2>
enum FeedDecoding {
  /// The document as UTF-8, its encoding's name, and what was wrong.
  static func decode(_ bytes: [UInt8], contentType: String?) -> (utf8: [UInt8], encoding: InputDecoder.Encoding, problems: [String]) {
    var problems: [String] = []
    if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
      return (InputDecoder.decode(bytes, from: 3, as: .utf8), .utf8, problems)
    }
    if bytes.count >= 2 && bytes[0] == 0xFE && bytes[1] == 0xFF {
      return (InputDecoder.decode(bytes, from: 2, as: .utf16BE), .utf16BE, problems)
    }
    if bytes.count >= 2 && bytes[0] == 0xFF && bytes[1] == 0xFE {
      return (InputDecoder.decode(bytes, from: 2, as: .utf16LE), .utf16LE, problems)
    }
    // UTF-16 without a BOM: `<?` or `<` as two bytes.
    if bytes.count >= 4 && bytes[0] == 0x3C && bytes[1] == 0 && bytes[2] != 0 && bytes[3] == 0 {
      return (InputDecoder.decode(bytes, as: .utf16LE), .utf16LE, ["UTF-16 without a byte order mark"])
    }
    if bytes.count >= 4 && bytes[0] == 0 && bytes[1] == 0x3C && bytes[2] == 0 {
      return (InputDecoder.decode(bytes, as: .utf16BE), .utf16BE, ["UTF-16 without a byte order mark"])
    }
    let isUTF8 = InputDecoder.isValidUTF8(bytes)
    var chosen: InputDecoder.Encoding?
    if let ct = contentType, let label = charsetParameter(ct) {
      if let e = InputDecoder.encoding(forLabel: label) { chosen = e } else {
        problems.append("unknown HTTP charset \"\(label)\"")
      }
    }
    if chosen == nil, let label = declaredEncoding(bytes) {
      if let e = InputDecoder.encoding(forLabel: label) {
        chosen = e
      } else {
        problems.append("unknown encoding \"\(label)\" in the XML declaration")
      }
    }
    var e = chosen ?? (isUTF8 ? .utf8 : .windows1252)
    if chosen == nil && !isUTF8 { problems.append("not UTF-8 and no known encoding declared; read as windows-1252") }
    if e == .utf16LE || e == .utf16BE {
      // Declared UTF-16 on bytes that are ASCII-compatible: the declaration is wrong.
      problems.append("declared UTF-16 but the bytes are not")
      e = isUTF8 ? .utf8 : .windows1252
    }
    if e == .utf8 && !isUTF8 && chosen != nil {
      problems.append("declared UTF-8 but the bytes are not; read as windows-1252")
      e = .windows1252
    } else if e != .utf8 && isUTF8 && hasMultibyte(bytes) && InputDecoder.Encoding.singleByte.contains(e) {
      problems.append("declared \(e.rawValue) but the bytes are UTF-8")
      e = .utf8
    }
    return (InputDecoder.decode(bytes, as: e), e, problems)
  }

  /// The `charset` parameter of a `Content-Type` value.
  static func charsetParameter(_ contentType: String) -> String? {
    for part in contentType.split(separator: ";").dropFirst() {
      let kv = part.split(separator: "=", maxSplits: 1)
      guard kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else { continue }
      let v = kv[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["\"", "'"])
      return v.isEmpty ? nil : v
    }
    return nil
  }

  /// The `encoding` of an XML declaration at the start of `bytes`.
  static func declaredEncoding(_ bytes: [UInt8]) -> String? {
    var start = 0
    while start < bytes.count && start < 64 && (bytes[start] == 0x20 || bytes[start] == 0x0A || bytes[start] == 0x0D || bytes[start] == 0x09) {
      start += 1
    }
    guard bytes.count >= start + 5, Array(bytes[start..<(start + 5)]) == Array("<?xml".utf8) else { return nil }
    let end = bytes[start...].prefix(512).firstIndex(of: UInt8(ascii: ">")) ?? min(bytes.count, start + 512)
    let decl = String(decoding: bytes[start..<end], as: UTF8.self)
    guard let r = decl.range(of: "encoding") else { return nil }
    var rest = decl[r.upperBound...].drop { $0 == " " || $0 == "=" }
    guard let q = rest.first, q == "\"" || q == "'" else { return nil }
    rest = rest.dropFirst()
    guard let close = rest.firstIndex(of: q) else { return nil }
    let label = String(rest[..<close])
    return label.isEmpty ? nil : label
  }

  private static func hasMultibyte(_ bytes: [UInt8]) -> Bool { bytes.contains { $0 >= 0xC2 } }
}

extension InputDecoder.Encoding {
  /// The single-byte encodings (where UTF-8 bytes would read as mojibake).
  static let singleByte: Set<InputDecoder.Encoding> = [
    .ibm866, .iso8859_2, .iso8859_3, .iso8859_4, .iso8859_5, .iso8859_6, .iso8859_7, .iso8859_8, .iso8859_8I,
    .iso8859_10, .iso8859_13, .iso8859_14, .iso8859_15, .iso8859_16, .koi8R, .koi8U, .macintosh, .windows874,
    .windows1250, .windows1251, .windows1252, .windows1253, .windows1254, .windows1255, .windows1256,
    .windows1257, .windows1258, .xMacCyrillic,
  ]
}
