import Foundation
import Testing
@testable import ForageStore

/// `ChangedFields`: the names of the fields that differ between two
/// canonical JSON texts, and the column's encoding of them.
@Suite struct ChangedFieldsTests {
  @Test func test_newAndRemovedRecords_nameEveryField() {
    #expect(ChangedFields.between(nil, #"{"price":3,"title":"A"}"#) == ["price", "title"])
    #expect(ChangedFields.between(#"{"price":3,"title":"A"}"#, nil) == ["price", "title"])
    #expect(ChangedFields.between(nil, nil) == [])
    #expect(ChangedFields.between(nil, "{}") == [])
  }

  @Test func test_changedRecord_namesOnlyTheFieldsThatDiffer() {
    #expect(ChangedFields.between(#"{"price":3,"title":"A"}"#, #"{"price":4,"title":"A"}"#) == ["price"])
    #expect(ChangedFields.between(#"{"price":3,"title":"A"}"#, #"{"price":3,"title":"A"}"#) == [])
    // Added and dropped fields, sorted by code point.
    #expect(ChangedFields.between(#"{"b":1,"c":2}"#, #"{"a":1,"c":2}"#) == ["a", "b"])
    // Values of every kind, compared as their canonical text.
    let before = #"{"list":[1,{"x":"}"}],"n":null,"obj":{"a":[true]},"s":"a,b\"c","t":true}"#
    let after = #"{"list":[1,{"x":"}"}],"n":0,"obj":{"a":[false]},"s":"a,b\"c","t":true}"#
    #expect(ChangedFields.between(before, after) == ["n", "obj"])
  }

  @Test func test_escapedKeys_areUnescaped() {
    #expect(ChangedFields.between(nil, #"{"a\"b":1,"caf\u00e9":2,"\ud83d\ude00":3}"#) == ["a\"b", "café", "😀"])
  }

  @Test func test_columnText_roundTrips() {
    let names = ["price", "a\"b\\c", "line\nbreak", "é", ""]
    #expect(ChangedFields.decode(ChangedFields.encode(names)) == names)
    #expect(ChangedFields.decode("[]") == [])
    #expect(ChangedFields.decode("not json") == nil)
    #expect(ChangedFields.decode(#"["a",1]"#) == nil)
  }

  /// A change built without the names (a row stored before the store kept
  /// them) finds them from its fields.
  @Test func test_aChangeWithoutStoredNames_findsThem() {
    let change = RecordChange(
      id: 1, source: "s", key: "k", kind: .changed, beforeJSON: #"{"p":1,"q":2}"#, afterJSON: #"{"p":1,"q":3}"#,
      at: t0, run: nil)
    #expect(change.changedFields == ["q"])
  }
}

/// Changes stored before the store kept their changed fields (the column
/// NULL, as the migration leaves every older row) find them when read.
@Suite struct SQLiteChangedFieldsOfOlderRowsTests {
  @Test func test_aRowWithoutStoredNames_findsThemWhenRead() async throws {
    let temp = TempStorePath()
    let store = try SQLiteStore(path: temp.path)
    try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)])], at: t0)
    try await crawl(store, [PagePlan(n: 1, records: [rec("a", 2)])], at: t0 + 60)
    let raw = try SQLiteConnection(path: temp.path)
    try raw.exec("UPDATE changes SET changed_fields = NULL")
    let changes = try await store.changes(source: "s", afterID: 0, limit: 10)
    #expect(changes.map(\.kind) == [.new, .changed])
    #expect(changes.map(\.changedFields) == [["price"], ["price"]])
    // And what a commit writes now is stored: the column is filled.
    try await crawl(store, [PagePlan(n: 1, records: [rec("a", 3)])], at: t0 + 120)
    let stored = try raw.statement("SELECT changed_fields FROM changes ORDER BY id")
    #expect(try stored.rows { $0.optionalString(0) } == [nil, nil, #"["price"]"#])
  }
}
