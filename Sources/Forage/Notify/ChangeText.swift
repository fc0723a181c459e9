import Foundation
import ForageStore
import ForageSupport

/// A change as `forage changes` shows it: readable lines for a person, or
/// one JSON object per line for a program.
///
///     2026-12-01 09:14:03Z  changed  prices  lamp  https://example.com/item/1
///       price: 12 → 10
///       description: The [-old-]{+new+} lamp, now with a switch.
package enum ChangeText {
  /// One JSON object: `{"id", "kind", "source", "key", "url", "at", "run",
  /// "before", "after", "changes": [{"field", "before", "after"}]}`. Control
  /// characters from pages, 8-bit (U+0080–U+009F) as 7-bit, are escaped.
  package static func json(_ change: RecordChange) -> String {
    let (before, after) = change.parsedFields
    let changes = change.fieldChanges.map(\.jsonValue)
    return TerminalText.escapingJSON(jsonObject(change, before, after, changes))
  }

  static func jsonObject(_ change: RecordChange, _ before: JSONValue?, _ after: JSONValue?, _ changes: [JSONValue]) -> String {
    JSONValue.object([
      ("id", .number(Double(change.id))),
      ("kind", .string(change.kind.rawValue)),
      ("source", .string(change.source)),
      ("key", .string(change.key)),
      ("url", .string(change.url)),
      ("at", .string(ISODate.string(change.at, milliseconds: true))),
      ("run", change.run.map { .number(Double($0)) } ?? .null),
      ("before", before ?? .null),
      ("after", after ?? .null),
      ("changes", .array(changes)),
    ]).serialized()
  }

  /// A heading line and one line per changed field (for a new or removed
  /// record, its fields). Long text fields show a word diff: removed words
  /// `[-so-]`, added ones `{+so+}`, or in red and green with `colour`.
  /// Control characters from pages (7-bit and 8-bit) are shown as escapes
  /// (`\u001b`, `\u009b`), never sent to the terminal.
  package static func lines(_ change: RecordChange, colour: Bool = false) -> [String] {
    let at = ISODate.string(change.at).replacingOccurrences(of: "T", with: " ")
    var kind = change.kind.rawValue
    if colour {
      let code: String
      switch change.kind {
      case .new, .restored: code = "32"
      case .removed: code = "31"
      case .changed: code = "33"
      }
      kind = "\u{1B}[\(code)m\(kind)\u{1B}[0m"
    }
    let key = TerminalText.escaping(change.key), url = TerminalText.escaping(change.url)
    var lines = ["\(at)  \(kind)  \(TerminalText.escaping(change.source))  \(key)" + (url.isEmpty ? "" : "  \(url)")]
    for field in change.fieldChanges {
      lines.append("  \(TerminalText.escaping(field.field)): " + describe(field, kind: change.kind, colour: colour))
    }
    return lines
  }

  static func describe(_ field: FieldChange, kind: ChangeKind, colour: Bool) -> String {
    let before = field.beforeValue, after = field.afterValue
    switch kind {
    case .new: return show(after)
    case .removed: return show(before)
    case .changed, .restored: break
    }
    if case .string(let old)? = before, case .string(let new)? = after,
       WordDiff.isLongText(old) || WordDiff.isLongText(new) {
      return WordDiff.diff(old, new).map { part -> String in
        switch part {
        case .same(let s): return TerminalText.escaping(s, keepingLines: true)
        case .removed(let s):
          let s = TerminalText.escaping(s, keepingLines: true)
          return colour ? "\u{1B}[31m\(s)\u{1B}[0m" : "[-\(s)-]"
        case .added(let s):
          let s = TerminalText.escaping(s, keepingLines: true)
          return colour ? "\u{1B}[32m\(s)\u{1B}[0m" : "{+\(s)+}"
        }
      }.joined().replacingOccurrences(of: "\n", with: "\n    ")
    }
    return show(before) + " → " + show(after)
  }

  /// A value as JSON text, or `(none)` when absent.
  static func show(_ value: JSONValue?) -> String {
    guard let value else { return "(none)" }
    return TerminalText.escapingJSON(value.serialized())
  }
}
