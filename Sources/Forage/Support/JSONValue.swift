import ForageSupport

/// A JSON value that keeps object keys in source order.
///
/// Forage reads its configuration and JSON sources with this small parser
/// rather than `JSONSerialization`, so that every error can name a line and
/// column, numbers and booleans stay distinct, and key order survives (it
/// becomes the column order of CSV exports).
///
///     let value = try JSONValue.parse(#"{"a": [1, true, null]}"#)
///     value["a"]?[1]   // .bool(true)
public enum JSONValue: Sendable, Hashable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([JSONValue])
  /// Members in source order. Duplicate keys are rejected by the parser.
  case object([(key: String, value: JSONValue)])

  /// Whether two values are equal; objects are equal when their members are, in the same order.
  public static func == (a: JSONValue, b: JSONValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.number(let x), .number(let y)): return x == y
    case (.string(let x), .string(let y)): return x == y
    case (.array(let x), .array(let y)): return x == y
    case (.object(let x), .object(let y)):
      return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    default: return false
    }
  }

  /// Hashes the value consistently with `==` (member order included).
  public func hash(into h: inout Hasher) {
    switch self {
    case .null: h.combine(0)
    case .bool(let b): h.combine(b)
    case .number(let n): h.combine(n)
    case .string(let s): h.combine(s)
    case .array(let a): h.combine(a)
    case .object(let o): for (k, v) in o { h.combine(k); h.combine(v) }
    }
  }

  /// The member named `key` of an object, or nil.
  public subscript(key: String) -> JSONValue? {
    if case .object(let members) = self { return members.first { $0.key == key }?.value }
    return nil
  }

  /// The element at `index` of an array, or nil.
  public subscript(index: Int) -> JSONValue? {
    if case .array(let items) = self, items.indices.contains(index) { return items[index] }
    return nil
  }

  /// A short name of the value's type for error messages.
  public var typeName: String {
    switch self {
    case .null: return "null"
    case .bool: return "a boolean"
    case .number: return "a number"
    case .string: return "a string"
    case .array: return "an array"
    case .object: return "an object"
    }
  }
}

// MARK: - Serialization

extension JSONValue {
  /// Compact JSON text. With `sortedKeys`, object members are written in
  /// code-point order of their keys, which makes the text canonical: equal
  /// values give equal text (used for record content hashes).
  public func serialized(sortedKeys: Bool = false) -> String {
    var out = ""
    write(to: &out, sortedKeys: sortedKeys)
    return out
  }

  /// The compact text in source order and in sorted-key order (the form
  /// record content hashes are taken of), together: a member value that
  /// holds no object reads the same in both, so it is written once (a
  /// page's list of 300 links was serialized twice).
  public func serializedInBothOrders() -> (original: String, sorted: String) {
    guard case .object(let members) = self else {
      let text = serialized()
      return (text, containsObject ? serialized(sortedKeys: true) : text)
    }
    var pieces: [(key: String, original: String, sorted: String)] = []
    pieces.reserveCapacity(members.count)
    var total = 2
    for m in members {
      var head = ""
      JSONValue.writeString(m.key, to: &head)
      head += ":"
      var original = head
      m.value.write(to: &original, sortedKeys: false)
      var sorted = original
      if m.value.containsObject {
        sorted = head
        m.value.write(to: &sorted, sortedKeys: true)
      }
      total += original.utf8.count + 1
      pieces.append((m.key, original, sorted))
    }
    func joined(_ list: [(key: String, original: String, sorted: String)], sorted: Bool) -> String {
      var out = "{"
      out.reserveCapacity(total)
      for (i, p) in list.enumerated() {
        if i > 0 { out += "," }
        out += sorted ? p.sorted : p.original
      }
      out += "}"
      return out
    }
    let byKey = pieces.sorted { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) }
    return (joined(pieces, sorted: false), joined(byKey, sorted: true))
  }

  /// True when an object appears anywhere in the value.
  var containsObject: Bool {
    switch self {
    case .object: return true
    case .array(let items): return items.contains { $0.containsObject }
    default: return false
    }
  }

  func write(to out: inout String, sortedKeys: Bool) {
    switch self {
    case .null: out += "null"
    case .bool(let b): out += b ? "true" : "false"
    case .number(let n): out += JSONValue.format(n)
    case .string(let s): JSONValue.writeString(s, to: &out)
    case .array(let items):
      out += "["
      for (i, item) in items.enumerated() {
        if i > 0 { out += "," }
        item.write(to: &out, sortedKeys: sortedKeys)
      }
      out += "]"
    case .object(let members):
      out += "{"
      let ordered = sortedKeys ? members.sorted { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) } : members
      for (i, m) in ordered.enumerated() {
        if i > 0 { out += "," }
        JSONValue.writeString(m.key, to: &out)
        out += ":"
        m.value.write(to: &out, sortedKeys: sortedKeys)
      }
      out += "}"
    }
  }

  /// Numbers that are whole and small print without a fraction (`3`, not `3.0`).
  static func format(_ n: Double) -> String {
    guard n.isFinite else { return "null" }
    if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
    return "\(n)"
  }

  /// Appends `s` as a JSON string (see `JSONText.writeString`).
  static func writeString(_ s: String, to out: inout String) {
    JSONText.writeString(s, to: &out)
  }
}
