/// Text from outside (a scraped page, a server) on its way to a terminal or
/// standard output: control characters become escapes, so that none reaches
/// the terminal raw. The 7-bit ones (C0, such as ESC) and the 8-bit ones
/// (C1, U+0080–U+009F: U+009B is a terminal's CSI, as ESC `[` is) are
/// treated alike, and DEL with them.
///
///     TerminalText.escaping("a\u{9B}2Jb")              // "a\\u009b2Jb"
///     TerminalText.escapingJSON(#"{"a":"\u001b"}"#)     // unchanged: JSON escaped it
///
/// The one place that decides which characters a terminal must not see:
/// `forage changes` (its lines and `--json`) and the `stdout` notify channel
/// go through it.
///
/// - SeeAlso: <https://www.unicode.org/charts/PDF/U0080.pdf> (C1 controls)
package enum TerminalText {
  /// True for a C0 control (U+0000–U+001F), DEL (U+007F) or a C1 control
  /// (U+0080–U+009F).
  @inline(__always)
  package static func isControl(_ u: Unicode.Scalar) -> Bool {
    u.value < 0x20 || (0x7F...0x9F).contains(u.value)
  }

  /// `s` with each control character written as JSON writes one (`\u001b`,
  /// `\u009b`); a line feed and a tab are kept when `keepingLines` (text
  /// shown as lines), escaped otherwise (text shown on one line).
  package static func escaping(_ s: String, keepingLines: Bool = false) -> String {
    func escaped(_ u: Unicode.Scalar) -> Bool { isControl(u) && !(keepingLines && (u == "\n" || u == "\t")) }
    guard s.unicodeScalars.contains(where: escaped) else { return s }
    var out = String.UnicodeScalarView()
    for u in s.unicodeScalars {
      if escaped(u) { out.append(contentsOf: hexEscape(u.value).unicodeScalars) } else { out.append(u) }
    }
    return String(out)
  }

  /// JSON text with DEL and the C1 controls, which JSON may leave raw,
  /// escaped as `\u007f`…`\u009f` (the C0 ones a serializer escapes
  /// already). Outside strings JSON holds only ASCII, so every such
  /// character is inside a string, where the escape means the same one.
  package static func escapingJSON(_ json: String) -> String {
    guard json.unicodeScalars.contains(where: { (0x7F...0x9F).contains($0.value) }) else { return json }
    var out = String.UnicodeScalarView()
    for u in json.unicodeScalars {
      if (0x7F...0x9F).contains(u.value) { out.append(contentsOf: hexEscape(u.value).unicodeScalars) } else { out.append(u) }
    }
    return String(out)
  }

  /// ``escapingJSON(_:)`` over UTF-8 bytes: DEL is `7F`, a C1 control is
  /// `C2 80`…`C2 9F`.
  package static func escapingJSON(_ json: [UInt8]) -> [UInt8] {
    var i = 0
    var out: [UInt8]?
    while i < json.count {
      let b = json[i]
      let c1 = b == 0xC2 && i + 1 < json.count && (0x80...0x9F).contains(json[i + 1])
      if b == 0x7F || c1 {
        if out == nil { out = Array(json[..<i]) }
        out!.append(contentsOf: hexEscape(c1 ? UInt32(json[i + 1]) : 0x7F).utf8)
        i += c1 ? 2 : 1
      } else {
        out?.append(b)
        i += 1
      }
    }
    return out ?? json
  }

  /// `\u00XX`, as JSON escapes a character.
  static func hexEscape(_ value: UInt32) -> String {
    let hex = String(value, radix: 16)
    return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
  }
}
