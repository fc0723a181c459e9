import ForageSupport

/// The fields a change touched, found once at commit from the two JSON texts
/// of a record's fields by a scan of their top-level members, without
/// building either value: each changed field's name and its value's text
/// before and after (`FieldChange`), and their names.
///
///     ChangedFields.diff(#"{"price":3,"title":"A"}"#, #"{"price":4,"title":"A"}"#).changes
///     // [FieldChange(field: "price", before: "3", after: "4")]
///     ChangedFields.between(nil, #"{"price":3,"title":"A"}"#)   // ["price", "title"]
///
/// Record fields are stored compact, written by one serializer, so two
/// members hold equal values exactly when their texts are equal: the texts
/// are compared byte for byte (as the content hash compares them), not
/// parsed.
///
/// This is the one place that learns what changed from stored texts: the
/// commit calls it once per change (`RecordRules`), and a change read back
/// from a store (another process's commit, the outbox delivered later) calls
/// it from the texts stored with it (`RecordChange.init`).
package enum ChangedFields {
  /// The fields whose values differ between `before` and `after`, with
  /// their value texts: in `after`'s member order, then the fields only
  /// `before` has, in its order. A nil side (a new or removed record) gives
  /// every field of the other; text that is not an object has no fields.
  ///
  /// `names` are the changes' fields as the `changed_fields` column keeps
  /// them: sorted by code point, or for a new or removed record in the
  /// record's own order.
  ///
  /// - Complexity: O(*n*) in the length of the two texts (plus sorting the
  ///   changed names).
  package static func diff(_ before: String?, _ after: String?) -> (changes: [FieldChange], names: [String]) {
    switch (before, after) {
    case (nil, nil): return ([], [])
    case (nil, let only?):
      let changes = members(only).map { FieldChange(field: $0.key, before: nil, after: $0.value) }
      return (changes, changes.map(\.field))
    case (let only?, nil):
      let changes = members(only).map { FieldChange(field: $0.key, before: $0.value, after: nil) }
      return (changes, changes.map(\.field))
    case (let before?, let after?):
      if sameBytes(before[...], after[...]) { return ([], []) }
      let old = members(before)
      let new = members(after)
      var oldIndex: [String: Int] = [:]
      oldIndex.reserveCapacity(old.count)
      // Backwards, so that a key given twice (never written so) is its first.
      for i in old.indices.reversed() { oldIndex[old[i].key] = i }
      var matched = [Bool](repeating: false, count: old.count)
      var changes: [FieldChange] = []
      for member in new {
        if let i = oldIndex[member.key] {
          matched[i] = true
          if !sameBytes(old[i].value, member.value) {
            changes.append(FieldChange(field: member.key, before: old[i].value, after: member.value))
          }
        } else {
          changes.append(FieldChange(field: member.key, before: nil, after: member.value))
        }
      }
      for i in old.indices where !matched[i] {
        changes.append(FieldChange(field: old[i].key, before: old[i].value, after: nil))
      }
      return (changes, names(of: changes, wholeRecord: false))
    }
  }

  /// The names of the fields whose values differ between `before` and
  /// `after` (`diff(_:_:)`'s `names`).
  package static func between(_ before: String?, _ after: String?) -> [String] { diff(before, after).names }

  /// The names of `changes` as `diff(_:_:)` gives them: in their order for
  /// a `wholeRecord` (new or removed), else sorted by code point.
  package static func names(of changes: [FieldChange], wholeRecord: Bool) -> [String] {
    let names = changes.map(\.field)
    if wholeRecord { return names }
    return names.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
  }

  /// The text of the top-level member `name` of a JSON object text; nil
  /// when it has none (or the text is not an object). Reads the members
  /// before it, builds none of their values.
  ///
  ///     ChangedFields.member("enclosures", of: #"{"enclosures":[{"url":"a.mp3"}],"title":"A"}"#)
  ///     // #"[{"url":"a.mp3"}]"#
  package static func member(_ name: String, of text: String) -> Substring? {
    var scanner = Scanner(text)
    var found: Substring?
    _ = scanner.forEachMember { key, value in
      guard key == name else { return true }
      found = value
      return false
    }
    return found
  }

  /// Whether two texts hold the same bytes (`==` on strings compares
  /// canonical equivalence, which a stored hash does not).
  static func sameBytes(_ a: Substring, _ b: Substring) -> Bool {
    let x = a.utf8, y = b.utf8
    guard x.count == y.count else { return false }
    let fast = x.withContiguousStorageIfAvailable { p in
      y.withContiguousStorageIfAvailable { q in p.elementsEqual(q) }
    }
    if let fast, let same = fast { return same }
    return x.elementsEqual(y)
  }

  /// The top-level members of a JSON object text: each key (unescaped) and
  /// its value's text. Text that is not an object gives none.
  package static func members(_ text: String) -> [(key: String, value: Substring)] {
    var scanner = Scanner(text)
    var members: [(key: String, value: Substring)] = []
    guard scanner.forEachMember({ members.append(($0, $1)); return true }) else { return [] }
    return members
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

    /// Calls `body` with each top-level member of the object at `i` (its
    /// key unescaped, its value's text) until it returns false; false when
    /// the text is not an object (members before the fault were given).
    mutating func forEachMember(_ body: (String, Substring) -> Bool) -> Bool {
      guard take(UInt8(ascii: "{")) else { return false }
      if take(UInt8(ascii: "}")) { return true }
      repeat {
        skipWhitespace()
        guard let key = string(), take(UInt8(ascii: ":")) else { return false }
        skipWhitespace()
        let start = i
        guard skipValue() else { return false }
        guard body(key, text[start..<i]) else { return true }
      } while take(UInt8(ascii: ","))
      return take(UInt8(ascii: "}"))
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

    /// Moves past a string literal at `i` without unescaping it; false
    /// when it does not end.
    mutating func skipString() -> Bool {
      i = utf8.index(after: i)
      while let c = current, c != UInt8(ascii: "\"") {
        if c == UInt8(ascii: "\\") {
          i = utf8.index(after: i)
          guard current != nil else { return false }
        }
        i = utf8.index(after: i)
      }
      guard current != nil else { return false }
      i = utf8.index(after: i)
      return true
    }

    /// Moves past one value (nested brackets and strings included).
    mutating func skipValue() -> Bool {
      var depth = 0
      while let c = current {
        switch c {
        case UInt8(ascii: "\""):
          guard skipString() else { return false }
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
