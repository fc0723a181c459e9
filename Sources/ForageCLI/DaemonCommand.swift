import Dispatch
import Foundation
import Forage
import ForageScheduler
import ForageStore

/// `forage daemon`: runs the config's tasks under the wall clock and the
/// machine's real conditions until SIGINT or SIGTERM.
struct DaemonCommand: Command {
  static let name = "daemon"
  static let abstract = "Run the config's tasks on schedule until interrupted."
  static let arguments: [Argument] = [
    .option("--config", "FILE", "The config file.", default: EngineDefaults.configFile),
    .option("--store", "PATH", "A SQLite file or a postgres:// URL.", default: "the config's, beside the config"),
    .flag("--low-power", "Act as in Low Power Mode (only critical sources run)."),
    .flag("--refresh-denied", "Act as with Background App Refresh denied (nothing runs)."),
    .flag("--json", "Print each launch's summary as a JSON line."),
  ]
  static let discussion = """
    Schedules every task of the config as BGTaskScheduler would on a device
    that is always charging: each launch first submits its next request
    (every task's "every" later), then runs the task's sources within its
    budget. Power and network are read from the machine (on Linux,
    /sys/class/power_supply and the default route). Pending requests are
    kept in the store, so a restarted daemon keeps its schedule. Several
    appRefresh tasks run as separate tasks; a continuedProcessing task (the
    user's "refresh now") is never scheduled: forage run --task ID runs it.

    Several daemons on one postgres:// store are a fleet: each due launch of
    a task runs in one of them (the others skip it, as --verbose says), and
    they share the crawl's frontier and each host's request budget.
    """
  static let notes = """
    SIGINT or SIGTERM expires running tasks (they save their place; a
    notification being delivered is abandoned, its command stopped, and it
    stays pending), waits for them, writes the store's journal into its file,
    and exits 0; a second signal kills any command still running and quits at
    once.
    """

  var config = EngineDefaults.configFile
  var store: String?
  var lowPower = false
  var refreshDenied = false
  var json = false

  init(_ args: inout ArgumentList) throws(UsageError) {
    config = try args.option("--config") ?? config
    store = try args.option("--store")
    lowPower = args.flag("--low-power")
    refreshDenied = args.flag("--refresh-denied")
    json = args.flag("--json")
    try args.expectNoMore()
  }

  func run(_ out: Terminal) async -> ExitStatus {
    guard let loaded = loadConfig(config, needingTasksFor: "daemon", out) else { return .badInput }
    let location = store ?? Engine.storeLocation(for: loaded, configPath: config)
    let engine: Engine
    do { engine = Engine(config: loaded, store: try Engine.openStore(location), configName: config) } catch {
      out.error("forage daemon", error)
      return .badInput
    }
    let json = self.json
    let conditions = SystemConditions(
      lowPowerMode: lowPower, backgroundRefreshStatus: refreshDenied ? .denied : .available)
    let started = SignalBox()
    // The daemon runs until its task is cancelled (a signal); then running
    // launches expire, get the grace, and save their place.
    let throttle = ProgressThrottle(out)
    let running = Task {
      try await engine.runDaemon(conditions: conditions) { event in
        switch event {
        case .importedPendingFile(let path, let count):
          out.error("forage daemon: imported \(count) pending request(s) from \(path) into the store; that file is no longer used and may be removed")
        case .pendingFileNotImported(let path, let reason):
          out.error("forage daemon: \(path) was not imported (\(reason)); tasks without a pending request are submitted anew")
        case .scheduled(let tasks):
          _ = started.first(0)
          out.note("forage daemon: \(tasks) task(s) scheduled; store \(StoreLocation.redacted(location)). Ctrl-C to stop.")
        case .launchFinished(let task, let plan, let summary):
          for (source, why) in plan.waiting.sorted(by: { $0.key < $1.key }) {
            out.error("\(task.id): \(source) waits: \(why)")
          }
          guard let summary else { return out.error("\(task.id): the job failed") }
          if json {
            out.print(jsonLine(["task": task.id], summary))
          } else {
            out.error("\(task.id): \(progressLine(summary))\(summary.stoppedByBudget ? " (stopped by budget)" : "")")
          }
        case .message(let line):
          out.error("forage: \(line)")
        case .progress(let task, let summary):
          // The launch's own clock: its summary says how long it has run.
          throttle.update(
            summary, label: task.id, budget: task.budget,
            since: ContinuousClock.now - .milliseconds(Int64(summary.seconds * 1000)))
        case .notifications(let report):
          for problem in report.problems.prefix(5) { out.error("forage daemon: notification: \(problem)") }
          out.error(
            "forage daemon: notifications: \(report.delivered) delivered, \(report.failed) failed (retried later), "
              + "\(report.dead) dead")
        case .historyPruned(let changes):
          out.error("forage daemon: dropped \(changes) change(s) past their sources' history retention")
        case .launchSkipped(let task):
          if out.verbose { out.error("\(task.id): another daemon of the fleet runs this launch; skipped here") }
        }
      }
    }
    let (signals, _) = SignalWatcher.stopping(
      "forage daemon", "expiring running tasks and stopping (again to quit now)", out
    ) { running.cancel() }
    var status = ExitStatus.ok
    do { try await running.value } catch {
      out.error("forage daemon", error)
      // Before it started (a task the scheduler refused) it is bad input.
      if started.signal == nil {
        if refreshDenied {
          out.error("Background App Refresh is denied: no task can run. Turn it on (drop --refresh-denied).")
        }
        status = .badInput
      } else {
        status = .jobFailed
      }
    }
    signals.cancel()
    // A clean exit leaves one complete file: the WAL is checkpointed into it.
    do { try await engine.close() } catch {
      out.error("forage daemon", error)
      return .jobFailed
    }
    return status
  }
}

/// A JSON object line with `extra` members followed by the summary's.
func jsonLine(_ extra: [String: String], _ summary: RunSummary) -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys]
  encoder.dateEncodingStrategy = .iso8601
  guard let data = try? encoder.encode(summary),
        case .object(var members)? = try? JSONValue.parse(Array(data)) else { return "{}" }
  members.insert(contentsOf: extra.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }, at: 0)
  return JSONValue.object(members).serialized()
}
