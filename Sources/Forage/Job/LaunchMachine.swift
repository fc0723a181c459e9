import ForageStore

/// The decisions of one launch, every source at once: which source claims
/// next, which claimed URL is fetched next, when a batch of pages is
/// committed, when a fleet's worker waits for the others, when the launch
/// stops, and what it counted. A value with no I/O and no clock: the
/// ``Job`` feeds it events (a claim came back, a page was processed, a
/// commit finished, a timer fired, a stop was asked for) and performs the
/// actions it returns, so every decision is testable without sockets or time.
///
///     var machine = LaunchMachine<Page>(lanes: [.init(cap: 4)], concurrency: 8, commitBatch: 256)
///     var actions = machine.start()  // [.claim(lane: 0, limit: 32, generation: 0)]
///     // perform each action; feed back what it returned:
///     actions = machine.handle(.claimed(lane: 0, items: items, generation: 0))  // 4 .fetch: the cap
///     actions = machine.handle(.fetched(lane: 0, page: page))  // the next .fetch, a .wait(.commitInterval)
///
/// (`LaunchMachineTests.test_theDocExample_runs` runs these lines.)
///
/// ## Phases
///
/// A launch is ``Phase/starting`` until ``start()``, then
/// ``Phase/crawling``. The deadline, a stop request or a cancellation turn it
/// to ``Phase/draining(_:)``: what is in flight finishes and is committed.
/// When nothing is in flight and nothing more will start, it is
/// ``Phase/finishing(stoppedBy:remaining:)`` while the crawls of the sources
/// whose frontier ran dry are completed (``Action/complete(lane:)``), then
/// ``Phase/done(_:stoppedBy:)`` with its outcome (``Action/finish(_:)``).
///
/// ## Sharing the pool
///
/// All sources fetch through one pool of `concurrency` requests. When a slot
/// is free it goes to the source with the fewest fetches in flight that has a
/// claimed URL ready and is under its own `concurrency` cap; ties go to
/// `critical` sources, then round-robin. So each source with work holds about
/// an equal share of the pool, a one-page refresh is never queued behind a
/// large crawl, a slow host holds only its own source's share, and critical
/// sources are served first when slots are scarce without locking the others
/// out. Per-host limits and delays are the fetcher's, on top of this.
///
/// ## Commits
///
/// Processed pages of every source go into one batch, committed when it holds
/// `commitBatch` pages, when its oldest page has waited `commitInterval`
/// (a `.tick` after ``Wait/commitInterval``), at once when nothing else
/// would make progress, and at once when a source whose frontier ran dry
/// (or, in a fleet, whose claim came back empty while other workers hold
/// URLs) has pages waiting (their links are its next URLs: a source that
/// follows a chain of pages, one link at a time, moves a page per commit,
/// not per batch of the other sources). One commit runs at a time. Each commit that
/// lands is counted in ``tally`` and reported (``Action/report``).
///
/// ## A fleet
///
/// In a fleet (workers sharing a store), a source's frontier is not
/// exhausted while other workers hold claims on it: one of them may die, and
/// its URLs return when its leases pass. An empty claim comes back with the
/// frontier's counts; with URLs queued (another worker released some) the
/// source claims again at once, with URLs held by others it waits
/// (``Wait/fleet(lane:)``; the executor waits longer after each wait in a
/// row, ``Lane/fleetWaits``) and claims again, and with neither its frontier
/// is dry. An empty claim that a commit finished during claims again at
/// once: its counts may predate that commit. A stop ends the wait.
///
/// ## Stopping
///
/// At `.stopAt` (the deadline less the stop margin), a `.stopRequested` or a
/// `.cancelled`, no claim and no fetch starts; fetches in flight finish or are
/// cancelled at `.graceOver`; the pages they produce are still committed. A
/// stop request starts its own grace (``Wait/grace``).
struct LaunchMachine<Page: LaunchPage> {
  /// Why a launch stopped before its sources ran dry.
  enum StopCause: Sendable, Hashable {
    /// The deadline less the stop margin (or the grace after it).
    case deadline
    /// A stop request (a signal, a user's button).
    case request
    /// The launch's task was cancelled (an expired background task).
    case cancellation
  }

  /// Which phase a launch is in.
  enum Phase: Sendable, Hashable {
    /// Created; ``start()`` not called yet.
    case starting
    /// Claims and fetches start as slots free.
    case crawling
    /// Stopped: no claim or fetch starts; what is in flight finishes (or is
    /// cancelled when the grace is over) and is committed.
    case draining(StopCause)
    /// Nothing in flight: `remaining` crawl completions are being made.
    case finishing(stoppedBy: StopCause?, remaining: Int)
    /// The launch is over with this outcome (stopped early by `stoppedBy`).
    case done(RunOutcome, stoppedBy: StopCause?)
  }

