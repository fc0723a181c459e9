import Foundation
import Testing
@testable import ForageStore

/// `HealthStore` and the health side of commits and completions on every
/// store (issue 29): a crawl that would remove most records, or whose pages
/// lost their selectors, holds them and opens one episode with one
/// `source.unhealthy`; a field whose coverage collapses holds the changes
/// that lose it; a healthy crawl or the user's acceptance ends the episode
/// with one `source.recovered`; a page answering 404 still removes.
@Suite struct HealthConformanceTests {
  /// Routes every change and every source event to "ops".
  struct AllToOps: ChangeRouter {
    func channels(for change: RecordChange, firstCrawl: Bool) -> [String] { firstCrawl ? [] : ["ops"] }
    func channels(forSourceEvent source: String) -> [String] { ["ops"] }
  }

  /// A product of source `s` on page `n`: title and price (nil: none found).
  func product(_ n: Int, price: Int?) -> RecordInput {
    let fields = #"{"price":\#(price.map(String.init) ?? "null"),"title":"P\#(n)"}"#
    return RecordInput(
      source: "s", key: "p\(n)", url: "https://example.com/\(n)", fieldsJSON: fields,
      contentHash: UInt64(bitPattern: Int64(n * 1_000 + (price ?? -1))))
  }

  /// One page of a health crawl: what it answered and gave.
  struct Page {
    var n: Int
    var price: Int?? = .some(nil)
    var status = 200
    var lost = false
    /// No record at all (the record selector matched nothing).
    static func empty(_ n: Int) -> Page { Page(n: n, price: .none) }
    /// A product whose price was not found.
    static func noPrice(_ n: Int) -> Page { Page(n: n, price: .some(nil)) }
  }

  /// Runs one crawl of `s` over `pages` with the default policy and its
  /// extraction outcomes, as a job would commit them.
  @discardableResult
  func healthCrawl(_ store: any Store, _ pages: [Page], oneByOne: Bool = false, at now: Date) async throws
    -> (CommitResult, CrawlCompletion?)
  {
    let crawl = try await store.openCrawl(source: "s", seeds: pages.map { seed($0.n) }, now: now)
    let items = try await claimFrontier(store, crawl.id, limit: 100, at: now)
    var policy = HealthPolicy()
    policy.recordSelector = "div.product"
    policy.fieldSelectors = ["price": ".price", "title": "h1"]
    var commits: [PageCommit] = []
    for page in pages {
      let item = items.first { $0.fingerprint == seed(page.n).fingerprint }!
      let row = PageRecord(url: item.url, fingerprint: item.fingerprint, status: page.status, fetchedAt: now)
      var commit: PageCommit
      if page.status != 200 {
        commit = pageCommit(item, .failed(permanent: true, maxAttempts: 3), page: row, router: AllToOps(), at: now)
      } else if page.lost {
        commit = pageCommit(item, .done, page: row, keepsRecords: true, router: AllToOps(), at: now)
        commit.extraction = PageExtraction(records: 0, matched: false, lost: true)
      } else if case .some(let price) = page.price {
        commit = pageCommit(item, .done, page: row, records: [product(page.n, price: price)], router: AllToOps(), at: now)
        commit.extraction = PageExtraction(
          records: 1, matched: true,
          fields: [
            "title": .init(present: 1),
            "price": price == nil ? .init(missing: 1) : .init(present: 1),
          ])
      } else {
        commit = pageCommit(item, .done, page: row, router: AllToOps(), at: now)
        commit.extraction = PageExtraction(records: 0, matched: false)
      }
      commit.health = policy
      commits.append(commit)
    }
    var result = CommitResult()
    for batch in oneByOne ? commits.map({ [$0] }) : [commits] { result.add(try await commitPages(store, batch)) }
    try await releaseFrontier(store, owner: "a")
    let completion = try await store.completeCrawl(
      crawl.id, maxPages: nil, router: AllToOps(), health: policy, now: now)
    return (result, completion)
  }

  /// Six products with prices, stored by a first (healthy) crawl.
  func sixProducts(_ store: any Store) async throws {
    try await healthCrawl(store, (1...6).map { Page(n: $0, price: $0 * 10) }, at: t0)
  }

  func events(_ store: any Store) async throws -> [SourceEvent.Kind] {
    try await store.notifications(state: nil, limit: 100).reversed().compactMap(\.event?.kind)
  }

  func current(_ store: any Store) async throws -> [StoredRecord] {
    try await store.records(source: "s", afterID: 0, limit: 100).filter { $0.removedAt == nil }
  }

