import Foundation
import ForageScheduler
import ForageStore
import ForageSupport

/// What a running daemon reports to its front end (the engine never prints).
public enum DaemonEvent: Sendable {
  /// Pending requests were read from an earlier version's file beside the
  /// store (left in place).
  case importedPendingFile(path: String, count: Int)
  /// That file could not be read; tasks without a pending request are
  /// submitted anew.
  case pendingFileNotImported(path: String, reason: String)
  /// Every scheduled task (all but `continuedProcessing` ones) has a
  /// pending request; the daemon is running.
  case scheduled(tasks: Int)
  /// A launch ended: its plan (what ran, what waited and why) and summary
  /// (nil when the job failed).
  case launchFinished(task: TaskDefinition, plan: LaunchPlan, summary: RunSummary?)
  /// A line from the scheduler or the task runner (a refused resubmission).
  case message(String)
  /// A running launch committed: its running totals (for a live line).
  case progress(task: TaskDefinition, summary: RunSummary)
  /// The daemon's own delivery round (beside the launches' ones) delivered,
  /// failed or gave up on notifications.
  case notifications(Notifier.Report)
  /// The maintenance step dropped change history past its retention.
  case historyPruned(changes: Int)
  /// Another daemon of the fleet (on a shared store) runs this due launch
  /// of `task`; this daemon skipped it and keeps the task's schedule.
  case launchSkipped(task: TaskDefinition)
  /// The scheduler's loop went round (at least every `heartbeatEvery`):
  /// the pending request due first, if any (its task and earliest begin
  /// date, nil for as soon as possible). A service manager's watchdog hears
  /// from this.
  case alive(nextTask: String?, nextLaunch: Date?)
  /// A reloaded config took effect: what changed, task by task.
  case reloaded(DaemonConfigChange)
}

extension Engine {
  /// Runs the config's tasks under the wall clock and `conditions` until the
  /// calling task is cancelled, as BGTaskScheduler would on a device that is
  /// always charging: each launch first submits its next request, then runs
  /// its sources within its budget.
  ///
  ///     let daemon = Task { try await engine.runDaemon { event in log(event) } }
  ///     …
  ///     daemon.cancel()            // running launches expire and save their place
  ///     try await daemon.value
  ///     try await engine.close()
  ///
  /// Several `appRefresh` tasks run as separate tasks, each with its own
  /// pending request (iOS keeps one per app; the Apple adapter shares it). A
  /// `continuedProcessing` task is never scheduled: the user starts it
  /// (`forage run --task ID` runs it once).
  ///
  /// Pending requests are kept in the store, so a restarted daemon keeps its
  /// schedule; claims left by a killed daemon go back to the queue first.
  ///
  /// Several daemons on one shared store (PostgreSQL) are a fleet: each due
  /// launch of a task runs in one of them (`Store.claimLaunch`, a lease of
  /// half the task's interval renewed while the launch runs), the others
  /// skip it and keep the schedule.
  /// Each daemon reads and writes only the pending requests of its own
  /// config's tasks, and only those it changed, so none erases another's; a
  /// task that several daemons run has one row, the latest written.
  ///
  /// - Parameter legacyPendingFile: an earlier version's pending-requests
  ///   file to import into an empty store (default: `<store>.pending.json`
  ///   for a SQLite store; nil for none).
  /// - Throws: store errors; `SchedulerError` when a task cannot be
  ///   submitted (not permitted, Background App Refresh denied).
  /// - Parameters:
  ///   - heartbeatEvery: the longest the scheduler's loop waits between two
  ///     ``DaemonEvent/alive(nextTask:nextLaunch:)`` events (nil: only its
  ///     own poll).
  ///   - reloads: configs to run instead of the current one, from the next
  ///     launches on (a daemon's SIGHUP): tasks added are submitted, those
  ///     removed cancelled, the others keep their pending requests; each
  ///     ends in a ``DaemonEvent/reloaded(_:)`` event. The store stays the
  ///     one the daemon opened.
  public func runDaemon(
    conditions: SystemConditions = SystemConditions(), legacyPendingFile: String? = nil,
    heartbeatEvery: Duration? = nil, reloads: AsyncStream<ForageConfig>? = nil,
    events: @escaping @Sendable (DaemonEvent) -> Void
  ) async throws {
    let log = SchedulerLog { events(.message($0)) }
    var runner = TaskRunner(
      config: config, store: store, transport: transport, log: log,
      onFinish: { task, plan, summary in events(.launchFinished(task: task, plan: plan, summary: summary)) },
      progress: { task, summary in events(.progress(task: task, summary: summary)) })
    if store.isShared {
      runner.launchOwner = "daemon-\(ProcessInfo.processInfo.hostName)-\(getpid())-\(UUID().uuidString.prefix(8))"
      runner.onLaunchSkipped = { events(.launchSkipped(task: $0)) }
    }
    let pending = try await StorePendingRequests(
      store: store, identifiers: store.isShared ? Set(config.tasks.map(\.id)) : nil)
    let legacy = legacyPendingFile ?? (store as? SQLiteStore).flatMap { $0.path == ":memory:" ? nil : $0.path + ".pending.json" }
    if let legacy {
      do {
        if let count = try await pending.importJSONFile(at: legacy) {
          events(.importedPendingFile(path: legacy, count: count))
        }
      } catch {
        events(.pendingFileNotImported(path: legacy, reason: "\(error)"))
      }
    }
    let scheduler = SystemScheduler(
      policy: Engine.separateRefreshTasks(runner.policy(.server), config), conditions: conditions, persistence: pending,
      permittedIdentifiers: config.tasks.map(\.id), log: log)
    // Claims left by a killed daemon go back to the queue, once: from now on
    // launches of different tasks run side by side. So do its notifications:
    // they go again, with the same ids; and its downloads, resumed from their
    // part files by the next processing launch.
    try await store.release(.frontier, owner: nil)
    try await store.release(.notification, owner: nil)
    try await store.release(.download, owner: nil)
    runner.register(on: scheduler)
    scheduler.finishLaunching()
    do { try await runner.submitAll(to: scheduler, now: Date()) } catch {
      try? await pending.flush()
      throw error
    }
    events(.scheduled(tasks: config.tasks.filter { $0.kind != .continuedProcessing }.count))
    // Between launches, the daemon delivers what is due (retries, what a
    // launch had no time for) and keeps the history within its retention.
    // The engine the upkeep and reloads use: replaced by each reload.
    let live = Locked(self)
    let upkeep = Task { await Engine.upkeep(live, events: events) }
    let first = runner
    let reloading = reloads.map { reloads in
      Task {
        var current = first
        for await config in reloads {
          current = await Engine.reload(config, runner: current, scheduler: scheduler, live: live, events: events)
        }
      }
    }
    // Runs until this task is cancelled; then it expires the running
    // launches, gives them the grace, and returns. The upkeep, a task of its
    // own, is cancelled at once: it starts no delivery meanwhile, and
    // abandons the ones in flight (they stay pending).
    await withTaskCancellationHandler {
      await scheduler.run(heartbeatEvery: heartbeatEvery) {
        let next = scheduler.nextDueRequest()
        events(.alive(nextTask: next?.identifier, nextLaunch: next?.earliestBeginDate))
      }
    } onCancel: {
      upkeep.cancel()
      reloading?.cancel()
    }
    upkeep.cancel()
    reloading?.cancel()
    _ = await upkeep.value
    _ = await reloading?.value
    // Pending requests are written behind: the last set goes in before the
    // caller closes the store.
    try await pending.flush()
  }

