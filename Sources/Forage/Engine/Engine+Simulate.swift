import Foundation
import ForageHTTP
import ForageScheduler
import ForageStore
import ForageSupport

/// A freshness forecast and the trace it was made from.
public struct SimulationResult: Sendable {
  /// The device profile's name.
  public var profile: String
  /// The seed that decided every random draw.
  public var seed: UInt64
  /// Whether the launches ran the real jobs (`true`) or model durations.
  public var live: Bool
  /// The age of each source's data at each app open.
  public var forecast: FreshnessForecast
  /// Every scheduling event of the run.
  public var trace: Trace
}

extension Engine {
  /// Runs the config's tasks for `days` on a simulated device and forecasts
  /// how fresh each source's data will be when the user opens the app.
  ///
  ///     let result = try await Engine.simulate(config: config, store: nil, profile: .commuter, days: 30)
  ///     print(result.forecast)
  ///
  /// Launch durations come from the task's recorded runs in `store` when it
  /// has some (model mode), or from the real jobs with `live` (which needs a
  /// store). A task's CPU use is its declared `cpu` (model mode) or the
  /// process's measured CPU time around each live launch, for the CPU
  /// monitor; its transfer, for the cellular data budget, is the average of
  /// its recorded runs' bytes, else its declared `transfer`, and in live
  /// mode each launch's measured bytes. The same seed gives the same trace.
  ///
  /// - Parameters:
  ///   - log: where submission problems and scheduler notes go.
  ///   - launchStarts: in live mode, called with the virtual time as each
  ///     launch starts (a demo site can show that moment's pages).
  ///   - progress: in live mode, called as a launch's job commits, with the
  ///     task and its running totals.
  ///   - refreshNow: the share of app opens (0 to 1) at which the user taps
  ///     "refresh now", submitting the config's `continuedProcessing` tasks;
  ///     nil: the user never does, and those tasks never run.
  /// - Throws: store errors (live mode only).
  public static func simulate(
    config: ForageConfig, store: (any Store)?, profile: DeviceProfile, days: Double, seed: UInt64 = 0,
    live: Bool = false, transport: (any Transport)? = nil, log: SchedulerLog = .silent,
    launchStarts: (@Sendable (Date) -> Void)? = nil,
    progress: (@Sendable (TaskDefinition, RunSummary) -> Void)? = nil,
    refreshNow: Double? = nil
  ) async throws -> SimulationResult {
    let requests = try schedulableRequests(config)
    guard live, let store else {
      let recorded = await Recorded(store, tasks: config.tasks)
      return await simulateModel(
        config: config, requests: requests, recorded: recorded, profile: profile, days: days, seed: seed, log: log,
        refreshNow: refreshNow)
    }
    let scheduler = simulatedScheduler(config: config, profile: profile, seed: seed)
    try await store.release(.frontier, owner: nil)
    let recorded = await Recorded(store, tasks: config.tasks)
    // Each launch reports the bytes its job received, for the data budget.
    let transfers = Locked<[String: Int64]>([:])
    // The store's history reads in simulated time: a report of it shows
    // the simulated days.
    let runner = TaskRunner(
      config: config, store: store, transport: transport ?? Engine.defaultTransport(), log: log,
      onFinish: { task, _, summary in
        if let summary { transfers.withLock { $0[task.id] = summary.bytes } }
      },
      now: { scheduler.now }, progress: progress)
    for task in config.tasks {
      if let bytes = recorded.transfers[task.id] ?? task.transfer { scheduler.expectTransfer(bytes, for: task.id) }
      scheduler.register(task.id) { background in
        let now = scheduler.now
        launchStarts?(now)
        transfers.withLock { $0[task.id] = nil }
        defer {
          if let bytes = transfers.withLock({ $0[task.id] }) { background.reportTransferred(bytes: bytes) }
        }
        try await runner.launch(task, background, scheduler: scheduler, now: now)
      }
    }
    await run(scheduler, requests: requests, config: config, days: days, log: log, refreshNow: refreshNow)
    return result(scheduler, config: config, profile: profile, seed: seed, live: true)
  }

