import Testing
import ForageStore
@testable import Forage

/// The launch's decisions, without sockets or clocks (issue 10).
@Suite struct LaunchMachineTests {
  /// A page as the machine sees it: a name, counted as fetched.
  struct TestPage: LaunchPage, ExpressibleByStringLiteral {
    var name: String
    init(stringLiteral name: String) { self.name = name }
    func count(into summary: inout RunSummary) { summary.pagesFetched += 1 }
    func count(into source: inout SourceRunSummary) { source.pagesFetched += 1 }
  }

  typealias Machine = LaunchMachine<TestPage>

  static func items(_ lane: Int, _ range: ClosedRange<Int>) -> [FrontierItem] {
    range.map { FrontierItem(id: Int64(lane * 100_000 + $0), crawl: Int64(lane), url: "u\(lane)-\($0)", fingerprint: UInt64($0), depth: 0, attempts: 0) }
  }

  static func fetches(_ actions: [Machine.Action]) -> [(lane: Int, id: Int64)] {
    actions.compactMap { if case .fetch(let lane, let item) = $0 { return (lane, item.id) } else { return nil } }
  }

  static func claims(_ actions: [Machine.Action]) -> [Int] {
    actions.compactMap { if case .claim(let lane, _, _) = $0 { return lane } else { return nil } }
  }

  static func completes(_ actions: [Machine.Action]) -> [Int] {
    actions.compactMap { if case .complete(let lane) = $0 { return lane } else { return nil } }
  }

  static func finish(_ actions: [Machine.Action]) -> RunOutcome? {
    actions.lazy.compactMap { if case .finish(let outcome) = $0 { return outcome } else { return nil } }.first
  }

