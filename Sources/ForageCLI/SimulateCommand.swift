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
    .option("--config", "FILE", "The config file.", default: EngineDefaults.configFile),
    .option("--days", "N", "Days to simulate, 1 to 3650.", default: "7"),
    .option(
      "--profile", "NAME|FILE",
      "commuter, night-charger, heavy-user, rarely-used, server, or a JSON profile file.",
      default: "commuter"),
    .option(
      "--seed", "S",
      "The first seed; given alone, one run of seed S (the same seed gives the same trace).", default: "1"),
    .option(
      "--seeds", "N",
      "Run seeds S to S+N-1 and report each figure as the median over them with its p10-p90 range (1 to 1000); "
        + "without --seed, --live or --trace, \(SimulateCommand.defaultSeeds).",
      default: "\(SimulateCommand.defaultSeeds)"),
    .flag(
      "--refresh-on-open",
      "The app fetches every source when the user opens it: each open counts as a refresh (the profile's refreshOnOpen)."),
    .option(
      "--refresh-now", "SHARE",
      "The user taps \"refresh now\" at this share of app opens (0 to 1; 1 is every open), starting the config's "
        + "continuedProcessing tasks.",
      default: "never: those tasks are not forecast"),
    .flag("--live", "Run the real jobs (writes to the store); one seed."),
    .option("--store", "PATH", "A SQLite file or a postgres:// URL.", default: "the config's, beside the config"),
    .flag("--trace", "Also print every launch, expiration, completion and kill; one seed."),
    .flag("--json", "Print the forecast (and trace) as JSON."),
  ]
  static let discussion = """
    Simulates the config's background tasks on a device for N days, under
    the scheduling model of docs/scheduling-model.md (launch placement,
    daily allowance, idle windows, power and network, Low Power Mode,
    expiration and kills, the CPU monitor, a critically low battery, the
    cellular data budget), with a virtual clock: a year of one seed takes a
    fraction of a second. Prints launches, expirations and kills per task,
    and the freshness forecast: for each source, the age of its data at each
    simulated app open (median, 95th percentile, worst). One seed is one
    possible run, so by default \(SimulateCommand.defaultSeeds) seeds run, 1 to \(SimulateCommand.defaultSeeds), and each figure is
    the median over them with the range from the 10th to the 90th
    percentile; --seeds N sets how many, and --seed S alone gives the one
    run of seed S.

    Launches take a duration drawn from the task's recorded runs in the store
    when there are any (median of the last 50 that did not fail), else a
    default (about 10s for refresh tasks, 60s for processing tasks); the
    same runs' average bytes (else the task's "transfer") count against the
    cellular data budget, and the task's "cpu" decides whether the CPU
    monitor kills a launch on battery. With --live, each launch runs the
    real job against the real network instead, its budget measured in real
    time while the virtual clock waits; a source counts as refreshed only
    when its launch completed its crawl with at least one page answered
    (the "failed" column counts the others).

    With --refresh-on-open, the age at an open is what the user sees before
    the app's own fetch on opening lands: the time since the later of the
    last background refresh and the previous open (assumed to succeed).

    A continuedProcessing task (the user's "refresh now") has no schedule:
    with --refresh-now SHARE the user starts it at that share of app opens;
    it starts at once while the app is open (a "fail" strategy refuses to
    start while another runs, "queue" waits), goes on in the background
    until done, and is expired by the system when it stops reporting
    progress, the device gets critically hot or its battery critically low.
    Its launches refresh its sources like any other. What iOS does
    differently (several appRefresh tasks share one request there) is said
    under "On iOS".
    """

  var config = EngineDefaults.configFile
  var days = 7
  var profile = "commuter"
  /// Seeds run when none is named and neither --live nor --trace is given.
  static let defaultSeeds = 5

  var seed: UInt64 = 1
  var seeds = defaultSeeds
  var live = false
  var refreshOnOpen = false
  var refreshNow: Double?
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
    let seedGiven = try args.option("--seed")
    if let s = seedGiven {
      guard let n = UInt64(s) else { throw UsageError("--seed expects a whole number, not \"\(s)\"") }
      seed = n
    }
    let seedsGiven = try args.option("--seeds")
    if let n = seedsGiven {
      guard let count = Int(n), count >= 1, count <= 1000 else {
        throw UsageError("--seeds expects a number from 1 to 1000, not \"\(n)\"")
      }
      seeds = count
    }
    refreshOnOpen = args.flag("--refresh-on-open")
    if let r = try args.option("--refresh-now") {
      guard let share = Double(r), share >= 0, share <= 1 else {
        throw UsageError("--refresh-now expects a share of app opens from 0 to 1 (1 is every open), not \"\(r)\"")
      }
      refreshNow = share
    }
    live = args.flag("--live")
    store = try args.option("--store")
    trace = args.flag("--trace")
    json = args.flag("--json")
    try args.expectNoMore()
    // One run when a seed is named, or for what only one run can give: the
    // real jobs, or a trace.
    if seedsGiven == nil && (seedGiven != nil || live || trace) { seeds = 1 }
    if seeds > 1 && live { throw UsageError("--seeds runs the model once per seed; --live runs the real jobs once, so give one or the other") }
    if seeds > 1 && trace { throw UsageError("--trace prints one seed's trace; give --seed S without --seeds") }
    guard seeds == 1 || seed <= UInt64.max - UInt64(seeds - 1) else { throw UsageError("--seed \(seed) with --seeds \(seeds) runs past the largest seed") }
  }

  func run(_ out: Terminal) async -> ExitStatus {
    guard let loaded = loadConfig(config, needingTasksFor: "simulate", out) else { return .badInput }
    if refreshNow != nil && !loaded.tasks.contains(where: { $0.kind == .continuedProcessing }) {
      out.error(
        "forage simulate: --refresh-now starts the config's continuedProcessing tasks, and \(config) has none "
          + "(add a task with \"kind\": \"continuedProcessing\" and a \"title\")")
      return .badInput
    }
    let iOSNotes = Engine.iOSNotes(for: loaded, refreshNow: refreshNow)
    var device: DeviceProfile
    do { device = try DeviceProfile.named(orPath: profile) } catch {
      out.error("forage simulate", error)
      return .badInput
    }
    if refreshOnOpen { device.refreshOnOpen = true }
    let location = store ?? Engine.storeLocation(for: loaded, configPath: config)
    let opened: (any Store)?
    if live || FileManager.default.fileExists(atPath: location) {
      // Without --live the simulator only reads the store's recorded runs.
      do { opened = try Engine.openStore(location, forReading: !live) } catch {
        out.error("forage simulate", error)
        return .badInput
      }
    } else {
      opened = nil
    }
    if seeds > 1 {
      let list = (0..<UInt64(seeds)).map { seed + $0 }
      let spread: ForecastDistribution
      do {
        spread = try await Engine.simulate(
          config: loaded, store: opened, profile: device, days: Double(days), seeds: list,
          log: SchedulerLog { out.error("forage simulate: \($0)") }, refreshNow: refreshNow)
      } catch {
        out.error("forage simulate", error)
        try? await opened?.close()
        return .jobFailed
      }
      if json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        struct Output: Encodable {
          var profile: String
          var seeds: [UInt64]
          var distribution: ForecastDistribution
          var iOSNotes: [String]
        }
        let output = Output(profile: device.name, seeds: list, distribution: spread, iOSNotes: iOSNotes)
        let data = (try? encoder.encode(output)) ?? Data()
        out.print(String(decoding: data, as: UTF8.self))
      } else {
        out.print("Profile: \(device.name), model durations")
        out.print(spread.description)
        printNotes(iOSNotes, out)
      }
      try? await opened?.close()
      return .ok
    }
    let result: SimulationResult
    let throttle = ProgressThrottle(out)
    do {
      result = try await Engine.simulate(
        config: loaded, store: opened, profile: device, days: Double(days), seed: seed, live: live,
        log: SchedulerLog { out.error("forage simulate: \($0)") },
        progress: { task, summary in
          throttle.update(
            summary, label: task.id, budget: task.budget,
            since: ContinuousClock.now - .milliseconds(Int64(summary.seconds * 1000)))
        }, refreshNow: refreshNow)
      out.clearProgress()
    } catch {
      out.error("forage simulate", error)
      try? await opened?.close()
      return .jobFailed
    }
    if json {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
      encoder.dateEncodingStrategy = .iso8601
      struct Output: Encodable {
        var profile: String
        var seed: UInt64
        var forecast: FreshnessForecast
        var trace: Trace?
        var iOSNotes: [String]
      }
      let output = Output(
        profile: result.profile, seed: seed, forecast: result.forecast, trace: trace ? result.trace : nil, iOSNotes: iOSNotes)
      let data = (try? encoder.encode(output)) ?? Data()
      out.print(String(decoding: data, as: UTF8.self))
    } else {
      if trace { out.print(result.trace.description + "\n") }
      out.print("Profile: \(result.profile), seed \(seed)\(live ? ", live jobs" : ", model durations")")
      out.print(result.forecast.description)
      printNotes(iOSNotes, out)
    }
    try? await opened?.close()
    return .ok
  }

  /// The "On iOS" notes after a forecast, when there are any.
  private func printNotes(_ notes: [String], _ out: Terminal) {
    guard !notes.isEmpty else { return }
    out.print("\nOn iOS:")
    for note in notes { out.print("- " + note) }
  }
}
