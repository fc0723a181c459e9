import ForageStore

/// The decisions of one launch, every source at once: which source claims
/// next, which claimed URL is fetched next, when a batch of pages is
/// committed, and when the launch stops. A value with no I/O and no clock:
/// the ``Job`` feeds it events (a claim came back, a page was processed, a
/// commit finished, a timer fired) and performs the actions it returns, so
/// every decision is testable without sockets or time.
///
///     var machine = LaunchMachine<Page>(lanes: [.init(cap: 4), .init(cap: 1)], concurrency: 8, commitBatch: 256)
///     var actions = machine.start()
///     // perform each action; when its result comes back:
///     actions = machine.handle(.fetched(lane: 0, page), now: clock.now)
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
/// (a `.tick` after ``Action/scheduleTick``), at once when nothing else
/// would make progress, and at once when a source whose frontier ran dry
/// has pages waiting (their links are its next URLs: a source that follows
/// a chain of pages, one link at a time, moves a page per commit, not per
/// batch of the other sources). One commit runs at a time.
///
/// ## Stopping
///
/// At `.stopAt` (the deadline less the stop margin), a `.stopRequested` or a
/// cancellation, no claim and no fetch starts; fetches in flight finish or are
/// cancelled at `.graceOver`; the pages they produce are still committed. A
/// stop request starts its own grace (``Action/startGrace``).
struct LaunchMachine<Page: Sendable> {
  /// One source of the launch.
  struct Lane: Sendable {
    /// The most fetches this source may have in flight (its own `concurrency`).
    var cap: Int
    /// Served first on ties.
    var critical = false
    /// How many frontier entries one claim asks for.
    var claimSize: Int

    /// Claimed and not started, oldest first from `head`.
    var queue: [FrontierItem] = []
    var head = 0
    var fetching = 0
    var claiming = false
    /// False after an empty claim that no commit raced with.
    var mayHaveMore = true
    /// Pages processed and not yet committed (waiting or committing).
    var uncommitted = 0
    /// Pages processed and waiting for a commit (not yet in one).
    var waiting = 0
    /// Entries of this launch already started: one that failed goes back to
    /// the queue for a later launch and is not fetched again now.
    var attempted: Set<Int64> = []

    init(cap: Int, critical: Bool = false, claimSize: Int? = nil) {
      self.cap = max(1, cap)
      self.critical = critical
      self.claimSize = claimSize ?? max(self.cap * 4, 32)
    }

    /// Claimed entries not yet started.
    var ready: Int { queue.count - head }

    /// Nothing left to claim, fetch or commit for this source.
    var isExhausted: Bool { !mayHaveMore && ready == 0 && fetching == 0 && !claiming && uncommitted == 0 }
  }

  /// What the launch heard.
  enum Event: Sendable {
    /// A claim for `lane` returned `items` (empty: none left), started when
    /// `generation` commits had finished.
    case claimed(lane: Int, items: [FrontierItem], generation: Int)
    /// A fetch of `lane` finished and its page is ready to commit.
    case fetched(lane: Int, page: Page)
    /// The running commit finished; `linksAdded` new frontier entries.
    case committed(linksAdded: Int)
    /// The commit interval of the oldest waiting page may have passed.
    case tick
    /// The deadline less the stop margin: no new requests.
    case stopAt
    /// A stop request (a signal): stop as at the deadline, with a grace.
    case stopRequested
    /// The grace is over: cancel what is still in flight.
    case graceOver
  }

  /// What the launch must do.
  enum Action: Sendable {
    /// Claim up to `limit` entries of `lane`'s crawl; answer with
    /// `.claimed(lane:items:generation:)` carrying `generation`.
    case claim(lane: Int, limit: Int, generation: Int)
    /// Fetch and process `item` for `lane`; answer with `.fetched`.
    case fetch(lane: Int, item: FrontierItem)
    /// Commit these pages in one transaction; answer with `.committed`.
    case commit([(lane: Int, page: Page)])
    /// Send `.tick` after the commit interval.
    case scheduleTick
    /// Send `.graceOver` after the grace period.
    case startGrace
    /// Cancel the fetches in flight (their pages still come back, deferred,
    /// and are committed).
    case cancelFetches
  }

  private(set) var lanes: [Lane]
  /// The most fetches in flight over all sources.
  let concurrency: Int
  let commitBatch: Int