  /// Where one source's frontier stands.
  enum Frontier: Sendable, Hashable {
    /// May hold more URLs; no claim is out.
    case open
    /// A claim is out.
    case claiming
    /// An empty claim, started when `generation` commits had finished, while
    /// other workers of a fleet hold claims: a ``Wait/fleet(lane:)`` runs.
    case waitingForFleet(generation: Int)
    /// An empty claim that no commit raced with: nothing left, until a
    /// commit adds links.
    case dry
  }

  /// One source of the launch.
  struct Lane: Sendable {
    /// The most fetches this source may have in flight (its own `concurrency`).
    var cap: Int
    /// Served first on ties.
    var critical = false
    /// How many frontier entries one claim asks for.
    var claimSize: Int
    /// The next claim goes out when fewer entries than this are ready (and
    /// no fewer than `cap`).
    var claimAhead: Int
    /// After a claim that brought fewer entries than `claimSize` (the
    /// frontier is thin), the next goes out only when fewer than this are
    /// ready; nil: at `claimAhead` regardless. A fleet's lanes set it:
    /// claiming again at once took only what the other workers' commits had
    /// added since, a claim for every few entries (three workers made 2.4
    /// times the claims a page that one made, each a write on the server).
    var thinClaimAhead: Int?
    /// The last claim brought entries, fewer than `claimSize`.
    var lastClaimWasThin = false

    /// Claimed and not started, oldest first from `head`.
    var queue: [FrontierItem] = []
    var head = 0
    var fetching = 0
    var frontier = Frontier.open
    /// Pages processed and not yet committed (waiting or committing).
    var uncommitted = 0
    /// Pages processed and waiting for a commit (not yet in one).
    var waiting = 0
    /// Fleet waits in a row since the last claim that brought entries (the
    /// executor waits longer after each: ``EngineDefaults/fleetPoll(after:)``).
    var fleetWaits = 0
    /// Entries of this launch already started: one that failed goes back to
    /// the queue for a later launch and is not fetched again now.
    var attempted: Set<Int64> = []
    /// Entries of `attempted` that a later claim brought back (they failed
    /// and were queued again): held by this worker, unfetched, until the
    /// launch ends and releases them. A fleet's counts show them claimed;
    /// they are this worker's own, not the others'.
    var heldAgain: Set<Int64> = []

    /// A lane of at most `cap` fetches at once, claiming `claimSize` entries
    /// at a time (4 × `cap`, at least 32, by default), the next claim going
    /// out when fewer than `claimAhead` are ready (half a claim by default).
    init(
      cap: Int, critical: Bool = false, claimSize: Int? = nil, claimAhead: Int? = nil, thinClaimAhead: Int? = nil
    ) {
      self.cap = max(1, cap)
      self.critical = critical
      self.claimSize = claimSize ?? max(self.cap * 4, 32)
      self.claimAhead = claimAhead ?? self.claimSize / 2
      self.thinClaimAhead = thinClaimAhead
    }

    /// Fewer entries than this ready send the next claim out.
    var claimThreshold: Int {
      max(cap, lastClaimWasThin ? thinClaimAhead ?? claimAhead : claimAhead)
    }

    /// Claimed entries not yet started.
    var ready: Int { queue.count - head }

    /// False once an empty claim that no commit raced with came back.
    var mayHaveMore: Bool { frontier != .dry }

    /// A claim (or a fleet's wait before the next one) is out.
    var isClaiming: Bool {
      switch frontier {
      case .claiming, .waitingForFleet: true
      case .open, .dry: false
      }
    }

    /// True while an empty claim waits for the other workers of the fleet.
    var isWaitingForFleet: Bool {
      if case .waitingForFleet = frontier { true } else { false }
    }

    /// Nothing left to claim, fetch or commit for this source.
    var isExhausted: Bool { frontier == .dry && ready == 0 && fetching == 0 && uncommitted == 0 }
  }

