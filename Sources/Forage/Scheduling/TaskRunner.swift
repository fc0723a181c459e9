import Foundation
import ForageHTTP
import ForageScheduler
import ForageStore

/// Connects a config's tasks to a `TaskScheduler`: each task's handler first
/// submits its next request (the rule every guide repeats), then runs the
/// job for the task's sources within the launch's budget, adapted to the
/// conditions it launched under.
///
///     let runner = TaskRunner(config: config, store: store, transport: CurlTransport())
///     try await store.release(.frontier, owner: nil)   // once, after a crash
///     runner.register(on: scheduler)
///     scheduler.finishLaunching()
///     try runner.submitAll(to: scheduler, now: Date())
///
/// Expiration cancels the handler's Swift task; the job then stops as at its
/// deadline (in-flight fetches cancelled, everything done committed) and the
/// launch completes with `success: false`. The next launch resumes the crawl.
public struct TaskRunner: Sendable {
  /// The config whose tasks it registers and runs.
  public let config: ForageConfig
  let store: any Store
  let transport: any Transport
  let log: SchedulerLog
  let onFinish: (@Sendable (TaskDefinition, LaunchPlan, RunSummary?) -> Void)?
  /// The date of what launches store (the wall clock, or a simulator's).
  let now: @Sendable () -> Date
  /// Called as a launch's job commits, with its running totals.
  let progress: (@Sendable (TaskDefinition, RunSummary) -> Void)?
  /// What shows the `local` channel's notifications (an iOS app's).
  let localNotifications: (any LocalNotificationPresenter)?
  /// The daemon's name in a fleet: when set, a launch on a shared store
  /// first claims the task's launch (`Store.claimLaunch`, for half the
  /// task's interval, renewed while the launch runs: see `LaunchClaim`) and
  /// is skipped when another daemon of the fleet holds it; its next request
  /// is submitted either way.
  ///
  ///     var runner = TaskRunner(config: config, store: store, transport: transport)
  ///     runner.launchOwner = "daemon-\(hostName)-\(getpid())"
  public var launchOwner: String?
  /// Called when a launch is skipped because another daemon runs it.
  public var onLaunchSkipped: (@Sendable (TaskDefinition) -> Void)?

  /// - Parameters:
  ///   - log: where the runner reports what goes wrong outside a job (a
  ///     next request the scheduler refuses); the runner itself never
  ///     writes to standard error or output.
  ///   - onFinish: called after each launch with its plan and summary
  ///     (nil when the job failed), e.g. to print a line.
  ///   - now: the date of what launches store: the wall clock, or a
  ///     simulated scheduler's virtual one (its history then reads in
  ///     simulated time).
  ///   - progress: called as a launch's job commits, with its running
  ///     totals (a live progress line).
  ///   - localNotifications: what shows the `local` channel's notifications
  ///     (`ForageBackgroundTasks` passes `UNUserNotificationCenter`'s).
  public init(
    config: ForageConfig, store: any Store, transport: any Transport, log: SchedulerLog = .silent,
    onFinish: (@Sendable (TaskDefinition, LaunchPlan, RunSummary?) -> Void)? = nil,
    now: @escaping @Sendable () -> Date = { Date() },
    progress: (@Sendable (TaskDefinition, RunSummary) -> Void)? = nil,
    localNotifications: (any LocalNotificationPresenter)? = nil
  ) {
    self.localNotifications = localNotifications
    self.now = now
    self.progress = progress
    self.config = config
    self.store = store
    self.transport = transport
    self.log = log
    self.onFinish = onFinish
  }

  /// Registers a live handler for every task of the config.
  ///
  /// - Parameter now: the scheduler's clock (a simulated scheduler's virtual
  ///   time), for the next request's earliest begin date.
  public func register(on scheduler: any TaskScheduler, now: @escaping @Sendable () -> Date = { Date() }) {
    for task in config.tasks {
      scheduler.register(task.id) { background in
        try await self.launch(task, background, scheduler: scheduler, now: now())
      }
    }
  }

