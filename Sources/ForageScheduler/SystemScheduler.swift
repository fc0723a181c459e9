import ForageSupport
import Foundation

/// A ``TaskScheduler`` on the wall clock and the machine's real conditions,
/// for daemons: launches a request once it is due and its requirements
/// hold, enforces budgets (expiration handler, grace, then the launch is
/// abandoned and recorded as killed) and keeps pending requests in a
/// ``PendingRequestPersistence`` so a restarted daemon keeps its schedule.
///
///     let scheduler = SystemScheduler(persistence: pending)   // Forage: StorePendingRequests(store:)
///     scheduler.register("com.example.refresh") { task in try await job.run(task) }
///     scheduler.finishLaunching()
///     try scheduler.submit(AppRefreshTaskRequest(identifier: "com.example.refresh"))
///     let daemon = Task { await scheduler.run() }   // until cancelled (SIGTERM)
///     daemon.cancel(); await daemon.value            // expires running tasks, waits
///
/// There is no usage learning here: a due request runs as soon as the
/// ``LaunchRules`` the simulator also applies allow
/// (``SchedulingPolicy/server``); a request held back records why in the
/// trace's deferrals. A killed handler's Swift task cannot be stopped by
/// force; it is cancelled and abandoned.
public final class SystemScheduler: TaskScheduler, Sendable {
  // Mutable state lives in `state` (locked); handlers,
  // persistence and the event callback are called after unlocking.
  private struct State: Sendable {
    var registry = TaskRegistry()
    var pending = PendingRequests()
    var running: [String: BackgroundTask] = [:]
    var events: [TraceEvent] = []
    var launchCounter = 0
    var penaltyUntil: Date = .distantPast
    var start: Date
    /// Why each held-back request waits now, and how many stretches it
    /// waited for each reason (the trace's deferrals, as in the simulator).
    var lastDeferral: [String: DeferralReason] = [:]
    var deferralCounts: [String: [DeferralReason: Int]] = [:]

    /// Counts a stretch of `reason` for `id`, once until the reason changes.
    mutating func noteDeferral(_ id: String, _ reason: DeferralReason) {
      if lastDeferral[id] == reason { return }
      lastDeferral[id] = reason
      deferralCounts[id, default: [:]][reason, default: 0] += 1
    }
  }

  private struct Launch: Sendable {
    let task: BackgroundTask
    let handler: LaunchHandler
    let budget: Duration
  }

  private let state: Locked<State>
  /// Budgets, grace and penalty; replaced by ``replaceTasks(handlers:policy:)``.
  private let policyBox: Locked<SchedulingPolicy>
  private var policy: SchedulingPolicy { policyBox.withLock { $0 } }
  private let conditions: any ConditionsProvider
  private let persistence: (any PendingRequestPersistence)?
  /// Held while a pending set is handed to `persistence` (see `save`).
  private let saving = Locked(())
  private let log: SchedulerLog
  private let wallClock: @Sendable () -> Date
  private let onEvent: (@Sendable (TraceEvent) -> Void)?
  /// How rule violations are handled.
  public let enforcement: RuleEnforcement
  /// The longest the run loop sleeps before re-reading the conditions.
  public let pollInterval: Duration
  private let wake = WakeSignal()

  /// Creates a scheduler and loads the saved pending requests.
  ///
  /// - Parameters:
  ///   - policy: budgets, grace and penalty (default ``SchedulingPolicy/server``).
  ///   - conditions: where the machine's conditions come from.
  ///   - persistence: where pending requests are kept; `nil` keeps them in memory.
  ///   - permittedIdentifiers: the permitted list; `nil` permits all.
  ///   - log: where rule violations and persistence failures go (a library
  ///     never prints by itself: pass `.standardError` to see them).
  ///   - onEvent: called for every trace event (to record task runs in a store).
  public init(
    policy: SchedulingPolicy = .server, conditions: any ConditionsProvider = SystemConditions(),
    persistence: (any PendingRequestPersistence)? = nil, permittedIdentifiers: [String]? = nil,
    enforcement: RuleEnforcement = .lenient, log: SchedulerLog = .silent,
    pollInterval: Duration = SchedulerDefaults.systemPollInterval,
    wallClock: @escaping @Sendable () -> Date = { Date() }, onEvent: (@Sendable (TraceEvent) -> Void)? = nil
  ) {
    self.pollInterval = pollInterval
    self.policyBox = Locked(policy)
    self.conditions = conditions
    self.persistence = persistence
    self.log = log
    self.wallClock = wallClock
    self.onEvent = onEvent
    self.enforcement = enforcement
    var s = State(start: wallClock())
    s.registry.permitted = permittedIdentifiers
    if let persistence {
      do {
        s.pending = PendingRequests(try persistence.loadPendingRequests())
      } catch {
        log.write("cannot load pending task requests, starting with none: \(error)")
      }
    }
    state = Locked(s)
  }

