import ForageSupport
import Foundation

/// A ``TaskScheduler`` on a virtual clock and a simulated device, following
/// the iOS model of ``SchedulingPolicy``: run a year of background launches
/// in a test, deterministically.
///
///     let scheduler = SimulatedScheduler(device: .commuter, seed: 42)
///     scheduler.register("com.example.refresh", model: ModelBehavior(
///       duration: .logNormal(median: .seconds(8), spread: 0.5),
///       resubmitAfter: .seconds(15 * 60), sources: ["prices"]))
///     scheduler.submitWhenEnteringBackground(AppRefreshTaskRequest(identifier: "com.example.refresh"))
///     scheduler.finishLaunching()
///     await scheduler.advance(by: .seconds(30 * 86_400))
///     print(FreshnessForecast(trace: scheduler.trace, sources: ["com.example.refresh": ["prices"]]))
///
/// Handlers run in **model** mode (``register(_:model:)``: durations drawn
/// from a distribution, nothing real runs) or **live** mode (the async or
/// callback forms: the real handler runs under a real-time budget while the
/// virtual clock waits). The same seed, device, policy and tasks give the
/// same ``trace`` (for model-mode handlers).
///
/// A test changes the device now through ``device`` (`pickUp()`,
/// `plugIn()`, `network(.cellular)`), and holds a live launch it started
/// with ``forceLaunch(_:)`` to expire it when it chooses.
///
/// Drive it from one task at a time (`advance`, `run`, `launch`,
/// `forceLaunch`); the other methods may be called from anywhere, including
/// handlers.
public final class SimulatedScheduler: TaskScheduler, Sendable {
  // All state is in `engine`, behind its lock; live handlers and expiration
  // handlers are called after unlocking.
  private let engine: Locked<SimulationEngine>
  /// Live launches started by `forceLaunch` and still running; the clock
  /// waits for them before it moves.
  private let inFlight = Locked<[Task<Void, Never>]>([])
  /// Reads the process's CPU time, around each live launch (the CPU monitor).
  private let cpuClock = Locked<@Sendable () -> Duration>(ProcessCPU.time)
  private let log: SchedulerLog
  /// How rule violations are handled.
  public let enforcement: RuleEnforcement
  /// The virtual clock's start.
  public let clock: VirtualClock

  /// Creates a simulated scheduler.
  ///
  /// - Parameters:
  ///   - clock: where simulated time starts.
  ///   - device: the device's timeline (scripted events, a profile, or both).
  ///   - policy: the scheduling model's numbers.
  ///   - seed: decides every random draw; same seed, same trace.
  ///   - permittedIdentifiers: the Info.plist list; `nil` permits all.
  ///   - enforcement: `.strict` traps on rule violations as iOS does.
  ///   - traceDeviceChanges: also record every device change in the trace.
  ///   - log: where rule violations go in lenient mode (a library never
  ///     prints by itself: pass `.standardError` to see them).
  public init(
    clock: VirtualClock = VirtualClock(), device: DeviceTimeline, policy: SchedulingPolicy = SchedulingPolicy(),
    seed: UInt64 = 0, permittedIdentifiers: [String]? = nil, enforcement: RuleEnforcement = .lenient,
    traceDeviceChanges: Bool = false, log: SchedulerLog = .silent
  ) {
    var e = SimulationEngine(timeline: device, policy: policy, clock: clock, seed: seed)
    e.registry.permitted = permittedIdentifiers
    e.enforcement = enforcement
    e.traceDevice = traceDeviceChanges
    engine = Locked(e)
    self.log = log
    self.enforcement = enforcement
    self.clock = clock
  }

  /// A scheduler on a device generated from a profile.
  public convenience init(
    clock: VirtualClock = VirtualClock(), device profile: DeviceProfile, policy: SchedulingPolicy = SchedulingPolicy(),
    seed: UInt64 = 0, permittedIdentifiers: [String]? = nil, enforcement: RuleEnforcement = .lenient,
    traceDeviceChanges: Bool = false, log: SchedulerLog = .silent
  ) {
    self.init(
      clock: clock, device: DeviceTimeline(profile: profile), policy: policy, seed: seed,
      permittedIdentifiers: permittedIdentifiers, enforcement: enforcement, traceDeviceChanges: traceDeviceChanges, log: log)
  }

  /// A scheduler on a device whose conditions never change.
  public convenience init(
    clock: VirtualClock = VirtualClock(), device conditions: DeviceConditions, policy: SchedulingPolicy = SchedulingPolicy(),
    seed: UInt64 = 0, permittedIdentifiers: [String]? = nil, enforcement: RuleEnforcement = .lenient,
    traceDeviceChanges: Bool = false, log: SchedulerLog = .silent
  ) {
    self.init(
      clock: clock, device: DeviceTimeline.constant(conditions), policy: policy, seed: seed,
      permittedIdentifiers: permittedIdentifiers, enforcement: enforcement, traceDeviceChanges: traceDeviceChanges, log: log)
  }

  // MARK: - TaskScheduler

