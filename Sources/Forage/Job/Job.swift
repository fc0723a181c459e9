import Foundation
import ForageHTML
import ForageHTTP
import ForageScheduler
import ForageStore
import ForageURL

/// One launch of a task: fetches its sources within a budget, extracts
/// records, and commits each page atomically to the store.
///
///     let job = Job(config: config, store: try SQLiteStore(path: "forage.sqlite"),
///                   transport: CurlTransport())
///     let summary = try await job.run(budget: .seconds(30))
///
/// The frontier lives in the store. Each fetched page's records, its
/// frontier state and the links it discovered are committed together, so
/// killing the process at any instant loses nothing committed and repeats
/// nothing committed: the next launch resumes the same crawl. Near the
/// deadline the job stops claiming URLs, gives in-flight fetches a short
/// grace, commits, and reports `stoppedByBudget`.
package final class Job: Sendable {
  package let config: ForageConfig
  let store: any Store
  let fetcher: Fetcher
  let canonicalizer: URLCanonicalizer
  let owner: String
  /// The fleet's per-host request slots this job holds (a shared store's); nil otherwise.
  let hostBudget: StoreHostBudget?
  /// Decides which changes are notable; nil when the config has no channels.
  let router: NotificationRouter?
  /// Delivers notifications while the job runs; nil when the config has no channels.
  let notifier: Notifier?
  /// The date of what the job stores (runs, pages, records, changes): the
  /// wall clock, or a simulator's virtual one.
  let now: @Sendable () -> Date

  /// Creates a job over `store`, fetching through `transport`.
  ///
  /// - Parameters:
  ///   - notifier: what delivers notable changes during the launch
  ///     (default: one over the config's channels, reading secrets from the
  ///     process's environment, on `now`'s clock); nil when the config has no
  ///     channels.
  ///   - now: the date of what the job stores (default: the wall clock; a
  ///     simulator passes its virtual clock, so the store's history is in
  ///     simulated time). Budgets and timeouts always run on real time.
  package init(
    config: ForageConfig, store: any Store, transport: any Transport, notifier: Notifier? = nil,
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.now = now
    self.config = config
    self.store = store
    self.canonicalizer = URLCanonicalizer(removingQueryParameters: config.removeQueryParameters)
    let owner = "pid-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
    self.owner = owner
    let hostBudget = store.isShared ? StoreHostBudget(store: store, owner: owner, now: now) : nil
    self.hostBudget = hostBudget
    self.fetcher = Fetcher(
      transport: transport, settings: config.fetch, robotsArchive: StoreRobotsArchive(store: store, owner: owner, now: now),
      hostBudget: hostBudget)
    self.router = NotificationRouter(config: config)
    self.notifier =
      config.notify.isEmpty ? nil : notifier ?? Notifier(config: config, store: store, transport: transport, now: now)
  }

  /// Runs one launch of the named sources.
  ///
  /// - Parameters:
  ///   - sources: names of the sources to refresh; nil for all.
  ///   - task: the task identifier recorded with the run.
  ///   - budget: the time this launch may take.
  ///   - concurrencyLimit, recoveringClaims, stop, conditions, progress: as
  ///     for ``run(_:concurrencyLimit:recoveringClaims:stop:conditions:progress:)``.
  /// - Throws: `EngineError.unknownSource` for an unknown source name (from
  ///   ``ForageConfig/sources(named:configName:)``, the one place names are
  ///   resolved); what the launch throws.
  package func run(
    sources names: [String]? = nil, task: String = "run", budget: Duration, concurrencyLimit: Int? = nil,
    recoveringClaims: Bool = true, stop: StopRequest? = nil, conditions: DeviceConditions? = nil,
    progress: (@Sendable (RunSummary) -> Void)? = nil
  ) async throws -> RunSummary {
    let launch = Launch(task: task, sources: try config.sources(named: names), budget: budget)
    return try await run(
      launch, concurrencyLimit: concurrencyLimit, recoveringClaims: recoveringClaims, stop: stop,
      conditions: conditions, progress: progress)
  }

  /// Runs one launch: `launch`'s sources within its budget.
  ///
  /// - Parameters:
  ///   - launch: what runs, resolved from the config once (its sources are
  ///     not looked up again).
  ///   - concurrencyLimit: at most this many requests at once (a job on
  ///     battery runs with fewer), whatever the config says.
  ///   - progress: called after each commit with the running totals.
  ///   - stop: a request to stop early (a signal, a user's button) the way the
  ///     budget would: no new fetch or notification starts, in-flight ones
  ///     get the grace period (then they are abandoned: a notification stays
  ///     pending, as it was), the summary's `stoppedOnRequest` is set, and the
  ///     next launch continues.
  ///   - conditions: the device's state when a scheduler launched this run
  ///     (kept with the run; reports show it).
  ///   - recoveringClaims: first return every claimed frontier entry to the
  ///     queue: right for a single process after a crash, wrong while other
  ///     jobs of the same process run (pass false there, and recover once at
  ///     start with `Store.release(.frontier, owner: nil)`).
  ///
  /// Cancelling the calling task stops the job as its deadline would: no
  /// new requests, in-flight ones cancelled, deliveries abandoned at once (a
  /// command's program stopped; the notification stays pending), everything
  /// done so far committed.
  /// - Throws: `ConfigError` for a source that does not compile; store
  ///   errors. Fetch failures are not thrown: they are counted in the summary
  ///   and retried on later launches.
  package func run(
    _ launch: Launch, concurrencyLimit: Int? = nil, recoveringClaims: Bool = true, stop: StopRequest? = nil,
    conditions: DeviceConditions? = nil, progress: (@Sendable (RunSummary) -> Void)? = nil
  ) async throws -> RunSummary {
    let clock = ContinuousClock()
    let started = clock.now
    let budget = launch.budget
    let deadline = started + budget
    var selected = launch.sources
    // Critical sources first: they win ties for a free slot.
    selected.sort { $0.critical && !$1.critical }
    let compiled = try selected.map { s throws(ConfigError) in try CompiledSource(s, canonicalizer: canonicalizer) }

    // A single process owns an embedded store: claims left by a killed
    // process go back to the queue.
    if recoveringClaims {
      try await store.release(.frontier, owner: nil)
      try await store.release(.notification, owner: nil)
    }
    let runID = try await store.beginRun(task: launch.task, sources: selected.map(\.name), startedAt: now())

    var tally = RunTally(sources: selected.map(\.name), conditions: conditions)
    if budget <= EngineDefaults.stopMargin {
      tally.warn(
        "the budget (\(Units.format(budget))) is not longer than the stop margin (\(Units.format(EngineDefaults.stopMargin))): "
          + "no request could start")
    }
    // Running totals carry the time so far (a live line's rate).
    let timed = progress.map { report in
      { @Sendable (s: RunSummary) in
        var s = s
        s.seconds = (ContinuousClock.now - started).seconds
        report(s)
      }
    }
    // Notifications go out while the crawl runs, woken by each commit that
    // queued some; at the budget's margin or a stop request, the attempts in
    // flight get the grace, as fetches do, and are then abandoned.
    let delivery = notifier.map { DeliveryLoop(notifier: $0, until: deadline - EngineDefaults.stopMargin, stop: stop) }
    let outcome: RunOutcome
    do {
      // Cancelled (an expiration, a daemon's SIGTERM) while crawling or while
      // making the last delivery round: the loop runs in a task of its own,
      // so it is told, and abandons what it has in flight at once.
      outcome = try await withTaskCancellationHandler {
        let outcome = try await self.launch(
          compiled, run: runID, deadline: deadline, concurrencyLimit: concurrencyLimit, stop: stop, tally: &tally,
          delivery: delivery, progress: timed)
        if let delivery {
          let report = await delivery.finish()
          tally.count(delivered: report.delivered, failed: report.failed)
          for problem in report.problems.prefix(3) { tally.warn("notification: \(problem)") }
        }
        return outcome
      } onCancel: {
        delivery?.cancel()
      }
    } catch {
      // Abandoned, and waited for: no program of a command channel outlives the job.
      delivery?.cancel()
      _ = await delivery?.finish()
      var failed = tally.summary(outcome: .failed)
      failed.finishedAt = now()
      failed.seconds = (clock.now - started).seconds
      try? await store.finishRun(runID, summary: failed)
      throw error
    }
    var summary = tally.summary(outcome: outcome)
    summary.seconds = (clock.now - started).seconds
    summary.finishedAt = now()
    try await store.finishRun(runID, summary: summary)
    return summary
  }

  // MARK: Every source at once

  /// Runs the sources' crawls interleaved through one pool of requests: a
  /// thin executor of a ``LaunchMachine``, which decides everything. This
  /// performs its actions (claim, fetch, commit, wait, report, complete,
  /// finish) and feeds their results back as events, with the timers of the
  /// deadline, the stop request and the task's cancellation. Returns the
  /// launch's outcome; `tally` holds what it counted, also when it throws.
  func launch(
    _ sources: [CompiledSource], run: Int64, deadline: ContinuousClock.Instant, concurrencyLimit: Int?,
    stop: StopRequest?, tally: inout RunTally, delivery: DeliveryLoop? = nil,
    progress: (@Sendable (RunSummary) -> Void)?
  ) async throws -> RunOutcome {
    let clock = ContinuousClock()
    let concurrency = max(1, min(config.fetch.concurrency, concurrencyLimit ?? .max))
    let stopAt = deadline - EngineDefaults.stopMargin
    let hardStop = deadline + EngineDefaults.grace
    // One process's store: claims last the launch. A fleet's: brief leases,
    // renewed while this worker lives, so a dead worker's URLs come back.
    let shared = store.isShared
    let launchLease = (deadline - clock.now) + EngineDefaults.grace + .seconds(60)
    let leaseLength = shared ? EngineDefaults.fleetLease : launchLease
    var crawls: [Crawl] = []
    var contexts: [PageContext] = []
    var lanes: [LaunchMachine<ProcessedPage>.Lane] = []
    for source in sources {
      let s = source.source
      let seeds = s.urls.compactMap { WebURL($0) }.map { PageContext.seed($0, source: source, depth: 0) }
      crawls.append(try await store.openCrawl(source: s.name, seeds: seeds, now: now()))
      let settings = config.fetchSettings(for: s)
      contexts.append(
        PageContext(
          source: source, settings: settings, fetcher: fetcher, run: run, deadline: deadline, router: router, now: now,
          downloads: s.download ? Downloads(store: store, fetcher: fetcher, fetch: settings) : nil,
          downloadsDirectory: config.directory))
      // One process claims far ahead (each claim is a transaction of its
      // own), the next claim at half a claim left. A fleet's workers claim
      // less at a time, so that the last URLs of a crawl are shared among
      // them, and the next claim as soon as less than a claim is left: it
      // takes a round trip, and a worker far from its database starved
      // waiting for it when it went out at half a claim; but after a claim
      // that found the frontier thin, not until two rounds of fetches are
      // left (see `Lane.thinClaimAhead`).
      let cap = min(settings.concurrency, concurrency)
      let claimSize = shared ? max(cap * 8, 64) : max(cap * 32, 64)
      lanes.append(
        .init(
          cap: cap, critical: s.critical, claimSize: claimSize, claimAhead: shared ? claimSize : claimSize / 2,
          thinClaimAhead: shared ? cap * 2 : nil))
    }
    // A fleet's links reach its claims only through commits: half the
    // batch, so that a frontier running dry waits for half as long.
    var machine = LaunchMachine<ProcessedPage>(
      lanes: lanes, concurrency: concurrency,
      commitBatch: shared ? EngineDefaults.fleetCommitBatch : EngineDefaults.commitBatch, tally: tally)
    defer { tally = machine.tally }

    /// What the loop waits for: the machine's events, with the stored pages
    /// of a claim's entries beside them.
    enum Outcome: Sendable {
      case event(LaunchMachine<ProcessedPage>.Event)
      case claimed(lane: Int, items: [FrontierItem], pages: [UInt64: PageRecord], generation: Int, fleet: FrontierCounts?)
      /// The run's row has the totals of a report.
      case reported
    }

    let renewal = shared ? Task { await renewClaims(for: leaseLength) } : nil
    defer { renewal?.cancel() }
    let outcome = try await withThrowingTaskGroup(of: Outcome.self) { group -> RunOutcome? in
      group.addTask {
        try? await Task.sleep(until: stopAt, clock: .continuous)
        return .event(.stopAt)
      }
      group.addTask {
        try? await Task.sleep(until: hardStop, clock: .continuous)
        return .event(.graceOver)
      }
      if let stop {
        group.addTask {
          await stop.wait()
          return .event(.stopRequested)
        }
      }
      var previous: [UInt64: PageRecord] = [:]
      // The run's row keeps its totals as commits land: a run whose process
      // is killed is listed with what it committed. One write at a time, off
      // the loop (waiting for it held up every fetch start for a round trip
      // after each commit); reports meanwhile write once, with the newest
      // totals, when it is done. A failure costs only that listing.
      var reporting = false
      var reportAgain = false
      func report() {
        let totals = machine.tally.totals
        reporting = true
        group.addTask {
          try? await self.store.recordRunProgress(run, summary: totals)
          return .reported
        }
      }
      var actions = machine.start()
      while true {
        var next = 0
        while next < actions.count {
          let action = actions[next]
          next += 1
          switch action {
          case .claim(let lane, let limit, let generation):
            let crawl = crawls[lane].id
            group.addTask {
              let claimed = try await self.claim(crawl: crawl, limit: limit, for: leaseLength)
              // A fleet's empty claim says how the others stand: the machine
              // decides whether to wait for them.
              let fleet = shared && claimed.items.isEmpty ? try await self.store.pendingCounts(crawl: crawl) : nil
              return .claimed(
                lane: lane, items: claimed.items, pages: claimed.pages, generation: generation, fleet: fleet)
            }
          case .fetch(let lane, let item):
            let context = contexts[lane]
            let before = previous.removeValue(forKey: item.fingerprint)
            group.addTask { .event(.fetched(lane: lane, page: await context.process(item, previous: before))) }
          case .commit(let batch):
            group.addTask { .event(.committed(try await self.commit(batch))) }
          case .wait(let wait):
            // The fleet's looks come sooner at first (see `fleetPoll(after:)`).
            let fleetDelay: Duration
            if case .fleet(let lane) = wait {
              fleetDelay = EngineDefaults.fleetPoll(after: machine.lanes[lane].fleetWaits - 1)
            } else {
              fleetDelay = EngineDefaults.fleetPoll
            }
            group.addTask {
              switch wait {
              case .commitInterval:
                try? await Task.sleep(for: EngineDefaults.commitInterval)
                return .event(.tick)
              case .grace:
                try? await Task.sleep(for: EngineDefaults.grace)
                return .event(.graceOver)
              case .fleet(let lane):
                try? await Task.sleep(for: fleetDelay)
                return .event(.fleetWaitOver(lane: lane))
              }
            }
          case .cancelFetches:
            // Fetches end as deferred; a commit in flight finishes regardless
            // (the store does not stop a transaction for cancellation), and
            // later commits of the cancelled pages still run.
            group.cancelAll()
          case .report:
            if reporting { reportAgain = true } else { report() }
            progress?(machine.tally.totals)
          case .wakeDelivery:
            delivery?.wake()
          case .complete(let lane):
            let completion = try await completeCrawl(crawls[lane].id, of: sources[lane])
            actions += machine.handle(.crawlCompleted(lane: lane, completion))
          case .finish(let outcome):
            group.cancelAll()
            return outcome
          }
        }
        guard let result = try await group.next() else { return nil }
        // Cancelled (an expired background task): stop as at the deadline. Its
        // actions (a commit of the waiting pages) must be carried out too.
        actions = Task.isCancelled && !machine.stopping ? machine.handle(.cancelled) : []
        switch result {
        case .event(let event):
          actions += machine.handle(event)
        case .claimed(let lane, let items, let pages, let generation, let fleet):
          for (fingerprint, page) in pages { previous[fingerprint] = page }
          actions += machine.handle(.claimed(lane: lane, items: items, generation: generation, fleet: fleet))
        case .reported:
          reporting = false
          if reportAgain {
            reportAgain = false
            report()
          }
        }
      }
    }
    // Entries claimed and not fetched, claimed by this launch and failed, or
    // waiting for a retry go back to the queue; so do the fleet's request
    // slots this launch holds.
    await hostBudget?.returnUnused()
    try await store.release(.frontier, owner: owner)
    return outcome ?? (machine.stoppedOnRequest ? .interrupted : .budget)
  }

  // MARK: The store's side of a launch (one call each)

  /// Claims up to `limit` entries of `crawl` for this job, leased for
  /// `length`, with their stored pages.
  private func claim(crawl: Int64, limit: Int, for length: Duration) async throws -> ClaimedEntries {
    try await store.claimWithPages(crawl: crawl, limit: limit, lease: Lease(owner: owner, for: length, at: now()))
  }

  /// Renews this job's claims every ``EngineDefaults/fleetLeaseRenewal`` until
  /// cancelled: a fleet's worker that lives keeps its URLs.
  private func renewClaims(for length: Duration) async {
    while !Task.isCancelled {
      try? await Task.sleep(for: EngineDefaults.fleetLeaseRenewal)
      _ = try? await store.renew(.frontier, lease: Lease(owner: owner, for: length, at: now()))
    }
  }

  /// Commits a batch of pages in one transaction; what it wrote, as the
  /// launch counts it.
  private func commit(_ batch: [(lane: Int, page: ProcessedPage)]) async throws -> CommitCounts {
    let result = try await store.commit(batch.map(\.page.commit))
    return CommitCounts(
      linksAdded: result.linksAdded, newRecords: result.newRecords, changedRecords: result.changedRecords,
      unchangedRecords: result.unchangedRecords, restoredRecords: result.restoredRecords,
      notifications: result.notifications, changes: result.changes.map { .init(source: $0.source, kind: $0.kind) })
  }

  /// Completes the crawl of `source` if its frontier is empty; nil when it
  /// is not (another worker's URLs are left).
  private func completeCrawl(_ crawl: Int64, of source: CompiledSource) async throws -> CompletionCounts? {
    let completion = try await store.completeCrawl(
      crawl, maxPages: source.source.crawl?.maxPages, router: router, health: source.health, now: now())
    return completion.map { c in
      var health: String?
      if let e = c.episode, e.isOpen {
        health = StoreStatus.heldSentence(e) + "; forage health shows it"
      } else if let e = c.episode {
        health = "healthy again: the changes held since \(ISODate.string(e.startedAt)) were dropped"
      } else if c.held > 0 {
        health = "\(c.held) removal\(c.held == 1 ? "" : "s") held (forage health shows why)"
      }
      return CompletionCounts(removed: c.removed.count, notifications: c.notifications, health: health)
    }
  }
}

extension ProcessedPage: LaunchPage {}
