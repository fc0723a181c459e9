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
      first = try await store.claimNotifications(limit: 10, lease: Lease(owner: "dead", for: .seconds(3500), at: t0 + 100))
      #expect(first.count == 2)
      // The process dies here: no settle, no release.
    }
    let reopened = try SQLiteStore(path: temp.path)
    #expect(try await reopened.claimNotifications(limit: 10, lease: Lease(owner: "b", for: .seconds(3499), at: t0 + 101)).isEmpty)
    try await reopened.release(.notification, owner: nil)
    let again = try await reopened.claimNotifications(limit: 10, lease: Lease(owner: "b", for: .seconds(3498), at: t0 + 102))
    #expect(again.map(\.messageID) == first.map(\.messageID))
    // A lease that passed is claimable without a release.
    let later = try await reopened.claimNotifications(limit: 10, lease: Lease(owner: "c", for: .seconds(5399), at: t0 + 3601))
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

@Suite struct ChangeIDMigrationTests {
  /// A store written before change ids were never reused (v16) keeps its
  /// changes and their ids, the outbox rows that refer to them, and gives
  /// the next change an id above every one handed out before: the ones
  /// pruning dropped (its marks) and the sinks' cursors.
  @Test func test_issue30_v15Store_keepsItsChangesAndOutbox_andNewIDsGoAboveThePrunedOnes() async throws {
    let temp = TempStorePath()
    do {
      let db = try SQLiteConnection(path: temp.path)
      try db.exec("PRAGMA foreign_keys = ON")
      var old = Migrator()
      old.migrations = Array(Migrator.forage.migrations.prefix { $0.name != "v16-change-ids-never-reused" })
      #expect(old.migrations.last?.name == "v15-sink-cursors")
      _ = try old.migrate(db, now: 0)
      try db.exec(
        """
        INSERT INTO changes (id, source, key, kind, url, after, at) VALUES (1, 's', 'a', 'new', 'u', '{"p":1}', 0);
        INSERT INTO changes (id, source, key, kind, url, before, after, at, changed_fields)
          VALUES (3, 's', 'a', 'changed', 'u', '{"p":1}', '{"p":2}', 1, '["p"]');
        INSERT INTO outbox (change, channel, message_id, next_at, created_at) VALUES (3, 'ops', 'msg_1', 0, 0);
        INSERT INTO history_pruned (source, through) VALUES ('s', 7), ('t', 5);
        INSERT INTO sink_cursors (name, change, updated_at) VALUES ('coredata', 6, 0);
        """)
      try db.close()
    }
    let store = try SQLiteStore(path: temp.path)
    let kept = try await store.changes(source: nil, afterID: 0, limit: 10)
    #expect(kept.map(\.id) == [1, 3])
    #expect(kept[1].changedFields == ["p"])
    let pending = try await store.claimNotifications(limit: 10, lease: Lease(owner: "x", for: .seconds(60), at: t0))
    #expect(pending.map(\.change.id) == [3])
    try await crawl(store, [PagePlan(n: 1, records: [rec("b", 1)])], at: t0)
    let next = try await store.changes(source: nil, afterID: 3, limit: 10)
    #expect(next.count == 1)
    #expect(next.allSatisfy { $0.id > 7 }, "new change ids \(next.map(\.id)) are not above the pruned mark 7")
    // Foreign keys are enforced again: pruning the change takes its outbox row along.
    try await store.settleNotification(pending[0].id, .delivered, now: t0)
    #expect(try await store.pruneHistory(["s": HistoryRetention(maxAge: .seconds(86_400))], now: t0) == 2)
    #expect(try await store.notificationCounts(now: t0).delivered == 0)
  }
}