  /// What the launch heard.
  enum Event: Sendable {
    /// A claim for `lane` returned `items` (empty: none left), started when
    /// `generation` commits had finished. In a fleet, an empty claim comes
    /// with the frontier's counts (`fleet`), which say whether other workers
    /// still hold some of it.
    case claimed(lane: Int, items: [FrontierItem], generation: Int, fleet: FrontierCounts? = nil)
    /// A fetch of `lane` finished and its page is ready to commit.
    case fetched(lane: Int, page: Page)
    /// The running commit finished, having written `counts`.
    case committed(CommitCounts)
    /// The commit interval of the oldest waiting page may have passed.
    case tick
    /// A fleet's wait for `lane` is over: look at its frontier again.
    case fleetWaitOver(lane: Int)
    /// The deadline less the stop margin: no new requests.
    case stopAt
    /// A stop request (a signal): stop as at the deadline, with a grace.
    case stopRequested
    /// The launch's task was cancelled: stop as at the deadline.
    case cancelled
    /// The grace is over: cancel what is still in flight.
    case graceOver
    /// Completing `lane`'s crawl wrote `counts`; nil when it did not complete
    /// (URLs are left, perhaps another worker's).
    case crawlCompleted(lane: Int, CompletionCounts?)
  }

  /// What a ``Action/wait(_:)`` waits for, and the event that ends it.
  enum Wait: Sendable, Hashable {
    /// The commit interval; then `.tick`.
    case commitInterval
    /// The grace of a stop request; then `.graceOver`.
    case grace
    /// The fleet's poll interval; then `.fleetWaitOver(lane:)`.
    case fleet(lane: Int)
  }

  /// What the launch must do.
  enum Action: Sendable {
    /// Claim up to `limit` entries of `lane`'s crawl; answer with
    /// `.claimed(lane:items:generation:fleet:)` carrying `generation`.
    case claim(lane: Int, limit: Int, generation: Int)
    /// Fetch and process `item` for `lane`; answer with `.fetched`.
    case fetch(lane: Int, item: FrontierItem)
    /// Commit these pages in one transaction; answer with `.committed`.
    case commit([(lane: Int, page: Page)])
    /// Wait, then send the wait's event.
    case wait(Wait)
    /// Cancel the fetches in flight (their pages still come back, deferred,
    /// and are committed).
    case cancelFetches
    /// A commit landed: ``tally`` has new totals to keep and to show.
    case report
    /// Notifications were queued: wake their delivery.
    case wakeDelivery
    /// Complete `lane`'s crawl (its frontier ran dry); answer with
    /// `.crawlCompleted`.
    case complete(lane: Int)
    /// The launch is over with `outcome`: give back what is still claimed.
    case finish(RunOutcome)
  }

  private(set) var lanes: [Lane]
  /// The most fetches in flight over all sources.
  let concurrency: Int
  let commitBatch: Int
  /// The phase the launch is in.
  private(set) var phase = Phase.starting
  /// What the launch counted so far.
  private(set) var tally: RunTally

  private(set) var fetching = 0
  /// Processed pages waiting for a commit.
  private var pending: [(lane: Int, page: Page)] = []
  /// The batch being committed.
  private var committing: [(lane: Int, page: Page)]?
  private var commitTimer = CommitTimer.idle
  /// Finished commits, so that an empty claim that raced with a commit
  /// adding links is not taken for an exhausted frontier.
  private(set) var commits = 0
  /// Round-robin position: the lane served last.
  private var lastServed = -1

  /// Where the commit interval's timer stands.
  private enum CommitTimer {
    /// None runs.
    case idle
    /// A ``Wait/commitInterval`` runs.
    case scheduled
    /// It passed with pages waiting: commit them as soon as the store is free.
    case due
  }

  /// A machine for `lanes` (one per source, in order), counting into `tally`
  /// (by default a tally with unnamed sources).
  init(lanes: [Lane], concurrency: Int, commitBatch: Int, tally: RunTally? = nil) {
    self.lanes = lanes
    self.concurrency = max(1, concurrency)
    self.commitBatch = max(1, commitBatch)
    self.tally = tally ?? RunTally(sources: lanes.indices.map { "\($0)" })
  }

  /// True when the launch is over.
  var isDone: Bool { outcome != nil }

  /// The launch's outcome, once it is over.
  var outcome: RunOutcome? { if case .done(let outcome, _) = phase { outcome } else { nil } }

  /// Why the launch stopped early, if it did.
  var stopCause: StopCause? {
    switch phase {
    case .draining(let cause): cause
    case .finishing(let cause, _): cause
    case .done(_, let cause): cause
    case .starting, .crawling: nil
    }
  }

  /// True once the launch stopped starting claims and fetches early.
  var stopping: Bool { stopCause != nil }

  /// True when the launch was stopped by a request.
  var stoppedOnRequest: Bool { stopCause == .request }

  /// The first actions: a claim for every source.
  mutating func start() -> [Action] {
    guard phase == .starting else { return [] }
    phase = .crawling
    return step()
  }

