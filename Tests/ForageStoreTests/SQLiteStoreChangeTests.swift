import Foundation
import Testing
@testable import ForageStore

// What every store does with changes and the outbox is in
// Conformance/RecordConformanceTests and OutboxConformanceTests; these are
// SQLite's own: a process killed mid-delivery, and stores of older versions.

@Suite struct SQLiteOutboxTests {
  /// A store with one changed record routed to "ops" (and the new one of
  /// the first crawl).
  private func storeWithNotifications(_ store: any Store) async throws {
    let router = RecordingRouter()
    try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)])], router: router, at: t0)
    try await crawl(store, [PagePlan(n: 1, records: [rec("a", 2)])], router: router, at: t0 + 60)
  }

  @Test func test_claimOfAKilledProcess_isReleased_sameMessageID() async throws {
    let temp = TempStorePath()
    var first: [OutboxNotification] = []
    do {
      let store = try SQLiteStore(path: temp.path)
      try await storeWithNotifications(store)
      first = try await store.claimNotifications(limit: 10, owner: "dead", leaseUntil: t0 + 3600, now: t0 + 100)
      #expect(first.count == 2)
      // The process dies here: no settle, no release.
    }
    let reopened = try SQLiteStore(path: temp.path)
    #expect(try await reopened.claimNotifications(limit: 10, owner: "b", leaseUntil: t0 + 3600, now: t0 + 101).isEmpty)
    try await reopened.releaseNotificationClaims(owner: nil)
    let again = try await reopened.claimNotifications(limit: 10, owner: "b", leaseUntil: t0 + 3600, now: t0 + 102)
    #expect(again.map(\.messageID) == first.map(\.messageID))
    // A lease that passed is claimable without a release.
    let later = try await reopened.claimNotifications(limit: 10, owner: "c", leaseUntil: t0 + 9000, now: t0 + 3601)
    #expect(later.map(\.messageID) == first.map(\.messageID))
  }
}

@Suite struct ChangeMigrationTests {
  /// A store written before v7 (kind-less changes, records without pages)
  /// keeps every change, reads kinds from them, and never removes a record
  /// no crawl has seen since.
  @Test func test_v6Store_keepsItsChanges_andRemovesNothingUnseen() async throws {
    let temp = TempStorePath()
    do {
      let db = try SQLiteConnection(path: temp.path)
      var old = Migrator()
      old.migrations = Array(Migrator.forage.migrations.prefix(6))
      _ = try old.migrate(db, now: 0)
      try db.exec(
        """
        INSERT INTO sources VALUES ('s', 0);
        INSERT INTO crawls (source, started_at, completed_at) VALUES ('s', 0, 1);
        INSERT INTO records (source, key, url, fields, content_hash, first_seen, last_seen)
          VALUES ('s', 'a', 'https://example.com/1', '{"price":2}', 2, 0, 1);
        INSERT INTO changes (source, key, before, after, at, run) VALUES ('s', 'a', NULL, '{"price":1}', 0, NULL);
        INSERT INTO changes (source, key, before, after, at, run) VALUES ('s', 'a', '{"price":1}', '{"price":2}', 1, NULL);
        """)
      try db.close()
    }
    let store = try SQLiteStore(path: temp.path)
    let changes = try await store.changes(matching: ChangeQuery())
    #expect(changes.map(\.kind) == [.changed, .new])
    #expect(changes.allSatisfy { $0.url == "https://example.com/1" })
    // A completed crawl that did not see "a" (its page answered 304 and the
    // old row knows no page) leaves it alone.
    let (_, completion) = try await crawl(store, [PagePlan(n: 1, keepsRecords: true)], at: t0)
    #expect(completion?.removed.isEmpty == true)
  }
}