  private(set) var fetching = 0
  private(set) var stopping = false
  private(set) var stoppedOnRequest = false
  private var graceStarted = false
  private var pending: [(lane: Int, page: Page)] = []
  private var tickScheduled = false
  private var tickDue = false
  private var committing: [(lane: Int, page: Page)]?
  /// Finished commits, so that an empty claim that raced with a commit
  /// adding links is not taken for an exhausted frontier.
  private(set) var commits = 0
  /// Round-robin position: the lane served last.
  private var lastServed = -1

  init(lanes: [Lane], concurrency: Int, commitBatch: Int) {
    self.lanes = lanes
    self.concurrency = max(1, concurrency)
    self.commitBatch = max(1, commitBatch)
  }

  /// True when nothing is in flight and nothing more will start: the
  /// launch is over.
  var isDone: Bool {
    fetching == 0 && committing == nil && pending.isEmpty && lanes.allSatisfy { !$0.claiming }
      && (stopping || lanes.allSatisfy(\.isExhausted))
  }

  /// The first actions: a claim for every source.
  mutating func start() -> [Action] {
    step()
  }

  /// Takes `event` and returns what to do next.
  mutating func handle(_ event: Event) -> [Action] {
    var actions: [Action] = []
    switch event {
    case .claimed(let lane, let items, let generation):
      lanes[lane].claiming = false
      // An empty claim that no commit raced with means this source's
      // frontier is exhausted, until a commit adds links again.
      if items.isEmpty && generation == commits { lanes[lane].mayHaveMore = false }
      var fresh: [FrontierItem] = []
      for item in items where lanes[lane].attempted.insert(item.id).inserted { fresh.append(item) }
      if lanes[lane].head == lanes[lane].queue.count {
        lanes[lane].queue.removeAll(keepingCapacity: true)
        lanes[lane].head = 0
      }
      lanes[lane].queue += fresh
    case .fetched(let lane, let page):
      fetching -= 1
      lanes[lane].fetching -= 1
      lanes[lane].uncommitted += 1
      lanes[lane].waiting += 1
      pending.append((lane, page))
    case .committed(let linksAdded):
      commits += 1
      for (lane, _) in committing ?? [] {
        lanes[lane].uncommitted -= 1
        // New links may be this source's: ask again.
        if linksAdded > 0 { lanes[lane].mayHaveMore = true }
      }
      committing = nil
    case .tick:
      tickScheduled = false
      if !pending.isEmpty { tickDue = true }
    case .stopAt:
      stopping = true
    case .stopRequested:
      if !stopping {
        stopping = true
        stoppedOnRequest = true
        if !graceStarted {
          graceStarted = true
          actions.append(.startGrace)
        }
      }
    case .graceOver:
      stopping = true
      if fetching > 0 { actions.append(.cancelFetches) }
    }
    return actions + step()
  }

  /// Starts what can start: fetches into free slots, claims ahead of need,
  /// and a commit when one is due.
  private mutating func step() -> [Action] {
    var actions: [Action] = []
    if !stopping {
      while fetching < concurrency, let lane = nextLane() {
        let item = lanes[lane].queue[lanes[lane].head]
        lanes[lane].head += 1
        lanes[lane].fetching += 1
        fetching += 1
        lastServed = lane
        actions.append(.fetch(lane: lane, item: item))
      }
      // Claim ahead, before a source's queue runs dry: when half a claim is
      // left. A claim waits for the commit before it in the store, and the
      // queue must last until then, or the fetches stall.
      for i in lanes.indices {
        let lane = lanes[i]
        if !lane.claiming && lane.mayHaveMore && lane.ready < max(lane.cap, lane.claimSize / 2) {
          lanes[i].claiming = true
          actions.append(.claim(lane: i, limit: lane.claimSize, generation: commits))
        }
      }
    }
    // Commit in batches; at once when nothing else would make progress.
    if committing == nil && !pending.isEmpty {
      let starved = fetching == 0 || (lanes.allSatisfy { !$0.claiming } && lanes.allSatisfy { $0.ready == 0 })
      // A source told its frontier is empty learns of new links only from
      // a commit of its own pages.
      let dry = lanes.contains { !$0.mayHaveMore && !$0.claiming && $0.waiting > 0 }
      if pending.count >= commitBatch || tickDue || starved || dry || stopping {
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        for i in lanes.indices { lanes[i].waiting = 0 }
        committing = batch
        tickDue = false
        actions.append(.commit(batch))
      }
    }
    // A waiting page is committed within the commit interval at the latest
    // (while stopping, pages are committed as soon as the store is free).
    if !stopping && !pending.isEmpty && !tickScheduled {
      tickScheduled = true
      actions.append(.scheduleTick)
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