  // MARK: - TaskScheduler

  /// Registers `handler` for `identifier` (see ``TaskScheduler/register(_:_:)``).
  @discardableResult
  public func register(_ identifier: String, _ handler: LaunchHandler) -> Bool {
    guard let violation = state.withLock({ $0.registry.register(identifier, handler) }) else { return true }
    return report(violation, enforcement: enforcement, log: log)
  }

  public func submit(_ request: any TaskRequest) throws(SchedulerError) {
    let wrapped = AnyTaskRequest(request)
    let now = wallClock()
    let current = conditions.current()
    let status = current.backgroundRefreshStatus
    let result: Result<[AnyTaskRequest], SchedulerError> = state.withLock { s in
      do throws(SchedulerError) {
        try s.registry.checkSubmit(wrapped)
        if wrapped.kind != .continuedProcessing && status != .available {
          throw SchedulerError.unavailable.with(identifier: wrapped.identifier, detail: "background refresh is \(status.rawValue) in the configuration")
        }
        // A `.fail` continued-processing request that could not start now
        // (a busy slot, or the pressure that would expire it) is refused,
        // by the same rule as the simulator's.
        if case .continuedProcessing(let c) = wrapped, c.strategy == .fail {
          let running = s.running.values.filter({ $0.kind == .continuedProcessing }).count
          if let reason = LaunchRules.deferral(
            for: wrapped, conditions: current, state: LaunchState(runningContinuedProcessing: running), policy: policy)
          {
            let detail = reason == .continuedProcessingBusy ? "another continued-processing task is running" : reason.explanation
            throw SchedulerError.immediateRunIneligible.with(identifier: wrapped.identifier, detail: detail)
          }
        }
        try s.pending.insert(wrapped, policy: policy)
        s.lastDeferral[wrapped.identifier] = nil
        return .success(s.pending.requests)
      } catch {
        return .failure(error)
      }
    }
    switch result {
    case .success(let requests):
      emit(TraceEvent(time: now, kind: .submitted, identifier: wrapped.identifier), earliest: wrapped.earliestBeginDate)
      save(requests)
      wake.poke()
    case .failure(let error):
      emit(TraceEvent(time: now, kind: .rejected, identifier: wrapped.identifier, reason: error.name))
      if enforcement == .strict && error == .launchHandlerNotRegistered {
        fatalError("*** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: 'No launch handler registered for task with identifier \(wrapped.identifier)'")
      }
      throw error
    }
  }

  public func cancel(taskRequestWithIdentifier identifier: String) {
    let requests: [AnyTaskRequest]? = state.withLock { s in
      s.pending.remove(identifier) == nil ? nil : s.pending.requests
    }
    if let requests {
      emit(TraceEvent(time: wallClock(), kind: .cancelled, identifier: identifier))
      save(requests)
    }
  }

  public func cancelAllTaskRequests() {
    let ids = state.withLock { s in s.pending.requests.map(\.identifier) }
    for id in ids { cancel(taskRequestWithIdentifier: id) }
  }

  public func pendingTaskRequests() async -> [any TaskRequest] {
    state.withLock { $0.pending.requests.map(\.request) }
  }

  public func finishLaunching() {
    state.withLock { $0.registry.launchingFinished = true }
  }

  // MARK: - Trace

  /// Everything that happened since this scheduler was created.
  public var trace: Trace {
    state.withLock { s in
      var t = Trace(start: s.start)
      t.events = s.events
      t.end = wallClock()
      for id in s.deferralCounts.keys.sorted() {
        for (reason, count) in s.deferralCounts[id]!.sorted(by: { $0.key < $1.key }) {
          t.deferrals.append(.init(identifier: id, reason: reason, count: count))
        }
      }
      return t
    }
  }

  /// The identifiers running now.
  public var runningIdentifiers: [String] { state.withLock { $0.running.keys.sorted() } }

  private func emit(_ event: TraceEvent, earliest: Date? = nil) {
    var e = event
    e.earliestBeginDate = earliest
    state.withLock { $0.events.append(e) }
    onEvent?(e)
  }