  /// Takes `event` and returns what to do next.
  mutating func handle(_ event: Event) -> [Action] {
    var actions: [Action] = []
    switch event {
    case .claimed(let lane, let items, let generation, let fleet):
      actions += claimed(lane: lane, items: items, generation: generation, fleet: fleet)
    case .fetched(let lane, let page):
      fetching -= 1
      lanes[lane].fetching -= 1
      lanes[lane].uncommitted += 1
      lanes[lane].waiting += 1
      pending.append((lane, page))
    case .committed(let counts):
      commits += 1
      let batch = committing ?? []
      for (lane, _) in batch {
        lanes[lane].uncommitted -= 1
        // New links may be this source's: ask again.
        if counts.linksAdded > 0 {
          switch lanes[lane].frontier {
          case .dry, .waitingForFleet: lanes[lane].frontier = .open
          case .open, .claiming: break
          }
        }
      }
      committing = nil
      tally.count(batch, committed: counts)
      if counts.notifications > 0 { actions.append(.wakeDelivery) }
      actions.append(.report)
    case .tick:
      if commitTimer == .scheduled { commitTimer = pending.isEmpty ? .idle : .due }
    case .fleetWaitOver(let lane):
      if case .waitingForFleet(let generation) = lanes[lane].frontier {
        if case .crawling = phase {
          lanes[lane].frontier = .claiming
          actions.append(.claim(lane: lane, limit: lanes[lane].claimSize, generation: generation))
        } else {
          endClaim(lane: lane, empty: true, generation: generation)
        }
      }
    case .stopAt:
      stop(.deadline)
    case .cancelled:
      stop(.cancellation)
    case .stopRequested:
      if phase == .crawling {
        stop(.request)
        actions.append(.wait(.grace))
      }
    case .graceOver:
      stop(.deadline)
      if case .draining = phase, fetching > 0 { actions.append(.cancelFetches) }
    case .crawlCompleted(let lane, let counts):
      guard case .finishing(let cause, let remaining) = phase else { break }
      if let counts {
        tally.count(completedLane: lane, counts)
        if counts.notifications > 0 { actions.append(.wakeDelivery) }
      }
      phase = .finishing(stoppedBy: cause, remaining: remaining - 1)
      if remaining == 1 { actions.append(finish(cause)) }
      return actions
    }
    return actions + step()
  }

  /// A claim came back.
  private mutating func claimed(lane: Int, items: [FrontierItem], generation: Int, fleet: FrontierCounts?) -> [Action] {
    // The claims this worker holds itself for the source: claimed and not
    // started, in flight, fetched and not yet committed, or tried already
    // and claimed again (not fetched again in this launch).
    let own = lanes[lane].ready + lanes[lane].fetching + lanes[lane].uncommitted + lanes[lane].heldAgain.count
    if items.isEmpty, let fleet, phase == .crawling, fleet.queued > 0 || fleet.claimed > own {
      // Another worker released URLs: claim them now. Others hold some:
      // wait for their leases, then look again. When every claim is this
      // worker's own, its frontier ran dry as a single process's does: its
      // waiting pages are committed at once and their links claimed after
      // (waiting for the fleet's poll there stalled a crawl of paginated
      // listings at every page).
      // A commit that finished since the claim started may have changed
      // what the counts say (they may predate it): claim again at once.
      if fleet.queued > 0 || generation != commits {
        return [.claim(lane: lane, limit: lanes[lane].claimSize, generation: commits)]
      }
      lanes[lane].frontier = .waitingForFleet(generation: generation)
      lanes[lane].fleetWaits += 1
      return [.wait(.fleet(lane: lane))]
    }
    if !items.isEmpty {
      lanes[lane].fleetWaits = 0
      lanes[lane].lastClaimWasThin = items.count < lanes[lane].claimSize
    }
    var fresh: [FrontierItem] = []
    for item in items {
      if lanes[lane].attempted.insert(item.id).inserted {
        fresh.append(item)
      } else {
        lanes[lane].heldAgain.insert(item.id)
      }
    }
    if lanes[lane].head == lanes[lane].queue.count {
      lanes[lane].queue.removeAll(keepingCapacity: true)
      lanes[lane].head = 0
    }
    lanes[lane].queue += fresh
    endClaim(lane: lane, empty: items.isEmpty, generation: generation)
    return []
  }

  /// Ends `lane`'s claim. An empty claim that no commit raced with means
  /// this source's frontier is exhausted, until a commit adds links again.
  private mutating func endClaim(lane: Int, empty: Bool, generation: Int) {
    lanes[lane].frontier = empty && generation == commits ? .dry : .open
  }

