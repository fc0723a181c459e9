import Foundation
import Testing
@testable import ForageStore

/// `LeaseStore` on every store, for every kind of claim (`LeaseKind`): a
/// claim is one owner's while its lease lasts and another's from its end
/// (one boundary), renewing extends only the owner's claims, and releasing
/// gives them back. A store of one process (SQLite) keeps the frontier's,
/// the outbox's and the downloads' claims and grants every launch,
/// robots.txt fetch and host ticket (its process is the only one); a shared
/// store (PostgreSQL) keeps every kind. PostgreSQL runs on the callers'
/// virtual clock here (`withStore`), except host tickets, which its server
/// function counts on the server's clock: those wait for real time.
@Suite struct LeaseConformanceTests {
  @Test(arguments: StoreKind.all) func test_isShared_onlyForAStoreOfManyProcesses(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      #expect(store.isShared == (kind == .postgres))
    }
  }

  /// Held while `now < at + length`, passed at its end: another owner is
  /// refused a claim one millisecond before and granted it at the end.
  @Test(arguments: LeaseKind.allCases, StoreKind.all)
  func test_everyKind_isRefusedToAnotherOwnerWhileHeld_andTakenAtItsEnd(_ lease: LeaseKind, _ kind: StoreKind)
    async throws
  {
    try await withStore(kind) { store in
      let claims = try await Claims.prepare(lease, on: store, count: 1)
      let first = try await claims.claim(owner: "a", for: 60, at: t0)
      #expect(first.count == 1)
      #expect(try await claims.claim(owner: "b", for: 60, at: t0 + 59.999) == (claims.coordinates ? [] : first))
      if claims.onServerClock {
        // A lease of zero has passed a millisecond later, by the server's clock.
        let later = try await Claims.prepare(lease, on: store, count: 1, tag: "later")
        let second = try await later.claim(owner: "a", for: 0, at: t0)
        #expect(second.count == 1)
        #expect(try await later.claimOnceFree(owner: "b") == second)
      } else {
        #expect(try await claims.claim(owner: "b", for: 60, at: t0 + 60, limit: 1) == first)
      }
    }
  }

  /// Renewing extends every claim of the kind its owner holds and only
  /// those: past the first lease, another owner takes the claim that was not
  /// renewed. A kind the store keeps no claims of renews none (0).
  @Test(arguments: LeaseKind.allCases, StoreKind.all)
  func test_renew_extendsOnlyTheOwnersClaims(_ lease: LeaseKind, _ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let claims = try await Claims.prepare(lease, on: store, count: 2)
      let length: TimeInterval = claims.onServerClock ? 0 : 60
      let mine = try await claims.claim(owner: "a", for: length, at: t0)
      let theirs = try await claims.claim(owner: "c", for: length, at: t0, excluding: mine)
      #expect(mine.count == 1 && theirs.count == 1 && mine != theirs)
      let renewed = try await store.renew(lease, lease: Lease(owner: "a", for: .seconds(600), at: t0 + 30))
      #expect(renewed == (claims.keeps ? 1 : 0))
      #expect(try await store.renew(lease, lease: Lease(owner: "nobody", for: .seconds(600), at: t0 + 30)) == 0)
      let taken =
        claims.onServerClock
        ? try await claims.claimOnceFree(owner: "b", limit: 2)
        : try await claims.claim(owner: "b", for: 60, at: t0 + 100, limit: 2)
      #expect(taken == (claims.keeps ? theirs : (mine + theirs).sorted()))
    }
  }

  /// Releasing one owner's claims gives them back at once (to the queue,
  /// due again, or deleted) and leaves another owner's held.
  @Test(arguments: LeaseKind.allCases, StoreKind.all)
  func test_release_ofOneOwner_givesItsClaimsBack_andKeepsOthers(_ lease: LeaseKind, _ kind: StoreKind)
    async throws
  {
    try await withStore(kind) { store in
      let claims = try await Claims.prepare(lease, on: store, count: 2)
      let mine = try await claims.claim(owner: "a", for: 60, at: t0)
      let theirs = try await claims.claim(owner: "c", for: 60, at: t0, excluding: mine)
      #expect(mine.count == 1 && theirs.count == 1)
      try await store.release(lease, owner: "a")
      let expected = claims.keeps ? mine : claims.coordinates ? [] : (mine + theirs).sorted()
      #expect(try await claims.claim(owner: "b", for: 60, at: t0 + 1, limit: 2) == expected)
    }
  }

  /// Releasing every claim (owner nil, as a process does at start): a
  /// store of one process releases them all (a crashed run left them); a
  /// shared store only those whose lease has passed, and the live claims of
  /// other workers stay theirs. Counted on the current time.
  @Test(arguments: LeaseKind.allCases, StoreKind.all)
  func test_release_ofAll_keepsOthersLiveClaims_whenShared(_ lease: LeaseKind, _ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let claims = try await Claims.prepare(lease, on: store, count: 2)
      let now = Date()
      let live = try await claims.claim(owner: "live", for: 600, at: now)
      // On the server's clock a lease of zero has passed once the call returns.
      let dead = try await claims.claim(
        owner: "dead", for: claims.onServerClock ? 0 : 60, at: now - 3600, excluding: live)
      #expect(live.count == 1 && dead.count == 1)
      try await store.release(lease, owner: nil)
      let taken = try await claims.claim(owner: "next", for: 60, at: now, limit: 2)
      #expect(taken == (store.isShared ? dead : (live + dead).sorted()))
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

/// One kind of claim on one store, driven the same way for every kind:
/// `prepare` makes things to claim (frontier entries, notifications,
/// downloads, tasks, origins, hosts), `claim` takes up to `limit` of them
/// and names those it took, sorted.
struct Claims {
  let kind: LeaseKind
  let store: any Store
  var crawlID: Int64 = 0
  /// The tasks, origins or hosts to claim.
  var names: [String] = []

  /// True when the store keeps this kind's claims, so that renew and
  /// release act on them.
  var keeps: Bool { kind.isRenewable && (store.isShared || [.frontier, .notification, .download].contains(kind)) }
  /// True when the store refuses another owner a claim while it is held.
  var coordinates: Bool { store.isShared || [.frontier, .notification, .download].contains(kind) }
  /// True when the store counts this kind's leases on the server's clock
  /// whatever its lease clock (host tickets of PostgreSQL).
  var onServerClock: Bool { kind == .hostTicket && store.isShared }

  /// Makes `count` things of `kind` to claim; `tag` tells apart the names
  /// of a second set on the same store.
  static func prepare(_ kind: LeaseKind, on store: any Store, count: Int, tag: String = "") async throws -> Claims {
    var claims = Claims(kind: kind, store: store)
    switch kind {
    case .frontier:
      claims.crawlID = try await store.openCrawl(source: "f", seeds: (1...count).map { seed($0) }, now: t0).id
    case .notification:
      // The first crawl's new records, one notification each, due at t0.
      let records = (1...count).map { rec("k\($0)", $0) }
      try await crawl(store, [PagePlan(n: 1, records: records)], router: RecordingRouter(), at: t0)
    case .download:
      for n in 1...count {
        _ = try await store.enqueueDownload(DownloadConformanceTests.request(n), repeat: .keep, now: t0)
      }
    case .launch: claims.names = (1...count).map { "task-\(tag)\($0)" }
    case .robotsFetch: claims.names = (1...count).map { "https://o\(tag)\($0).example" }
    case .hostTicket: claims.names = (1...count).map { "http://h\(tag)\($0).example" }
    }
    return claims
  }

  /// Claims up to `limit` for `owner` at `now`, leased `seconds`; tasks,
  /// origins and hosts among `excluding` are not asked for (entries,
  /// notifications and downloads are taken in the store's order).
  func claim(
    owner: String, for seconds: TimeInterval, at now: Date, limit: Int = 1, excluding: [String] = []
  ) async throws -> [String] {
    let lease = Lease(owner: owner, for: .seconds(seconds), at: now)
    switch kind {
    case .frontier:
      return try await store.claim(crawl: crawlID, limit: limit, lease: lease).map { String($0.id) }.sorted()
    case .notification:
      return try await store.claimNotifications(limit: limit, lease: lease).map { String($0.id) }.sorted()
    case .download:
      return try await store.claimDownloads(ids: nil, afterID: 0, limit: limit, maxRemaining: nil, lease: lease)
        .map { String($0.id) }.sorted()
    case .launch, .robotsFetch, .hostTicket:
      var taken: [String] = []
      for name in names where taken.count < limit && !excluding.contains(name) {
        if try await claim(name, lease: lease) { taken.append(name) }
      }
      return taken
    }
  }

  /// One task, origin or host claimed under `lease`.
  private func claim(_ name: String, lease: Lease) async throws -> Bool {
    switch kind {
    case .launch: try await store.claimLaunch(task: name, lease: lease)
    case .robotsFetch: try await store.claimRobotsFetch(origin: name, lease: lease)
    default:
      try await !store.takeHostTickets(
        host: name, concurrency: 1, delay: .zero, count: 1, lease: lease, returning: []
      ).isEmpty
    }
  }

  /// Claims for `owner`, now, until a claim is granted: what a lease on the
  /// server's clock gives once it has passed (a millisecond after it ends).
  /// Not a timing bound: it asks until the server's clock has moved, at
  /// most 2,000 times, 5 ms apart.
  func claimOnceFree(owner: String, limit: Int = 1) async throws -> [String] {
    for _ in 0..<2_000 {
      let taken = try await claim(owner: owner, for: 60, at: Date(), limit: limit)
      if !taken.isEmpty { return taken }
      try await Task.sleep(for: .milliseconds(5))
    }
    return []
  }
}