  static func commits(_ actions: [Machine.Action]) -> [[String]] {
    actions.compactMap { if case .commit(let batch) = $0 { return batch.map(\.page.name) } else { return nil } }
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
    #expect(m.handle(.fetched(lane: 0, page: "1")).contains { if case .wait(.commitInterval) = $0 { true } else { false } })
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "2"))).isEmpty)
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "3"))) == [["1", "2", "3"]])
    // One commit at a time: pages wait for the running one.
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "4"))).isEmpty)
    _ = m.handle(.tick)
    #expect(Self.commits(m.handle(.committed(CommitCounts(linksAdded: 0)))) == [["4"]])
    _ = m.handle(.committed(CommitCounts(linksAdded: 0)))
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
    #expect(Self.claims(m.handle(.committed(CommitCounts(linksAdded: 1)))) == [1])
    // The busy source alone never commits early.
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "a2"))).isEmpty)
  }

  @Test func test_anEmptyClaimThatRacedWithACommit_isNotTheEnd() {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 1)
    _ = m.start()  // claim, generation 0
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: 0))
    _ = m.handle(.fetched(lane: 0, page: "seed"))  // commit of the seed page
    // Another claim goes out (generation 0) while the commit adds links…
    let after = m.handle(.committed(CommitCounts(linksAdded: 5)))
    _ = after
    // …and comes back empty, but a commit finished since it started.
    let again = m.handle(.claimed(lane: 0, items: [], generation: 0))
    #expect(m.lanes[0].mayHaveMore)
    #expect(Self.claims(again) == [0])
    // An empty claim started after the last commit is the end: its crawl
    // is completed, then the launch finishes.
    #expect(Self.completes(m.handle(.claimed(lane: 0, items: [], generation: m.commits))) == [0])
    #expect(m.lanes[0].isExhausted)
    #expect(!m.isDone)
    #expect(Self.finish(m.handle(.crawlCompleted(lane: 0, CompletionCounts()))) == .completed)
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
    _ = m.handle(.committed(CommitCounts(linksAdded: 0)))
    _ = m.handle(.fetched(lane: 1, page: "b"))
    _ = m.handle(.claimed(lane: 1, items: [], generation: m.commits))
    #expect(!m.isDone, "a page is still being committed")
    #expect(Self.completes(m.handle(.committed(CommitCounts(linksAdded: 0)))) == [0, 1])
    #expect(m.lanes[1].isExhausted && !m.isDone)
    _ = m.handle(.crawlCompleted(lane: 0, nil))
    // No stop: a launch whose sources ran dry completed, whatever the
    // store's completions said.
    #expect(Self.finish(m.handle(.crawlCompleted(lane: 1, CompletionCounts()))) == .completed)
  }

  @Test func test_stopRequest_startsNothing_givesAGrace_thenCancels_andCommitsWhatCameBack() {
    var m = Machine(lanes: [.init(cap: 4)], concurrency: 4, commitBatch: 100)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...50), generation: 0))
    #expect(m.fetching == 4)
    let stop = m.handle(.stopRequested)
    #expect(stop.contains { if case .wait(.grace) = $0 { true } else { false } })
    #expect(Self.fetches(stop).isEmpty && Self.claims(stop).isEmpty)
    #expect(m.stoppedOnRequest)
    // A page that lands is committed at once, and frees no new fetch.
    let landed = m.handle(.fetched(lane: 0, page: "a"))
    #expect(Self.commits(landed) == [["a"]] && Self.fetches(landed).isEmpty)
    // The grace ends: the rest is cancelled; their (deferred) pages still commit.
    #expect(m.handle(.graceOver).contains { if case .cancelFetches = $0 { true } else { false } })
    for p: TestPage in ["b", "c", "d"] { _ = m.handle(.fetched(lane: 0, page: p)) }
    #expect(!m.isDone)
    #expect(Self.commits(m.handle(.committed(CommitCounts(linksAdded: 0)))) == [["b", "c", "d"]])
    _ = m.handle(.committed(CommitCounts(linksAdded: 0)))
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

  // MARK: Issue 28: phases, the fleet wait, cancellation, the tally

  /// The type's doc example, line for line.
  @Test func test_theDocExample_runs() {
    let items = Self.items(0, 1...10)
    let page: TestPage = "p"
    var machine = LaunchMachine<TestPage>(lanes: [.init(cap: 4)], concurrency: 8, commitBatch: 256)
    var actions = machine.start()  // [.claim(lane: 0, limit: 32, generation: 0)]
    guard case .claim(0, 32, 0) = actions.first, actions.count == 1 else {
      Issue.record("\(actions)")
      return
    }
    // perform each action; feed back what it returned:
    actions = machine.handle(.claimed(lane: 0, items: items, generation: 0))  // 4 .fetch: the cap
    #expect(Self.fetches(actions).count == 4)
    actions = machine.handle(.fetched(lane: 0, page: page))  // the next .fetch, a .wait(.commitInterval)
    #expect(Self.fetches(actions).count == 1)
    #expect(actions.contains { if case .wait(.commitInterval) = $0 { true } else { false } })
  }

  /// A fleet's lane sends its next claim as soon as less than a whole claim
  /// is ready, so that it is back before the queue runs dry (a far
  /// database's round trip starved the fetches when it went out at half a
  /// claim, as one process's lanes still do).
  @Test func test_issue27_aClaimGoesOutAhead_whenLessThanItsClaimAheadIsReady() {
    var m = Machine(lanes: [.init(cap: 2, claimSize: 8, claimAhead: 8)], concurrency: 2, commitBatch: 100)
    _ = m.start()
    // Ten claimed, two started: eight ready, a whole claim; none goes out.
    let first = m.handle(.claimed(lane: 0, items: Self.items(0, 1...10), generation: 0))
    #expect(Self.fetches(first).count == 2 && Self.claims(first).isEmpty)
    // One more started: seven ready, less than a claim: the next one goes out, once.
    #expect(Self.claims(m.handle(.fetched(lane: 0, page: "a"))) == [0])
    #expect(Self.claims(m.handle(.fetched(lane: 0, page: "b"))).isEmpty)
    // By default, at half a claim: four of eight ready is not yet below it.
    var half = Machine(lanes: [.init(cap: 2, claimSize: 8)], concurrency: 2, commitBatch: 100)
    _ = half.start()
    #expect(Self.claims(half.handle(.claimed(lane: 0, items: Self.items(0, 1...6), generation: 0))).isEmpty)
    #expect(Self.claims(half.handle(.fetched(lane: 0, page: "a"))) == [0])
  }

  /// Issue 27: after a claim that brought less than it asked for (a thin
  /// frontier), a fleet's lane claims again only when fewer than its
  /// `thinClaimAhead` are ready, not at once; after a full claim, at its
  /// `claimAhead` again.
  @Test func test_issue27_afterAThinClaim_theNextWaitsUntilFewAreReady() {
    var m = Machine(
      lanes: [.init(cap: 2, claimSize: 8, claimAhead: 8, thinClaimAhead: 4)], concurrency: 2, commitBatch: 100)
    _ = m.start()
    // Seven of eight: thin. Two start, five ready: below a claim, not below four.
    let thin = m.handle(.claimed(lane: 0, items: Self.items(0, 1...7), generation: 0))
    #expect(Self.fetches(thin).count == 2 && Self.claims(thin).isEmpty, "\(thin)")
    #expect(Self.claims(m.handle(.fetched(lane: 0, page: "a"))).isEmpty)  // four ready
    #expect(Self.claims(m.handle(.fetched(lane: 0, page: "b"))) == [0])  // three ready
    // That claim is full: the next goes out below a whole claim again.
    let full = m.handle(.claimed(lane: 0, items: Self.items(0, 11...18), generation: 0))
    #expect(Self.claims(full).isEmpty)  // eleven ready
    for page in ["c", "d", "e"] {  // ten, nine, eight ready
      #expect(Self.claims(m.handle(.fetched(lane: 0, page: TestPage(stringLiteral: page)))).isEmpty)
    }
    #expect(Self.claims(m.handle(.fetched(lane: 0, page: "f"))) == [0])  // seven ready
    // Without a thin threshold (one process), a thin claim changes nothing.
    var one = Machine(lanes: [.init(cap: 2, claimSize: 8, claimAhead: 8)], concurrency: 2, commitBatch: 100)
    _ = one.start()
    #expect(Self.claims(one.handle(.claimed(lane: 0, items: Self.items(0, 1...7), generation: 0))) == [0])
  }

  @Test func test_issue28_phases_startCrawlFinishAndEnd() {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 10)
    #expect(m.phase == .starting)
    _ = m.start()
    #expect(m.phase == .crawling)
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: 0))  // and a claim ahead
    _ = m.handle(.fetched(lane: 0, page: "a"))  // nothing in flight: committed at once
    _ = m.handle(.committed(CommitCounts()))
    // The claim ahead raced with that commit: its empty answer is not the end.
    #expect(Self.claims(m.handle(.claimed(lane: 0, items: [], generation: 0))) == [0])
    #expect(m.phase == .crawling)
    // The next one is: nothing in flight, the frontier dry, so the crawl is
    // completed, then the launch ends.
    let end = m.handle(.claimed(lane: 0, items: [], generation: 1))
    #expect(Self.completes(end) == [0])
    #expect(m.phase == .finishing(stoppedBy: nil, remaining: 1))
    #expect(Self.finish(m.handle(.crawlCompleted(lane: 0, CompletionCounts(removed: 2)))) == .completed)
    #expect(m.phase == .done(.completed, stoppedBy: nil))
    #expect(m.tally.totals.completedSources == ["0"] && m.tally.totals.recordsRemoved == 2)
    #expect(m.tally.totals.pagesFetched == 1)
    // Nothing starts after the end.
    #expect(m.handle(.tick).isEmpty && m.handle(.stopAt).isEmpty && m.start().isEmpty)
  }

  @Test func test_issue28_deadline_drains_thenEndsOnTheBudget() {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 10)
    _ = m.start()
    // Enough claimed that no claim goes out ahead.
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...40), generation: 0))
    #expect(m.handle(.stopAt).isEmpty)
    #expect(m.phase == .draining(.deadline))
    // The two pages in flight land and are committed, one commit at a time;
    // the crawl has URLs left, so no completion is tried.
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "a"))) == [["a"]])
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "b"))).isEmpty)
    #expect(Self.commits(m.handle(.committed(CommitCounts()))) == [["b"]])
    #expect(m.phase == .draining(.deadline))
    let end = m.handle(.committed(CommitCounts()))
    #expect(Self.completes(end).isEmpty)
    #expect(Self.finish(end) == .budget)
    #expect(m.phase == .done(.budget, stoppedBy: .deadline))
    #expect(m.tally.totals.pagesFetched == 2)
  }

  @Test func test_issue28_cancellationMidCrawl_stopsAsTheDeadline_andCommitsWhatCameBack() {
    var m = Machine(lanes: [.init(cap: 3), .init(cap: 3)], concurrency: 4, commitBatch: 100)
    _ = m.start()
    // Enough claimed that no claim goes out ahead.
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...40), generation: 0))
    _ = m.handle(.claimed(lane: 1, items: Self.items(1, 1...40), generation: 0))
    _ = m.handle(.fetched(lane: 0, page: "a"))  // its slot goes to lane 1
    #expect(m.fetching == 4 && m.lanes[0].fetching == 2)
    let cancelled = m.handle(.cancelled)
    #expect(m.phase == .draining(.cancellation))
    #expect(!m.stoppedOnRequest && m.stopping)
    // No fetch, no claim, no grace of its own; the waiting page is committed at once.
    #expect(Self.fetches(cancelled).isEmpty && Self.claims(cancelled).isEmpty)
    #expect(!cancelled.contains { if case .wait = $0 { true } else { false } })
    #expect(Self.commits(cancelled) == [["a"]])
    // A second cancellation, a stop request, the deadline: nothing changes.
    #expect(m.handle(.cancelled).isEmpty && m.handle(.stopRequested).isEmpty && m.handle(.stopAt).isEmpty)
    #expect(m.phase == .draining(.cancellation))
    // The fetches in flight come back (deferred) and are committed.
    for (lane, page) in [(0, "b"), (0, "c"), (1, "d"), (1, "e")] { _ = m.handle(.fetched(lane: lane, page: .init(stringLiteral: page))) }
    #expect(Self.commits(m.handle(.committed(CommitCounts()))) == [["b", "c", "d", "e"]])
    #expect(Self.finish(m.handle(.committed(CommitCounts()))) == .budget)
    #expect(m.tally.totals.pagesFetched == 5)
  }

  /// A fleet's worker whose frontier is empty while others hold claims
  /// waits for them, then looks again (one of them may die and its URLs
  /// come back); the generation of its first empty claim is kept.
  @Test func test_issue28_fleet_anEmptyClaimWhileOthersHoldSome_waits_thenClaimsAgain() {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 10)
    _ = m.start()
    let wait = m.handle(.claimed(lane: 0, items: [], generation: 0, fleet: FrontierCounts(queued: 0, claimed: 3)))
    #expect(wait.count == 1)
    #expect(wait.contains { if case .wait(.fleet(lane: 0)) = $0 { true } else { false } })
    #expect(m.lanes[0].frontier == .waitingForFleet(generation: 0))
    #expect(m.lanes[0].isClaiming && !m.isDone)
    // The wait is over: claim again, with the first claim's generation.
    let again = m.handle(.fleetWaitOver(lane: 0))
    guard case .claim(0, _, 0) = again.first, again.count == 1 else {
      Issue.record("\(again)")
      return
    }
    #expect(m.lanes[0].frontier == .claiming)
    // A dead worker's URLs came back: they are fetched.
    #expect(Self.fetches(m.handle(.claimed(lane: 0, items: Self.items(0, 1...2), generation: 0))).count == 2)
  }

  /// Issue 27: a fleet's worker whose empty claim finds only its own claims
  /// held (pages fetched and waiting for a commit: their links are not in the
  /// store yet) does not wait for the fleet's poll: its frontier ran dry as a
  /// single process's does, so its waiting pages are committed at once, and
  /// the links that commit adds are claimed at once too. Waiting there for
  /// 500 ms at every page of a paginated listing held one worker to a third
  /// of its speed.
  @Test func test_issue27_fleet_anEmptyClaimWithOnlyItsOwnClaimsHeld_commitsAtOnce_andClaimsTheLinks() {
    var m = Machine(lanes: [.init(cap: 4)], concurrency: 4, commitBatch: 10)
    _ = m.start()
    #expect(Self.fetches(m.handle(.claimed(lane: 0, items: Self.items(0, 1...4), generation: 0))).count == 4)
    // Two pages fetched (waiting for a commit), two still in flight, and the
    // claim ahead is out.
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "a"))).isEmpty)
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "b"))).isEmpty)
    #expect(m.lanes[0].frontier == .claiming)
    // The store holds four claims: all this worker's.
    let dry = m.handle(.claimed(lane: 0, items: [], generation: 0, fleet: FrontierCounts(queued: 0, claimed: 4)))
    #expect(!dry.contains { if case .wait(.fleet) = $0 { true } else { false } }, "\(dry)")
    #expect(Self.commits(dry) == [["a", "b"]], "\(dry)")
    // The commit added links: the frontier is asked again at once.
    var counts = CommitCounts()
    counts.linksAdded = 5
    #expect(Self.claims(m.handle(.committed(counts))) == [0])
  }

  /// Others hold claims too (more than this worker's own): the worker waits
  /// for the fleet, but a commit of its own that adds links ends the wait.
  @Test func test_issue27_fleet_aCommitAddingLinks_endsTheFleetWait() {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 1)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: 0))
    let commit = m.handle(.fetched(lane: 0, page: "a"))
    #expect(Self.commits(commit) == [["a"]], "\(commit)")
    let wait = m.handle(.claimed(lane: 0, items: [], generation: 0, fleet: FrontierCounts(queued: 0, claimed: 4)))
    #expect(wait.contains { if case .wait(.fleet(lane: 0)) = $0 { true } else { false } }, "\(wait)")
    var counts = CommitCounts()
    counts.linksAdded = 3
    #expect(Self.claims(m.handle(.committed(counts))) == [0])
    #expect(m.lanes[0].frontier == .claiming)
  }

  /// Issue 27: a fleet worker's page that failed goes back to the queue,
  /// and this launch's next claim brings it back to this worker, which does
  /// not fetch it again now; the entry stays claimed by it until the launch
  /// ends. The fleet's counts then show it claimed, and the worker must
  /// count it as its own: it waited for "the others" to finish it, looking
  /// again and again until its budget ran out, with the crawl's last URL
  /// held by itself.
  @Test func test_issue27_fleet_anEntryItHoldsButWillNotRetry_isItsOwn_notTheOthers() {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 1)
    _ = m.start()
    #expect(Self.fetches(m.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: 0))).count == 1)
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "failed"))) == [["failed"]])
    _ = m.handle(.committed(CommitCounts()))
    // The failed entry is queued again: claimed, and not fetched again.
    let again = m.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: m.commits))
    #expect(Self.fetches(again).isEmpty)
    // The next claim finds nothing; the one claim held is that entry.
    let end = m.handle(
      .claimed(lane: 0, items: [], generation: m.commits, fleet: FrontierCounts(queued: 0, claimed: 1, done: 4)))
    #expect(!end.contains { if case .wait(.fleet) = $0 { true } else { false } }, "\(end)")
    #expect(m.lanes[0].frontier == .dry)
    #expect(Self.completes(end) == [0], "\(end)")
    // Another worker holding one more is still waited for.
    var n = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 1)
    _ = n.start()
    _ = n.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: 0))
    _ = n.handle(.fetched(lane: 0, page: "failed"))
    _ = n.handle(.committed(CommitCounts()))
    _ = n.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: n.commits))
    let wait = n.handle(.claimed(lane: 0, items: [], generation: n.commits, fleet: FrontierCounts(claimed: 2)))
    #expect(wait.contains { if case .wait(.fleet(lane: 0)) = $0 { true } else { false } }, "\(wait)")
  }

  /// Issue 27: a fleet worker whose claim came back empty while the others
  /// hold URLs commits its waiting pages at once, fetches still in flight:
  /// their links may be the fleet's next URLs (a listing's next page), and
  /// held for the commit interval they kept every worker waiting.
  @Test func test_issue27_fleet_aWorkerWaitingForTheOthers_commitsItsPagesAtOnce() {
    var m = Machine(lanes: [.init(cap: 4)], concurrency: 4, commitBatch: 100)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...3), generation: 0))
    // Three fetches in flight; one comes back while the claim ahead is out.
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "a"))).isEmpty, "the claim may still bring URLs")
    let wait = m.handle(.claimed(lane: 0, items: [], generation: 0, fleet: FrontierCounts(queued: 0, claimed: 9)))
    #expect(wait.contains { if case .wait(.fleet(lane: 0)) = $0 { true } else { false } }, "\(wait)")
    #expect(Self.commits(wait) == [["a"]], "waiting for the fleet: commit now, fetches in flight")
    #expect(m.fetching == 2)
    // The next page, while still waiting, goes as soon as the store is free.
    _ = m.handle(.fetched(lane: 0, page: "b"))
    #expect(Self.commits(m.handle(.committed(CommitCounts()))) == [["b"]])
  }

  /// Issue 27: a fleet's empty claim that a commit finished during (the
  /// counts, read beside that commit, may show its pages still claimed)
  /// claims again at once instead of waiting for the fleet: a single worker
  /// waited a poll there whenever its commit landed first.
  @Test func test_issue27_fleet_anEmptyClaimThatACommitRacedWith_claimsAgainAtOnce() {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 1)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: 0))
    #expect(m.lanes[0].frontier == .claiming)
    #expect(Self.commits(m.handle(.fetched(lane: 0, page: "a"))) == [["a"]])
    _ = m.handle(.committed(CommitCounts()))
    // The claim out since before that commit comes back empty; its counts
    // still show a's entry claimed.
    let again = m.handle(.claimed(lane: 0, items: [], generation: 0, fleet: FrontierCounts(queued: 0, claimed: 1)))
    #expect(!again.contains { if case .wait(.fleet) = $0 { true } else { false } }, "\(again)")
    guard case .claim(0, _, 1) = again.first, again.count == 1 else {
      Issue.record("\(again)")
      return
    }
    #expect(m.lanes[0].frontier == .claiming && m.lanes[0].fleetWaits == 0)
  }

  /// Issue 27: a fleet's waits in a row are counted, so that its looks come
  /// soon at first (10 ms, doubling up to the 500 ms poll: another worker's
  /// commit that adds links lands within milliseconds); a claim that brings
  /// entries starts the count over.
  @Test func test_issue27_fleet_waitsInARow_backOff_andAClaimWithEntriesStartsOver() throws {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 10)
    _ = m.start()
    for n in 1...3 {
      let wait = m.handle(.claimed(lane: 0, items: [], generation: 0, fleet: FrontierCounts(claimed: 3)))
      #expect(wait.contains { if case .wait(.fleet(lane: 0)) = $0 { true } else { false } }, "\(wait)")
      #expect(m.lanes[0].fleetWaits == n)
      _ = m.handle(.fleetWaitOver(lane: 0))
    }
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...2), generation: 0))
    #expect(m.lanes[0].fleetWaits == 0)
    #expect(
      (0...7).map { EngineDefaults.fleetPoll(after: $0) }
        == [10, 20, 40, 50, 50, 50, 50, 50].map { Duration.milliseconds($0) })
    // Soon for a lease's length of waits in a row, then at the slow pace.
    let slow = try #require((0..<1000).first { EngineDefaults.fleetPoll(after: $0) == EngineDefaults.fleetPoll })
    let waited = (0..<slow).reduce(Duration.zero) { $0 + EngineDefaults.fleetPoll(after: $1) }
    #expect(waited >= EngineDefaults.fleetLease && waited < EngineDefaults.fleetLease + EngineDefaults.fleetPollSoon)
    #expect((slow..<slow + 50).allSatisfy { EngineDefaults.fleetPoll(after: $0) == EngineDefaults.fleetPoll })
  }

  @Test func test_issue28_fleet_anEmptyClaimWithURLsQueued_claimsAgainAtOnce() {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 10)
    _ = m.start()
    let again = m.handle(.claimed(lane: 0, items: [], generation: 0, fleet: FrontierCounts(queued: 4, claimed: 1)))
    #expect(Self.claims(again) == [0] && again.count == 1)
    #expect(m.lanes[0].frontier == .claiming)
  }

  @Test func test_issue28_fleet_anEmptyClaimWithNothingHeld_isTheEnd() {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 10)
    _ = m.start()
    let end = m.handle(.claimed(lane: 0, items: [], generation: 0, fleet: FrontierCounts(done: 7)))
    #expect(m.lanes[0].frontier == .dry)
    #expect(Self.completes(end) == [0])
  }

  /// A stop ends a fleet's wait at once (the old loop slept a poll more),
  /// and the wait's late event changes nothing.
  @Test func test_issue28_fleet_aStopEndsTheWait() {
    var m = Machine(lanes: [.init(cap: 2)], concurrency: 2, commitBatch: 10)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: [], generation: 0, fleet: FrontierCounts(claimed: 1)))
    let stop = m.handle(.stopRequested)
    // The empty claim, no commit since: the frontier here is dry, and the
    // store decides whether the crawl completes (others still hold URLs).
    #expect(m.lanes[0].frontier == .dry)
    #expect(Self.completes(stop) == [0])
    #expect(Self.finish(m.handle(.crawlCompleted(lane: 0, nil))) == .interrupted)
    #expect(m.handle(.fleetWaitOver(lane: 0)).isEmpty)
    #expect(m.phase == .done(.interrupted, stoppedBy: .request))
  }

  @Test func test_issue28_fleet_aWaitOverAfterTheDeadline_claimsNothing() {
    var m = Machine(lanes: [.init(cap: 2), .init(cap: 2)], concurrency: 4, commitBatch: 10)
    _ = m.start()
    _ = m.handle(.claimed(lane: 1, items: Self.items(1, 1...5), generation: 0))
    _ = m.handle(.claimed(lane: 0, items: [], generation: 0, fleet: FrontierCounts(claimed: 1)))
    _ = m.handle(.stopAt)
    #expect(m.lanes[0].frontier == .dry)
    #expect(Self.claims(m.handle(.fleetWaitOver(lane: 0))).isEmpty)
  }

  /// The tally counts pages when their commit lands, records by the
  /// commit's changes, per source; each commit is reported, and one that
  /// queued notifications wakes their delivery.
  @Test func test_issue28_tally_countsCommits_perSource_andReportsEach() {
    var m = Machine(
      lanes: [.init(cap: 1), .init(cap: 1)], concurrency: 2, commitBatch: 2,
      tally: RunTally(sources: ["shop", "news"]))
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...5), generation: 0))
    _ = m.handle(.claimed(lane: 1, items: Self.items(1, 1...5), generation: 0))
    _ = m.handle(.fetched(lane: 0, page: "s1"))
    #expect(Self.commits(m.handle(.fetched(lane: 1, page: "n1"))) == [["s1", "n1"]])
    #expect(m.tally.totals.pagesFetched == 0, "not counted before the commit lands")
    var counts = CommitCounts(linksAdded: 3, newRecords: 2, notifications: 1)
    counts.changes = [.init(source: "news", kind: .new), .init(source: "news", kind: .new)]
    let landed = m.handle(.committed(counts))
    #expect(landed.contains { if case .report = $0 { true } else { false } })
    #expect(landed.contains { if case .wakeDelivery = $0 { true } else { false } })
    let t = m.tally.totals
    #expect(t.pagesFetched == 2 && t.recordsNew == 2 && t.notificationsQueued == 1)
    #expect(t.sources.map(\.name) == ["shop", "news"])
    #expect(t.sources[0].pagesFetched == 1 && t.sources[1].pagesFetched == 1 && t.sources[1].recordsNew == 2)
    // A commit without notifications only reports.
    _ = m.handle(.fetched(lane: 0, page: "s2"))
    _ = m.handle(.fetched(lane: 1, page: "n2"))
    let quiet = m.handle(.committed(CommitCounts()))
    #expect(!quiet.contains { if case .wakeDelivery = $0 { true } else { false } })
    #expect(m.tally.totals.pagesFetched == 4)
  }

  /// A stop that came as the last pages were committed, with every crawl
  /// completed, leaves nothing for a next launch: the launch completed.
  @Test func test_issue28_aStopWithEveryCrawlCompleted_isACompletedLaunch() {
    var m = Machine(lanes: [.init(cap: 1)], concurrency: 1, commitBatch: 10)
    _ = m.start()
    _ = m.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: 0))
    _ = m.handle(.claimed(lane: 0, items: [], generation: 0))  // a claim ahead, empty: dry
    _ = m.handle(.stopRequested)
    _ = m.handle(.fetched(lane: 0, page: "last"))
    let end = m.handle(.committed(CommitCounts()))
    #expect(Self.completes(end) == [0])
    #expect(m.phase == .finishing(stoppedBy: .request, remaining: 1))
    #expect(Self.finish(m.handle(.crawlCompleted(lane: 0, CompletionCounts()))) == .completed)
    // Without the completion (URLs left), the stop request is the outcome.
    var n = Machine(lanes: [.init(cap: 1)], concurrency: 1, commitBatch: 10)
    _ = n.start()
    _ = n.handle(.claimed(lane: 0, items: Self.items(0, 1...1), generation: 0))
    _ = n.handle(.claimed(lane: 0, items: [], generation: 0))
    _ = n.handle(.stopRequested)
    _ = n.handle(.fetched(lane: 0, page: "last"))
    _ = n.handle(.committed(CommitCounts()))
    #expect(Self.finish(n.handle(.crawlCompleted(lane: 0, nil))) == .interrupted)
  }
}
