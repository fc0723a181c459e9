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
  /// - Throws: `SchedulerError.unsupportedTaskKind` for a
  ///   `continuedProcessing` task (it cannot run on a schedule); store
  ///   errors (live mode only).
  public static func simulate(
    config: ForageConfig, store: (any Store)?, profile: DeviceProfile, days: Double, seed: UInt64 = 0,
    live: Bool = false, transport: (any Transport)? = nil, log: SchedulerLog = .silent,
    launchStarts: (@Sendable (Date) -> Void)? = nil,
    progress: (@Sendable (TaskDefinition, RunSummary) -> Void)? = nil
  ) async throws -> SimulationResult {
    let requests = try schedulableRequests(config)
    guard live, let store else {
      let recorded = await Recorded(store, tasks: config.tasks)
      return await simulateModel(
        config: config, requests: requests, recorded: recorded, profile: profile, days: days, seed: seed, log: log)
    }
    let scheduler = simulatedScheduler(config: config, profile: profile, seed: seed)
    try await store.releaseClaims(owner: nil)
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
      dates: { scheduler.now }, progress: progress)
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
    await run(scheduler, requests: requests, config: config, days: days, log: log)
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
  /// - Throws: `SchedulerError.unsupportedTaskKind` for a
  ///   `continuedProcessing` task.
  public static func simulate(
    config: ForageConfig, store: (any Store)?, profile: DeviceProfile, days: Double, seeds: [UInt64],
    log: SchedulerLog = .silent
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
            config: config, requests: requests, recorded: recorded, profile: profile, days: days, seed: seed, log: log)
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

  /// The request of every task, or the error of the first that cannot be
  /// scheduled (a `continuedProcessing` task).
  static func schedulableRequests(_ config: ForageConfig) throws(SchedulerError) -> [any TaskRequest] {
    var requests: [any TaskRequest] = []
    for task in config.tasks { requests.append(try TaskRunner.request(for: task, earliestBeginDate: nil)) }
    return requests
  }

  static func simulatedScheduler(config: ForageConfig, profile: DeviceProfile, seed: UInt64) -> SimulatedScheduler {
    SimulatedScheduler(
      device: profile, policy: TaskRunner.policy(SchedulingPolicy(), for: config),
      seed: seed, permittedIdentifiers: config.tasks.map(\.id), log: .silent)
  }

  /// One model-mode run: no store access, no real work.
  static func simulateModel(
    config: ForageConfig, requests: [any TaskRequest], recorded: Recorded, profile: DeviceProfile, days: Double,
    seed: UInt64, log: SchedulerLog
  ) async -> SimulationResult {
    let scheduler = simulatedScheduler(config: config, profile: profile, seed: seed)
    for task in config.tasks {
      scheduler.register(
        task.id,
        model: ModelBehavior(
          duration: recorded.durations[task.id] ?? defaultDuration(task.kind), resubmitAfter: task.every,
          sources: task.sources, cpuShare: task.cpu, bytesPerLaunch: recorded.transfers[task.id] ?? task.transfer))
    }
    await run(scheduler, requests: requests, config: config, days: days, log: log)
    return result(scheduler, config: config, profile: profile, seed: seed, live: false)
  }

  /// Submits every task's request and runs the days.
  static func run(
    _ scheduler: SimulatedScheduler, requests: [any TaskRequest], config: ForageConfig, days: Double, log: SchedulerLog
  ) async {
    scheduler.finishLaunching()
    // As every guide does: submit when the app enters the background, and
    // once at the start.
    for (task, request) in zip(config.tasks, requests) {
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
