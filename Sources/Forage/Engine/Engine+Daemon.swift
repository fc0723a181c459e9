import Foundation
import ForageScheduler
import ForageStore

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
  /// half the task's interval), the others skip it and keep the schedule.
  /// Each daemon reads and writes only the pending requests of its own
  /// config's tasks, and only those it changed, so none erases another's; a
  /// task that several daemons run has one row, the latest written.
  ///
  /// - Parameter legacyPendingFile: an earlier version's pending-requests
  ///   file to import into an empty store (default: `<store>.pending.json`
  ///   for a SQLite store; nil for none).
  /// - Throws: store errors; `SchedulerError` when a task cannot be
  ///   submitted (not permitted, Background App Refresh denied).
  public func runDaemon(
    conditions: SystemConditions = SystemConditions(), legacyPendingFile: String? = nil,
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
    try await store.releaseClaims(owner: nil)
    try await store.releaseNotificationClaims(owner: nil)
    try await store.releaseDownloadClaims(owner: nil, ids: nil)
    runner.register(on: scheduler)
    scheduler.finishLaunching()
    do { try await runner.submitAll(to: scheduler, now: Date()) } catch {
      try? await pending.flush()
      throw error
    }
    events(.scheduled(tasks: config.tasks.filter { $0.kind != .continuedProcessing }.count))
    // Between launches, the daemon delivers what is due (retries, what a
    // launch had no time for) and keeps the history within its retention.
    let upkeep = Task { await self.upkeep(events: events) }
    // Runs until this task is cancelled; then it expires the running
    // launches, gives them the grace, and returns. The upkeep, a task of its
    // own, is cancelled at once: it starts no delivery meanwhile, and
    // abandons the ones in flight (they stay pending).
    await withTaskCancellationHandler {
      await scheduler.run()
    } onCancel: {
      upkeep.cancel()
    }
    upkeep.cancel()
    _ = await upkeep.value
    // Pending requests are written behind: the last set goes in before the
    // caller closes the store.
    try await pending.flush()
  }

  /// The daemon's upkeep until cancelled: a delivery round when a retry is
  /// due (at least every ``EngineDefaults/daemonDeliveryInterval``), and the
  /// history pruned every ``EngineDefaults/maintenanceInterval``.
  func upkeep(events: @escaping @Sendable (DaemonEvent) -> Void) async {
    let notifier = self.notifier()
    var lastPrune: Date?
    while !Task.isCancelled {
      let now = Date()
      if lastPrune.map({ now.timeIntervalSince($0) >= EngineDefaults.maintenanceInterval.seconds }) ?? true {
        lastPrune = now
        do {
          let dropped = try await pruneHistory(now: now)
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
          if let next = try await store.notificationCounts(now: Date()).nextAttemptAt {
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