  @Test(arguments: StoreKind.all) func test_issue29_redesign_holdsEveryRemoval_andAlertsOnce(_ kind: StoreKind)
    async throws
  {
    try await withStore(kind) { store in
      try await sixProducts(store)
      let (_, completion) = try await healthCrawl(store, (1...6).map { Page.empty($0) }, at: t0 + 60)
      #expect(completion?.removed.isEmpty == true)
      #expect(completion?.held == 6)
      #expect(completion?.episode?.kind == .removals && completion?.episode?.subject == "div.product")
      #expect(completion?.episode?.before == 6 && completion?.episode?.now == 0)
      #expect(completion?.episode?.examples.count == 3)
      #expect(try await current(store).count == 6)
      #expect(try await store.changes(matching: ChangeQuery(kinds: [.removed])).isEmpty)
      // Still broken a launch later: still held, no second alert.
      let (_, again) = try await healthCrawl(store, (1...6).map { Page.empty($0) }, at: t0 + 120)
      #expect(again?.removed.isEmpty == true && again?.held == 6 && again?.episode == nil)
      #expect(try await events(store) == [.unhealthy])
      let unhealthy = try await store.notifications(state: nil, limit: 10).first { $0.event != nil }
      #expect(unhealthy?.event?.episode.source == "s" && unhealthy?.channel == "ops")
      let episodes = try await store.healthEpisodes(limit: 10)
      #expect(episodes.count == 1 && episodes[0].isOpen && episodes[0].held == 6)
    }
  }

  @Test(arguments: StoreKind.all) func test_issue29_recovery_appliesWhatIsReal_andAlertsOnce(_ kind: StoreKind)
    async throws
  {
    try await withStore(kind) { store in
      try await sixProducts(store)
      try await healthCrawl(store, (1...6).map { Page.empty($0) }, at: t0 + 60)
      // Fixed: five products back as they were, the sixth really gone from its page.
      let (_, completion) = try await healthCrawl(
        store, (1...5).map { Page(n: $0, price: $0 * 10) } + [Page.empty(6)], at: t0 + 120)
      #expect(completion?.removed.map(\.key) == ["p6"])
      #expect(completion?.episode?.resolution == .recovered)
      #expect(try await current(store).map(\.key) == ["p1", "p2", "p3", "p4", "p5"])
      #expect(try await events(store) == [.unhealthy, .recovered])
      let episodes = try await store.healthEpisodes(limit: 10)
      #expect(episodes.count == 1 && !episodes[0].isOpen && episodes[0].held == 0)
    }
  }

  @Test(arguments: StoreKind.all) func test_anEpisode_namesTheCrawlsItStartedAndEndedAt(_ kind: StoreKind)
    async throws
  {
    try await withStore(kind) { store in
      try await sixProducts(store)
      let (_, opened) = try await healthCrawl(store, (1...6).map { Page.empty($0) }, at: t0 + 60)
      try await healthCrawl(store, (1...6).map { Page.empty($0) }, at: t0 + 120)
      let (_, ended) = try await healthCrawl(store, (1...6).map { Page(n: $0, price: $0 * 10) }, at: t0 + 180)
      let crawls = Array(try await store.crawlHealth(source: "s", limit: 10).map(\.crawl).reversed())
      try #require(crawls.count == 4)
      #expect(opened?.episode?.startCrawl == crawls[1] && opened?.episode?.endCrawl == nil)
      #expect(ended?.episode?.startCrawl == crawls[1] && ended?.episode?.endCrawl == crawls[3])
      let stored = try await store.healthEpisodes(limit: 10)
      #expect(stored.map(\.startCrawl) == [crawls[1]] && stored.map(\.endCrawl) == [crawls[3]])
      // The source events carry them too.
      let events = try await store.notifications(state: nil, limit: 10).compactMap(\.event)
      #expect(events.first { $0.kind == .recovered }?.episode.endCrawl == crawls[3])
      #expect(events.first { $0.kind == .unhealthy }?.episode.startCrawl == crawls[1])

      // Opened again and accepted: it ends at the last completed crawl, which the acceptance follows.
      let (_, again) = try await healthCrawl(store, (1...6).map { Page.empty($0) }, at: t0 + 240)
      let last = try #require(try await store.crawlHealth(source: "s", limit: 1).first?.crawl)
      #expect(again?.episode?.startCrawl == last)
      let accepted = try await store.acceptHeldChanges(source: "s", router: AllToOps(), now: t0 + 300)
      #expect(accepted?.episode.endCrawl == last)
      #expect(try await store.healthEpisodes(limit: 10).first { $0.resolution == .accepted }?.endCrawl == last)
    }
  }

