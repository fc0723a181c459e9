import Foundation
import ForageHTTP
import ForageScheduler
import ForageStore

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
  /// store). The same seed gives the same trace.
  ///
  /// - Parameters:
  ///   - log: where submission problems and scheduler notes go.
  ///   - launchStarts: in live mode, called with the virtual time as each
  ///     launch starts (a demo site can show that moment's pages).
  ///   - progress: in live mode, called as a launch's job commits, with the
  ///     task and its running totals.
  /// - Throws: store errors (live mode only).
  public static func simulate(
    config: ForageConfig, store: (any Store)?, profile: DeviceProfile, days: Double, seed: UInt64 = 0,
    live: Bool = false, transport: (any Transport)? = nil, log: SchedulerLog = .silent,
    launchStarts: (@Sendable (Date) -> Void)? = nil,
    progress: (@Sendable (TaskDefinition, RunSummary) -> Void)? = nil
  ) async throws -> SimulationResult {
    let scheduler = SimulatedScheduler(
      device: profile, policy: TaskRunner.policy(SchedulingPolicy(), for: config),
      seed: seed, permittedIdentifiers: config.tasks.map(\.id), log: .silent)
    let runLive = live && store != nil
    if runLive, let store {
      try await store.releaseClaims(owner: nil)
      // The store's history reads in simulated time: a report of it shows
      // the simulated days.
      let runner = TaskRunner(
        config: config, store: store, transport: transport ?? Engine.defaultTransport(), log: log,
        dates: { scheduler.now }, progress: progress)
      runner.register(on: scheduler) {
        let now = scheduler.now
        launchStarts?(now)
        return now
      }
    } else {
      let durations = await recordedDurations(store, tasks: config.tasks)
      for task in config.tasks {
        scheduler.register(
          task.id,
          model: ModelBehavior(
            duration: durations[task.id] ?? defaultDuration(task.kind), resubmitAfter: task.every,
            sources: task.sources))
      }
    }
    scheduler.finishLaunching()
    // As every guide does: submit when the app enters the background, and
    // once at the start.
    for task in config.tasks {
      let request = TaskRunner.request(for: task, earliestBeginDate: nil)
      scheduler.submitWhenEnteringBackground(request, earliestBeginAfter: task.every, replacingPending: false)
      do { try scheduler.submit(request) } catch { log.write("\(task.id): \(error)") }
    }
    await scheduler.advance(by: .seconds(days * 86_400))
    let taskSources = Dictionary(uniqueKeysWithValues: config.tasks.map { ($0.id, $0.sources) })
    return SimulationResult(
      profile: profile.name, seed: seed, live: runLive,
      forecast: FreshnessForecast(
        trace: scheduler.trace, sources: taskSources, refreshOnOpen: profile.refreshOnOpen ?? false),
      trace: scheduler.trace)
  }

  /// Runs ``simulate(config:store:profile:days:seed:live:transport:log:)``
  /// in model mode once per seed, in order, and sums the forecasts up as
  /// distributions: each figure's median over the seeds with its p10–p90
  /// range. The same seeds give the same distribution.
  ///
  ///     let spread = try await Engine.simulate(config: config, store: nil, profile: .rarelyUsed, days: 365, seeds: Array(1...20))
  ///     print(spread)
  public static func simulate(
    config: ForageConfig, store: (any Store)?, profile: DeviceProfile, days: Double, seeds: [UInt64],
    log: SchedulerLog = .silent
  ) async throws -> ForecastDistribution {
    var forecasts: [FreshnessForecast] = []
    for seed in seeds {
      let result = try await simulate(config: config, store: store, profile: profile, days: days, seed: seed, log: log)
      forecasts.append(result.forecast)
    }
    return ForecastDistribution(seeds: seeds, forecasts: forecasts)
  }

  /// The model's launch duration for a task with no recorded runs.
  static func defaultDuration(_ kind: TaskKind) -> DurationDistribution {
    switch kind {
    case .appRefresh: return .logNormal(median: .seconds(10), spread: 0.5)
    case .processing, .continuedProcessing: return .logNormal(median: .seconds(60), spread: 0.5)
    }
  }

  /// For each task with recorded runs, a log-normal around the median
  /// duration of its last 50 finished runs that did the work: failed runs
  /// (a store error, or every page failed) are left out, as their few
  /// seconds say nothing about how long the work takes.
  static func recordedDurations(_ store: (any Store)?, tasks: [TaskDefinition]) async -> [String: DurationDistribution] {
    guard let store, let runs = try? await store.runs(limit: 1000) else { return [:] }
    var out: [String: DurationDistribution] = [:]
    for task in tasks {
      let finished = runs.filter { run in
        guard run.task == task.id, let summary = run.summary else { return false }
        return TaskRunner.isRepresentative(summary)
      }
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