  /// Hands the pending set to the persistence. The set is read again here,
  /// under a lock of its own, not taken from the caller: two changes made on
  /// two threads could otherwise be saved in the wrong order, the older set
  /// last, and a restarted daemon would find a request gone or come back.
  /// Whoever saves last saves the newest set. (`requests` only tells that a
  /// change happened.)
  private func save(_ requests: [AnyTaskRequest]) {
    guard let persistence else { return }
    saving.withLock { _ in
      let current = state.withLock { $0.pending.requests }
      do { try persistence.savePendingRequests(current) } catch {
        log.write("cannot save pending task requests: \(error)")
      }
    }
  }

  // MARK: - Launching

  /// Why a due request cannot launch now (``LaunchRules``, as in the
  /// simulator), or `nil` when it can. A daemon has no app life cycle: no
  /// force-quit, foreground or device in use.
  private func deferral(_ r: AnyTaskRequest, _ c: DeviceConditions, _ s: State, _ now: Date) -> DeferralReason? {
    let state = LaunchState(
      isRunning: s.running[r.identifier] != nil,
      runningContinuedProcessing: s.running.values.filter { $0.kind == .continuedProcessing }.count,
      isPenalized: now < s.penaltyUntil)
    return LaunchRules.deferral(for: r, conditions: c, state: state, policy: policy)
  }

  /// Takes every due, eligible request off the pending list and prepares its launch.
  private func takeDue() -> [Launch] {
    let now = wallClock()
    let c = conditions.current()
    var launches: [Launch] = []
    var dropped: [String] = []
    let requests: [AnyTaskRequest]? = state.withLock { s in
      for r in s.pending.requests {
        if let date = r.earliestBeginDate, date > now { continue }
        if let reason = deferral(r, c, s, now) {
          s.noteDeferral(r.identifier, reason)
          continue
        }
        s.lastDeferral[r.identifier] = nil
        guard let handler = s.registry.handlers[r.identifier] else {
          dropped.append(r.identifier)
          s.pending.remove(r.identifier)
          continue
        }
        s.pending.remove(r.identifier)
        s.launchCounter += 1
        let budget = policy.budget(for: r.kind, identifier: r.identifier)
        let deadline = ContinuousClock.now + budget
        let task = BackgroundTask(
          request: r, conditions: c, launchNumber: s.launchCounter, remainingBudget: { deadline - ContinuousClock.now })
        s.running[r.identifier] = task
        launches.append(Launch(task: task, handler: handler, budget: budget))
      }
      return launches.isEmpty && dropped.isEmpty ? nil : s.pending.requests
    }
    for id in dropped {
      log.write("dropping the pending request for \(id): no launch handler is registered")
      emit(TraceEvent(time: now, kind: .rejected, identifier: id, reason: SchedulerError.launchHandlerNotRegistered.name))
    }
    if let requests { save(requests) }
    for l in launches {
      emit(TraceEvent(time: now, kind: .launched, identifier: l.task.identifier, launch: l.task.launchNumber, conditions: c),
           earliest: l.task.request.earliestBeginDate)
    }
    return launches
  }

  private func execute(_ launch: Launch) async {
    let timeout = launch.task.kind == .continuedProcessing ? policy.continuedProcessingProgressTimeout : nil
    let result = await LiveLaunch.run(
      launch.task, handler: launch.handler, budget: launch.budget, grace: policy.expirationGrace, progressTimeout: timeout)
    let now = wallClock()
    let id = launch.task.identifier, n = launch.task.launchNumber
    if result.expired {
      emit(TraceEvent(time: now, kind: .expired, identifier: id, launch: n, reason: (result.expirationReason ?? .budget).rawValue))
    }
    switch result.outcome {
    case .completed(let success):
      emit(TraceEvent(time: now, kind: .completed, identifier: id, launch: n, success: success, duration: result.elapsed.seconds,
                      refreshedSources: launch.task.refreshedSources))
    case .killed:
      log.write("\(id) ignored its expiration and was abandoned after the grace; no launches for \(TraceFormat.duration(seconds: policy.killPenalty.seconds))")
      emit(TraceEvent(time: now, kind: .killed, identifier: id, launch: n, reason: KillReason.ignoredExpiration.rawValue, duration: result.elapsed.seconds))
    }
    state.withLock { s in
      s.running[id] = nil
      if result.outcome == .killed { s.penaltyUntil = now.addingTimeInterval(policy.killPenalty.seconds) }
    }
    wake.poke()
  }

