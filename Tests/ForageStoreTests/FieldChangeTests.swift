import Foundation
import Testing
@testable import ForageStore

/// `ChangedFields.diff`: each changed field with its value's text before and
/// after, found by one scan of the two texts' members, no database.
@Suite struct FieldChangeTests {
  func change(_ field: String, _ before: Substring?, _ after: Substring?) -> FieldChange {
    FieldChange(field: field, before: before, after: after)
  }

  @Test func test_newAndRemovedRecords_giveEveryFieldInTheRecordsOrder() {
    let record = #"{"title":"Mug","price":3,"tags":[]}"#
    #expect(
      ChangedFields.diff(nil, record).changes == [
        change("title", nil, #""Mug""#), change("price", nil, "3"), change("tags", nil, "[]"),
      ])
    #expect(ChangedFields.diff(nil, record).names == ["title", "price", "tags"])
    #expect(
      ChangedFields.diff(record, nil).changes == [
        change("title", #""Mug""#, nil), change("price", "3", nil), change("tags", "[]", nil),
      ])
    #expect(ChangedFields.diff(nil, nil).changes.isEmpty)
    #expect(ChangedFields.diff(nil, "{}").changes.isEmpty)
    #expect(ChangedFields.diff(nil, "not an object").changes.isEmpty)
  }

  /// Changed fields in the new version's order, then those only the old one
  /// has; a field present on one side only (even as null) differs.
  @Test func test_changedRecord_inAfterOrderThenFieldsOnlyBefore() {
    let before = #"{"title":"Kettle","old":1,"price":25,"gone":null}"#
    let after = #"{"stock":3,"title":"Kettle","price":19.5}"#
    let diff = ChangedFields.diff(before, after)
    #expect(
      diff.changes == [
        change("stock", nil, "3"), change("price", "25", "19.5"), change("old", "1", nil), change("gone", "null", nil),
      ])
    #expect(diff.names == ["gone", "old", "price", "stock"])
    #expect(ChangedFields.diff(before, before).changes.isEmpty)
  }

  /// A restored record is compared with the fields it was removed with.
  @Test func test_restoredRecord_comparesWithItsFieldsWhenRemoved() {
    let diff = ChangedFields.diff(#"{"price":3,"title":"A"}"#, #"{"price":3,"title":"B"}"#)
    #expect(diff.changes == [change("title", #""A""#, #""B""#)])
    #expect(ChangedFields.diff(#"{"price":3}"#, #"{"price":3}"#).changes.isEmpty)
  }

  @Test func test_escapedKeys_areUnescaped_valuesKeepTheirEscapes() {
    let diff = ChangedFields.diff(#"{"a\"b":"x\ny","caf\u00e9":1}"#, #"{"a\"b":"x\ty","caf\u00e9":1}"#)
    #expect(diff.changes == [change("a\"b", #""x\ny""#, #""x\ty""#)])
    #expect(ChangedFields.diff(nil, #"{"\ud83d\ude00":"\u0041"}"#).changes == [change("😀", nil, #""\u0041""#)])
  }

  /// A nested value is one field, its whole text kept as it is stored
  /// (brackets and strings holding brackets included).
  @Test func test_nestedValues_areKeptAsText() {
    let before = #"{"offers":[{"price":3,"note":"a}]"}],"dims":{"h":1,"w":[2,{"x":null}]},"t":true}"#
    let after = #"{"offers":[{"price":4,"note":"a}]"}],"dims":{"h":1,"w":[2,{"x":null}]},"t":false}"#
    #expect(
      ChangedFields.diff(before, after).changes == [
        change("offers", #"[{"price":3,"note":"a}]"}]"#, #"[{"price":4,"note":"a}]"}]"#), change("t", "true", "false"),
      ])
  }

  /// Values are compared as bytes, as the content hash compares them: "é"
  /// as one scalar and as e with an accent differ (Swift's `==` calls them equal).
  @Test func test_valuesAreComparedAsBytes_notByCanonicalEquivalence() {
    let composed = "{\"name\":\"caf\u{E9}\"}", decomposed = "{\"name\":\"cafe\u{301}\"}"
    #expect(composed == decomposed)
    #expect(ChangedFields.diff(composed, decomposed).names == ["name"])
    #expect(ChangedFields.between(composed, decomposed) == ["name"])
  }

  /// A change read from a store (no field changes given) finds the same
  /// ones the commit found, from its texts.
  @Test func test_aChangeBuiltFromItsTexts_findsTheCommitsFieldChanges() {
    let before = #"{"p":1,"q":[2]}"#, after = #"{"p":1,"q":[3],"r":"s"}"#
    let diff = ChangedFields.diff(before, after)
    let committed = RecordChange(
      id: 1, source: "s", key: "k", kind: .changed, beforeJSON: before, afterJSON: after, at: t0, run: nil,
      changedFields: diff.names, fieldChanges: diff.changes)
    let read = RecordChange(
      id: 1, source: "s", key: "k", kind: .changed, beforeJSON: before, afterJSON: after, at: t0, run: nil,
      changedFields: ["q", "r"])
    #expect(read == committed)
    #expect(read.fieldChanges == [change("q", "[2]", "[3]"), change("r", nil, #""s""#)])
    #expect(read.changedFields == ["q", "r"])
  }

  @Test func test_member_findsOneTopLevelMembersText() {
    let text = #"{"title":"A {\"x\"}","enclosures":[{"url":"a.mp3"}],"n":{"enclosures":1}}"#
    #expect(ChangedFields.member("enclosures", of: text) == #"[{"url":"a.mp3"}]"#)
    #expect(ChangedFields.member("title", of: text) == #""A {\"x\"}""#)
    #expect(ChangedFields.member("url", of: text) == nil)
    #expect(ChangedFields.member("enclosures", of: "[1]") == nil)
  }
}
