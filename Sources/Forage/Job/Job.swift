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
public final class Job: Sendable {
  public let config: ForageConfig
  let store: any Store
  let fetcher: Fetcher
  let canonicalizer: URLCanonicalizer
  let owner: String

  /// Creates a job over `store`, fetching through `transport`.
  public init(config: ForageConfig, store: any Store, transport: any Transport) {
    self.config = config
    self.store = store
    self.canonicalizer = URLCanonicalizer(removingQueryParameters: config.removeQueryParameters)
    self.fetcher = Fetcher(transport: transport, settings: config.fetch, robotsArchive: StoreRobotsArchive(store: store))
    self.owner = "pid-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
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
  ///     budget would: in-flight fetches get the grace period, the summary's
  ///     `stoppedOnRequest` is set, and the next launch continues.
  ///   - recoveringClaims: first return every claimed frontier entry to the
  ///     queue: right for a single process after a crash, wrong while other
  ///     jobs of the same process run (pass false there, and recover once at
  ///     start with `Store.releaseClaims(owner: nil)`).
  ///
  /// Cancelling the calling task stops the job as its deadline would: no
  /// new requests, in-flight ones cancelled, everything done so far committed.
  /// - Throws: `EngineError.unknownSource` for an unknown source name;
  ///   `ConfigError` for a source that does not compile; store errors. Fetch failures are not thrown: they
  ///   are counted in the summary and retried on later launches.
  public func run(
    sources names: [String]? = nil, task: String = "run", budget: Duration, concurrencyLimit: Int? = nil,
    recoveringClaims: Bool = true, stop: StopRequest? = nil, progress: (@Sendable (RunSummary) -> Void)? = nil
  ) async throws -> RunSummary {
    let clock = ContinuousClock()
    let started = clock.now
    let deadline = started + budget
    var selected = try config.sources(named: names)
    // Critical sources first, so a short budget serves them.
    selected.sort { $0.critical && !$1.critical }
    let compiled = try selected.map { s throws(ConfigError) in try CompiledSource(s, canonicalizer: canonicalizer) }

    // A single process owns an embedded store: claims left by a killed
    // process go back to the queue.
    if recoveringClaims { try await store.releaseClaims(owner: nil) }
    let runID = try await store.beginRun(task: task, sources: selected.map(\.name), startedAt: Date())

    var summary = RunSummary()
    if budget <= Defaults.stopMargin {
      summary.warn(
        "the budget (\(Units.format(budget))) is not longer than the stop margin (\(Units.format(Defaults.stopMargin))): "
          + "no request could start")
    }
    do {
      for source in compiled {
        if stop?.isRequested == true {
          summary.outcome = .interrupted
          break
        }
        if clock.now >= deadline - Defaults.stopMargin || Task.isCancelled {
          summary.outcome = .budget
          break
        }
        try await crawl(
          source, run: runID, deadline: deadline, concurrencyLimit: concurrencyLimit, stop: stop, summary: &summary,
          progress: progress)
      }
    } catch {
      var failed = summary
      failed.outcome = .failed
      failed.finishedAt = Date()
      failed.seconds = (clock.now - started).seconds
      try? await store.finishRun(runID, summary: failed)
      throw error
    }
    summary.seconds = (clock.now - started).seconds
    if summary.outcome == .running { summary.outcome = .completed }
    summary.finishedAt = Date()
    try await store.finishRun(runID, summary: summary)
    return summary
  }

  // MARK: One source

  func crawl(
    _ source: CompiledSource, run: Int64, deadline: ContinuousClock.Instant, concurrencyLimit: Int?,
    stop: StopRequest?, summary: inout RunSummary, progress: (@Sendable (RunSummary) -> Void)?
  ) async throws {
    let clock = ContinuousClock()
    let s = source.source
    let seeds = s.urls.compactMap { WebURL($0) }.map { PageContext.seed($0, source: source, depth: 0) }
    let crawl = try await store.openCrawl(source: s.name, seeds: seeds, now: Date())
    let settings = config.fetchSettings(for: s)
    let concurrency = max(1, min(settings.concurrency, concurrencyLimit ?? .max))
    let stopAt = deadline - Defaults.stopMargin
    let hardStop = deadline + Defaults.grace
    let lease = Date().addingTimeInterval((deadline - clock.now).seconds + Defaults.grace.seconds + 60)
    let context = PageContext(source: source, settings: settings, fetcher: fetcher, run: run, deadline: deadline)

    /// What the loop waits for: a processed page, a finished commit or
    /// claim, or the end of the grace period.
    enum Event: Sendable {
      case page(ProcessedPage)
      case committed(CommitResult, [ProcessedPage])
      case claimed([FrontierItem], [UInt64: PageRecord], generation: Int)
      case graceOver
      case stopRequested
    }

    var stopping = false
    let store = self.store
    let owner = self.owner
    try await withThrowingTaskGroup(of: Event.self) { group in
      group.addTask {
        try? await Task.sleep(until: hardStop, clock: .continuous)
        return .graceOver
      }
      if let stop {
        group.addTask {
          await stop.wait()
          return .stopRequested
        }
      }
      var stoppedOnRequest = false
      var queue: [(FrontierItem, PageRecord?)] = []
      var next = 0
      var fetching = 0
      var pending: [ProcessedPage] = []
      // When the oldest uncommitted page finished: a slow crawl still
      // commits often, so a killed process loses little.
      var pendingSince = clock.now
      var committing = false
      var claiming = false
      var frontierMayHaveMore = true
      // Counts finished commits, so that an empty claim that raced with a
      // commit adding links is not taken for an exhausted frontier.
      var commits = 0
      var attempted = Set<Int64>()
      let claimSize = max(concurrency * 4, 32)

      while true {
        if !stopping && (clock.now >= stopAt || Task.isCancelled) { stopping = true }
        // Start fetches up to the concurrency limit.
        while !stopping && fetching < concurrency && next < queue.count {
          let (item, previous) = queue[next]
          next += 1
          fetching += 1
          group.addTask { .page(await context.process(item, previous: previous)) }
        }
        if next == queue.count && next > 0 {
          queue.removeAll(keepingCapacity: true)
          next = 0
        }
        // Claim ahead, before the queue runs dry.
        if !stopping && !claiming && frontierMayHaveMore && queue.count - next < concurrency {
          claiming = true
          let generation = commits
          group.addTask {
            let items = try await store.claim(
              crawl: crawl.id, limit: claimSize, owner: owner, leaseUntil: lease, now: Date())
            let pages = items.isEmpty ? [:] : try await store.pages(fingerprints: items.map(\.fingerprint))
            return .claimed(items, pages, generation: generation)
          }
        }
        // Commit in batches; at once when nothing else would make progress.
        let starved = fetching == 0 || (!claiming && next == queue.count)
        let due = pending.count >= Defaults.commitBatch || clock.now - pendingSince >= Defaults.commitInterval
        if !committing && !pending.isEmpty && (due || starved) {
          committing = true
          let batch = pending
          pending.removeAll(keepingCapacity: true)
          group.addTask { .committed(try await store.commit(batch.map(\.commit)), batch) }
        }
        if fetching == 0 && !committing && !claiming && pending.isEmpty
          && (stopping || (!frontierMayHaveMore && next == queue.count)) {
          break
        }
        guard let event = try await group.next() else { break }
        switch event {
        case .page(let page):
          fetching -= 1
          if pending.isEmpty { pendingSince = clock.now }
          pending.append(page)
        case .committed(let result, let batch):
          committing = false
          commits += 1
          for p in batch { p.count(into: &summary) }
          summary.recordsNew += result.newRecords
          summary.recordsChanged += result.changedRecords
          summary.recordsUnchanged += result.unchangedRecords
          if result.linksAdded > 0 { frontierMayHaveMore = true }
          progress?(summary)
        case .claimed(let items, let pages, let generation):
          claiming = false
          // An empty claim that no commit raced with means the frontier is
          // exhausted, until a commit adds links again.
          if items.isEmpty && generation == commits { frontierMayHaveMore = false }
          // A URL that failed earlier in this launch went back to the queue
          // for a later launch: it stays claimed (and is released at the end)
          // rather than being fetched again now.
          queue += items.filter { attempted.insert($0.id).inserted }.map { ($0, pages[$0.fingerprint]) }
        case .graceOver:
          // The grace after the deadline (or the stop request) is over: cancel
          // what is still in flight.
          stopping = true
          group.cancelAll()
        case .stopRequested:
          // As at the deadline: no new claims or fetches; those in flight get
          // the grace period.
          if !Task.isCancelled && !stopping {
            stopping = true
            stoppedOnRequest = true
            group.addTask {
              try? await Task.sleep(for: Defaults.grace)
              return .graceOver
            }
          }
        }
      }
      group.cancelAll()
      if stoppedOnRequest { summary.outcome = .interrupted }
    }

    if stopping {
      if summary.outcome != .interrupted { summary.outcome = .budget }
      try await store.releaseClaims(owner: owner)
    } else if try await store.completeCrawlIfExhausted(crawl.id, now: Date()) {
      summary.completedSources.append(s.name)
    } else {
      // Entries claimed by another process, or failures waiting for a retry.
      try await store.releaseClaims(owner: owner)
    }
  }
}
