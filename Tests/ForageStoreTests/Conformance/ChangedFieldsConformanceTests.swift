import Foundation
import Testing
@testable import ForageStore

/// The names of the fields each change touched, found at commit, stored with
/// the change and read back by every query that returns changes, on every store.
@Suite struct ChangedFieldsConformanceTests {
  private func item(_ key: String, _ fields: String) -> RecordInput {
    RecordInput(
      source: "s", key: key, url: "https://example.com/1", fieldsJSON: fields,
      contentHash: fields.utf8.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 })
  }

  @Test(arguments: StoreKind.all) func test_eachKindOfChange_storesTheFieldsItTouched(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let first = #"{"price":3,"sku":"a","title":"Mug"}"#
      try await crawl(store, [PagePlan(n: 1, records: [item("a", first), item("b", #"{"price":1}"#)])], at: t0)
      let changed = #"{"price":4,"sku":"a","stock":2,"title":"Mug"}"#
      let (result, completion) = try await crawl(store, [PagePlan(n: 1, records: [item("a", changed)])], at: t0 + 60)
      #expect(result.changes.map(\.changedFields) == [["price", "stock"]])
      #expect(try #require(completion).removed.map(\.changedFields) == [["price"]])
      let (restored, _) = try await crawl(
        store, [PagePlan(n: 1, records: [item("a", changed), item("b", #"{"price":2,"title":"Cup"}"#)])], at: t0 + 120)
      #expect(restored.changes.map(\.kind) == [.restored])
      #expect(restored.changes.map(\.changedFields) == [["price", "title"]])

      // Read back as written, by the history's queries.
      let history = try await store.changes(source: "s", afterID: 0, limit: 10)
      #expect(history.map(\.kind) == [.new, .new, .changed, .removed, .restored])
      #expect(
        history.map(\.changedFields) == [
          ["price", "sku", "title"], ["price"], ["price", "stock"], ["price"], ["price", "title"],
        ])
      let newest = try await store.changes(matching: ChangeQuery(source: "s"))
      #expect(newest.map(\.changedFields) == history.reversed().map(\.changedFields))
    }
  }

  /// A field that went away is a changed field; one whose nested value
  /// changed is named once, at the top.
  @Test(arguments: StoreKind.all) func test_aFieldDroppedOrChangedInside_isNamed(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await crawl(
        store, [PagePlan(n: 1, records: [item("a", #"{"offers":[{"price":3}],"note":"x","title":"Mug"}"#)])], at: t0)
      let (result, _) = try await crawl(
        store, [PagePlan(n: 1, records: [item("a", #"{"offers":[{"price":4}],"title":"Mug"}"#)])], at: t0 + 60)
      #expect(result.changes.map(\.changedFields) == [["note", "offers"]])
    }
  }

  /// What a commit returns of each change's field changes (found once, at
  /// commit) is what reading the change back finds from its stored texts.
  @Test(arguments: StoreKind.all) func test_theCommitsFieldChanges_areThoseReadBack(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let first = #"{"title":"Mug","price":3,"dims":{"h":1}}"#
      let (created, _) = try await crawl(
        store, [PagePlan(n: 1, records: [item("a", first), item("b", #"{"price":1}"#)])], at: t0)
      let changed = #"{"title":"Mug","price":4,"dims":{"h":2},"stock":"a\"b"}"#
      let (result, completion) = try await crawl(store, [PagePlan(n: 1, records: [item("a", changed)])], at: t0 + 60)
      #expect(
        result.changes.map(\.fieldChanges) == [
          [
            FieldChange(field: "price", before: "3", after: "4"),
            FieldChange(field: "dims", before: #"{"h":1}"#, after: #"{"h":2}"#),
            FieldChange(field: "stock", before: nil, after: #""a\"b""#),
          ]
        ])
      let removed = try #require(completion).removed
      #expect(removed.map(\.fieldChanges) == [[FieldChange(field: "price", before: "1", after: nil)]])
      let returned = created.changes + result.changes + removed
      let history = try await store.changes(source: "s", afterID: 0, limit: 10)
      #expect(history.map(\.fieldChanges) == returned.map(\.fieldChanges))
      #expect(history.map(\.changedFields) == returned.map(\.changedFields))
    }
  }
}