  /// Submits a request for every scheduled task that has none pending, due
  /// at `now`. A `continuedProcessing` task is left out: the user starts it
  /// (``startNow(_:on:)`` from their action).
  ///
  /// - Throws: `SchedulerError` from the scheduler (not permitted, too many
  ///   pending requests…).
  public func submitAll(to scheduler: any TaskScheduler, now: Date) async throws {
    let pending = Set(await scheduler.pendingTaskRequests().map(\.identifier))
    for task in config.tasks where task.kind != .continuedProcessing && !pending.contains(task.id) {
      try scheduler.submit(TaskRunner.request(for: task, earliestBeginDate: now))
    }
  }

  /// Submits the `continuedProcessing` task `id` now: the user's "refresh
  /// now", called from their action while the app is in the foreground.
  /// Its launch reports progress (sources done) and runs until its sources
  /// are refreshed, its budget ends or the system expires it.
  ///
  ///     Button("Refresh now") { try? runner.startNow("com.example.refresh-now", on: scheduler) }
  ///
  /// - Throws: `SchedulerError.unsupportedTaskKind` when `id` names no
  ///   `continuedProcessing` task of the config; the scheduler's errors
  ///   (`immediateRunIneligible` for a `.fail` strategy that cannot start).
  public func startNow(_ id: String, on scheduler: any TaskScheduler) throws(SchedulerError) {
    guard let task = config.tasks.first(where: { $0.id == id && $0.kind == .continuedProcessing }) else {
      throw SchedulerError.unsupportedTaskKind.with(identifier: id, detail: "the config has no continuedProcessing task \"\(id)\"")
    }
    try scheduler.submit(TaskRunner.request(for: task, earliestBeginDate: nil))
  }

  /// The request that schedules `task`: for a `continuedProcessing` task, a
  /// ``ContinuedProcessingTaskRequest`` with its title, subtitle and
  /// strategy (never a processing request), to submit from the user's action.
  ///
  /// - Throws: never for the three kinds of ``TaskKind``; typed so that a
  ///   kind a scheduler cannot express can be refused
  ///   (`SchedulerError.unsupportedTaskKind`).
  public static func request(for task: TaskDefinition, earliestBeginDate: Date?) throws(SchedulerError) -> any TaskRequest {
    switch task.kind {
    case .appRefresh:
      return AppRefreshTaskRequest(identifier: task.id, earliestBeginDate: earliestBeginDate)
    case .processing:
      return ProcessingTaskRequest(
        identifier: task.id, earliestBeginDate: earliestBeginDate,
        requiresNetworkConnectivity: task.requiresNetwork, requiresExternalPower: task.requiresExternalPower)
    case .continuedProcessing:
      return ContinuedProcessingTaskRequest(
        identifier: task.id, title: task.title ?? task.id, subtitle: task.subtitle ?? "", strategy: task.strategy)
    }
  }

  /// `base` with the config's task budgets: every task's launches get the
  /// budget its definition gives (the daemon's and the simulator's policy).
  ///
  ///     let policy = TaskRunner.policy(.server, for: config)
  public static func policy(_ base: SchedulingPolicy, for config: ForageConfig) -> SchedulingPolicy {
    var p = base
    for task in config.tasks { p.budgetOverrides[task.id] = task.budget }
    return p
  }

  /// ``policy(_:for:)`` with this runner's config.
  public func policy(_ base: SchedulingPolicy) -> SchedulingPolicy {
    TaskRunner.policy(base, for: config)
  }

  /// One launch: resubmit, plan, run the job, report what was refreshed.
  func launch(_ task: TaskDefinition, _ background: BackgroundTask, scheduler: any TaskScheduler, now: Date) async throws {
    // Resubmit first: if this launch is killed, the next one is still
    // scheduled. A continued-processing task has no schedule: the user
    // starts each launch.
    let continued = task.kind == .continuedProcessing
    if !continued {
      do {
        try scheduler.submit(TaskRunner.request(for: task, earliestBeginDate: now.addingTimeInterval(task.every.seconds)))
      } catch {
        log.write("cannot resubmit \(task.id): \(error)")
      }
    }
    // In a fleet, one daemon runs each due launch: the others skip it (their
    // next request is already submitted, so the schedule goes on).
    // The claim is renewed while the launch runs (see `LaunchClaim`).
    var claim: LaunchClaim?
    if let owner = launchOwner, store.isShared {
      claim = try await LaunchClaim.take(task: task, daemon: owner, store: store, now: now)
      guard claim != nil else {
        background.reportRefreshed(sources: [])
        onLaunchSkipped?(task)
        return
      }
    }
    if let claim {
      try await claim.hold(log: log, now: self.now) { try await run(task, background) }
    } else {
      try await run(task, background)
    }
  }

