import ForageSupport

/// The names of the fields a change touched, found once at commit from the
/// two canonical JSON texts of a record's fields (and for rows stored before
/// the store kept them, when a change is read), without building either value.
///
///     ChangedFields.between(#"{"price":3,"title":"A"}"#, #"{"price":4,"title":"A"}"#)   // ["price"]
///     ChangedFields.between(nil, #"{"price":3,"title":"A"}"#)                           // ["price", "title"]
///
/// Record fields are stored canonical (keys sorted, compact), so two members
/// hold equal values exactly when their texts are equal: the texts are
/// compared, not parsed.
package enum ChangedFields {
  /// The fields whose values differ between `before` and `after`, in the
  /// stored (sorted) order: every field of the one given for a new or
  /// removed record (the other nil), and a field present on one side only.
  package static func between(_ before: String?, _ after: String?) -> [String] {
    switch (before, after) {
    case (nil, nil): return []
    case (nil, let only?), (let only?, nil): return members(only).map(\.key)
    case (let before?, let after?):
      if before == after { return [] }
      let old = members(before)
      let new = members(after)
      var oldByKey: [String: Substring] = [:]
      oldByKey.reserveCapacity(old.count)
      for member in old { oldByKey[member.key] = member.value }
      var changed = Set<String>()
      for member in new where oldByKey[member.key] != member.value { changed.insert(member.key) }
      let newKeys = Set(new.map(\.key))
      for member in old where !newKeys.contains(member.key) { changed.insert(member.key) }
      return changed.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
    }
  }

  /// The top-level members of a JSON object text: each key (unescaped) and
  /// its value's text. Text that is not an object gives none.
  package static func members(_ text: String) -> [(key: String, value: Substring)] {
    var scanner = Scanner(text)
    return scanner.objectMembers() ?? []
  }

  /// `names` as the text of a JSON array of strings (the `changed_fields`
  /// column).
  package static func encode(_ names: [String]) -> String {
    var out = "["
    for (i, name) in names.enumerated() {
      if i > 0 { out += "," }
      JSONText.writeString(name, to: &out)
    }
    return out + "]"
  }

  /// The names a `changed_fields` column holds; nil when the text is not a
  /// JSON array of strings.
  package static func decode(_ text: String) -> [String]? {
    var scanner = Scanner(text)
    return scanner.stringArray()
  }

  /// A scanner over JSON text's UTF-8, just enough to split an object's
  /// members and read an array of strings.
  private struct Scanner {
    let text: String
    let utf8: String.UTF8View
    var i: String.Index

    init(_ text: String) {
      self.text = text
      utf8 = text.utf8
      i = utf8.startIndex
    }

    var current: UInt8? { i < utf8.endIndex ? utf8[i] : nil }

    mutating func skipWhitespace() {
      while let c = current, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i = utf8.index(after: i) }
    }

    mutating func take(_ c: UInt8) -> Bool {
      skipWhitespace()
      guard current == c else { return false }
      i = utf8.index(after: i)
      return true
    }

    mutating func objectMembers() -> [(key: String, value: Substring)]? {
      guard take(UInt8(ascii: "{")) else { return nil }
      var members: [(key: String, value: Substring)] = []
      if take(UInt8(ascii: "}")) { return members }
      repeat {
        skipWhitespace()
        guard let key = string(), take(UInt8(ascii: ":")) else { return nil }
        skipWhitespace()
        let start = i
        guard skipValue() else { return nil }
        members.append((key, text[start..<i]))
      } while take(UInt8(ascii: ","))
      return take(UInt8(ascii: "}")) ? members : nil
    }

    mutating func stringArray() -> [String]? {
      guard take(UInt8(ascii: "[")) else { return nil }
      var names: [String] = []
      if take(UInt8(ascii: "]")) { return names }
      repeat {
        skipWhitespace()
        guard let name = string() else { return nil }
        names.append(name)
      } while take(UInt8(ascii: ","))
      return take(UInt8(ascii: "]")) ? names : nil
    }

    /// A string literal at `i`, unescaped; nil when there is none.
    mutating func string() -> String? {
      guard current == UInt8(ascii: "\"") else { return nil }
      i = utf8.index(after: i)
      let start = i
      var escaped = false
      while let c = current, c != UInt8(ascii: "\"") {
        if c == UInt8(ascii: "\\") {
          escaped = true
          i = utf8.index(after: i)
          guard current != nil else { return nil }
        }
        i = utf8.index(after: i)
      }
      guard current != nil else { return nil }
      let body = text[start..<i]
      i = utf8.index(after: i)
      return escaped ? Scanner.unescape(body) : String(body)
    }

    /// Moves past one value (nested brackets and strings included).
    mutating func skipValue() -> Bool {
      var depth = 0
      while let c = current {
        switch c {
        case UInt8(ascii: "\""):
          guard string() != nil else { return false }
          if depth == 0 { return true }
          continue
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
          if depth == 0 { return true }
          depth -= 1
          if depth == 0 {
            i = utf8.index(after: i)
            return true
          }
        case UInt8(ascii: ","):
          if depth == 0 { return true }
        case 0x20, 0x0A, 0x0D, 0x09:
          if depth == 0 { return true }
        default: break
        }
        i = utf8.index(after: i)
      }
      return depth == 0
    }

    /// A string body's escapes resolved (RFC 8259 §7).
    static func unescape(_ body: Substring) -> String? {
      var out = String.UnicodeScalarView()
      var scalars = body.unicodeScalars.makeIterator()
      func hex4() -> UInt32? {
        var v: UInt32 = 0
        for _ in 0..<4 {
          guard let s = scalars.next(), let d = UInt32(String(s), radix: 16) else { return nil }
          v = v * 16 + d
        }
        return v
      }
      while let s = scalars.next() {
        guard s == "\\" else {
          out.append(s)
          continue
        }
        switch scalars.next() {
        case "\"": out.append("\"")
        case "\\": out.append("\\")
        case "/": out.append("/")
        case "b": out.append("\u{08}")
        case "f": out.append("\u{0C}")
        case "n": out.append("\n")
        case "r": out.append("\r")
        case "t": out.append("\t")
        case "u":
          guard var v = hex4() else { return nil }
          if (0xD800..<0xDC00).contains(v) {
            guard scalars.next() == "\\", scalars.next() == "u", let low = hex4(), (0xDC00..<0xE000).contains(low)
            else { return nil }
            v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
          }
          guard let scalar = Unicode.Scalar(v) else { return nil }
          out.append(scalar)
        default: return nil
        }
      }
      return String(out)
    }
  }
}
