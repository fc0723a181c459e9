import Foundation
import Testing
@testable import ForageStore

/// `LeaseStore` on every store: whether it is shared, the renewal of a
/// worker's frontier leases, and the election of a task's launch. A store of
/// one process (SQLite) renews nothing and grants every launch; a shared one
/// (PostgreSQL) renews and elects.
@Suite struct LeaseConformanceTests {
  @Test(arguments: StoreKind.all) func test_isShared_onlyForAStoreOfManyProcesses(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      #expect(store.isShared == (kind == .postgres))
    }
  }

  /// Renewing extends every lease the owner holds (and only its own), so
  /// another owner cannot take them past the first lease; a store of one
  /// process renews nothing (its leases last a whole launch) and says 0.
  @Test(arguments: StoreKind.all) func test_renewClaims_extendsTheOwnersLeases_whenShared(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let crawl = try await store.openCrawl(source: "s", seeds: (1...3).map { seed($0) }, now: t0)
      let mine = try await claimFrontier(store, crawl.id, limit: 2, owner: "a", lease: 60, at: t0)
      let theirs = try await claimFrontier(store, crawl.id, limit: 1, owner: "c", lease: 60, at: t0)
      #expect(mine.count == 2 && theirs.count == 1)
      let held = try await renewFrontier(store, owner: "a", lease: 600, at: t0 + 30)
      #expect(held == (store.isShared ? 2 : 0))
      #expect(try await renewFrontier(store, owner: "nobody", lease: 600, at: t0 + 30) == 0)
      // Past the first lease: c's entry is free again, a's only when not renewed.
      let taken = try await claimFrontier(store, crawl.id, limit: 5, owner: "b", lease: 60, at: t0 + 100)
      let expected = store.isShared ? theirs : (mine + theirs).sorted { $0.id < $1.id }
      #expect(taken.map(\.id) == expected.map(\.id))
    }
  }

  /// One boundary for every lease (frontier entries, notifications,
  /// downloads, launches): held while `now < leaseUntil`, passed at
  /// `leaseUntil`. The frontier and downloads held their leases one instant
  /// longer than notifications and launches (`<` against `<=`).
  @Test(arguments: StoreKind.all) func test_everyLease_isHeldBeforeItsEnd_andPassedAtIt(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      // A notification of the first crawl's new record, due at t0.
      try await crawl(store, [PagePlan(n: 1, records: [rec("a", 1)])], router: RecordingRouter(), at: t0)
      let due = t0 + 100
      #expect(try await claimOutbox(store, limit: 1, owner: "a", lease: 60, at: due).count == 1)
      #expect(try await claimOutbox(store, limit: 1, owner: "b", lease: 60, at: due + 59.999).isEmpty)
      #expect(try await claimOutbox(store, limit: 1, owner: "b", lease: 60, at: due + 60).count == 1)

      let crawl = try await store.openCrawl(source: "f", seeds: [seed(1)], now: t0)
      #expect(try await claimFrontier(store, crawl.id, limit: 1, owner: "a", lease: 60, at: t0).count == 1)
      #expect(try await claimFrontier(store, crawl.id, limit: 1, owner: "b", lease: 60, at: t0 + 59.999).isEmpty)
      #expect(try await claimFrontier(store, crawl.id, limit: 1, owner: "b", lease: 60, at: t0 + 60).count == 1)

      let download = try await store.enqueueDownload(DownloadConformanceTests.request(1), repeat: .keep, now: t0).id
      #expect(try await claimDownloads(store, limit: 1, owner: "a", lease: 60, at: t0).map(\.id) == [download])
      #expect(try await claimDownloads(store, limit: 1, owner: "b", lease: 60, at: t0 + 59.999).isEmpty)
      #expect(try await claimDownloads(store, limit: 1, owner: "b", lease: 60, at: t0 + 60).map(\.id) == [download])

      let elects = store.isShared
      #expect(try await electLaunch(store, task: "t", due: t0, owner: "a", lease: 10))
      #expect(try await electLaunch(store, task: "t", due: t0 + 9.999, owner: "b", lease: 10) == !elects)
      #expect(try await electLaunch(store, task: "t", due: t0 + 10, owner: "b", lease: 10))
    }
  }

  /// Releasing every claim (owner nil, as a process does at start): a
  /// store of one process releases them all (a crashed run left them); a
  /// shared store only those whose lease has passed, and the live claims of
  /// other workers stay theirs.
  @Test(arguments: StoreKind.all) func test_releaseClaims_ofAll_keepsOthersLiveClaims_whenShared(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      // The release counts on the current time: leases around it.
      let now = Date()
      let crawl = try await store.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: now)
      let live = try await claimFrontier(store, crawl.id, limit: 1, owner: "live", lease: 600, at: now)
      let dead = try await claimFrontier(store, crawl.id, limit: 1, owner: "dead", lease: 60, at: now - 3600)
      #expect(live.count == 1 && dead.count == 1)
      try await releaseFrontier(store, owner: nil)
      #expect(
        try await store.frontierCounts(crawl: crawl.id)
          == (store.isShared ? FrontierCounts(queued: 1, claimed: 1) : FrontierCounts(queued: 2)))
      // The live claim is still its owner's: another worker takes only the released entry.
      let taken = try await claimFrontier(store, crawl.id, limit: 2, owner: "next", lease: 60, at: now)
      #expect(taken.map(\.id) == (store.isShared ? dead : (live + dead).sorted { $0.id < $1.id }).map(\.id))
    }
  }

  /// One launch of a task per due time across a shared store: a claim held
  /// past `due` refuses other owners, its holder asking again is granted,
  /// and a lapsed claim is granted to the next launcher. A store of one
  /// process grants every ask.
  @Test(arguments: StoreKind.all) func test_claimLaunch_electsOneLauncher_andALapsedClaimIsTakenAgain(_ kind: StoreKind) async throws {
    try await withTwoStores(kind) { (a: any Store, b: any Store) async throws in
      let elects = a.isShared
      let due = t0
      #expect(try await electLaunch(a, task: "t", due: due, owner: "a", lease: 10))
      // b reaches the same due launch a little later: refused; another task is b's.
      #expect(try await electLaunch(b, task: "t", due: due + 1, owner: "b", lease: 10) == !elects)
      #expect(try await electLaunch(b, task: "u", due: due + 1, owner: "b", lease: 10))
      // a asking again for its own claim is granted (a retried statement).
      #expect(try await electLaunch(a, task: "t", due: due + 2, owner: "a", lease: 8))
      // a was killed: its claim lapses at due + 10, and the next launch is b's.
      #expect(try await electLaunch(b, task: "t", due: due + 10, owner: "b", lease: 10))
      #expect(try await electLaunch(a, task: "t", due: due + 11, owner: "a", lease: 10) == !elects)
      // One store of a fleet serves several daemons: the owner decides, not the connection.
      #expect(try await electLaunch(b, task: "t", due: due + 12, owner: "c", lease: 10) == !elects)
    }
  }
}
