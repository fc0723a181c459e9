import Dispatch
import Foundation
import Forage
import ForageScheduler
import ForageStore
import ForageSupport

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
    .option("--log-format", "FORMAT", "text, or json: one JSON object per line on standard error.", default: "text"),
    .option("--metrics", "ADDRESS", "Serve /metrics (Prometheus) and /healthz on ADDRESS, such as 127.0.0.1:9464."),
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

    SIGHUP re-reads the config: a valid one runs from the next launches on
    (tasks added are due at once, removed ones are cancelled, the others
    keep their schedule) and the change is logged; an invalid one is
    logged with its problems and the daemon keeps the config it has. The
    store stays the one it opened.

    --metrics serves the Prometheus text format on /metrics (launches by
    task and outcome, pages and records by source, notifications,
    downloads, each source's data age) and /healthz (200 while healthy,
    503 with the reasons otherwise: the rules of forage status). A port
    alone listens on 127.0.0.1; any other address only when named.

    Under systemd (Type=notify; forage init --service systemd writes a
    unit) the daemon says READY=1 once its schedule is loaded, WATCHDOG=1
    from its scheduling loop, STATUS= with the next launch and STOPPING=1
    on SIGTERM; without NOTIFY_SOCKET it says nothing.
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
  var logFormat = DaemonLog.Format.text
  var metrics: MetricsAddress?

  init(_ args: inout ArgumentList) throws(UsageError) {
    config = try args.option("--config") ?? config
    store = try args.option("--store")
    lowPower = args.flag("--low-power")
    refreshDenied = args.flag("--refresh-denied")
    json = args.flag("--json")
    if let format = try args.option("--log-format") {
      guard let f = DaemonLog.Format(rawValue: format) else {
        throw UsageError("--log-format expects text or json, not \"\(format)\"")
      }
      logFormat = f
    }
    metrics = try args.option("--metrics").map { text throws(UsageError) in try MetricsAddress(parsing: text) }
    try args.expectNoMore()
  }

  func run(_ terminal: Terminal) async -> ExitStatus {
    var changed = terminal
    // A JSON log is read by programs: no progress line among its objects.
    if logFormat == .json { changed.showsProgress = false }
    let out = changed
    let log = DaemonLog(format: logFormat, out: out)
    guard let loaded = loadConfig(config, needingTasksFor: "daemon", out) else { return .badInput }
    let location = store ?? Engine.storeLocation(for: loaded, configPath: config)
    let engine: Engine
    do { engine = Engine(config: loaded, store: try Engine.openStore(location), configName: config) } catch {
      out.error("forage daemon", error)
      return .badInput
    }
    let current = Locked(loaded)
    let counters = self.counters
    var listening: MetricsServer?
    if let metrics {
      do {
        listening = try MetricsServer(address: metrics) { path in
          DaemonCommand.answer(path, engine: engine, config: current.withLock { $0 }, counters: counters)
        }
      } catch {
        out.error("forage daemon: \(error)")
        try? await engine.close()
        return .badInput
      }
    }
    let server = listening
    let json = self.json
    let logFormat = self.logFormat
    let conditions = SystemConditions(
      lowPowerMode: lowPower, backgroundRefreshStatus: refreshDenied ? .denied : .available)
    let started = SignalBox()
    let systemd = SystemdNotifier()
    let lastStatus = Locked("")
    // SIGHUP re-reads the config; a valid one goes to the engine.
    let (reloads, reload) = AsyncStream.makeStream(of: ForageConfig.self)
    let hangups = SignalWatcher(signals: [SIGHUP]) { [config, store] _ in
      guard let next = DaemonCommand.reread(config, storeGiven: store != nil, running: location, log) else { return }
      current.withLock { $0 = next }
      reload.yield(next)
    }
    // The daemon runs until its task is cancelled (a signal); then running
    // launches expire, get the grace, and save their place.
    let throttle = ProgressThrottle(out)
    let running = Task {
      try await engine.runDaemon(
        conditions: conditions, heartbeatEvery: systemd.watchdogInterval.map { $0 / 2 }, reloads: reloads
      ) { event in
        switch event {
        case .importedPendingFile(let path, let count):
          log.log(.warning, "pending.imported", counts: [("requests", count)], "forage daemon: imported \(count) pending request(s) from \(path) into the store; that file is no longer used and may be removed")
        case .pendingFileNotImported(let path, let reason):
          log.log(.warning, "pending.notImported", "forage daemon: \(path) was not imported (\(reason)); tasks without a pending request are submitted anew")
        case .scheduled(let tasks):
          _ = started.first(0)
          log.log(.note, "daemon.scheduled", counts: [("tasks", tasks)], "forage daemon: \(tasks) task(s) scheduled; store \(StoreLocation.redacted(location)). Ctrl-C to stop.")
          if let server {
            log.log(.note, "metrics.listening", "forage daemon: metrics on http://\(MetricsAddress.display(server.address, port: server.port))/metrics and /healthz")
          }
          systemd.send("READY=1")
        case .alive(let task, let date):
          if systemd.watchdogInterval != nil { systemd.send("WATCHDOG=1") }
          guard systemd.isEnabled else { return }
          let status = DaemonCommand.statusLine(task: task, at: date)
          if lastStatus.withLock({ last in
            defer { last = status }
            return last != status
          }) {
            systemd.send("STATUS=" + status)
          }
        case .launchFinished(let task, let plan, let summary):
          counters.record(task: task.id, summary: summary)
          for (source, why) in plan.waiting.sorted(by: { $0.key < $1.key }) {
            log.log(.info, "launch.sourceWaits", task: task.id, source: source, "\(task.id): \(source) waits: \(why)")
          }
          guard let summary else { return log.log(.error, "launch.failed", task: task.id, "\(task.id): the job failed") }
          if json { out.print(jsonLine(["task": task.id], summary)) }
          if !json || logFormat == .json {
            log.log(
              .info, "launch.finished", task: task.id,
              counts: [
                ("pages", summary.pages), ("pagesFetched", summary.pagesFetched), ("pagesFailed", summary.pagesFailed),
                ("pagesNotModified", summary.pagesNotModified), ("recordsNew", summary.recordsNew),
                ("recordsChanged", summary.recordsChanged), ("recordsRemoved", summary.recordsRemoved),
                ("bytes", Int(summary.bytes)),
              ],
              "\(task.id): \(progressLine(summary))\(summary.stoppedByBudget ? " (stopped by budget)" : "")")
          }
        case .message(let line):
          log.log(.warning, "daemon.message", "forage: \(line)")
        case .progress(let task, let summary):
          // The launch's own clock: its summary says how long it has run.
          throttle.update(
            summary, label: task.id, budget: task.budget,
            since: ContinuousClock.now - .milliseconds(Int64(summary.seconds * 1000)))
        case .notifications(let report):
          for problem in report.problems.prefix(5) {
            log.log(.warning, "notification.problem", "forage daemon: notification: \(problem)")
          }
          log.log(
            report.failed + report.dead > 0 ? .warning : .info, "notifications.delivered",
            counts: [("delivered", report.delivered), ("failed", report.failed), ("dead", report.dead)],
            "forage daemon: notifications: \(report.delivered) delivered, \(report.failed) failed (retried later), "
              + "\(report.dead) dead")
        case .historyPruned(let changes):
          log.log(.info, "history.pruned", counts: [("changes", changes)], "forage daemon: dropped \(changes) change(s) past their sources' history retention")
        case .launchSkipped(let task):
          log.log(.debug, "launch.skipped", task: task.id, "\(task.id): another daemon of the fleet runs this launch; skipped here")
        case .reloaded(let change):
          log.log(
            .info, "config.reloaded",
            counts: [("added", change.added.count), ("removed", change.removed.count), ("changed", change.changed.count)],
            "forage daemon: reloaded \(config): \(change.summary)")
        }
      }
    }
    server?.start()
    let (signals, _) = SignalWatcher.stopping(
      "forage daemon", "expiring running tasks and stopping (again to quit now)", out,
      report: { log.log(.info, "daemon.stopping", $0) }
    ) {
      systemd.send("STOPPING=1")
      running.cancel()
    }
    var status = ExitStatus.ok
    do { try await running.value } catch {
      log.log("daemon.failed", "forage daemon", error)
      // Before it started (a task the scheduler refused) it is bad input.
      if started.signal == nil {
        if refreshDenied {
          log.log(.error, "daemon.failed", "Background App Refresh is denied: no task can run. Turn it on (drop --refresh-denied).")
        }
        status = .badInput
      } else {
        status = .jobFailed
      }
    }
    signals.cancel()
    hangups.cancel()
    reload.finish()
    server?.stop()
    // A clean exit leaves one complete file: the WAL is checkpointed into it.
    do { try await engine.close() } catch {
      log.log("daemon.failed", "forage daemon", error)
      return .jobFailed
    }
    return status
  }

  /// The process's counters for `/metrics`.
  let counters = DaemonMetrics()

  /// `next launch: t.refresh at 2026-12-02T05:00:00Z` (systemd's STATUS=).
  static func statusLine(task: String?, at date: Date?) -> String {
    guard let task else { return "no launch pending" }
    guard let date, date > Date() else { return "next launch: \(task) now" }
    let formatter = ISO8601DateFormatter()
    return "next launch: \(task) at \(formatter.string(from: date))"
  }

  /// Reads the config again for SIGHUP: nil after logging why it is not
  /// used (its problems, located; or no tasks).
  static func reread(_ path: String, storeGiven: Bool, running location: String, _ log: DaemonLog) -> ForageConfig? {
    let next: ForageConfig
    do {
      next = try ForageConfig.load(path: path) { log.log(.warning, "config.warning", "warning: \(path): \($0)") }
    } catch {
      log.log(.error, "config.reloadRefused", "forage daemon: SIGHUP: the config was not reloaded, the daemon goes on with the one it has: \(error)")
      return nil
    }
    guard !next.tasks.isEmpty else {
      log.log(.error, "config.reloadRefused", "forage daemon: SIGHUP: \(path) has no tasks; the daemon goes on with the config it has")
      return nil
    }
    if !storeGiven, Engine.storeLocation(for: next, configPath: path) != location {
      log.log(.warning, "config.storeKept", "forage daemon: SIGHUP: the config names another store; the daemon keeps \(StoreLocation.redacted(location)) until it is restarted")
    }
    return next
  }

  /// Answers a metrics server's request: `/metrics` or `/healthz`, from the
  /// store's status (the rules of `forage status`) and `counters`.
  static func answer(_ path: String, engine: Engine, config: ForageConfig, counters: DaemonMetrics) -> MetricsResponse {
    guard path == "/metrics" || path == "/healthz" else {
      return MetricsResponse(status: 404, body: "not found: try /metrics or /healthz\n")
    }
    let status = Blocking.wait { try await StoreStatus.gather(store: engine.store, config: config) }
    guard case .success(let status) = status else {
      return MetricsResponse(status: path == "/healthz" ? 503 : 500, body: "the store could not be read\n")
    }
    if path == "/healthz" {
      if status.attention.isEmpty { return MetricsResponse(status: 200, body: "healthy\n") }
      // The reasons name URLs: without their queries, which may hold a key.
      let reasons = status.attention.map { $0.replacingOccurrences(of: #"\?[^\s)]*"#, with: "", options: .regularExpression) }
      return MetricsResponse(status: 503, body: reasons.map { $0 + "\n" }.joined())
    }
    return MetricsResponse(
      status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8",
      body: counters.page(status: status, config: config))
  }
}

extension MetricsAddress {
  /// `127.0.0.1:9464`, with the port actually bound.
  static func display(_ address: MetricsAddress, port: UInt16) -> String {
    var a = address
    a.port = port
    return a.description
  }
}

/// Waits on a plain thread (never one of Swift's cooperative ones) for async work.
enum Blocking {
  static func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let box = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
      let result: Result<T, any Error>
      do { result = .success(try await work()) } catch { result = .failure(error) }
      box.withLock { $0 = result }
      done.signal()
    }
    done.wait()
    return box.withLock { $0! }
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
