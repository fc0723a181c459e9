import Foundation
import ForageStore
import ForageSupport

extension ChangeCondition {
  /// Whether this condition holds for one change of a record.
  ///
  ///     let before = try JSONValue.parse(#"{"price": "£25.00"}"#)
  ///     let after = try JSONValue.parse(#"{"price": "£19.50"}"#)
  ///     ChangeCondition.field("price", .below(20)).holds(kind: .changed, before: before, after: after)   // true
  ///
  /// A `kind` condition holds for every change of its kind. A `field`
  /// condition holds for `changed` records only, and (except `appears` and
  /// `disappears`) only when the field's value differs between `before` and
  /// `after`.
  ///
  /// - Parameters:
  ///   - kind: what happened to the record.
  ///   - before: the record's fields before the change (nil for a new record).
  ///   - after: the record's fields after it (nil for a removed record).
  public func holds(kind: ChangeKind, before: JSONValue?, after: JSONValue?) -> Bool {
    switch self {
    case .kind(let k):
      return kind == k
    case .field(let name, let test):
      guard kind == .changed else { return false }
      return test.holds(before: before?[name], after: after?[name])
    }
  }

  /// Whether a change is notable for a source.
  ///
  /// With `conditions` (the source's `notifyWhen`), a change is notable when
  /// any one of them holds. Without (nil), every changed, removed and
  /// restored record is notable, and new ones too except while the source's
  /// first crawl completes, so that the first run does not announce every
  /// record as new.
  ///
  /// - Parameter firstCompletedCrawl: true when the change comes from the
  ///   source's first completed crawl (it had none before).
  public static func isNotable(
    kind: ChangeKind, before: JSONValue?, after: JSONValue?, conditions: [ChangeCondition]?,
    firstCompletedCrawl: Bool
  ) -> Bool {
    if let conditions {
      return conditions.contains { $0.holds(kind: kind, before: before, after: after) }
    }
    return isNotableByDefault(kind, firstCompletedCrawl: firstCompletedCrawl)
  }

  /// Whether this condition holds for `change`, as
  /// `holds(kind:before:after:)` says, looking only at the values of the
  /// field it names in `change.fieldChanges` (each parsed alone), never at
  /// whole records. A field not among them held the same value on both
  /// sides, for which no test holds (each needs the values, or their
  /// emptiness, to differ).
  package func holds(for change: RecordChange) -> Bool {
    switch self {
    case .kind(let k):
      return change.kind == k
    case .field(let name, let test):
      guard change.kind == .changed, let field = change.fieldChanges.first(where: { $0.field == name }) else {
        return false
      }
      return test.holds(before: field.beforeValue, after: field.afterValue)
    }
  }

  /// Whether `change` is notable for a source, as
  /// `isNotable(kind:before:after:conditions:firstCompletedCrawl:)` says,
  /// from the change's field changes (`holds(for:)`).
  package static func isNotable(_ change: RecordChange, conditions: [ChangeCondition]?, firstCompletedCrawl: Bool) -> Bool {
    if let conditions { return conditions.contains { $0.holds(for: change) } }
    return isNotableByDefault(change.kind, firstCompletedCrawl: firstCompletedCrawl)
  }

  /// The rule without conditions: every changed, removed and restored
  /// record, and new ones except during the source's first completed crawl.
  static func isNotableByDefault(_ kind: ChangeKind, firstCompletedCrawl: Bool) -> Bool {
    switch kind {
    case .changed, .removed, .restored: return true
    case .new: return !firstCompletedCrawl
    }
  }

  /// The number a field's value stands for: a JSON number, or the first
  /// number written in a string (`"£1,299.50"` → 1299.5, `"12 left"` → 12,
  /// `"-3.5%"` → -3.5); nil for anything else.
  ///
  /// A sign counts when it comes right before the digits and does not
  /// follow a letter or digit (`"SKU-42"` → 42). Commas are thousands
  /// separators only between groups of three digits (`"1,2345"` → 1).
  public static func number(in value: JSONValue?) -> Double? {
    switch value {
    case .number(let n): return n
    case .string(let s): return firstNumber(in: s)
    default: return nil
    }
  }

  /// The text a field's value is tested against: a string as it is, a
  /// number without a trailing `.0`, `true`/`false`, and arrays and objects
  /// as compact JSON; nil for an absent or null value.
  public static func text(of value: JSONValue?) -> String? {
    switch value {
    case nil, .null?: return nil
    case .string(let s)?: return s
    case .number(let n)?: return JSONValue.format(n)
    case .bool(let b)?: return b ? "true" : "false"
    case let v?: return v.serialized()
    }
  }

