/// JSON text written by hand where building a value first would cost more:
/// record fields, and batches of keys bound to SQLite's `json_each`.
package enum JSONText {
  /// True when `s` holds a byte JSON must escape (a control character, a
  /// quote or a backslash). Reads the string's contiguous UTF-8 in place
  /// (native strings always are): the generic UTF-8 view walked byte by
  /// byte cost more than writing the record.
  @inline(__always)
  package static func needsEscaping(_ s: String) -> Bool {
    func scan(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
      for c in b where c < 0x20 || c == 0x22 || c == 0x5C { return true }
      return false
    }
    if let found = s.utf8.withContiguousStorageIfAvailable(scan) { return found }
    var copy = s
    return copy.withUTF8(scan)
  }

  /// Appends `s` to `out` as a JSON string literal, quoted and escaped
  /// (RFC 8259 §7: quote, backslash and control characters).
  package static func writeString(_ s: String, to out: inout String) {
    out += "\""
    // Most strings need no escaping: append them whole.
    if !needsEscaping(s) {
      out += s
      out += "\""
      return
    }
    for u in s.unicodeScalars {
      switch u {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where u.value < 0x20:
        let hex = String(u.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(u)
      }
    }
    out += "\""
  }
}