  /// What a launch does once it is this process's to run: plan, run the
  /// job, report what was refreshed.
  private func run(_ task: TaskDefinition, _ background: BackgroundTask) async throws {
    let continued = task.kind == .continuedProcessing
    let plan = LaunchPlan(task: task, config: config, conditions: background.conditions)
    guard !plan.sources.isEmpty else {
      background.reportRefreshed(sources: [])  // every source waits: none is refreshed
      onFinish?(task, plan, RunSummary())
      return
    }
    let notifier = localNotifications.flatMap { presenter in
      config.notify.isEmpty
        ? nil : Notifier(config: config, store: store, transport: transport, now: self.now, localNotifications: presenter)
    }
    let job = Job(config: config, store: store, transport: transport, notifier: notifier, now: self.now)
    do {
      let progress = self.progress
      // A continued-processing launch shows its progress in pages, after
      // each commit (which also keeps it from expiring for want of progress
      // while pages come in).
      let known = TaskRunner.knownPages(plan.sources.compactMap { config.source(named: $0) })
      @Sendable func reportPages(_ summary: RunSummary, done: Bool) {
        let p = TaskRunner.pageProgress(summary, knownPages: known, finished: done)
        background.updateProgress(completedUnitCount: p.completedUnitCount, totalUnitCount: p.totalUnitCount)
      }
      if continued { reportPages(RunSummary(), done: false) }
      let report: (@Sendable (RunSummary) -> Void)?
      switch (progress, continued) {
      case (nil, false): report = nil
      case (let progress, _):
        report = { @Sendable summary in
          if continued { reportPages(summary, done: false) }
          progress?(task, summary)
        }
      }
      let summary = try await job.run(
        sources: plan.sources, task: task.id, budget: background.remainingBudget,
        concurrencyLimit: plan.concurrencyLimit, recoveringClaims: false,
        conditions: background.conditions, progress: report)
      if continued { reportPages(summary, done: !summary.stoppedByBudget) }
      let refreshed = TaskRunner.refreshedSources(summary)
      background.reportRefreshed(sources: refreshed)
      let downloadProgress: (@Sendable (Int64, Int64) -> Void)? =
        task.kind == .continuedProcessing
        ? { @Sendable done, total in background.updateProgress(completedUnitCount: done, totalUnitCount: total) } : nil
      await TaskRunner.afterCrawl(
        task, summary: summary, config: config, store: store, fetcher: job.fetcher,
        remaining: { background.remainingBudget }, progress: downloadProgress, log: log, now: self.now())
      onFinish?(task, plan, summary)
      if summary.stoppedByBudget { throw CancellationError() }
      // A launch that left a planned source unrefreshed (every page failed,
      // or its crawl did not complete) did not do its work: it completes
      // with failure, as Apple's `setTaskCompleted(success: false)`.
      if !plan.sources.allSatisfy(refreshed.contains) { background.setTaskCompleted(success: false) }
    } catch let error as CancellationError {
      throw error
    } catch {
      onFinish?(task, plan, nil)
      throw error
    }
  }
}

extension TaskRunner {
  /// A continued-processing launch's progress, in pages: those done so far
  /// (answered or failed) of the pages known. `knownPages` is the launch's
  /// start URLs when none of its sources crawls or reads a sitemap, else 0:
  /// a crawl finds its pages as it goes, so the total is unknown (0, an
  /// indeterminate bar) until the launch ends, when it is the pages done.
  ///
  ///     TaskRunner.pageProgress(summary, knownPages: 0, finished: false)   // 37 of unknown
  public static func pageProgress(_ summary: RunSummary, knownPages: Int64, finished: Bool) -> TaskProgress {
    let done = Int64(summary.pagesFetched + summary.pagesNotModified + summary.pagesFresh + summary.pagesFailed)
    let total = finished ? done : knownPages > 0 ? max(knownPages, done) : 0
    return TaskProgress(completedUnitCount: done, totalUnitCount: total)
  }