  /// Runs ``simulate(config:store:profile:days:seed:live:transport:log:launchStarts:progress:)``
  /// in model mode once per seed and sums the forecasts up as
  /// distributions: each figure's median over the seeds with its p10–p90
  /// range, and the seeds' notes. The store is read once; the seeds run
  /// side by side, each exactly as it runs alone, so the same seeds give
  /// the same distribution.
  ///
  ///     let spread = try await Engine.simulate(config: config, store: nil, profile: .rarelyUsed, days: 365, seeds: Array(1...20))
  ///     print(spread)
  ///
  /// - Parameter refreshNow: as for one seed: the share of app opens at
  ///   which the user starts the `continuedProcessing` tasks.
  public static func simulate(
    config: ForageConfig, store: (any Store)?, profile: DeviceProfile, days: Double, seeds: [UInt64],
    log: SchedulerLog = .silent, refreshNow: Double? = nil
  ) async throws -> ForecastDistribution {
    let requests = try schedulableRequests(config)
    let recorded = await Recorded(store, tasks: config.tasks)
    var forecasts = [FreshnessForecast?](repeating: nil, count: seeds.count)
    let width = max(1, ProcessInfo.processInfo.activeProcessorCount)
    await withTaskGroup(of: (Int, FreshnessForecast).self) { group in
      var next = 0
      func add() {
        guard next < seeds.count else { return }
        let (i, seed) = (next, seeds[next])
        next += 1
        group.addTask {
          let result = await simulateModel(
            config: config, requests: requests, recorded: recorded, profile: profile, days: days, seed: seed, log: log,
            refreshNow: refreshNow)
          return (i, result.forecast)
        }
      }
      for _ in 0..<width { add() }
      for await (i, forecast) in group {
        forecasts[i] = forecast
        add()
      }
    }
    return ForecastDistribution(seeds: seeds, forecasts: forecasts.compactMap { $0 })
  }

  /// The request of every task (a `continuedProcessing` task's is submitted
  /// only when the user starts it), or the error of the first that has none.
  static func schedulableRequests(_ config: ForageConfig) throws(SchedulerError) -> [any TaskRequest] {
    var requests: [any TaskRequest] = []
    for task in config.tasks { requests.append(try TaskRunner.request(for: task, earliestBeginDate: nil)) }
    return requests
  }

  static func simulatedScheduler(config: ForageConfig, profile: DeviceProfile, seed: UInt64) -> SimulatedScheduler {
    SimulatedScheduler(
      device: profile, policy: separateRefreshTasks(TaskRunner.policy(SchedulingPolicy(), for: config), config),
      seed: seed, permittedIdentifiers: config.tasks.map(\.id), log: .silent)
  }

  /// `policy` with room for one pending request per `appRefresh` task of
  /// the config: the daemon and the simulator run several refresh tasks as
  /// separate tasks (on iOS, which keeps one pending refresh request per
  /// app, the Apple adapter serves them through one; see ``iOSNotes(for:refreshNow:)``).
  static func separateRefreshTasks(_ policy: SchedulingPolicy, _ config: ForageConfig) -> SchedulingPolicy {
    var p = policy
    p.maxPendingAppRefreshRequests = max(p.maxPendingAppRefreshRequests, config.tasks.filter { $0.kind == .appRefresh }.count)
    return p
  }

  /// One model-mode run: no store access, no real work.
  static func simulateModel(
    config: ForageConfig, requests: [any TaskRequest], recorded: Recorded, profile: DeviceProfile, days: Double,
    seed: UInt64, log: SchedulerLog, refreshNow: Double? = nil
  ) async -> SimulationResult {
    let scheduler = simulatedScheduler(config: config, profile: profile, seed: seed)
    for task in config.tasks {
      scheduler.register(
        task.id,
        model: ModelBehavior(
          duration: recorded.durations[task.id] ?? defaultDuration(task.kind),
          resubmitAfter: task.kind == .continuedProcessing ? nil : task.every,
          sources: task.sources, cpuShare: task.cpu, bytesPerLaunch: recorded.transfers[task.id] ?? task.transfer))
    }
    await run(scheduler, requests: requests, config: config, days: days, log: log, refreshNow: refreshNow)
    return result(scheduler, config: config, profile: profile, seed: seed, live: false)
  }

  /// Submits every task's request and runs the days; a
  /// `continuedProcessing` task is submitted when the user opens the app,
  /// at `refreshNow` of the opens.
  static func run(
    _ scheduler: SimulatedScheduler, requests: [any TaskRequest], config: ForageConfig, days: Double, log: SchedulerLog,
    refreshNow: Double? = nil
  ) async {
    scheduler.finishLaunching()
    // As every guide does: submit when the app enters the background, and
    // once at the start.
    for (task, request) in zip(config.tasks, requests) {
      if task.kind == .continuedProcessing {
        if let refreshNow { scheduler.submitWhenOpeningApp(request, share: refreshNow) }
        continue
      }
      scheduler.submitWhenEnteringBackground(request, earliestBeginAfter: task.every, replacingPending: false)
      do { try scheduler.submit(request) } catch { log.write("\(task.id): \(error)") }
    }
    await scheduler.advance(by: .seconds(days * 86_400))
  }

