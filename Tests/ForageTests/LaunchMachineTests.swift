import Testing
import ForageStore
@testable import Forage

/// The launch's decisions, without sockets or clocks (issue 10).
@Suite struct LaunchMachineTests {
  typealias Machine = LaunchMachine<String>

  static func items(_ lane: Int, _ range: ClosedRange<Int>) -> [FrontierItem] {
    range.map { FrontierItem(id: Int64(lane * 100_000 + $0), crawl: Int64(lane), url: "u\(lane)-\($0)", fingerprint: UInt64($0), depth: 0, attempts: 0) }
  }

  static func fetches(_ actions: [Machine.Action]) -> [(lane: Int, id: Int64)] {
    actions.compactMap { if case .fetch(let lane, let item) = $0 { return (lane, item.id) } else { return nil } }
  }

  static func claims(_ actions: [Machine.Action]) -> [Int] {
    actions.compactMap { if case .claim(let lane, _, _) = $0 { return lane } else { return nil } }
  }

  static func commits(_ actions: [Machine.Action]) -> [[String]] {
    actions.compactMap { if case .commit(let batch) = $0 { return batch.map(\.page) } else { return nil } }
  }

  @Test func test_start_claimsForEverySource() {
    var m = Machine(lanes: [.init(cap: 4), .init(cap: 2), .init(cap: 1)], concurrency: 8, commitBatch: 10)
    #expect(Self.claims(m.start()) == [0, 1, 2])
  }

  @Test func test_aOnePageSource_isNotQueuedBehindALargeCrawl() {
    var m = Machine(lanes: [.init(cap: 8), .init(cap: 8)], concurrency: 4, commitBatch: 100)
    _ = m.start()
    let first = Self.fetches(m.handle(.claimed(lane: 0, items: Self.items(0, 1...500), generation: 0)))
    #expect(first.count == 4 && first.allSatisfy { $0.lane == 0 })
    // The small source's claim comes back while the pool is full…
    #expect(Self.fetches(m.handle(.claimed(lane: 1, items: Self.items(1, 1...1), generation: 0))).isEmpty)
    // …and takes the first slot that frees, ahead of the big crawl's queue.
    let next = Self.fetches(m.handle(.fetched(lane: 0, page: "a")))
    #expect(next.map(\.lane) == [1])
  }