  /// Launches every request that is due and whose requirements hold now, and
  /// waits until those launches end. Returns how many were launched.
  ///
  /// Handlers that submit a request due at once are launched again only by
  /// the next call (so this always returns).
  @discardableResult
  public func launchDueTasks() async -> Int {
    let launches = takeDue()
    await withTaskGroup(of: Void.self) { group in
      for l in launches { group.addTask { await self.execute(l) } }
    }
    return launches.count
  }

  /// The earliest date a pending request becomes due, if any is pending.
  public func nextDueDate() -> Date? {
    state.withLock { s in
      s.pending.requests.map { $0.earliestBeginDate ?? .distantPast }.min()
    }
  }

  /// The pending request due first (the next launch), if any is pending:
  /// its identifier and earliest begin date (nil: as soon as possible).
  public func nextDueRequest() -> (identifier: String, earliestBeginDate: Date?)? {
    state.withLock { s in
      s.pending.requests.min { ($0.earliestBeginDate ?? .distantPast) < ($1.earliestBeginDate ?? .distantPast) }
        .map { ($0.identifier, $0.earliestBeginDate) }
    }
  }

  /// Replaces the registered tasks while running (a daemon reloading its
  /// config): `handlers` become the only registered (and permitted)
  /// identifiers, even after ``finishLaunching()``, and `policy` applies
  /// from the next launch. Pending requests of the identifiers that remain
  /// are kept; those of the others are cancelled. A launch running now
  /// goes on with the handler it started with.
  ///
  /// - Returns: the identifiers whose pending requests were cancelled.
  @discardableResult
  public func replaceTasks(handlers: [String: LaunchHandler], policy: SchedulingPolicy) -> [String] {
    let cancelled: [String] = state.withLock { s in
      s.registry.handlers = handlers
      s.registry.permitted = handlers.keys.sorted()
      let gone = s.pending.requests.map(\.identifier).filter { handlers[$0] == nil }
      for id in gone { _ = s.pending.remove(id) }
      return gone
    }
    policyBox.withLock { $0 = policy }
    let now = wallClock()
    for id in cancelled { emit(TraceEvent(time: now, kind: .cancelled, identifier: id)) }
    if !cancelled.isEmpty { save([]) }
    wake.poke()
    return cancelled
  }

  /// True while ``run()`` waits for its next round (a due request, the
  /// poll, a submission or the end of a launch), for tests.
  var isWaitingForNextRound: Bool { wake.isWaiting }

  /// Runs until the calling task is cancelled: launches requests as they
  /// become due (tasks of different identifiers run side by side), re-reading
  /// the conditions at least every ``pollInterval`` and at once after a
  /// submission or the end of a launch. On cancellation, running
  /// tasks are expired, given the grace, and awaited.
  public func run() async {
    await run(heartbeatEvery: nil) {}
  }

  /// ``run()``, calling `heartbeat` from the loop itself at every round, and
  /// waking at least every `heartbeatEvery` for it: a service manager's
  /// watchdog (systemd's `WATCHDOG=1`) then hears from the loop only while
  /// the loop goes round; a stuck loop stops the heartbeat.
  ///
  ///     await scheduler.run(heartbeatEvery: .seconds(15)) { notifier.send("WATCHDOG=1") }
  public func run(heartbeatEvery: Duration?, heartbeat: @escaping @Sendable () -> Void) async {
    await withTaskGroup(of: Void.self) { group in
      while !Task.isCancelled {
        for l in takeDue() { group.addTask { await self.execute(l) } }
        heartbeat()
        let now = wallClock()
        var wait = pollInterval
        if let heartbeatEvery { wait = min(wait, max(.milliseconds(50), heartbeatEvery)) }
        if let due = nextDueDate() {
          let until = Duration.milliseconds(Int64(max(0, due.timeIntervalSince(now)) * 1000))
          wait = min(wait, max(.milliseconds(50), until))
        }
        await wake.wait(timeout: wait)
        if Task.isCancelled { break }
      }
      stopRunning(reason: .shutdown)
      await group.waitForAll()
    }
  }

  /// Expires every running launch now (each gets the grace to complete).
  public func stopRunning(reason: ExpirationReason = .stopped) {
    let tasks = state.withLock { s in s.running.keys.sorted().compactMap { s.running[$0] } }
    for t in tasks { LiveLaunch.expire(t, reason: reason, grace: policy.expirationGrace) }
  }
}
