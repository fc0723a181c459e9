import Foundation
import Testing
@testable import Forage
import ForageStore

/// `Engine.records(_:source:)`, `decodedRecords` and `RecordChange.decode`
/// over a real store: the current records decoded, the ones that do not
/// decode named, unknown sources refused.
@Suite struct EngineRecordsTests {
  struct Product: Decodable, Sendable, Equatable {
    let title: String
    let price: Double?
    let sku: String
  }

  @Test func test_records_areTheCurrentOnesDecoded_withWhereAndWhenTheyWereSeen() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let writer = RecordWriter(store: store, source: "catalog")
    try await writer.crawl(
      [("a", #"{"price":3,"sku":"a","title":"Mug"}"#), ("b", #"{"sku":"b","title":"Cup"}"#),
       ("c", #"{"price":1,"sku":"c","title":"Jar"}"#)], at: recordT0)
    // c goes away; a changes.
    try await writer.crawl(
      [("a", #"{"price":4,"sku":"a","title":"Mug"}"#), ("b", #"{"sku":"b","title":"Cup"}"#)], at: recordT0 + 60)
    let engine = recordEngine(store, sources: ["catalog"])

    let products: [Stored<Product>] = try await engine.records(Product.self, source: "catalog")
    #expect(products.map(\.value) == [
      Product(title: "Mug", price: 4, sku: "a"), Product(title: "Cup", price: nil, sku: "b"),
    ])
    #expect(products.map(\.key) == ["a", "b"])
    #expect(products[0].url == "https://example.com/catalog/a")
    #expect(products[0].source == "catalog")
    #expect(products[0].firstSeen == recordT0 && products[0].lastSeen == recordT0 + 60)
    #expect(products[0].id < products[1].id)
  }

  @Test func test_records_readsEveryPageOfTheStore() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let count = RecordDefaults.readPage * 2 + 17
    try await RecordWriter(store: store, source: "many").crawl(
      (0..<count).map { ("k\($0)", #"{"price":\#($0),"sku":"k\#($0)","title":"T"}"#) }, at: recordT0)
    let products = try await recordEngine(store, sources: ["many"]).records(Product.self, source: "many")
    #expect(products.count == count)
    #expect(products.last?.value.price == Double(count - 1))
  }

  @Test func test_aRecordThatDoesNotDecode_isNamed_andTheOthersStillCome() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    try await RecordWriter(store: store, source: "catalog").crawl(
      [("a", #"{"price":3,"sku":"a","title":"Mug"}"#), ("bad", #"{"price":"cheap","sku":"bad","title":"X"}"#),
       ("c", #"{"price":1,"sku":"c"}"#), ("d", #"{"price":2,"sku":"d","title":"Pot"}"#)], at: recordT0)
    let engine = recordEngine(store, sources: ["catalog"])

    let skipped = try await engine.records(Product.self, source: "catalog")
    #expect(skipped.map(\.key) == ["a", "d"])

    let decoded = try await engine.decodedRecords(Product.self, source: "catalog")
    #expect(decoded.records.map(\.key) == ["a", "d"])
    #expect(decoded.failures.map(\.key) == ["bad", "c"])
    #expect(decoded.failures.map(\.field) == ["price", "title"])
    #expect(decoded.failures.allSatisfy { $0.source == "catalog" })
    #expect(
      decoded.failures[0].description
        == #"record "bad" of source "catalog" does not decode: field "price": expected a number, found a string"#)
    #expect(decoded.failures[1].description.hasSuffix(#"field "title": the field is missing"#))

    await #expect(throws: RecordDecodingError(source: "catalog", key: "bad", field: "price", problem: "expected a number, found a string")) {
      try await engine.records(Product.self, source: "catalog", undecodable: .fail)
    }
  }

  @Test func test_anUnknownSource_isAnErrorNamingIt_withTheClosestName() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    try await RecordWriter(store: store, source: "outlet").crawl([("a", #"{"sku":"a","title":"T"}"#)], at: recordT0)
    let engine = recordEngine(store, sources: ["catalog"])
    do {
      _ = try await engine.records(Product.self, source: "catalgo")
      Issue.record("no error")
    } catch let error as EngineError {
      #expect(error.kind == .unknownSource)
      #expect(error.message == #"no source is named "catalgo" (did you mean "catalog"?); the sources are catalog, outlet"#)
    }
    // A source of the config not crawled yet has no records; one only the store holds still has its own.
    #expect(try await engine.records(Product.self, source: "catalog").isEmpty)
    #expect(try await engine.records(Product.self, source: "outlet").map(\.key) == ["a"])
  }

  @Test func test_changeDecode_givesBeforeAndAfter_ofEachKind() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let writer = RecordWriter(store: store, source: "catalog")
    let new = try await writer.crawl(
      [("a", #"{"price":3,"sku":"a","title":"Mug"}"#), ("b", #"{"sku":"b","title":"Cup"}"#)], at: recordT0)
    let later = try await writer.crawl([("a", #"{"price":4,"sku":"a","title":"Mug"}"#)], at: recordT0 + 60)
    #expect(new.map(\.kind) == [.new, .new] && later.map(\.kind) == [.changed, .removed])

    let (noBefore, created) = try new[0].decode(Product.self)
    #expect(noBefore == nil && created == Product(title: "Mug", price: 3, sku: "a"))
    let (before, after) = try later[0].decode(Product.self)
    #expect(before?.price == 3 && after?.price == 4)
    #expect(later[0].changedFields == ["price"])
    let (gone, noAfter) = try later[1].decode(Product.self)
    #expect(gone == Product(title: "Cup", price: nil, sku: "b") && noAfter == nil)
    #expect(new[1].changedFields == ["sku", "title"] && later[1].changedFields == ["sku", "title"])

    struct Strict: Decodable { let price: Double }
    #expect(throws: RecordDecodingError(source: "catalog", key: "b", field: "price", problem: "the field is missing")) {
      try later[1].decode(Strict.self)
    }
  }
}