  /// Whether a value counts as having nothing: absent, null, `""`, `[]` or `{}`.
  static func isEmpty(_ value: JSONValue?) -> Bool {
    switch value {
    case nil, .null?: return true
    case .string(let s)?: return s.isEmpty
    case .array(let a)?: return a.isEmpty
    case .object(let o)?: return o.isEmpty
    default: return false
    }
  }

  /// The first number-looking run of `s`, read as described at `number(in:)`.
  static func firstNumber(in s: String) -> Double? {
    let u = Array(s.utf8)
    func isDigit(_ i: Int) -> Bool { i >= 0 && i < u.count && u[i] >= 0x30 && u[i] <= 0x39 }
    func isAlnum(_ i: Int) -> Bool {
      guard i >= 0 && i < u.count else { return false }
      let c = u[i]
      // Bytes of a multi-byte character count as letters, so a sign after a
      // non-ASCII letter is a hyphen too.
      return isDigit(i) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c >= 0x80
    }
    var i = 0
    while i < u.count {
      // A number starts at a digit, or at a point followed by a digit.
      let startsHere = isDigit(i) || (u[i] == 0x2E && isDigit(i + 1) && !isDigit(i - 1))
      guard startsHere else { i += 1; continue }
      var negative = false
      if i > 0 && (u[i - 1] == 0x2D || u[i - 1] == 0x2B) && !isAlnum(i - 2) { negative = u[i - 1] == 0x2D }
      var digits = ""
      var j = i
      var groupLength = 0
      while isDigit(j) { digits.append(Character(UnicodeScalar(u[j]))); j += 1; groupLength += 1 }
      // Thousands groups: ",ddd" not followed by a digit, after a first
      // group of one to three digits.
      if groupLength >= 1 && groupLength <= 3 {
        while j < u.count && u[j] == 0x2C && isDigit(j + 1) && isDigit(j + 2) && isDigit(j + 3) && !isDigit(j + 4) {
          digits += String(decoding: u[(j + 1)...(j + 3)], as: UTF8.self)
          j += 4
        }
      }
      if j < u.count && u[j] == 0x2E && isDigit(j + 1) {
        digits += "."
        j += 1
        while isDigit(j) { digits.append(Character(UnicodeScalar(u[j]))); j += 1 }
      }
      if digits.hasPrefix(".") { digits = "0" + digits }
      guard let n = Double(digits) else { return nil }
      return negative ? -n : n
    }
    return nil
  }

  /// Compiled patterns of `matches` tests, by pattern (a few per config).
  static let compiledPatterns = Locked<[String: NSRegularExpression]>([:])

  /// The compiled pattern, from the cache when it was compiled before; nil
  /// when the pattern is invalid (configs are validated when read).
  static func compiled(_ pattern: String) -> NSRegularExpression? {
    if let cached = compiledPatterns.withLock({ $0[pattern] }) { return cached }
    guard let regex = try? NSRegularExpression(pattern: pattern) else { return nil }
    compiledPatterns.withLock { cache in
      // Patterns come from configs, so the cache stays small; a bound keeps
      // a long-running process that reloads many configs from growing.
      if cache.count >= 256 { cache.removeAll() }
      cache[pattern] = regex
    }
    return regex
  }
}

extension FieldTest {
  /// Whether the test holds for a field that was `before` and is `after`
  /// (nil: absent) in a changed record.
  func holds(before: JSONValue?, after: JSONValue?) -> Bool {
    switch self {
    case .appears:
      return ChangeCondition.isEmpty(before) && !ChangeCondition.isEmpty(after)
    case .disappears:
      return !ChangeCondition.isEmpty(before) && ChangeCondition.isEmpty(after)
    default:
      break
    }
    guard before != after else { return false }
    switch self {
    case .changes:
      return true
    case .increases, .decreases:
      guard let old = ChangeCondition.number(in: before), let new = ChangeCondition.number(in: after) else { return false }
      return self == .increases ? new > old : new < old
    case .below(let limit):
      return ChangeCondition.number(in: after).map { $0 < limit } ?? false
    case .above(let limit):
      return ChangeCondition.number(in: after).map { $0 > limit } ?? false
    case .contains(let needle):
      guard let text = ChangeCondition.text(of: after) else { return false }
      return text.range(of: needle, options: .caseInsensitive) != nil
    case .matches(let pattern):
      guard let text = ChangeCondition.text(of: after), let regex = ChangeCondition.compiled(pattern) else { return false }
      return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    case .appears, .disappears:
      return false  // handled above
    }
  }
}
