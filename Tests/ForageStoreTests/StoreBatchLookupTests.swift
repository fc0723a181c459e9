import Foundation
import Testing
@testable import ForageStore

/// A commit reads a batch's stored records, and a claim's stored pages, with
/// one statement each; these check that the batch gives what a lookup per
/// page gave.
@Suite struct StoreBatchLookupTests {
  /// Claims `count` fresh seeds of one crawl.
  private func claimed(_ store: any Store, _ count: Int, source: String = "s") async throws -> [FrontierItem] {
    let crawl = try await store.openCrawl(source: source, seeds: (1...count).map { seed($0) }, now: t0)
    return try await store.claim(crawl: crawl.id, limit: count, owner: "a", leaseUntil: t0 + 60, now: t0)
  }

  /// Two pages of one batch give the same record: the first makes it new,
  /// the second changes it (or leaves it, when it reads the same).
  @Test(arguments: StoreKind.all) func test_oneKeyTwiceInABatch_isNewThenChanged(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let items = try await claimed(store, 3)
      let result = try await store.commit([
        PageCommit(item: items[0], outcome: .done, records: [record("k", fields: #"{"p":1}"#, hash: 1)], now: t0),
        PageCommit(item: items[1], outcome: .done, records: [record("k", fields: #"{"p":2}"#, hash: 2)], now: t0),
        PageCommit(item: items[2], outcome: .done, records: [record("k", fields: #"{"p":2}"#, hash: 2)], now: t0),
      ])
      #expect(result.newRecords == 1 && result.changedRecords == 1 && result.unchangedRecords == 1)
      #expect(result.changes.map(\.kind) == [.new, .changed])
      #expect(result.changes.last?.beforeJSON == #"{"p":1}"#)
      let stored = try await store.records(source: "s", afterID: 0, limit: 10)
      #expect(stored.map(\.fieldsJSON) == [#"{"p":2}"#])
    }
  }

  /// Keys are compared as their bytes: "é" written precomposed and
  /// decomposed (equal as Swift strings) are two records; keys with quotes,
  /// backslashes and control characters are found again on the next crawl.
  @Test(arguments: StoreKind.all) func test_keysAreBytes_andSurviveEscaping(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      // (No NUL: PostgreSQL's text cannot hold one; the engine's keys never do.)
      let keys = ["caf\u{E9}", "cafe\u{301}", #"a"b\c"#, "tab\there\u{1}", "snow \u{2603}", "", "😀\u{7F}"]
      #expect(keys[0] == keys[1], "the premise: Swift compares by canonical equivalence")
      let first = try await claimed(store, 1)
      let r1 = try await store.commit([
        PageCommit(
          item: first[0], outcome: .done,
          records: keys.enumerated().map { record($1, fields: #"{"n":\#($0)}"#, hash: UInt64($0)) }, now: t0)
      ])
      #expect(r1.newRecords == keys.count)
      // Again, with every other record changed: each change reaches its own row.
      let second = try await claimed(store, 1, source: "again")
      let r2 = try await store.commit([
        PageCommit(
          item: second[0], outcome: .done,
          records: keys.enumerated().map { i, key in
            i % 2 == 1 ? record(key, fields: #"{"n":\#(i),"v":2}"#, hash: UInt64(100 + i))
              : record(key, fields: #"{"n":\#(i)}"#, hash: UInt64(i))
          }, now: t0 + 1)
      ])
      let odd = keys.indices.filter { $0 % 2 == 1 }
      #expect(r2.newRecords == 0 && r2.unchangedRecords == keys.count - odd.count && r2.changedRecords == odd.count)
      #expect(r2.changes.map { Array($0.key.utf8) } == odd.map { Array(keys[$0].utf8) })
      #expect(r2.changes.map(\.beforeJSON) == odd.map { #"{"n":\#($0)}"# })
      let stored = try await store.records(source: "s", afterID: 0, limit: 20)
      #expect(stored.map { Array($0.key.utf8) } == keys.map { Array($0.utf8) })
      #expect(stored.map(\.fieldsJSON) == keys.indices.map { $0 % 2 == 1 ? #"{"n":\#($0),"v":2}"# : #"{"n":\#($0)}"# })
      #expect(stored.map(\.lastSeen) == Array(repeating: t0 + 1, count: keys.count))
    }
  }

  /// A key stored in one spelling and sent later in the other is a new
  /// record, in a batch of its own and beside the first spelling.
  @Test(arguments: StoreKind.all) func test_otherSpellingOfAStoredKey_isANewRecord(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let items = try await claimed(store, 3)
      _ = try await store.commit([
        PageCommit(item: items[0], outcome: .done, records: [record("caf\u{E9}", fields: #"{"n":0}"#, hash: 10)], now: t0)
      ])
      let alone = try await store.commit([
        PageCommit(item: items[1], outcome: .done, records: [record("cafe\u{301}", fields: #"{"n":1}"#, hash: 11)], now: t0 + 1)
      ])
      #expect(alone.newRecords == 1 && alone.changedRecords == 0 && alone.unchangedRecords == 0)
      let both = try await store.commit([
        PageCommit(
          item: items[2], outcome: .done,
          records: [record("cafe\u{301}", fields: #"{"n":1}"#, hash: 11), record("caf\u{E9}", fields: #"{"n":2}"#, hash: 12)],
          now: t0 + 2)
      ])
      #expect(both.unchangedRecords == 1 && both.changedRecords == 1)
      #expect(both.changes.map(\.beforeJSON) == [#"{"n":0}"#])
      let stored = try await store.records(source: "s", afterID: 0, limit: 10)
      #expect(stored.map { Array($0.key.utf8) } == [Array("caf\u{E9}".utf8), Array("cafe\u{301}".utf8)])
      #expect(stored.map(\.fieldsJSON) == [#"{"n":2}"#, #"{"n":1}"#])
    }
  }

  /// A NUL character in text: SQLite stores it; PostgreSQL's text cannot
  /// hold one, and the store says so instead of cutting the value at the NUL
  /// (libpq reads a text parameter as a C string), writing nothing of the batch.
  /// (The engine's record keys never hold one: see `Extractor.storable`.)
  @Test(arguments: StoreKind.all) func test_aNulInAKey_storedBySQLite_refusedClearlyByPostgres(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let items = try await claimed(store, 1)
      let commit = PageCommit(item: items[0], outcome: .done, records: [record("a\u{0}b", fields: "{}", hash: 1)], now: t0)
      switch kind {
      case .sqlite:
        #expect(try await store.commit([commit]).newRecords == 1)
        let stored = try await store.records(source: "s", afterID: 0, limit: 10)
        #expect(stored.map { Array($0.key.utf8) } == [Array("a\u{0}b".utf8)])
      case .postgres:
        await #expect {
          _ = try await store.commit([commit])
        } throws: { error in
          "\(error)".contains("NUL character")
        }
        #expect(try await store.records(source: "s", afterID: 0, limit: 10).isEmpty)
        #expect(try await store.frontierCounts(crawl: items[0].crawl) == FrontierCounts(claimed: 1))
      }
    }
  }

  /// Records of several sources in one batch are each looked up in their own.
  @Test(arguments: StoreKind.all) func test_sameKeyInTwoSources_areTwoRecords(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let items = try await claimed(store, 2)
      _ = try await store.commit([
        PageCommit(item: items[0], outcome: .done, records: [record("k", source: "x", fields: "{}", hash: 1)], now: t0)
      ])
      let result = try await store.commit([
        PageCommit(
          item: items[1], outcome: .done,
          records: [record("k", source: "x", fields: "{}", hash: 2), record("k", source: "y", fields: "{}", hash: 2)],
          now: t0 + 1)
      ])
      #expect(result.changedRecords == 1 && result.newRecords == 1)
      #expect(result.changes.map(\.source) == ["x", "y"])
    }
  }

  /// A claim's stored pages come back keyed by fingerprint, all 64 bits of it,
  /// and only for the pages that were stored.
  @Test(arguments: StoreKind.all) func test_pagesOfABatch_keyedByFingerprint(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let items = try await claimed(store, 3)
      func page(_ item: FrontierItem, etag: String) -> PageRecord {
        PageRecord(url: item.url, fingerprint: item.fingerprint, status: 200, etag: etag, fetchedAt: t0)
      }
      _ = try await store.commit([
        PageCommit(item: items[0], outcome: .done, page: page(items[0], etag: "e0"), now: t0),
        PageCommit(item: items[2], outcome: .done, page: page(items[2], etag: "e2"), now: t0),
      ])
      let high = UInt64.max - 5
      let found = try await store.pages(fingerprints: items.map(\.fingerprint) + [high])
      #expect(Set(found.keys) == [items[0].fingerprint, items[2].fingerprint])
      #expect(found[items[0].fingerprint]?.etag == "e0" && found[items[2].fingerprint]?.etag == "e2")
      #expect(items.contains { $0.fingerprint > UInt64(Int64.max) })
      #expect(try await store.pages(fingerprints: []).isEmpty)
    }
  }
}
