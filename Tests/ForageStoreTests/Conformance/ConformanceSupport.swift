import Foundation
import Testing
@testable import ForageStore
#if Postgres
@testable import ForagePostgres
#endif

// The store conformance suite (this folder): one file per piece of `Store`
// (Store+Pieces.swift), every test run on each of `StoreKind.all` and talking
// to the store only through the protocol (`any Store`), so the same code
// checks SQLite and PostgreSQL.
//
// Every call of a claim or lease requirement (claim, renew, release, launch
// election, tickets) and every construction of a `PageCommit` goes through
// the helpers below, so that a change of those requirements (another commit
// type) is adapted here once. A lease is given as how long it lasts (seconds)
// from the instant of the call on the test's clock; each helper makes the
// `Lease`.

/// Runs `body` with two stores of `kind` on one new, empty store (two
/// processes on one SQLite file, two workers on one PostgreSQL database,
/// whose leases follow the callers' virtual clock as `withStore`'s do).
/// Spell the closure's signature out (`{ (a: any Store, b: any Store) async throws in`):
/// a body whose every `try` is inside `#expect` does not compile otherwise
/// ("errors thrown from here are not handled").
@discardableResult
func withTwoStores<T>(_ kind: StoreKind, _ body: (any Store, any Store) async throws -> T) async throws -> T {
  switch kind {
  case .sqlite:
    let temp = TempStorePath()
    return try await body(try SQLiteStore(path: temp.path), try SQLiteStore(path: temp.path))
  case .postgres:
    #if Postgres
    return try await PostgresTestServer.withDatabase { url in
      let a = try PostgresStore(url: url, leaseClock: .caller)
      let b = try PostgresStore(url: url, leaseClock: .caller)
      do {
        let value = try await body(a, b)
        try await a.close()
        try await b.close()
        return value
      } catch {
        try? await a.close()
        try? await b.close()
        throw error
      }
    }
    #else
    throw PostgresTestServer.Missing()
    #endif
  }
}

// MARK: Frontier claims

/// Claims up to `limit` entries of `crawl` for `owner` at `now`, leased for `lease` seconds.
func claimFrontier(
  _ store: any Store, _ crawl: Int64, limit: Int, owner: String = "a", lease: TimeInterval = 60, at now: Date = t0
) async throws -> [FrontierItem] {
  try await store.claim(crawl: crawl, limit: limit, lease: makeLease(owner, lease, at: now))
}

/// `owner`'s lease of `seconds` from `now`.
func makeLease(_ owner: String, _ seconds: TimeInterval, at now: Date) -> Lease {
  Lease(owner: owner, for: .seconds(seconds), at: now)
}

/// Returns `owner`'s claimed frontier entries to the queue (every owner's when nil).
func releaseFrontier(_ store: any Store, owner: String?) async throws {
  try await store.release(.frontier, owner: owner)
}

/// Extends `owner`'s frontier leases to `lease` seconds after `now`; how many it holds.
func renewFrontier(_ store: any Store, owner: String, lease: TimeInterval, at now: Date) async throws -> Int {
  try await store.renew(.frontier, lease: makeLease(owner, lease, at: now))
}

/// Opens a crawl of `source` seeded with `count` seeds and claims them all at `t0`.
func claimedSeeds(_ store: any Store, _ count: Int, source: String = "s") async throws -> [FrontierItem] {
  let crawl = try await store.openCrawl(source: source, seeds: (1...count).map { seed($0) }, now: t0)
  return try await claimFrontier(store, crawl.id, limit: count, at: t0)
}

// MARK: Commits and completion

/// What to write for a claimed entry; each parameter has `PageCommit`'s meaning.
func pageCommit(
  _ item: FrontierItem, _ outcome: FrontierOutcome = .done, page: PageRecord? = nil, records: [RecordInput] = [],
  discovered: [FrontierSeed] = [], maxPages: Int? = nil, run: Int64? = nil, keepsRecords: Bool = false,
  router: (any ChangeRouter)? = nil, at now: Date = t0
) -> PageCommit {
  var commit = PageCommit(
    item: item, outcome: outcome, page: page, records: records, discovered: discovered, maxPages: maxPages, run: run,
    now: now)
  commit.keepsRecords = keepsRecords
  commit.router = router
  return commit
}

/// Commits `pages` in one batch.
@discardableResult
func commitPages(_ store: any Store, _ pages: [PageCommit]) async throws -> CommitResult {
  try await store.commit(pages)
}

/// Completes `crawl` at `now` when it is exhausted (nil while it is not).
@discardableResult
func completeCrawl(
  _ store: any Store, _ crawl: Int64, maxPages: Int? = nil, router: (any ChangeRouter)? = nil, at now: Date
) async throws -> CrawlCompletion? {
  try await store.completeCrawl(crawl, maxPages: maxPages, router: router, now: now)
}

/// Routes every change of the sources it knows to one channel, and records
/// what it was asked.
final class RecordingRouter: ChangeRouter, @unchecked Sendable {
  // @unchecked: `asked` is only touched under `lock`.
  let lock = NSLock()
  var asked: [(kind: ChangeKind, key: String, firstCrawl: Bool)] = []
  let channels: [String]
  init(channels: [String] = ["ops"]) { self.channels = channels }
  func channels(for change: RecordChange, firstCrawl: Bool) -> [String] {
    lock.lock()
    asked.append((change.kind, change.key, firstCrawl))
    lock.unlock()
    return channels
  }
}