  @Test(arguments: StoreKind.all) func test_issue29_pageAnswering404_stillRemoves(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await sixProducts(store)
      let (_, completion) = try await healthCrawl(store, (1...6).map { Page(n: $0, status: 404) }, at: t0 + 60)
      #expect(completion?.removed.count == 6)
      #expect(completion?.held == 0 && completion?.episode == nil)
      #expect(try await current(store).isEmpty)
      #expect(try await events(store).isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_issue29_modestShareGone_isRemoved(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await sixProducts(store)
      let (_, completion) = try await healthCrawl(
        store, (1...4).map { Page(n: $0, price: $0 * 10) } + [Page.empty(5), Page.empty(6)], at: t0 + 60)
      #expect(completion?.removed.map(\.key) == ["p5", "p6"])
      #expect(completion?.episode == nil)
    }
  }

  @Test(arguments: StoreKind.all) func test_issue29_fieldCollapse_holdsTheChangesThatLoseIt(_ kind: StoreKind)
    async throws
  {
    try await withStore(kind) { store in
      try await sixProducts(store)
      let (result, completion) = try await healthCrawl(store, (1...6).map { Page.noPrice($0) }, at: t0 + 60)
      #expect(result.held == 6 && result.changedRecords == 0 && result.changes.isEmpty)
      #expect(completion?.episode?.kind == .field && completion?.episode?.subject == "price (.price)")
      #expect(completion?.episode?.before == 6 && completion?.episode?.now == 0)
      #expect(completion?.episode?.examples.isEmpty == false)
      // The records keep their prices, and were seen (not removed).
      #expect(try await current(store).map(\.fieldsJSON).allSatisfy { !$0.contains("null") })
      #expect(try await events(store) == [.unhealthy])
      #expect(try await store.changes(matching: ChangeQuery(kinds: [.changed])).isEmpty)
    }
  }

  @Test(arguments: StoreKind.all) func test_issue29_oneFieldLossAmongMany_isApplied(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await sixProducts(store)
      // The first page's product lost its price (held at first, the crawl's
      // coverage being 0 of 1), the others kept theirs: applied at completion.
      let (result, completion) = try await healthCrawl(
        store, [Page.noPrice(1)] + (2...6).map { Page(n: $0, price: $0 * 10) }, oneByOne: true, at: t0 + 60)
      #expect(result.held == 1)
      #expect(completion?.episode == nil && completion?.removed.isEmpty == true)
      #expect(completion?.released.map(\.key) == ["p1"])
      let changed = try await store.changes(matching: ChangeQuery(kinds: [.changed]))
      #expect(changed.map(\.key) == ["p1"])
      #expect(try await current(store).first { $0.key == "p1" }?.fieldsJSON.contains("null") == true)
    }
  }

  @Test(arguments: StoreKind.all) func test_issue29_blockPages_keepTheRecords(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await sixProducts(store)
      // One block page among six: kept, nothing held, no alert.
      let (_, one) = try await healthCrawl(
        store, [Page(n: 1, lost: true)] + (2...6).map { Page(n: $0, price: $0 * 10) }, at: t0 + 60)
      #expect(one?.removed.isEmpty == true && one?.episode == nil)
      #expect(try await current(store).count == 6)
      // Every page a block page: kept, and an episode of pages.
      let (_, all) = try await healthCrawl(store, (1...6).map { Page(n: $0, lost: true) }, at: t0 + 120)
      #expect(all?.removed.isEmpty == true && all?.episode?.kind == .pages)
      #expect(try await current(store).count == 6)
      #expect(try await events(store) == [.unhealthy])
    }
  }

  @Test(arguments: StoreKind.all) func test_issue29_accept_appliesTheHeldRemovals(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await sixProducts(store)
      try await healthCrawl(store, (1...6).map { Page.empty($0) }, at: t0 + 60)
      #expect(try await store.acceptHeldChanges(source: "other", router: AllToOps(), now: t0 + 90) == nil)
      let accepted = try await store.acceptHeldChanges(source: "s", router: AllToOps(), now: t0 + 90)
      #expect(accepted?.changes.map(\.kind) == Array(repeating: .removed, count: 6))
      #expect(accepted?.episode.resolution == .accepted)
      #expect(accepted?.notifications == 7)
      #expect(try await current(store).isEmpty)
      #expect(try await events(store) == [.unhealthy, .recovered])
      #expect(try await store.acceptHeldChanges(source: "s", router: AllToOps(), now: t0 + 91) == nil)
    }
  }

  @Test(arguments: StoreKind.all) func test_issue29_accept_appliesTheHeldFieldLosses(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      try await sixProducts(store)
      try await healthCrawl(store, (1...6).map { Page.noPrice($0) }, at: t0 + 60)
      let accepted = try await store.acceptHeldChanges(source: "s", router: nil, now: t0 + 90)
      #expect(accepted?.changes.map(\.kind) == Array(repeating: .changed, count: 6))
      #expect(try await current(store).allSatisfy { $0.fieldsJSON.contains(#""price":null"#) })
    }
  }
}
