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
    when there are any (median of the last 50 that did not fail), else a
    default (about 10s for refresh tasks, 60s for processing tasks). With
    --live, each launch runs the real job against the real network instead,
    its budget measured in real time while the virtual clock waits; a source
    counts as refreshed only when its launch completed its crawl with at
    least one page answered (the "failed" column counts the others).
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
    let result: SimulationResult
    do {
      result = try await Engine.simulate(
        config: loaded, store: opened, profile: device, days: Double(days), seed: seed, live: live,
        log: SchedulerLog { out.error("forage simulate: \($0)") })
    } catch {
      out.error("forage simulate", error)
      try? await opened?.close()
      return .jobFailed
    }
    if json {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
      encoder.dateEncodingStrategy = .iso8601
      struct Output: Encodable { var profile: String; var seed: UInt64; var forecast: FreshnessForecast; var trace: Trace? }
      let output = Output(profile: result.profile, seed: seed, forecast: result.forecast, trace: trace ? result.trace : nil)
      let data = (try? encoder.encode(output)) ?? Data()
      out.print(String(decoding: data, as: UTF8.self))
    } else {
      if trace { out.print(result.trace.description + "\n") }
      out.print("Profile: \(result.profile), seed \(seed)\(live ? ", live jobs" : ", model durations")")
      out.print(result.forecast.description)
    }
    try? await opened?.close()
    return .ok
  }
}