  /// Stops starting claims and fetches, for `cause`; a stop already made
  /// keeps its cause. A source waiting for its fleet stops waiting.
  private mutating func stop(_ cause: StopCause) {
    guard phase == .crawling else { return }
    phase = .draining(cause)
    for i in lanes.indices {
      if case .waitingForFleet(let generation) = lanes[i].frontier { endClaim(lane: i, empty: true, generation: generation) }
    }
  }

  /// The launch is over: its outcome.
  private mutating func finish(_ cause: StopCause?) -> Action {
    // A stop that came as the last pages were committed left nothing for a
    // next launch: when every source completed its crawl, the launch did.
    let outcome: RunOutcome
    if cause == nil || tally.everyCrawlCompleted {
      outcome = .completed
    } else {
      outcome = cause == .request ? .interrupted : .budget
    }
    phase = .done(outcome, stoppedBy: cause)
    return .finish(outcome)
  }

  /// Starts what can start: fetches into free slots, claims ahead of need,
  /// a commit when one is due, and the end when nothing is left.
  private mutating func step() -> [Action] {
    var actions: [Action] = []
    let crawling = phase == .crawling
    if crawling {
      while fetching < concurrency, let lane = nextLane() {
        let item = lanes[lane].queue[lanes[lane].head]
        lanes[lane].head += 1
        lanes[lane].fetching += 1
        fetching += 1
        lastServed = lane
        actions.append(.fetch(lane: lane, item: item))
      }
      // Claim ahead, before a source's queue runs dry (`claimAhead`). The
      // queue must last until the claim is back (a round trip to the store,
      // and any commit before it there), or the fetches stall.
      for i in lanes.indices {
        let lane = lanes[i]
        if lane.frontier == .open && lane.ready < lane.claimThreshold {
          lanes[i].frontier = .claiming
          actions.append(.claim(lane: i, limit: lane.claimSize, generation: commits))
        }
      }
    } else if case .draining = phase {
    } else {
      return actions
    }
    // Commit in batches; at once when nothing else would make progress.
    if committing == nil && !pending.isEmpty {
      let starved = fetching == 0 || lanes.allSatisfy { !$0.isClaiming && $0.ready == 0 }
      // A source told its frontier is empty learns of new links only from
      // a commit of its own pages; in a fleet, from a commit of anyone's,
      // so a worker waiting for the others commits its own at once too:
      // while it held them for the commit interval, the fleet's next links
      // (a listing's next page) waited with them, and every worker whose
      // claims came back empty waited for every other's interval.
      let dry = lanes.contains { $0.waiting > 0 && ($0.frontier == .dry || $0.isWaitingForFleet) }
      if pending.count >= commitBatch || commitTimer == .due || starved || dry || !crawling {
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        for i in lanes.indices { lanes[i].waiting = 0 }
        committing = batch
        if commitTimer == .due { commitTimer = .idle }
        actions.append(.commit(batch))
      }
    }
    // A waiting page is committed within the commit interval at the latest
    // (while stopping, pages are committed as soon as the store is free).
    if crawling && !pending.isEmpty && commitTimer == .idle {
      commitTimer = .scheduled
      actions.append(.wait(.commitInterval))
    }
    // Nothing in flight and nothing more will start: complete the crawls of
    // the sources whose frontier ran dry, then finish.
    if fetching == 0 && committing == nil && pending.isEmpty && lanes.allSatisfy({ !$0.isClaiming })
      && (!crawling || lanes.allSatisfy(\.isExhausted))
    {
      let cause = stopCause
      let dry = lanes.indices.filter { lanes[$0].isExhausted }
      phase = .finishing(stoppedBy: cause, remaining: dry.count)
      if dry.isEmpty {
        actions.append(finish(cause))
      } else {
        actions += dry.map { .complete(lane: $0) }
      }
    }
    return actions
  }

  /// The source that gets the next free slot: fewest fetches in flight among
  /// those with a claimed entry ready and room under their cap; ties to
  /// critical sources, then round-robin after the last one served.
  private func nextLane() -> Int? {
    guard !lanes.isEmpty else { return nil }
    var best: Int?
    for offset in 1...lanes.count {
      let i = (lastServed + offset + lanes.count) % lanes.count
      let lane = lanes[i]
      guard lane.ready > 0, lane.fetching < lane.cap else { continue }
      guard let b = best else { best = i; continue }
      let other = lanes[b]
      if lane.fetching < other.fetching || (lane.fetching == other.fetching && lane.critical && !other.critical) {
        best = i
      }
    }
    return best
  }
}