/// One page of a crawl: its seed number, what it gave, how it ended.
struct PagePlan {
  var n: Int
  var records: [RecordInput] = []
  var outcome: FrontierOutcome = .done
  var keepsRecords = false
}

/// Runs one crawl of source `s` over `pages` (all seeds at once), commits
/// each page and tries to complete it; returns the commits' result and the
/// completion (nil when the crawl is not complete).
@discardableResult
func crawl(
  _ store: any Store, _ pages: [PagePlan], seeds: [Int]? = nil, maxPages: Int? = nil,
  router: (any ChangeRouter)? = nil, at now: Date
) async throws -> (CommitResult, CrawlCompletion?) {
  let crawl = try await store.openCrawl(source: "s", seeds: (seeds ?? pages.map(\.n)).map { seed($0) }, now: now)
  let items = try await claimFrontier(store, crawl.id, limit: 100, at: now)
  var commits: [PageCommit] = []
  for page in pages {
    guard let item = items.first(where: { $0.fingerprint == seed(page.n).fingerprint }) else { continue }
    // A page that gave records was fetched: it has a row (as in a real crawl).
    let row = page.records.isEmpty
      ? nil : PageRecord(url: item.url, fingerprint: item.fingerprint, status: 200, fetchedAt: now)
    commits.append(
      pageCommit(
        item, page.outcome, page: row, records: page.records, keepsRecords: page.keepsRecords, router: router, at: now))
  }
  let result = try await commitPages(store, commits)
  try await releaseFrontier(store, owner: "a")
  let completion = try await completeCrawl(store, crawl.id, maxPages: maxPages, router: router, at: now)
  return (result, completion)
}

/// A record of source `s` with a price, on page `page`.
func rec(_ key: String, _ price: Int, page: Int = 1) -> RecordInput {
  RecordInput(
    source: "s", key: key, url: "https://example.com/\(page)", fieldsJSON: #"{"price":\#(price)}"#,
    contentHash: UInt64(price) &* 31 &+ UInt64(key.utf8.first ?? 0))
}

// MARK: Outbox claims

/// Claims up to `limit` due notifications for `owner` at `now`, leased for `lease` seconds.
func claimOutbox(
  _ store: any Store, limit: Int = 10, owner: String, lease: TimeInterval = 100, at now: Date
) async throws -> [OutboxNotification] {
  try await store.claimNotifications(limit: limit, lease: makeLease(owner, lease, at: now))
}

/// Releases `owner`'s claimed notifications (every owner's when nil).
func releaseOutbox(_ store: any Store, owner: String?) async throws {
  try await store.release(.notification, owner: owner)
}

// MARK: Download claims

/// Claims downloads for `owner` at `now`, leased for `lease` seconds; the
/// other parameters have `claimDownloads`' meaning.
func claimDownloads(
  _ store: any Store, ids: [Int64]? = nil, after afterID: Int64 = 0, limit: Int = 10, maxRemaining: Int? = nil,
  owner: String = "a", lease: TimeInterval = 60, at now: Date = t0
) async throws -> [DownloadEntry] {
  try await store.claimDownloads(
    ids: ids, afterID: afterID, limit: limit, maxRemaining: maxRemaining,
    lease: makeLease(owner, lease, at: now))
}

/// Writes a claimed download as `owner`, keeping the claim `lease` more
/// seconds, or ending it when `lease` is nil; false when the claim was lost.
func updateClaimedDownload(
  _ store: any Store, _ entry: DownloadEntry, owner: String = "a", lease: TimeInterval?, at now: Date = t0
) async throws -> Bool {
  try await store.updateDownload(
    entry, lease: makeLease(owner, lease ?? 0, at: now), releasing: lease == nil)
}

/// Returns claimed downloads to the queue (see `release(_:owner:ids:)`).
func releaseDownloads(_ store: any Store, owner: String?, ids: [Int64]? = nil) async throws {
  try await store.release(.download, owner: owner, ids: ids)
}

// MARK: Launches, robots.txt and host tickets

/// Asks whether `owner` may run `task`'s launch due at `due`, holding it `lease` seconds past `due`.
func electLaunch(_ store: any Store, task: String, due: Date, owner: String, lease: TimeInterval) async throws -> Bool {
  try await store.claimLaunch(task: task, lease: makeLease(owner, lease, at: due))
}

/// Asks whether this process should fetch `origin`'s robots.txt at `now`, holding the task for `lease`.
func electRobotsFetch(
  _ store: any Store, origin: String, owner: String = "a", lease: Duration = .seconds(60), at now: Date = Date()
) async throws -> Bool {
  try await store.claimRobotsFetch(origin: origin, lease: Lease(owner: owner, for: lease, at: now))
}

/// Takes one of `host`'s request slots for `owner` (nil when it is busy).
func takeHostTicket(
  _ store: any Store, host: String, owner: String, concurrency: Int, delay: Duration = .zero,
  lease: Duration = .seconds(60)
) async throws -> Int64? {
  try await store.takeHostTickets(
    host: host, concurrency: concurrency, delay: delay, count: 1, lease: Lease(owner: owner, for: lease, at: Date()),
    returning: []
  ).first
}

/// Gives `owner`'s host ticket back.
func returnHostTicket(_ store: any Store, _ ticket: Int64, owner: String) async throws {
  try await store.release(.hostTicket, owner: owner, ids: [ticket])
}
