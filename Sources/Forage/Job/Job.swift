import Foundation
import ForageHTML
import ForageHTTP
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
    self.fetcher = Fetcher(
      transport: transport, settings: config.fetch, robotsArchive: StoreRobotsArchive(store: store),
      hostBudget: store.isShared ? StoreHostBudget(store: store, owner: owner) : nil)
    self.router = NotificationRouter(config: config)
    self.notifier =
      config.notify.isEmpty ? nil : notifier ?? Notifier(config: config, store: store, transport: transport, now: now)
  }

  /// Runs one launch.
  ///
  /// - Parameters:
  ///   - sources: names of the sources to refresh; nil for all.
  ///   - task: the task identifier recorded with the run.
  ///   - budget: the time this launch may take.
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
  ///     start with `Store.releaseClaims(owner: nil)`).
  ///
  /// Cancelling the calling task stops the job as its deadline would: no
  /// new requests, in-flight ones cancelled, deliveries abandoned at once (a
  /// command's program stopped; the notification stays pending), everything
  /// done so far committed.
  /// - Throws: `EngineError.unknownSource` for an unknown source name;
  ///   `ConfigError` for a source that does not compile; store errors. Fetch failures are not thrown: they
  ///   are counted in the summary and retried on later launches.
  package func run(
    sources names: [String]? = nil, task: String = "run", budget: Duration, concurrencyLimit: Int? = nil,
    recoveringClaims: Bool = true, stop: StopRequest? = nil, conditions: LaunchConditions? = nil,
    progress: (@Sendable (RunSummary) -> Void)? = nil
  ) async throws -> RunSummary {
    let clock = ContinuousClock()
    let started = clock.now
    let deadline = started + budget
    var selected = try config.sources(named: names)
    // Critical sources first: they win ties for a free slot.
    selected.sort { $0.critical && !$1.critical }
    let compiled = try selected.map { s throws(ConfigError) in try CompiledSource(s, canonicalizer: canonicalizer) }

    // A single process owns an embedded store: claims left by a killed
    // process go back to the queue.
    if recoveringClaims {
      try await store.releaseClaims(owner: nil)
      try await store.releaseNotificationClaims(owner: nil)
    }
    let runID = try await store.beginRun(task: task, sources: selected.map(\.name), startedAt: now())

    var summary = RunSummary()
    summary.conditions = conditions
    summary.sources = selected.map { SourceRunSummary(name: $0.name) }
    if budget <= Defaults.stopMargin {
      summary.warn(
        "the budget (\(Units.format(budget))) is not longer than the stop margin (\(Units.format(Defaults.stopMargin))): "
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
    let delivery = notifier.map { DeliveryLoop(notifier: $0, until: deadline - Defaults.stopMargin, stop: stop) }
    do {
      // Cancelled (an expiration, a daemon's SIGTERM) while crawling or while
      // making the last delivery round: the loop runs in a task of its own,
      // so it is told, and abandons what it has in flight at once.
      try await withTaskCancellationHandler {
        try await launch(
          compiled, run: runID, deadline: deadline, concurrencyLimit: concurrencyLimit, stop: stop, summary: &summary,
          delivery: delivery, progress: timed)
        if let delivery {
          let report = await delivery.finish()
          summary.notificationsDelivered += report.delivered
          summary.notificationsFailed += report.failed
          for problem in report.problems.prefix(3) { summary.warn("notification: \(problem)") }
        }
      } onCancel: {
        delivery?.cancel()
      }
    } catch {
      // Abandoned, and waited for: no program of a command channel outlives the job.
      delivery?.cancel()
      _ = await delivery?.finish()
      var failed = summary
      failed.outcome = .failed
      failed.finishedAt = now()
      failed.seconds = (clock.now - started).seconds
      try? await store.finishRun(runID, summary: failed)
      throw error
    }
    summary.seconds = (clock.now - started).seconds
    if summary.outcome == .running { summary.outcome = .completed }
    summary.finishedAt = now()
    try await store.finishRun(runID, summary: summary)
    return summary
  }

  // MARK: Every source at once

  /// Runs the sources' crawls interleaved through one pool of requests,
  /// executing the decisions of a ``LaunchMachine``.
  func launch(
    _ sources: [CompiledSource], run: Int64, deadline: ContinuousClock.Instant, concurrencyLimit: Int?,
    stop: StopRequest?, summary: inout RunSummary, delivery: DeliveryLoop? = nil,
    progress: (@Sendable (RunSummary) -> Void)?
  ) async throws {
    let clock = ContinuousClock()
    let concurrency = max(1, min(config.fetch.concurrency, concurrencyLimit ?? .max))
    let stopAt = deadline - Defaults.stopMargin
    let hardStop = deadline + Defaults.grace
    // One process's store: claims last the launch. A fleet's: brief leases,
    // renewed while this worker lives, so a dead worker's URLs come back.
    let shared = store.isShared
    let launchLease = (deadline - clock.now).seconds + Defaults.grace.seconds + 60
    let leaseSeconds = shared ? Defaults.fleetLease.seconds : launchLease
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
      // own); a fleet's workers claim little at a time, so that the last
      // URLs of a crawl are shared among them.
      let cap = min(settings.concurrency, concurrency)
      lanes.append(.init(cap: cap, critical: s.critical, claimSize: shared ? nil : max(cap * 32, 64)))
    }
    var machine = LaunchMachine<ProcessedPage>(lanes: lanes, concurrency: concurrency, commitBatch: Defaults.commitBatch)

    /// What the loop waits for: the machine's events, with what the store
    /// returned beside them.
    enum Outcome: Sendable {
      case event(LaunchMachine<ProcessedPage>.Event)
      case claimed(lane: Int, items: [FrontierItem], pages: [UInt64: PageRecord], generation: Int)
      case committed(CommitResult, [(lane: Int, page: ProcessedPage)])
    }

    let store = self.store
    let owner = self.owner
    let now = self.now
    let renewal = shared ? Task {
      while !Task.isCancelled {
        try? await Task.sleep(for: Defaults.fleetLeaseRenewal)
        _ = try? await store.renewClaims(owner: owner, leaseUntil: now().addingTimeInterval(leaseSeconds))
      }
    } : nil
    defer { renewal?.cancel() }
    try await withThrowingTaskGroup(of: Outcome.self) { group in
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
      var actions = machine.start()
      while true {
        for action in actions {
          switch action {
          case .claim(let lane, let limit, let generation):
            let crawl = crawls[lane].id
            group.addTask {
              var items = try await store.claim(
                crawl: crawl, limit: limit, owner: owner, leaseUntil: now().addingTimeInterval(leaseSeconds), now: now())
              // A fleet's frontier is not exhausted while other workers hold
              // claims: one of them may die, and its URLs return when its
              // leases pass. Look again until then, or until it is time to stop.
              while shared && items.isEmpty && !Task.isCancelled && ContinuousClock.now < stopAt {
                let counts = try await store.frontierCounts(crawl: crawl)
                if counts.queued == 0 && counts.claimed == 0 { break }
                if counts.queued == 0 { try? await Task.sleep(for: Defaults.fleetPoll) }
                items = try await store.claim(
                  crawl: crawl, limit: limit, owner: owner, leaseUntil: now().addingTimeInterval(leaseSeconds), now: now())
              }
              let pages = items.isEmpty ? [:] : try await store.pages(fingerprints: items.map(\.fingerprint))
              return .claimed(lane: lane, items: items, pages: pages, generation: generation)
            }
          case .fetch(let lane, let item):
            let context = contexts[lane]
            let before = previous.removeValue(forKey: item.fingerprint)
            group.addTask { .event(.fetched(lane: lane, page: await context.process(item, previous: before))) }
          case .commit(let batch):
            group.addTask { .committed(try await store.commit(batch.map(\.page.commit)), batch) }
          case .scheduleTick:
            group.addTask {
              try? await Task.sleep(for: Defaults.commitInterval)
              return .event(.tick)
            }
          case .startGrace:
            group.addTask {
              try? await Task.sleep(for: Defaults.grace)
              return .event(.graceOver)
            }
          case .cancelFetches:
            // Fetches end as deferred; a commit in flight finishes regardless
            // (the store does not stop a transaction for cancellation), and
            // later commits of the cancelled pages still run.
            group.cancelAll()
          }
        }
        if machine.isDone { break }
        guard let outcome = try await group.next() else { break }
        // Cancelled (an expired background task): stop as at the deadline. Its
        // actions (a commit of the waiting pages) must be carried out too.
        let onCancel = Task.isCancelled && !machine.stopping ? machine.handle(.stopAt) : []
        switch outcome {
        case .event(let event):
          actions = machine.handle(event)
        case .claimed(let lane, let items, let pages, let generation):
          for (fingerprint, page) in pages { previous[fingerprint] = page }
          actions = machine.handle(.claimed(lane: lane, items: items, generation: generation))
        case .committed(let result, let batch):
          for (lane, page) in batch {
            page.count(into: &summary)
            page.count(into: &summary.sources[lane])
          }
          summary.recordsNew += result.newRecords
          summary.recordsChanged += result.changedRecords
          summary.recordsUnchanged += result.unchangedRecords
          summary.recordsRestored += result.restoredRecords
          summary.notificationsQueued += result.notifications
          for change in result.changes {
            guard let i = summary.sources.firstIndex(where: { $0.name == change.source }) else { continue }
            switch change.kind {
            case .new: summary.sources[i].recordsNew += 1
            case .changed: summary.sources[i].recordsChanged += 1
            case .restored: summary.sources[i].recordsRestored += 1
            case .removed: break
            }
            summary.sources[i].recordsUnchanged -= 1
          }
          if result.notifications > 0 { delivery?.wake() }
          // The run's row keeps its totals as commits land: a run whose
          // process is killed is listed with what it committed. A failure
          // here costs only that listing, never the crawl.
          try? await store.recordRunProgress(run, summary: summary)
          progress?(summary)
          actions = machine.handle(.committed(linksAdded: result.linksAdded))
        }
        actions = onCancel + actions
      }
      group.cancelAll()
    }

    // Each source whose frontier ran dry may have completed its crawl; the
    // others keep their place for the next launch.
    for (i, lane) in machine.lanes.enumerated() where lane.isExhausted {
      let maxPages = sources[i].source.crawl?.maxPages
      if let completion = try await store.completeCrawl(crawls[i].id, maxPages: maxPages, router: router, now: now()) {
        summary.completedSources.append(sources[i].source.name)
        summary.sources[i].completed = true
        summary.recordsRemoved += completion.removed.count
        summary.sources[i].recordsRemoved += completion.removed.count
        summary.notificationsQueued += completion.notifications
        if completion.notifications > 0 { delivery?.wake() }
      }
    }
    // A stop that came as the last pages were committed left nothing for a
    // next launch: when every source completed its crawl, the launch did.
    let everyCrawlCompleted = summary.completedSources.count == sources.count
    if machine.stoppedOnRequest && !everyCrawlCompleted {
      summary.outcome = .interrupted
    } else if machine.stopping && !everyCrawlCompleted {
      summary.outcome = .budget
    }
    // Entries claimed and not fetched, claimed by this launch and failed, or
    // waiting for a retry go back to the queue.
    try await store.releaseClaims(owner: owner)
  }
}
