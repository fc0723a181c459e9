import ForageStore

/// One entry of a source's `notifyWhen`: any condition that holds makes a
/// change notable.
///
///     [.field("price", .decreases), .field("price", .below(20)), .kind(.new)]
///
/// A field condition applies to `changed` records only; `new`, `removed` and
/// `restored` ones are notable through a `kind` condition.
public enum ChangeCondition: Sendable, Hashable {
  /// Every change of this kind (`{"kind": "new"}`).
  case kind(ChangeKind)
  /// A test of one field of a changed record (`{"field": "price", "below": 20}`).
  case field(String, FieldTest)
}

/// What a field condition asks of a changed record's field.
public enum FieldTest: Sendable, Hashable {
  /// The field's value differs (`"changes": true`).
  case changes
  /// A number that went up (`"increases": true`).
  case increases
  /// A number that went down (`"decreases": true`).
  case decreases
  /// The field changed and its new number is below this (`"below": 20`).
  case below(Double)
  /// The field changed and its new number is above this (`"above": 100`).
  case above(Double)
  /// The field changed and its new text contains this (`"contains": "in stock"`).
  case contains(String)
  /// The field changed and its new text matches this regular expression (`"matches": "…"`).
  case matches(String)
  /// The field was absent, null or empty and now has a value (`"appears": true`).
  case appears
  /// The field had a value and is now absent, null or empty (`"disappears": true`).
  case disappears
}
