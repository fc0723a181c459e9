import ForageStore

/// A field change's values as `JSONValue`s, for the readers that need one
/// (a condition's number or text, a word diff, JSON output): each parsed
/// from its own member's text, never the whole record.
///
///     let change = RecordChange(
///       id: 1, source: "s", key: "k", kind: .changed, beforeJSON: #"{"price":25}"#,
///       afterJSON: #"{"price":19.5}"#, at: .now, run: nil)
///     change.fieldChanges[0].afterValue   // .number(19.5)
extension FieldChange {
  /// Its value before the change, parsed from its text alone (text that
  /// does not parse stays a string); nil when it was absent.
  package var beforeValue: JSONValue? { before.map(FieldChange.value(of:)) }

  /// Its value after the change, parsed like `beforeValue`; nil when it is absent.
  package var afterValue: JSONValue? { after.map(FieldChange.value(of:)) }

  /// `{"field", "before", "after"}` (null where absent): how notifications
  /// and `forage changes --json` write it.
  package var jsonValue: JSONValue {
    .object([("field", .string(field)), ("before", beforeValue ?? .null), ("after", afterValue ?? .null)])
  }

  static func value(of text: Substring) -> JSONValue {
    (try? JSONValue.parse(Array(text.utf8))) ?? .string(String(text))
  }
}

extension RecordChange {
  /// The stored fields before and after, as JSON (text that does not parse
  /// stays a string); nil where there are none (a new or removed record).
  ///
  /// For writing whole records (a notification's `before` and `after`);
  /// what changed is `fieldChanges`, found without parsing either.
  public var parsedFields: (before: JSONValue?, after: JSONValue?) {
    func parse(_ text: String) -> JSONValue { (try? JSONValue.parse(text)) ?? .string(text) }
    return (beforeJSON.map(parse), afterJSON.map(parse))
  }
}