  /// Registers `handler` for `identifier` (see ``TaskScheduler/register(_:_:)``).
  @discardableResult
  public func register(_ identifier: String, _ handler: LaunchHandler) -> Bool {
    register(identifier, handler, model: nil)
  }

  /// Registers a model-mode handler: launches take a drawn duration and run
  /// no code. The same registration rules apply.
  @discardableResult
  public func register(_ identifier: String, model: ModelBehavior) -> Bool {
    register(identifier, .callback(nil, { $0.setTaskCompleted(success: true) }), model: model)
  }

  private func register(_ identifier: String, _ handler: LaunchHandler, model: ModelBehavior?) -> Bool {
    let violation = engine.withLock { e -> TaskRegistry.Violation? in
      if let v = e.registry.register(identifier, handler) { return v }
      if let model { e.models[identifier] = model }
      return nil
    }
    guard let violation else { return true }
    return report(violation, enforcement: enforcement, log: log)
  }

  public func submit(_ request: any TaskRequest) throws(SchedulerError) {
    let wrapped = AnyTaskRequest(request)
    let result: Result<Void, SchedulerError> = engine.withLock { e in
      do throws(SchedulerError) {
        try e.submit(wrapped)
        return .success(())
      } catch {
        return .failure(error)
      }
    }
    if case .failure(let error) = result {
      if enforcement == .strict && error == .launchHandlerNotRegistered {
        fatalError("*** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: 'No launch handler registered for task with identifier \(wrapped.identifier)'")
      }
      throw error
    }
  }

  public func cancel(taskRequestWithIdentifier identifier: String) {
    engine.withLock { $0.cancel(identifier) }
  }

  public func cancelAllTaskRequests() {
    engine.withLock { $0.cancelAll() }
  }

  public func pendingTaskRequests() async -> [any TaskRequest] {
    engine.withLock { $0.pending.requests.map(\.request) }
  }

  public func finishLaunching() {
    engine.withLock { $0.registry.launchingFinished = true }
  }

  // MARK: - The simulated app

  /// Submits a copy of `request` every time the app enters the background
  /// (as every guide does), due `earliestBeginAfter` later when given.
  ///
  /// With `replacingPending` (Apple's behaviour for a plain `submit`), each
  /// submission replaces the pending request and so pushes its earliest
  /// begin date back: an app opened often may then never reach a long
  /// interval. Pass `false` to submit only when nothing is pending for the
  /// identifier (check `pendingTaskRequests()` first, as careful apps do).
  public func submitWhenEnteringBackground(
    _ request: any TaskRequest, earliestBeginAfter: Duration? = nil, replacingPending: Bool = true
  ) {
    let wrapped = AnyTaskRequest(request)
    engine.withLock { $0.lifecycle.append((wrapped, earliestBeginAfter, replacingPending)) }
  }

  /// Submits a copy of `request` when the user opens the app, at `share` of
  /// the opens (0 to 1, drawn from the seed): the user's "refresh now" that
  /// starts a continued-processing task from the app.
  ///
  ///     scheduler.submitWhenOpeningApp(
  ///       ContinuedProcessingTaskRequest(identifier: "com.example.refresh-now", title: "Refreshing", subtitle: ""),
  ///       share: 0.5)
  ///
  /// A refused submission (`.fail` while another one runs) is a `rejected`
  /// event in the trace. With `share` 1 no draw is made, so the other
  /// draws of a seed are the same as without it.
  public func submitWhenOpeningApp(_ request: any TaskRequest, share: Double = 1) {
    let wrapped = AnyTaskRequest(request)
    engine.withLock { $0.onOpen.append((wrapped, min(1, max(0, share)))) }
  }

  /// Makes the next `count` submissions fail with `error` (error injection).
  public func failNextSubmissions(with error: SchedulerError, count: Int = 1) {
    engine.withLock { $0.injectedErrors += Array(repeating: error, count: count) }
  }

  // MARK: - Clock and state

  /// The simulated time now.
  public var now: Date { engine.withLock { $0.clock.date($0.now) } }

  /// The simulated device's conditions now.
  public var conditions: DeviceConditions { engine.withLock { $0.currentConditions } }

  /// Everything that happened so far.
  public var trace: Trace { engine.withLock { $0.trace } }

  /// The device, to change its state now (``SimulatedDevice``):
  /// `scheduler.device.pickUp()`, `.plugIn()`, `.network(.cellular)`.
  public var device: SimulatedDevice { SimulatedDevice(scheduler: self) }

  /// Applies a device change at the current time (see ``SimulatedDevice``).
  func applyNow(_ change: DeviceChange) {
    let (cut, grace) = engine.withLock { e in
      e.apply(change)
      e.needsEvaluation = true
      defer { e.liveExpirations = [] }
      return (e.liveExpirations, e.policy.expirationGrace)
    }
    for (task, reason) in cut { LiveLaunch.expire(task, reason: reason, grace: grace) }
  }