  /// The daemon's upkeep until cancelled: a delivery round when a retry is
  /// due (at least every ``EngineDefaults/daemonDeliveryInterval``), and the
  /// history pruned every ``EngineDefaults/maintenanceInterval``.
  static func upkeep(_ live: Locked<Engine>, events: @escaping @Sendable (DaemonEvent) -> Void) async {
    var lastPrune: Date?
    while !Task.isCancelled {
      // The config of the last reload.
      let engine = live.withLock { $0 }
      let notifier = engine.notifier()
      let now = Date()
      if lastPrune.map({ now.timeIntervalSince($0) >= EngineDefaults.maintenanceInterval.seconds }) ?? true {
        lastPrune = now
        do {
          let dropped = try await engine.pruneHistory(now: now)
          if dropped > 0 { events(.historyPruned(changes: dropped)) }
        } catch {
          events(.message("pruning the change history failed: \(error)"))
        }
      }
      var pause = EngineDefaults.daemonDeliveryInterval.seconds
      if let notifier {
        do {
          let report = try await notifier.deliverDue()
          if report.delivered + report.failed + report.dead > 0 { events(.notifications(report)) }
          if let next = try await engine.store.notificationCounts(now: Date()).nextAttemptAt {
            pause = min(pause, max(1, next.timeIntervalSinceNow))
          }
        } catch {
          if Task.isCancelled { break }
          events(.message("delivering notifications failed: \(error)"))
        }
      }
      try? await Task.sleep(for: .milliseconds(Int64(pause * 1000)))
    }
  }
}

extension Engine {
  /// Runs `config` from the next launches on: the scheduler's handlers and
  /// budgets become the new config's, tasks it adds are submitted (due at
  /// once), those it drops are cancelled. Returns the runner now in use.
  static func reload(
    _ config: ForageConfig, runner: TaskRunner, scheduler: SystemScheduler, live: Locked<Engine>,
    events: @escaping @Sendable (DaemonEvent) -> Void
  ) async -> TaskRunner {
    let change = DaemonConfigChange(from: runner.config, to: config)
    let next = runner.with(config: config)
    let policy = Engine.separateRefreshTasks(next.policy(.server), config)
    scheduler.replaceTasks(handlers: next.handlers(on: scheduler), policy: policy)
    // A task whose kind changed gets a request of its new kind, due when
    // its old one was.
    let pending = await scheduler.pendingTaskRequests()
    for task in config.tasks {
      guard let old = runner.config.tasks.first(where: { $0.id == task.id }), old.kind != task.kind else { continue }
      let due = pending.first { $0.identifier == task.id }?.earliestBeginDate
      scheduler.cancel(taskRequestWithIdentifier: task.id)
      if task.kind != .continuedProcessing {
        do { try scheduler.submit(TaskRunner.request(for: task, earliestBeginDate: due ?? Date())) } catch {
          events(.message("\(task.id): cannot submit its request after the reload: \(error)"))
        }
      }
    }
    do { try await next.submitAll(to: scheduler, now: Date()) } catch {
      events(.message("after the reload, a task could not be submitted: \(error)"))
    }
    live.withLock { engine in
      engine = Engine(config: config, store: engine.store, transport: engine.transport, configName: engine.configName)
    }
    events(.reloaded(change))
    return next
  }
}