  @Test func test_freeSlots_goToTheSourceWithFewestInFlight_inTurn() {
    var m = Machine(lanes: [.init(cap: 8), .init(cap: 8), .init(cap: 8)], concurrency: 6, commitBatch: 100)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...50), generation: 0))
    _ = m.handle(.claimed(lane: 1, items: Self.items(1, 1...50), generation: 0))
    _ = m.handle(.claimed(lane: 2, items: Self.items(2, 1...50), generation: 0))
    // Lane 0 took the whole pool before the others had claimed; as its
    // fetches finish, the slots go to lanes 1 and 2 until the shares are even.
    var served: [Int] = []
    for _ in 0..<6 { served += Self.fetches(m.handle(.fetched(lane: 0, page: "p"))).map(\.lane) }
    #expect(served.filter { $0 == 1 }.count == 2 || served.filter { $0 == 1 }.count == 3)
    let inFlight = (0..<3).map { m.lanes[$0].fetching }
    #expect(inFlight.max()! - inFlight.min()! <= 1, "\(inFlight)")
  }

  @Test func test_criticalSources_winTies_butDoNotLockOthersOut() {
    var m = Machine(lanes: [.init(cap: 4), .init(cap: 4, critical: true)], concurrency: 1, commitBatch: 100)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...10), generation: 0))
    // Lane 0 got the only slot before lane 1 had anything; once it frees,
    // both have none in flight and the critical one wins the tie.
    #expect(Self.fetches(m.handle(.claimed(lane: 1, items: Self.items(1, 1...10), generation: 0))).isEmpty)
    #expect(Self.fetches(m.handle(.fetched(lane: 0, page: "p"))).map(\.lane) == [1])
    // With two slots, each has one: the other source is not locked out.
    var two = Machine(lanes: [.init(cap: 4), .init(cap: 4, critical: true)], concurrency: 2, commitBatch: 100)
    _ = two.start()
    _ = two.handle(.claimed(lane: 1, items: Self.items(1, 1...10), generation: 0))
    _ = two.handle(.claimed(lane: 0, items: Self.items(0, 1...10), generation: 0))
    #expect(two.lanes[1].fetching == 2)
    #expect(Self.fetches(two.handle(.fetched(lane: 1, page: "p"))).map(\.lane) == [0])
    #expect(two.lanes[0].fetching == 1 && two.lanes[1].fetching == 1)
  }

  @Test func test_aSourcesOwnCap_holds() {
    var m = Machine(lanes: [.init(cap: 1), .init(cap: 8)], concurrency: 8, commitBatch: 100)
    _ = m.start()
    let f = Self.fetches(m.handle(.claimed(lane: 0, items: Self.items(0, 1...20), generation: 0)))
    #expect(f.count == 1)
    #expect(m.lanes[0].fetching == 1 && m.fetching == 1)
  }

  @Test func test_commits_inBatches_orAtTheTick_orWhenNothingElseMoves() {
    var m = Machine(lanes: [.init(cap: 8)], concurrency: 8, commitBatch: 3)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...100), generation: 0))
    // The first page schedules a tick; three make a batch.
    #expect(m.handle(.fetched(lane: 0, page: "1")).contains { if case .scheduleTick = $0 { true } else { false } })
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "2"))).isEmpty)
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "3"))) == [["1", "2", "3"]])
    // One commit at a time: pages wait for the running one.
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "4"))).isEmpty)
    _ = m.handle(.tick)
    #expect(Self.commits(m.handle(.committed(linksAdded: 0))) == [["4"]])
    _ = m.handle(.committed(linksAdded: 0))
    // A lone page is committed at its tick.
    _ = m.handle(.fetched(lane: 0, page: "5"))
    #expect(Self.commits(m.handle(.tick)) == [["5"]])
  }

  /// A source whose frontier ran dry (a chain of pages, one link each) gets
  /// its pages committed as they come, while another source keeps the pool
  /// busy and its own pages would fill a batch only much later.
  @Test func test_aSourceWhoseFrontierRanDry_hasItsPagesCommittedAtOnce() {
    var m = Machine(lanes: [.init(cap: 4), .init(cap: 1)], concurrency: 5, commitBatch: 100)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...50), generation: 0))
    _ = m.handle(.claimed(lane: 1, items: Self.items(1, 1...1), generation: 0))
    // The busy source's pages wait for their batch…
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "a1"))).isEmpty)
    // …and so does the chain's page while its next claim may still find URLs.
    #expect(Self.commits(m.handle(.fetched(lane: 1, page: "c1"))).isEmpty)
    let empty = m.handle(.claimed(lane: 1, items: [], generation: 0))
    #expect(Self.commits(empty) == [["a1", "c1"]], "its frontier is dry: commit now")
    // The commit adds the chain's next link: it claims again.
    #expect(Self.claims(m.handle(.committed(linksAdded: 1))) == [1])
    // The busy source alone never commits early.
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "a2"))).isEmpty)
  }

  @Test func test_anEmptyClaimThatRacedWithACommit_isNotTheEnd() {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 1)
    _ = m.start()  // claim, generation 0
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: 0))
    _ = m.handle(.fetched(lane: 0, page: "seed"))  // commit of the seed page
    // Another claim goes out (generation 0) while the commit adds links…
    let after = m.handle(.committed(linksAdded: 5))
    _ = after
    // …and comes back empty, but a commit finished since it started.
    let again = m.handle(.claimed(lane: 0, items: [], generation: 0))
    #expect(m.lanes[0].mayHaveMore)
    #expect(Self.claims(again) == [0])
    // An empty claim started after the last commit is the end.
    _ = m.handle(.claimed(lane: 0, items: [], generation: m.commits))
    #expect(m.lanes[0].isExhausted)
    #expect(m.isDone)
  }

  @Test func test_sourcesFinishAtDifferentTimes() {
    var m = Machine(lanes: [.init(cap: 2), .init(cap: 2)], concurrency: 4, commitBatch: 1)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: [], generation: 0))
    #expect(m.lanes[0].isExhausted)
    #expect(!m.isDone)
    _ = m.handle(.claimed(lane: 1, items: Self.items(1, 1...2), generation: 0))
    _ = m.handle(.fetched(lane: 1, page: "a"))
    _ = m.handle(.committed(linksAdded: 0))
    _ = m.handle(.fetched(lane: 1, page: "b"))
    _ = m.handle(.claimed(lane: 1, items: [], generation: m.commits))
    #expect(!m.isDone, "a page is still being committed")
    _ = m.handle(.committed(linksAdded: 0))
    #expect(m.lanes[1].isExhausted && m.isDone)
  }

  @Test func test_stopRequest_startsNothing_givesAGrace_thenCancels_andCommitsWhatCameBack() {
    var m = Machine(lanes: [.init(cap: 4)], concurrency: 4, commitBatch: 100)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...50), generation: 0))
    #expect(m.fetching == 4)
    let stop = m.handle(.stopRequested)
    #expect(stop.contains { if case .startGrace = $0 { true } else { false } })
    #expect(Self.fetches(stop).isEmpty && Self.claims(stop).isEmpty)
    #expect(m.stoppedOnRequest)
    // A page that lands is committed at once, and frees no new fetch.
    let landed = m.handle(.fetched(lane: 0, page: "a"))
    #expect(Self.commits(landed) == [["a"]] && Self.fetches(landed).isEmpty)
    // The grace ends: the rest is cancelled; their (deferred) pages still commit.
    #expect(m.handle(.graceOver).contains { if case .cancelFetches = $0 { true } else { false } })
    for p in ["b", "c", "d"] { _ = m.handle(.fetched(lane: 0, page: p)) }
    #expect(!m.isDone)
    #expect(Self.commits(m.handle(.committed(linksAdded: 0))) == [["b", "c", "d"]])
    _ = m.handle(.committed(linksAdded: 0))
    #expect(m.isDone)
  }

  @Test func test_deadline_stopsStarting_withoutAStopRequest() {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 100)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...10), generation: 0))
    let at = m.handle(.stopAt)
    #expect(at.isEmpty)
    #expect(!m.stoppedOnRequest && m.stopping)
    // A stop request after the deadline changes nothing.
    #expect(m.handle(.stopRequested).isEmpty)
    #expect(!m.stoppedOnRequest)
  }

  @Test func test_anEntryAlreadyTriedInThisLaunch_isNotFetchedAgain() {
    var m = Machine(lanes: [.init(cap: 1)], concurrency: 1, commitBatch: 1)
    _ = m.start()
    let first = Self.fetches(m.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: 0)))
    #expect(first.count == 1)
    _ = m.handle(.fetched(lane: 0, page: "failed"))
    // The failed entry went back to the queue and is claimed again: skipped.
    let again = m.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: m.commits))
    #expect(Self.fetches(again).isEmpty)
  }
}