  /// The identifiers of the launches running now, in order.
  public var runningIdentifiers: [String] { engine.withLock { $0.running.keys.sorted() } }

  /// Moves the virtual clock forward by `duration`, handling every device
  /// change, launch, expiration and completion on the way.
  public func advance(by duration: Duration) async {
    let end = engine.withLock { $0.now + duration.milliseconds }
    await drive(until: end)
  }

  /// Moves the virtual clock to `date` (no-op if it is in the past).
  public func run(until date: Date) async {
    await drive(until: clock.offset(date))
  }

  private func drive(until end: Int64) async {
    await settleInFlight()
    while true {
      let step = engine.withLock { $0.step(until: end) }
      switch step {
      case .advanced: continue
      case .done: return
      case .live(let start): await runLive(start)
      }
    }
  }

  /// Waits for the live launches started by `forceLaunch` to end.
  private func settleInFlight() async {
    while let run = inFlight.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { await run.value }
  }

  private func runLive(_ start: SimulationEngine.LiveStart) async {
    let policy = engine.withLock { $0.policy }
    let timeout = start.task.kind == .continuedProcessing ? policy.continuedProcessingProgressTimeout : nil
    let cpuTime = cpuClock.withLock { $0 }
    let cpuBefore = cpuTime()
    let result = await LiveLaunch.run(
      start.task, handler: start.handler, budget: start.budget, grace: policy.expirationGrace, progressTimeout: timeout,
      budgetReason: start.budgetReason)
    let cpu = cpuTime() - cpuBefore
    engine.withLock { $0.finishLive(start.launch, result, cpu: cpu) }
  }

  /// Replaces how the CPU time of live launches is read: by default the
  /// whole process's (`getrusage`), read as each live launch starts and
  /// ends, so launches running at once (``forceLaunch(_:)``) share it. A
  /// test passes a clock its handler advances:
  ///
  ///     let used = Locked(Duration.zero)
  ///     scheduler.measureCPUTime { used.withLock { $0 } }
  ///
  /// A launch the CPU monitor watches (``SchedulingPolicy/cpuMonitorLimit``)
  /// that used more than the limit's CPU time, at more than the limit on
  /// average, is recorded as killed (`cpu monitor`) when it ends.
  public func measureCPUTime(with read: @escaping @Sendable () -> Duration) {
    cpuClock.withLock { $0 = read }
  }

  /// Tells the scheduler how many bytes a launch of `identifier` (a live
  /// handler) is expected to transfer, for the cellular data budget, until a
  /// launch reports its own (``BackgroundTask/reportTransferred(bytes:)``).
  /// A model handler's figure is its ``ModelBehavior/bytesPerLaunch``.
  public func expectTransfer(_ bytes: Int64, for identifier: String) {
    engine.withLock { $0.expectedTransfer[identifier] = bytes }
  }

  // MARK: - Controls

  /// Launches the pending request for `identifier` now if the rules allow it
  /// (conditions, allowance, earliest begin date), ignoring only the timing
  /// the system would have chosen. A live handler runs to its end before this returns.
  @discardableResult
  public func launch(_ identifier: String) async -> LaunchAttempt {
    await settleInFlight()
    let (attempt, live) = engine.withLock { e in (e.tryLaunch(identifier), e.takePendingLive()) }
    if let live { await runLive(live) }
    return attempt
  }

  /// Launches `identifier` now whatever the rules say, like the debugger
  /// command `_simulateLaunchForTaskWithIdentifier`; uses the pending request,
  /// or the last one submitted.
  ///
  /// A live handler starts running in the background and this returns at
  /// once: expire it through the returned ``SimulatedLaunch`` when the test
  /// chooses, and await its ``SimulatedLaunch/outcome()``. The virtual clock
  /// waits for it before moving on.
  @discardableResult
  public func forceLaunch(_ identifier: String) -> SimulatedLaunch {
    let (attempt, live) = engine.withLock { e in (e.forceLaunch(identifier), e.takePendingLive()) }
    guard let live else {
      return SimulatedLaunch(attempt: attempt, identifier: identifier, task: nil, scheduler: self, run: nil)
    }
    let run = Task { await self.runLive(live) }
    inFlight.withLock { $0.append(run) }
    return SimulatedLaunch(attempt: attempt, identifier: identifier, task: live.task, scheduler: self, run: run)
  }

  /// Expires the running launch of `identifier` now, like the debugger
  /// command `_simulateExpirationForTaskWithIdentifier`.
  /// - Returns: `false` when nothing of that identifier is running.
  @discardableResult
  public func expire(_ identifier: String) -> Bool {
    expire(identifier, launch: nil)
  }

  /// Expires the running launch of `identifier` when it is launch `number` (any when nil).
  func expire(_ identifier: String, launch number: Int?) -> Bool {
    let (expired, live) = engine.withLock { $0.expireNow(identifier, launch: number) }
    if let live {
      let grace = engine.withLock { $0.policy.expirationGrace }
      LiveLaunch.expire(live, reason: .forced, grace: grace)
    }
    return expired
  }
}