  /// The pages a launch of `sources` will fetch, when they are known in
  /// advance (every source is a list of URLs); 0 when a source crawls or
  /// reads a sitemap.
  static func knownPages(_ sources: [Source]) -> Int64 {
    guard sources.allSatisfy({ $0.crawl == nil && $0.sitemap == nil }) else { return 0 }
    return Int64(sources.reduce(0) { $0 + $1.urls.count })
  }

  /// A task's launch after its crawl, the same from every front end (a
  /// scheduler's launch, `forage run --task`): a processing task has
  /// minutes, so the maintenance step (pruning the change history) runs
  /// there, never in a refresh's budget; then the registered record sinks
  /// (`Engine.registerSink`) get the new changes, and queued downloads (feed
  /// enclosures, `forage download`) what is left of the budget
  /// (`Downloads.launch`). Failures are logged, never thrown.
  static func afterCrawl(
    _ task: TaskDefinition, summary: RunSummary, config: ForageConfig, store: any Store, fetcher: Fetcher,
    remaining: @Sendable () -> Duration, progress: (@Sendable (Int64, Int64) -> Void)?, log: SchedulerLog,
    now: Date
  ) async {
    if task.kind != .appRefresh, !summary.stoppedByBudget, !config.historyRetention.isEmpty {
      do { _ = try await store.pruneHistory(config.historyRetention, now: now) } catch {
        log.write("\(task.id): pruning the change history failed: \(error)")
      }
    }
    // The app's record sinks first: local, quick, and what its screens show.
    await deliverToSinks(store: store, remaining: remaining, log: log)
    await Downloads.launch(
      task, summary: summary, config: config, store: store, fetcher: fetcher, remaining: remaining,
      progress: progress, log: log)
  }

  /// The sources a launch actually brought up to date: those whose crawl
  /// completed in the launch with at least one page answered (fetched, not
  /// modified, or still fresh). A source whose every page failed (an
  /// unreachable host) is not refreshed, nor is one whose crawl the budget
  /// cut short.
  public static func refreshedSources(_ summary: RunSummary) -> [String] {
    summary.sources.filter { $0.completed && $0.pagesAnswered > 0 }.map(\.name)
  }

  /// True when a finished run says how long the task's work takes: it did
  /// not fail, and at least one page was answered. A launch whose every
  /// page failed ends in moments and says nothing about the work.
  public static func isRepresentative(_ summary: RunSummary) -> Bool {
    summary.outcome != .failed && summary.outcome != .running && summary.pagesAnswered > 0
  }
}

extension PageTally {
  /// Pages that came back: fetched, not modified, or still fresh.
  var pagesAnswered: Int { pagesFetched + pagesNotModified + pagesFresh }
}

/// What a launch runs, given the conditions it launched under.
///
/// - On battery, concurrency drops to a quarter (at least 1).
/// - On an expensive or constrained network (cellular, Low Data Mode),
///   sources marked `wifiOnly` wait for a later launch.
/// - In Low Power Mode, only `critical` sources run.
public struct LaunchPlan: Sendable, Hashable {
  /// The sources this launch refreshes, critical first.
  public var sources: [String]
  /// Sources left for a later launch, with the reason.
  public var waiting: [String: String]
  /// The concurrency cap, or nil for the config's.
  public var concurrencyLimit: Int?

  /// The plan for a launch of `task` under `conditions`: which of its sources run now and which wait.
  public init(task: TaskDefinition, config: ForageConfig, conditions: DeviceConditions) {
    var run: [String] = []
    var waiting: [String: String] = [:]
    for name in task.sources {
      guard let source = config.source(named: name) else { continue }
      if conditions.isLowPowerModeEnabled && !source.critical {
        waiting[name] = "Low Power Mode: only critical sources run"
      } else if source.wifiOnly && (conditions.network.isExpensive || conditions.network.isConstrained) {
        waiting[name] = "Wi-Fi only, and the network is \(conditions.network)"
      } else {
        run.append(name)
      }
    }
    self.sources = run
    self.waiting = waiting
    if !conditions.isCharging {
      let configured = config.fetch.concurrency
      concurrencyLimit = max(1, configured / 4)
    } else {
      concurrencyLimit = nil
    }
  }
}
