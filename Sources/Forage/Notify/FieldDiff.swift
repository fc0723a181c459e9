import ForageStore

/// One top-level field of a record that differs between two versions.
package struct FieldChange: Sendable, Hashable {
  /// The field's name.
  package var field: String
  /// Its value before the change; nil when it was absent (or the record new).
  package var before: JSONValue?
  /// Its value after the change; nil when it is absent (or the record removed).
  package var after: JSONValue?

  /// A field change.
  package init(field: String, before: JSONValue?, after: JSONValue?) {
    self.field = field
    self.before = before
    self.after = after
  }
}

/// The fields that differ between two versions of a record.
///
///     let before = try JSONValue.parse(#"{"title": "Kettle", "price": 25, "old": 1}"#)
///     let after = try JSONValue.parse(#"{"title": "Kettle", "price": 19.5, "stock": 3}"#)
///     FieldDiff.changes(before: before, after: after).map(\.field)   // ["price", "stock", "old"]
package enum FieldDiff {
  /// The top-level fields whose values differ (JSON equality), in `after`'s
  /// key order and then the fields only `before` has. A field absent on one
  /// side and present on the other (even as null) differs. A nil side (a
  /// new or removed record) gives every field of the other; a value that is
  /// not an object counts as one with no fields.
  package static func changes(before: JSONValue?, after: JSONValue?) -> [FieldChange] {
    let old = members(before)
    let new = members(after)
    var oldByKey: [String: JSONValue] = [:]
    for m in old where oldByKey[m.key] == nil { oldByKey[m.key] = m.value }
    var out: [FieldChange] = []
    var seen = Set<String>()
    for m in new where seen.insert(m.key).inserted {
      let was = oldByKey[m.key]
      if was != m.value { out.append(FieldChange(field: m.key, before: was, after: m.value)) }
    }
    for m in old where seen.insert(m.key).inserted {
      out.append(FieldChange(field: m.key, before: m.value, after: nil))
    }
    return out
  }

  static func members(_ value: JSONValue?) -> [(key: String, value: JSONValue)] {
    if case .object(let m)? = value { return m }
    return []
  }
}

extension FieldChange {
  /// `{"field", "before", "after"}` (null where absent): how notifications
  /// and `forage changes --json` write it.
  package var jsonValue: JSONValue {
    .object([("field", .string(field)), ("before", before ?? .null), ("after", after ?? .null)])
  }
}

extension RecordChange {
  /// The stored fields before and after, as JSON (text that does not parse
  /// stays a string); nil where there are none (a new or removed record).
  public var parsedFields: (before: JSONValue?, after: JSONValue?) {
    func parse(_ text: String) -> JSONValue { (try? JSONValue.parse(text)) ?? .string(text) }
    return (beforeJSON.map(parse), afterJSON.map(parse))
  }
}
