import Foundation
import Forage
import ForageScheduler
import ForageStore

/// `forage simulate`: runs the config's tasks on a simulated device for N
/// days and forecasts how fresh each source's data will be.
struct SimulateCommand: Command {
  static let name = "simulate"
  static let abstract = "Forecast data freshness on a simulated device."
  static let arguments: [Argument] = [
    .option("--config", "FILE", "The config file.", default: Defaults.configFile),
    .option("--days", "N", "Days to simulate, 1 to 3650.", default: "7"),
    .option(
      "--profile", "NAME|FILE",
      "commuter, night-charger, heavy-user, rarely-used, server, or a JSON profile file.",
      default: "commuter"),
    .option("--seed", "S", "Random seed; the same seed gives the same trace.", default: "1"),
    .flag("--live", "Run the real jobs (writes to the store)."),
    .option("--store", "PATH", "SQLite file.", default: "the config's, beside the config"),
    .flag("--trace", "Also print every launch, expiration, completion and kill."),
    .flag("--json", "Print the forecast (and trace) as JSON."),
  ]
  static let discussion = """
    Simulates the config's background tasks on a device for N days, under
    the scheduling model of docs/scheduling-model.md (launch placement,
    daily allowance, idle windows, power and network, Low Power Mode,
    expiration and kills), with a virtual clock: a year takes about a second.
    Prints launches, expirations and kills per task, and the freshness
    forecast: for each source, the age of its data at each simulated app
    open (median, 95th percentile, worst).

    Launches take a duration drawn from the task's recorded runs in the store
    when there are any (median of the last 50), else a default (about 10s for
    refresh tasks, 60s for processing tasks). With --live, each launch runs
    the real job against the real network instead, its budget measured in
    real time while the virtual clock waits.
    """

  var config = Defaults.configFile
  var days = 7
  var profile = "commuter"
  var seed: UInt64 = 1
  var live = false
  var store: String?
  var trace = false
  var json = false

  init(_ args: inout ArgumentList) throws(UsageError) {
    config = try args.option("--config") ?? config
    if let d = try args.option("--days") {
      guard let n = Int(d), n > 0, n <= 3650 else { throw UsageError("--days expects a number from 1 to 3650, not \"\(d)\"") }
      days = n
    }
    profile = try args.option("--profile") ?? profile
    if let s = try args.option("--seed") {
      guard let n = UInt64(s) else { throw UsageError("--seed expects a whole number, not \"\(s)\"") }
      seed = n
    }
    live = args.flag("--live")
    store = try args.option("--store")
    trace = args.flag("--trace")
    json = args.flag("--json")
    try args.expectNoMore()
  }

  func run(_ out: Terminal) async -> ExitStatus {
    guard let loaded = loadConfig(config, needingTasksFor: "simulate", out) else { return .badInput }
    let device: DeviceProfile
    do { device = try DeviceProfile.named(orPath: profile) } catch {
      out.error("forage simulate", error)
      return .badInput
    }
    let location = store ?? Engine.storeLocation(for: loaded, configPath: config)
    let opened: (any Store)?
    if live || FileManager.default.fileExists(atPath: location) {
      do { opened = try Engine.openStore(location) } catch {
        out.error("forage simulate", error)
        return .badInput
      }
    } else {
      opened = nil
    }

    let log = SchedulerLog { out.error("forage: \($0)") }
    let runner = opened.map { TaskRunner(config: loaded, store: $0, transport: Engine.defaultTransport(), log: log) }
    let scheduler = SimulatedScheduler(
      device: device, policy: TaskRunner.policy(SchedulingPolicy(), for: loaded),
      seed: seed, permittedIdentifiers: loaded.tasks.map(\.id), log: .silent)
    if live, let runner, let opened {
      do { try await opened.releaseClaims(owner: nil) } catch {
        out.error("forage simulate", error)
        return .jobFailed
      }
      runner.register(on: scheduler, now: { scheduler.now })
    } else {
      let durations = await SimulationPlan.recordedDurations(opened, tasks: loaded.tasks)
      for task in loaded.tasks {
        scheduler.register(task.id, model: ModelBehavior(
          duration: durations[task.id] ?? SimulationPlan.defaultDuration(task.kind),
          resubmitAfter: task.every, sources: task.sources))
      }
    }
    scheduler.finishLaunching()
    // As every guide does: submit when the app enters the background, and
    // once at the start.
    for task in loaded.tasks {
      let request = TaskRunner.request(for: task, earliestBeginDate: nil)
      scheduler.submitWhenEnteringBackground(request, earliestBeginAfter: task.every, replacingPending: false)
      do { try scheduler.submit(request) } catch {
        out.error("forage simulate: \(task.id): \(error)")
      }
    }
    await scheduler.advance(by: .seconds(days * 86_400))

    let taskSources = Dictionary(uniqueKeysWithValues: loaded.tasks.map { ($0.id, $0.sources) })
    let forecast = FreshnessForecast(trace: scheduler.trace, sources: taskSources)
    if json {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
      encoder.dateEncodingStrategy = .iso8601
      struct Output: Encodable { var profile: String; var seed: UInt64; var forecast: FreshnessForecast; var trace: Trace? }
      let data = (try? encoder.encode(Output(profile: device.name, seed: seed, forecast: forecast, trace: trace ? scheduler.trace : nil))) ?? Data()
      out.print(String(decoding: data, as: UTF8.self))
    } else {
      if trace { out.print(scheduler.trace.description + "\n") }
      out.print("Profile: \(device.name), seed \(seed)\(live ? ", live jobs" : ", model durations")")
      out.print(forecast.description)
    }
    try? await opened?.close()
    return .ok
  }
}

/// Model-mode settings for `forage simulate`.
enum SimulationPlan {
  static func defaultDuration(_ kind: TaskKind) -> DurationDistribution {
    switch kind {
    case .appRefresh: return .logNormal(median: .seconds(10), spread: 0.5)
    case .processing, .continuedProcessing: return .logNormal(median: .seconds(60), spread: 0.5)
    }
  }

  /// For each task with recorded runs, a log-normal around the median
  /// duration of its last 50 finished runs.
  static func recordedDurations(_ store: (any Store)?, tasks: [TaskDefinition]) async -> [String: DurationDistribution] {
    guard let store, let runs = try? await store.runs(limit: 1000) else { return [:] }
    var out: [String: DurationDistribution] = [:]
    for task in tasks {
      let seconds = runs.filter { $0.task == task.id }.prefix(50).compactMap { run -> Double? in
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
