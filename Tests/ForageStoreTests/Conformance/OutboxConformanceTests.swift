import Foundation
import Testing
@testable import ForageStore

/// `OutboxStore` on every store: claims of due notifications and their
/// leases, settlements, releases, listings, counts and disabled channels.
@Suite struct OutboxConformanceTests {
  /// A store with one changed record routed to "ops" (and the new one of
  /// the first crawl): two notifications, written at `t0` and `t0 + 60`.
  private func storeWithNotifications(_ store: any Store) async throws {
    let router = RecordingRouter()
    try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)])], router: router, at: t0)
    try await crawl(store, [PagePlan(n: 1, records: [rec("a", 2)])], router: router, at: t0 + 60)
  }

  @Test(arguments: StoreKind.all) func test_claimSettle_delivered_retry_dead(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await storeWithNotifications(store)
      let claimed = try await claimOutbox(store, owner: "x", at: t0 + 100)
      #expect(claimed.count == 2)
      #expect(claimed.allSatisfy { $0.messageID.hasPrefix("msg_") && $0.messageID.count == 36 })
      #expect(Set(claimed.map(\.messageID)).count == 2)
      #expect(claimed.map(\.change.kind) == [.new, .changed])
      // Claimed: nobody else gets them while the lease holds.
      #expect(try await claimOutbox(store, owner: "y", lease: 99, at: t0 + 101).isEmpty)

      try await store.settleNotification(claimed[0].id, .delivered, now: t0 + 102)
      try await store.settleNotification(claimed[1].id, .retry(at: t0 + 300, error: "HTTP 500"), now: t0 + 102)
      let waiting = try await store.notificationCounts(now: t0 + 102)
      #expect(waiting.pending == 1 && waiting.retrying == 1 && waiting.due == 0)
      #expect(try await claimOutbox(store, owner: "y", lease: 101, at: t0 + 299).isEmpty)
      let retried = try await claimOutbox(store, owner: "y", at: t0 + 300)
      #expect(retried.map(\.messageID) == [claimed[1].messageID])
      #expect(retried[0].attempts == 1 && retried[0].lastError == "HTTP 500")

      try await store.settleNotification(retried[0].id, .dead(error: "too old"), now: t0 + 301)
      let counts = try await store.notificationCounts(now: t0 + 400)
      #expect(counts.pending == 0 && counts.delivered == 1 && counts.dead == 1)
      let dead = try await store.notifications(state: .dead, limit: 10)
      #expect(dead.map(\.lastError) == ["too old"])
      // A settled notification is not sent again.
      #expect(try await claimOutbox(store, owner: "z", at: t0 + 800).isEmpty)
      await #expect(throws: StoreError.self) { try await store.settleNotification(12345, .delivered, now: t0) }
    }
  }

  /// Due notifications come oldest first (by when they are due), up to the
  /// limit; one not yet due (a retry later than `now`) waits, even when older.
  @Test(arguments: StoreKind.all) func test_claim_takesDueOnesOldestFirst_uptoTheLimit(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let router = RecordingRouter()
      for i in 0..<4 {
        try await crawl(store, [PagePlan(n: 1, records: [rec("a", i)])], router: router, at: t0 + Double(i) * 10)
      }
      let first = try await claimOutbox(store, limit: 1, owner: "x", at: t0 + 100)
      #expect(first.map(\.change.afterJSON) == [#"{"price":0}"#])
      #expect(first.first?.createdAt == t0 && first.first?.nextAttemptAt == t0)
      try await store.settleNotification(first[0].id, .retry(at: t0 + 500, error: "HTTP 503"), now: t0 + 100)
      let next = try await claimOutbox(store, limit: 2, owner: "x", at: t0 + 101)
      #expect(next.map(\.change.afterJSON) == [#"{"price":1}"#, #"{"price":2}"#])
      let last = try await claimOutbox(store, limit: 5, owner: "x", at: t0 + 102)
      #expect(last.map(\.change.afterJSON) == [#"{"price":3}"#])
      #expect(try await claimOutbox(store, limit: 0, owner: "y", at: t0 + 600).isEmpty)
      // Past every lease and the retry's date, all are due: the retried one,
      // due latest, comes last.
      let again = try await claimOutbox(store, limit: 5, owner: "y", at: t0 + 600)
      #expect(again.map(\.id) == next.map(\.id) + last.map(\.id) + [first[0].id])
    }
  }

  /// A claim whose lease passed (a process killed mid-delivery) is claimable
  /// again by another owner, with the same message id and no attempt counted.
  @Test(arguments: StoreKind.all) func test_claim_ofAPassedLease_isTakenAgain_sameMessageID(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await storeWithNotifications(store)
      let first = try await claimOutbox(store, owner: "dead", lease: 60, at: t0 + 100)
      #expect(first.count == 2)
      #expect(try await claimOutbox(store, owner: "b", at: t0 + 159).isEmpty)
      let later = try await claimOutbox(store, owner: "b", at: t0 + 161)
      #expect(later.map(\.messageID) == first.map(\.messageID))
      #expect(later.allSatisfy { $0.attempts == 0 && $0.state == .pending })
    }
  }

  @Test(arguments: StoreKind.all) func test_release_ofOneOwner_makesItsClaimsDueAtOnce(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await storeWithNotifications(store)
      let a = try await claimOutbox(store, limit: 1, owner: "a", lease: 900, at: t0 + 100)
      let b = try await claimOutbox(store, limit: 1, owner: "b", lease: 900, at: t0 + 100)
      #expect(a.count == 1 && b.count == 1 && a[0].id != b[0].id)
      try await releaseOutbox(store, owner: "nobody")
      #expect(try await claimOutbox(store, owner: "c", at: t0 + 101).isEmpty)
      try await releaseOutbox(store, owner: "a")
      #expect(try await claimOutbox(store, owner: "c", at: t0 + 101).map(\.id) == a.map(\.id))
      #expect(try await store.notificationCounts(now: t0 + 101).pending == 2)
    }
  }

  @Test(arguments: StoreKind.all) func test_notifications_listNewestFirst_byState(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await storeWithNotifications(store)
      let all = try await store.notifications(state: nil, limit: 10)
      #expect(all.map(\.change.kind) == [.changed, .new])
      #expect(all.map(\.channel) == ["ops", "ops"])
      #expect(all.map(\.createdAt) == [t0 + 60, t0])
      #expect(all.allSatisfy { $0.state == .pending && $0.attempts == 0 && $0.lastError == nil })
      #expect(all[0].change.beforeJSON == #"{"price":1}"# && all[0].change.afterJSON == #"{"price":2}"#)
      #expect(try await store.notifications(state: nil, limit: 1).map(\.id) == [all[0].id])
      try await store.settleNotification(all[1].id, .delivered, now: t0 + 70)
      #expect(try await store.notifications(state: .delivered, limit: 10).map(\.id) == [all[1].id])
      #expect(try await store.notifications(state: .pending, limit: 10).map(\.id) == [all[0].id])
      #expect(try await store.notifications(state: .dead, limit: 10).isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_notificationCounts_ofEachState_andTheNextAttempt(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      #expect(try await store.notificationCounts(now: t0) == NotificationCounts())
      try await storeWithNotifications(store)
      var counts = try await store.notificationCounts(now: t0 + 30)
      #expect(counts.pending == 2 && counts.due == 1 && counts.retrying == 0 && counts.nextAttemptAt == t0)
      let claimed = try await claimOutbox(store, owner: "x", at: t0 + 100)
      try await store.settleNotification(claimed[0].id, .retry(at: t0 + 300, error: "HTTP 500"), now: t0 + 100)
      try await store.settleNotification(claimed[1].id, .retry(at: t0 + 200, error: "HTTP 502"), now: t0 + 100)
      counts = try await store.notificationCounts(now: t0 + 250)
      #expect(counts.pending == 2 && counts.due == 1 && counts.retrying == 2 && counts.nextAttemptAt == t0 + 200)
      #expect(counts.delivered == 0 && counts.dead == 0)
    }
  }

  @Test(arguments: StoreKind.all) func test_disabledChannels_roundTrip(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let off = DisabledChannel(name: "ops", target: "https://hooks.example.com/x", reason: "410", at: t0)
      try await store.setDisabledChannel(off, name: "ops")
      #expect(try await store.disabledChannels() == [off])
      try await store.setDisabledChannel(nil, name: "ops")
      #expect(try await store.disabledChannels().isEmpty)
    }
  }

  /// Channels are listed by name; turning one off again replaces its entry.
  @Test(arguments: StoreKind.all) func test_disabledChannels_byName_replaced(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let mail = DisabledChannel(name: "mail", target: "https://m.example.com", reason: "410", at: t0)
      let ops = DisabledChannel(name: "ops", target: "https://hooks.example.com/x", reason: "410", at: t0)
      try await store.setDisabledChannel(ops, name: "ops")
      try await store.setDisabledChannel(mail, name: "mail")
      #expect(try await store.disabledChannels() == [mail, ops])
      let moved = DisabledChannel(name: "ops", target: "https://hooks.example.com/y", reason: "gone again", at: t0 + 5)
      try await store.setDisabledChannel(moved, name: "ops")
      #expect(try await store.disabledChannels() == [mail, moved])
      try await store.setDisabledChannel(nil, name: "nothing")
      #expect(try await store.disabledChannels().count == 2)
    }
  }
}
