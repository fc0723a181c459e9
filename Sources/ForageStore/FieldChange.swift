/// One top-level field of a record whose value differs between two versions
/// of it, each value as its JSON text in the stored fields.
///
///     let change = try await store.commit(pages).changes[0]   // price 12 → 10
///     change.fieldChanges   // [FieldChange(field: "price", before: "12", after: "10")]
///
/// The texts are slices of the change's `beforeJSON` and `afterJSON` (no
/// copy): a reader that needs a value parses that member's text alone, never
/// the whole record.
public struct FieldChange: Sendable, Hashable {
  /// The field's name (unescaped).
  public var field: String
  /// Its value's JSON text before the change; nil when it was absent (or
  /// the record new).
  public var before: Substring?
  /// Its value's JSON text after the change; nil when it is absent (or the
  /// record removed).
  public var after: Substring?

  /// A field that was `before` and is `after` (JSON texts, nil: absent).
  public init(field: String, before: Substring?, after: Substring?) {
    self.field = field
    self.before = before
    self.after = after
  }
}

extension FieldChange: CustomStringConvertible {
  /// `price: 12 → 10`, `(none)` for an absent side.
  public var description: String {
    "\(field): \(before.map(String.init) ?? "(none)") → \(after.map(String.init) ?? "(none)")"
  }
}
