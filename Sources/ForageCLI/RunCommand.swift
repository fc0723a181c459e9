import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Forage
import ForageStore

/// `forage run`: one launch now.
struct RunCommand: Command {
  static let name = "run"
  static let abstract = "Launch a task (or some sources) once now, then exit."
  static let arguments: [Argument] = [
    .option("--config", "FILE", "The config file.", default: EngineDefaults.configFile),
    .option("--task", "ID", "Run the sources of this task, with its budget."),
    .repeatable("--source", "NAME", "Run this source.", default: "every source"),
    .option(
      "--budget", "DURATION", "Time allowed, e.g. 30s, 5m.",
      default: "the task's, else \(Units.format(EngineDefaults.runBudget))"),
    .option(
      "--store", "PATH", "A SQLite file, or a postgres:// URL (workers started together on one form a fleet).",
      default: "the config's \"store\", else \(EngineDefaults.storePath) beside the config"),
    .flag("--json", "Print the summary as JSON."),
  ]
  static let exclusive = [["--task", "--source"]]
  static let discussion = """
    Runs one launch now: fetches the sources within the budget, stores their
    records, and prints a summary. A launch stopped by its budget saves its
    place; the next run continues the same crawl. With --task the launch
    goes on as the daemon's launch of that task does: queued downloads (a
    source's downloadEnclosures, forage download) get what is left of the
    budget (an appRefresh task only small ones), and a processing task
    prunes the change history.
    """
  static let notes = """
    SIGINT (Ctrl-C) or SIGTERM stops the launch as its budget would: in-flight
    fetches and notification deliveries get a short grace (a command still
    running then is stopped, and its notification stays pending), everything
    done is committed, the summary is printed, and the exit status is 130
    (SIGINT) or 143 (SIGTERM). A second signal kills any command still running
    and quits at once. The next run continues either way.

    Exit status: 0 success (also when stopped by the budget), 1 the job failed,
    2 bad input, 130/143 stopped by a signal.
    """

  var config = EngineDefaults.configFile
  var task: String?
  var sources: [String] = []
  var budget: Duration?
  var store: String?
  var json = false

  init(_ args: inout ArgumentList) throws(UsageError) {
    config = try args.option("--config") ?? config
    task = try args.option("--task")
    sources = try args.options("--source")
    budget = try parseBudget(try args.option("--budget"))
    store = try args.option("--store")
    json = args.flag("--json")
    try args.expectNoMore()
  }

  func run(_ out: Terminal) async -> ExitStatus {
    guard let loaded = loadConfig(config, out) else { return .badInput }
    // Bad names are refused before the store is opened: nothing is written.
    // What is resolved here is what runs (the engine looks nothing up again).
    let resolved: Launch
    do { resolved = try loaded.launch(task: task, sources: sources.isEmpty ? nil : sources, budget: budget, configName: config) } catch {
      out.error("forage run", error)
      return .badInput
    }
    let engine: Engine
    do {
      let location = store ?? Engine.storeLocation(for: loaded, configPath: config)
      engine = Engine(config: loaded, store: try Engine.openStore(location), configName: config)
    } catch {
      out.error("forage run", error)
      return .badInput
    }
    let throttle = ProgressThrottle(out, budget: resolved.budget)
    // SIGINT/SIGTERM stop the launch as its budget would (in-flight fetches
    // and deliveries get the grace, everything done is committed, the summary
    // is printed); a second signal kills the running commands and exits at once.
    let stop = StopRequest()
    let (signals, received) = SignalWatcher.stopping(
      "forage run", "stopping (in-flight fetches and notifications get \(Units.format(EngineDefaults.grace)); again to quit now)", out
    ) { stop.request() }
    defer { signals.cancel() }
    do {
      let summary = try await engine.run(
        resolved, stop: stop, progress: { throttle.update($0) }, log: { out.error("forage run: \($0)") })
      out.clearProgress()
      out.print(json ? jsonText(summary) : summary.description)
      do { try await engine.close() } catch { out.error("forage run", error) }
      if let signal = received.signal { return .signal(signal) }
      let nothingWorked = summary.pagesFailed > 0 && summary.pagesFetched + summary.pagesNotModified + summary.pagesFresh == 0
      return nothingWorked ? .jobFailed : .ok
    } catch let error as ConfigError {
      out.error("\(error)")
      return .badInput
    } catch let error as EngineError {
      out.error("forage run", error)
      return .badInput
    } catch {
      out.error("forage run", error)
      return .jobFailed
    }
  }
}