  static func result(
    _ scheduler: SimulatedScheduler, config: ForageConfig, profile: DeviceProfile, seed: UInt64, live: Bool
  ) -> SimulationResult {
    let taskSources = Dictionary(uniqueKeysWithValues: config.tasks.map { ($0.id, $0.sources) })
    let trace = scheduler.trace
    return SimulationResult(
      profile: profile.name, seed: seed, live: live,
      forecast: FreshnessForecast(trace: trace, sources: taskSources, refreshOnOpen: profile.refreshOnOpen ?? false),
      trace: trace)
  }

  /// What iOS does differently from the simulation with this config, for
  /// `forage simulate` to say: several `appRefresh` tasks share one pending
  /// request there; a `continuedProcessing` task runs only when the user
  /// starts it (`refreshNow`, the share of opens).
  public static func iOSNotes(for config: ForageConfig, refreshNow: Double?) -> [String] {
    var notes: [String] = []
    let refresh = config.tasks.filter { $0.kind == .appRefresh }
    if refresh.count > 1 {
      let ids = refresh.map(\.id).joined(separator: ", ")
      notes.append(
        "iOS keeps one pending refresh request per app: the \(refresh.count) appRefresh tasks (\(ids)) run here as separate "
          + "tasks; in the app, ForageBackgroundTasks serves them through one request, due at the soonest of their next "
          + "due times, whose launch runs every one of them that is due: there they come due together and share each "
          + "launch's budget (about 30s).")
    }
    for task in config.tasks where task.kind == .continuedProcessing {
      if let share = refreshNow {
        let percent = Int((share * 100).rounded())
        notes.append(
          "\(task.id) (continuedProcessing) was started by the user at \(percent)% of app opens: it starts at once while the "
            + "app is open (\(task.strategy == .fail ? "or fails, strategy fail, when it cannot" : "or waits, strategy queue, when it cannot")), "
            + "goes on in the background until done, and the system expires it when it stops reporting progress, "
            + "the device gets critically hot or its battery critically low.")
      } else {
        notes.append(
          "\(task.id) (continuedProcessing) runs only when the user starts it from the app: not forecast; "
            + "give --refresh-now SHARE (the share of app opens at which the user taps it) to include it.")
      }
    }
    return notes
  }

  /// The model's launch duration for a task with no recorded runs.
  static func defaultDuration(_ kind: TaskKind) -> DurationDistribution {
    switch kind {
    case .appRefresh: return .logNormal(median: .seconds(10), spread: 0.5)
    case .processing, .continuedProcessing: return .logNormal(median: .seconds(60), spread: 0.5)
    }
  }

  /// What the store says about each task's work: its duration model and
  /// its average transfer per launch, from the runs that did the work.
  struct Recorded: Sendable {
    var durations: [String: DurationDistribution] = [:]
    /// Average bytes received per launch, over the same runs as the durations.
    var transfers: [String: Int64] = [:]

    init(_ store: (any Store)?, tasks: [TaskDefinition]) async {
      guard let store, let runs = try? await store.runs(limit: 1000) else { return }
      durations = Engine.recordedDurations(runs, tasks: tasks)
      for task in tasks {
        let bytes = Engine.representative(runs, task: task.id).prefix(50).compactMap { $0.summary?.bytes }
        guard !bytes.isEmpty else { continue }
        transfers[task.id] = bytes.reduce(0, +) / Int64(bytes.count)
      }
    }
  }

  /// For each task with recorded runs, a log-normal around the median
  /// duration of its last 50 finished runs that did the work: failed runs
  /// (a store error, or every page failed) are left out, as their few
  /// seconds say nothing about how long the work takes.
  static func recordedDurations(_ store: (any Store)?, tasks: [TaskDefinition]) async -> [String: DurationDistribution] {
    guard let store, let runs = try? await store.runs(limit: 1000) else { return [:] }
    return recordedDurations(runs, tasks: tasks)
  }

  /// The runs of `task` that did the work (newest first, as the store lists them).
  static func representative(_ runs: [TaskRun], task: String) -> [TaskRun] {
    runs.filter { run in
      guard run.task == task, let summary = run.summary else { return false }
      return TaskRunner.isRepresentative(summary)
    }
  }

  static func recordedDurations(_ runs: [TaskRun], tasks: [TaskDefinition]) -> [String: DurationDistribution] {
    var out: [String: DurationDistribution] = [:]
    for task in tasks {
      let finished = representative(runs, task: task.id)
      let seconds = finished.prefix(50).compactMap { run -> Double? in
        guard let finished = run.summary?.finishedAt else { return nil }
        return finished.timeIntervalSince(run.startedAt)
      }.sorted()
      guard !seconds.isEmpty else { continue }
      let median = seconds[seconds.count / 2]
      out[task.id] = .logNormal(median: .milliseconds(Int64(max(median, 0.05) * 1000)), spread: 0.5)
    }
    return out
  }
}
