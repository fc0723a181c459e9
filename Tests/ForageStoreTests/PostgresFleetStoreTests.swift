#if Postgres
import Foundation
import Testing
@testable import ForagePostgres
@testable import ForageStore
import ForageSupport

/// What a fleet needs of `PostgresStore` beyond the `Store` guarantees that
/// every store meets: leases that a live worker renews and a dead one loses,
/// commits of a lost lease discarded, and per-host politeness in the database.
@Suite(
  .enabled(
    if: PostgresTestServer.url != nil || PostgresTestServer.isCI,
    "FORAGE_TEST_POSTGRES_URL is not set: the PostgreSQL fleet tests are skipped"))
struct PostgresFleetStoreTests {
  /// Two stores (two workers) on one new database.
  func withTwoWorkers(_ body: (PostgresStore, PostgresStore) async throws -> Void) async throws {
    try await PostgresTestServer.withDatabase { url in
      let a = try PostgresStore(url: url)
      let b = try PostgresStore(url: url)
      try await body(a, b)
      try await a.close()
      try await b.close()
    }
  }

  @Test func test_aLostLease_commitIsDiscarded_theNewHoldersIsKept_once() async throws {
    try await withTwoWorkers { a, b in
      let crawl = try await a.openCrawl(source: "s", seeds: [seed(1)], now: t0)
      let now = Date()
      let itemA = try #require(
        try await a.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "a", for: .seconds(0.2), at: now)).first)
      // a's lease passes (on the server's clock); b takes the URL over.
      try await Task.sleep(for: .milliseconds(400))
      let itemB = try #require(
        try await b.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "b", for: .seconds(60), at: now)).first)
      #expect(itemB.id == itemA.id)
      let late = try await a.commit([
        PageCommit(item: itemA, outcome: .done, records: [record("k", fields: #"{"v":"a"}"#, hash: 1)], now: t0)
      ])
      #expect(late.newRecords == 0, "a's commit came after its lease was lost")
      let kept = try await b.commit([
        PageCommit(item: itemB, outcome: .done, records: [record("k", fields: #"{"v":"b"}"#, hash: 2)], now: t0)
      ])
      #expect(kept.newRecords == 1)
      let records = try await a.records(source: nil, afterID: 0, limit: 10)
      #expect(records.map(\.fieldsJSON) == [#"{"v":"b"}"#])
      #expect(try await a.changes(source: nil, afterID: 0, limit: 10).count == 1)
      #expect(try await a.frontierCounts(crawl: crawl.id) == FrontierCounts(done: 1))
    }
  }

  /// Issue 27: a claim runs on the store's second connection and does not
  /// wait for a commit in flight on the first. The commit held the store's
  /// actor for its whole transaction, and the claim, though sent on the
  /// other connection, started on that actor and came back to it: a
  /// worker's 16 fetches sat idle behind every commit of a first crawl.
  /// Here the commit is held up in the server (another session holds the
  /// change-order lock that every commit takes first); the claim must come
  /// back while it waits.
  @Test func test_issue27_aClaimDoesNotWaitForACommitInFlight() async throws {
    try await PostgresTestServer.withDatabase { url in
      let store = try PostgresStore(url: url)
      let crawl = try await store.openCrawl(source: "s", seeds: (1...4).map { seed($0) }, now: t0)
      let first = try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "w", for: .seconds(60), at: Date()))
      let blocker = try PostgresConnection(url: PostgresURL(url))
      _ = try blocker.exec("BEGIN")
      _ = try blocker.exec("SELECT pg_advisory_xact_lock(\(PostgresMigrations.changeOrderLockKey))")
      let commit = Task {
        try await store.commit([PageCommit(item: try #require(first.first), outcome: .done, now: t0)])
      }
      // The commit is waiting for the lock.
      let watcher = try PostgresConnection(url: PostgresURL(url))
      var waiting = false
      for _ in 0..<400 where !waiting {
        let rows = try watcher.exec(
          "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")
        waiting = rows.int(0, 0) > 0
        if !waiting { try await Task.sleep(for: .milliseconds(25)) }
      }
      #expect(waiting, "the commit never waited for the lock; the test did not test much")
      // The claim comes back meanwhile (or the lock is let go after 20 s,
      // and the claim is seen to have waited).
      let claimed = Locked<Bool>(false)
      let claim = Task {
        let items = try await store.claimWithPages(
          crawl: crawl.id, limit: 2, lease: Lease(owner: "w", for: .seconds(60), at: Date())).items
        claimed.withLock { $0 = true }
        return items
      }
      for _ in 0..<800 where !claimed.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(25)) }
      #expect(claimed.withLock { $0 }, "the claim waited for the commit in flight")
      _ = try blocker.exec("COMMIT")
      #expect(try await claim.value.count == 2)
      #expect(try await commit.value.linksAdded == 0)
      #expect(try await store.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 1, claimed: 2, done: 1))
      try await store.close()
    }
  }

  /// Two workers committing at once pages that give the same new records
  /// and links past the crawl's cap: each record is new once (the other
  /// worker's insert meets the first's row and is planned again), the
  /// changes agree with the records, and the frontier stops exactly at the
  /// cap, with its counter equal to its rows (issue 27: the crawl's row is
  /// locked only by the statement that inserts the links).
  @Test func test_issue27_twoWorkersCommittingTheSameNewRecordsAndLinks_stayExact() async throws {
    try await withTwoWorkers { a, b in
      let crawl = try await a.openCrawl(source: "s", seeds: (1...40).map { seed($0) }, now: t0)
      let now = Date()
      let itemsA = try await a.claim(crawl: crawl.id, limit: 20, lease: Lease(owner: "a", for: .seconds(600), at: now))
      let itemsB = try await b.claim(crawl: crawl.id, limit: 20, lease: Lease(owner: "b", for: .seconds(600), at: now))
      #expect(itemsA.count == 20 && itemsB.count == 20)
      func commits(_ store: PostgresStore, _ items: [FrontierItem], _ worker: String) async throws -> CommitResult {
        var total = CommitResult()
        for (i, item) in items.enumerated() {
          let records = (0..<5).map { k in
            record("k\((i + k) % 8)", fields: #"{"v":"\#(worker)\#(i % 2)"}"#, hash: UInt64(worker == "a" ? i % 2 : 10 + i % 2))
          }
          let links = (0..<10).map { seed(1000 + i * 3 + $0) }
          total.add(
            try await store.commit([
              PageCommit(
                item: item, outcome: .done, records: records, discovered: links, maxPages: 100, now: t0)
            ]))
        }
        return total
      }
      async let fromA = commits(a, itemsA, "a")
      async let fromB = commits(b, itemsB, "b")
      let (ra, rb) = try await (fromA, fromB)
      #expect(ra.newRecords + rb.newRecords == 8)
      let seen = [ra, rb].map { $0.newRecords + $0.changedRecords + $0.unchangedRecords + $0.restoredRecords }
      #expect(seen == [100, 100])
      let records = try await a.records(source: nil, afterID: 0, limit: 100)
      #expect(Set(records.map(\.key)) == Set((0..<8).map { "k\($0)" }) && records.count == 8)
      let changes = try await a.changes(source: nil, afterID: 0, limit: 1000)
      #expect(changes.count == ra.changes.count + rb.changes.count)
      #expect(changes.filter { $0.kind == .new }.count == 8)
      #expect(ra.linksAdded + rb.linksAdded == 60)
      let counts = try await a.frontierCounts(crawl: crawl.id)
      #expect(counts.queued + counts.claimed + counts.done + counts.failed == 100)
      #expect(try await a.frontierSize(crawl: crawl.id) == 100)
    }
  }

  @Test func test_renewedLeases_areNotTaken_andAStartingWorkerReleasesOnlyExpiredOnes() async throws {
    try await withTwoWorkers { a, b in
      let crawl = try await a.openCrawl(source: "s", seeds: [seed(1), seed(2)], now: t0)
      let now = Date()
      let mine = try await a.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "a", for: .seconds(0.2), at: now))
      #expect(mine.count == 1)
      #expect(try await a.renew(.frontier, lease: Lease(owner: "a", for: .seconds(600), at: Date())) == 1)
      // Past the first lease, the renewed claim is still a's.
      try await Task.sleep(for: .milliseconds(400))
      let other = try await b.claim(crawl: crawl.id, limit: 5, lease: Lease(owner: "b", for: .seconds(60), at: now))
      #expect(other.map(\.id) != mine.map(\.id) && other.count == 1)
      // A worker starting up (release(.frontier, owner: nil)) leaves live claims alone.
      try await b.release(.frontier, owner: nil)
      #expect(try await a.frontierCounts(crawl: crawl.id) == FrontierCounts(claimed: 2))
      try await b.release(.frontier, owner: "b")
      #expect(try await a.frontierCounts(crawl: crawl.id) == FrontierCounts(queued: 1, claimed: 1))
    }
  }

  /// Issue 27: leases run on the server's clock, which every worker shares.
  /// A worker whose own clock is an hour ahead takes over none of another's
  /// live leases (frontier entries, notifications, downloads), and one an
  /// hour behind does not keep its own past their end.
  @Test func test_issue27_leasesRunOnTheServersClock_notTheCallers() async throws {
    try await withTwoWorkers { a, b in
      let now = Date()
      let ahead = now + 3600
      let crawl = try await a.openCrawl(source: "x", seeds: [seed(1)], now: t0)
      #expect(try await a.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "a", for: .seconds(60), at: now)).count == 1)
      #expect(try await b.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "b", for: .seconds(60), at: ahead)).isEmpty)
      try await b.release(.frontier, owner: nil)
      #expect(try await a.frontierCounts(crawl: crawl.id) == FrontierCounts(claimed: 1))

      let router = RecordingRouter()
      try await PostgresFleetStoreTests.crawlOnePage(a, router: router)
      #expect(try await a.claimNotifications(limit: 5, lease: Lease(owner: "a", for: .seconds(60), at: now)).count == 1)
      #expect(try await b.claimNotifications(limit: 5, lease: Lease(owner: "b", for: .seconds(60), at: ahead)).isEmpty)

      _ = try await a.enqueueDownload(
        DownloadRequest(url: "https://example.com/a.mp3", folder: "f"), repeat: .keep, now: now)
      let mine = try await a.claimDownloads(
        ids: nil, afterID: 0, limit: 5, maxRemaining: nil, lease: Lease(owner: "a", for: .seconds(60), at: now))
      #expect(mine.count == 1)
      #expect(
        try await b.claimDownloads(
          ids: nil, afterID: 0, limit: 5, maxRemaining: nil, lease: Lease(owner: "b", for: .seconds(60), at: ahead)).isEmpty)

      // A clock an hour behind: a 200 ms lease still ends 200 ms from now.
      let behind = now - 3600
      let crawl2 = try await a.openCrawl(source: "t", seeds: [seed(2)], now: t0)
      #expect(try await a.claim(crawl: crawl2.id, limit: 1, lease: Lease(owner: "a", for: .seconds(0.2), at: behind)).count == 1)
      try await Task.sleep(for: .milliseconds(400))
      #expect(try await b.claim(crawl: crawl2.id, limit: 1, lease: Lease(owner: "b", for: .seconds(60), at: now)).count == 1)
    }
  }

  /// One crawled page with one new record on `store`, its change routed to one channel.
  static func crawlOnePage(_ store: PostgresStore, router: RecordingRouter) async throws {
    try await crawl(store, [PagePlan(n: 1, records: [rec("k", 1, page: 1)])], router: router, at: t0)
  }

  @Test func test_twoWorkersClaimingAtOnce_neverShareAnEntry() async throws {
    try await withTwoWorkers { a, b in
      let crawl = try await a.openCrawl(source: "s", seeds: (1...200).map { seed($0) }, now: t0)
      let now = Date()
      async let fromA = (0..<20).asyncFlatMap { _ in
        try await a.claim(crawl: crawl.id, limit: 5, lease: Lease(owner: "a", for: .seconds(60), at: now))
      }
      async let fromB = (0..<20).asyncFlatMap { _ in
        try await b.claim(crawl: crawl.id, limit: 5, lease: Lease(owner: "b", for: .seconds(60), at: now))
      }
      let (ia, ib) = try await (fromA, fromB)
      #expect(ia.count + ib.count == 200)
      #expect(Set(ia.map(\.id)).isDisjoint(with: ib.map(\.id)))
    }
  }

  /// Notifications go out once per change across a fleet: two workers
  /// claiming the outbox at once never take the same row, each row keeps
  /// its one message id, and a row a worker settled is not claimed again.
  @Test func test_twoWorkersClaimingTheOutboxAtOnce_neverShareANotification() async throws {
    try await withTwoWorkers { a, b in
      let router = RecordingRouter()
      let records = (0..<120).map { rec("k\($0)", $0, page: 1) }
      try await crawl(a, [PagePlan(n: 1, records: records)], router: router, at: t0)
      let now = t0 + 10
      async let fromA = (0..<15).asyncFlatMap { _ in
        try await a.claimNotifications(limit: 5, lease: Lease(owner: "a", for: .seconds(60), at: now))
      }
      async let fromB = (0..<15).asyncFlatMap { _ in
        try await b.claimNotifications(limit: 5, lease: Lease(owner: "b", for: .seconds(60), at: now))
      }
      let (na, nb) = try await (fromA, fromB)
      #expect(na.count + nb.count == 120)
      #expect(Set(na.map(\.id)).isDisjoint(with: nb.map(\.id)))
      #expect(Set((na + nb).map(\.messageID)).count == 120, "one message id per change")
      for n in na { try await a.settleNotification(n.id, .delivered, now: now + 1) }
      for n in nb { try await b.settleNotification(n.id, .delivered, now: now + 1) }
      // Past every lease, nothing delivered comes back.
      #expect(try await b.claimNotifications(limit: 200, lease: Lease(owner: "b", for: .seconds(480), at: now + 120)).isEmpty)
      #expect(try await a.notificationCounts(now: now + 120).pending == 0)
    }
  }

  /// One ticket of `host` for `owner`, or nil (the old one-at-a-time call).
  func ticket(
    _ store: PostgresStore, _ host: String, _ owner: String, concurrency: Int, delay: Duration = .zero,
    lease: Duration = .seconds(60)
  ) async throws -> Int64? {
    try await store.takeHostTickets(
      host: host, concurrency: concurrency, delay: delay, count: 1, lease: Lease(owner: owner, for: lease, at: Date()),
      returning: []
    ).first
  }

  /// A dead worker's ticket frees itself when its lease passes (on the
  /// server's clock). Concurrency and delay are in PolitenessConformanceTests.
  @Test func test_hostTickets_expire() async throws {
    try await withTwoWorkers { a, b in
      // b's first call opens its second connection: made before the short
      // lease starts (on a loaded machine it took longer than the lease).
      #expect(try await ticket(b, "http://warm.example", "b", concurrency: 1) != nil)
      let third = "http://third.example"
      #expect(try await ticket(a, third, "a", concurrency: 1, lease: .milliseconds(50)) != nil)
      #expect(try await ticket(b, third, "b", concurrency: 1) == nil)
      try await Task.sleep(for: .milliseconds(120))
      #expect(try await ticket(b, third, "b", concurrency: 1) != nil)
    }
  }

  /// Issue 27: a worker takes a host's slots in bulk, at most its fair share
  /// once another worker asked, gives them back within its next call, and
  /// takes one start a call when the host has a delay.
  @Test func test_issue27_hostTicketsInBulk_fairShares_andReturnsInTheSameCall() async throws {
    try await withTwoWorkers { a, b in
      let host = "http://example.com"
      func take(_ store: PostgresStore, _ owner: String, _ count: Int, returning: [Int64] = []) async throws -> [Int64] {
        try await store.takeHostTickets(
          host: host, concurrency: 4, delay: .zero, count: count, lease: Lease(owner: owner, for: .seconds(60), at: Date()),
          returning: returning)
      }
      let first = try await take(a, "a", 4)
      #expect(first.count == 4, "alone, a worker may take every slot")
      #expect(try await take(b, "b", 4).isEmpty, "the host is full")
      // b asked: a's share is now half the host's slots.
      let again = try await take(a, "a", 4, returning: first)
      #expect(again.count == 2)
      #expect(try await take(b, "b", 4).count == 2)
      #expect(try await take(a, "a", 4).isEmpty)
      // A ticket of another owner is not given back in its name.
      #expect(try await take(b, "b", 1, returning: again).isEmpty)
      try await a.release(.hostTicket, owner: "a", ids: again)
      #expect(try await take(b, "b", 4).isEmpty, "a asked lately: b keeps to its half")
      #expect(try await take(a, "a", 4).count == 2)

      let slow = "http://slow.example"
      let starts = try await a.takeHostTickets(
        host: slow, concurrency: 4, delay: .seconds(30), count: 4, lease: Lease(owner: "a", for: .seconds(60), at: Date()),
        returning: [])
      #expect(starts.count == 1, "with a delay, each ticket is one start")
    }
  }

  /// A robots.txt fetch's claim passes with its lease (on the server's
  /// clock). The election itself is in PolitenessConformanceTests.
  @Test func test_robotsFetch_isClaimedByOneWorker_untilItsLeasePasses() async throws {
    try await withTwoWorkers { a, b in
      // b's first call opens its second connection: made before the short
      // lease starts (on a loaded machine it took longer than the lease).
      #expect(try await b.claimRobotsFetch(origin: "https://warm.example", lease: Lease(owner: "b", for: .seconds(60), at: Date())))
      #expect(try await a.claimRobotsFetch(origin: "https://example.com", lease: Lease(owner: "a", for: .milliseconds(80), at: Date())))
      #expect(try await !b.claimRobotsFetch(origin: "https://example.com", lease: Lease(owner: "b", for: .seconds(60), at: Date())))
      try await Task.sleep(for: .milliseconds(150))
      #expect(try await b.claimRobotsFetch(origin: "https://example.com", lease: Lease(owner: "b", for: .seconds(60), at: Date())))
      #expect(try await !a.claimRobotsFetch(origin: "https://example.com", lease: Lease(owner: "a", for: .seconds(60), at: Date())))
    }
  }

  @Test func test_claimLaunch_twoDaemonsRacing_exactlyOneWins() async throws {
    try await withTwoWorkers { a, b in
      let due = Date()
      // Both ask at once, many times over (a new slot each round): one wins each.
      for round in 0..<20 {
        let task = "t.race.\(round)"
        async let first = a.claimLaunch(task: task, lease: Lease(owner: "a", for: .seconds(60), at: due))
        async let second = b.claimLaunch(task: task, lease: Lease(owner: "b", for: .seconds(60), at: due))
        let wins = try await [first, second].filter { $0 }.count
        #expect(wins == 1, "round \(round): \(wins) daemons were granted the launch")
      }
      // The election's rules (refusal, renewal, lapse) are in LeaseConformanceTests.
    }
  }

  @Test func test_updatePendingTaskRequests_leavesOtherIdentifiersAlone() async throws {
    try await withTwoWorkers { a, b in
      let soon = Date(timeIntervalSince1970: 1_800_000_000)
      try await a.updatePendingTaskRequests(
        [PendingTaskRequest(identifier: "t.a", kind: "appRefresh", earliestBeginDate: soon),
         PendingTaskRequest(identifier: "t.shared", kind: "processing", earliestBeginDate: soon)], removing: [])
      try await b.updatePendingTaskRequests(
        [PendingTaskRequest(identifier: "t.b", kind: "appRefresh", earliestBeginDate: soon),
         PendingTaskRequest(identifier: "t.shared", kind: "processing", earliestBeginDate: soon + 60)], removing: [])
      #expect(try await a.pendingTaskRequests().map(\.identifier) == ["t.a", "t.b", "t.shared"])
      #expect(try await a.pendingTaskRequests().last?.earliestBeginDate == soon + 60)
      try await a.updatePendingTaskRequests([], removing: ["t.a"])
      #expect(try await b.pendingTaskRequests().map(\.identifier) == ["t.b", "t.shared"])
    }
  }

  @Test func test_aURLsPassword_isNeverInAMessage() async throws {
    let base = try #require(PostgresTestServer.url.map { try PostgresURL($0) })
    let withPassword = base.text.replacingOccurrences(of: "://forage@", with: "://forage:s3cret-pw@")
    let wrongDatabase = try PostgresURL(withPassword).replacingDatabase(with: "no_such_database_here")
    let error = try #require(throws: StoreError.self) { _ = try PostgresStore(url: wrongDatabase.text) }
    #expect(!"\(error)".contains("s3cret-pw") && !String(reflecting: error).contains("s3cret-pw"))
    #expect("\(error)".contains("does not exist"), "\(error)")
    #expect(error.kind == .open)
    #expect(StoreLocation.redacted("postgres://u:pw@h:5432/d?sslmode=require&password=x") == "postgres://u@h:5432/d?sslmode=require")
  }

  @Test func test_noServer_saysSo_asAConnectionError() throws {
    let error = try #require(throws: StoreError.self) {
      _ = try PostgresStore(url: "postgres://forage@127.0.0.1:1/forage")
    }
    #expect(error.kind == .connection)
    #expect("\(error)" == "cannot reach the store postgres://forage@127.0.0.1:1/forage: no server is running there, or it refuses connections")
  }
}

extension Range where Bound == Int {
  /// Runs `body` for each element in turn and joins the results.
  func asyncFlatMap<T>(_ body: (Int) async throws -> [T]) async throws -> [T] {
    var out: [T] = []
    for i in self { out += try await body(i) }
    return out
  }
}
#endif
