import Foundation

/// The pure state machine behind ``SimulatedScheduler``: no locks, no real
/// time, no I/O. Each call handles one event and says what the owner must do
/// (usually nothing; for a live handler, run it).
struct SimulationEngine: Sendable {
  enum Event: Sendable {
    case sessionEnd(Int)
    case wake
    case finish(launch: Int, success: Bool)
    case expire(launch: Int, reason: ExpirationReason)
    case respond(launch: Int)
    case kill(launch: Int)
    /// The CPU monitor's kill, if the launch is still due it then.
    case cpuKill(launch: Int)
    /// A running continued-processing launch's battery may have reached the
    /// critical floor: it expires if so.
    case batteryFloor(launch: Int)
  }

  enum Mode: Sendable {
    case model(ModelBehavior, durationMs: Int64)
    case live(BackgroundTask)
  }

  struct Running: Sendable {
    let launch: Int
    let request: AnyTaskRequest
    let start: Int64
    var expired = false
    let mode: Mode
    /// Launched on an expensive network: its transfer counts against the
    /// cellular data budget.
    var onCellular = false
    /// When the CPU monitor kills this model launch (nil: it does not).
    var cpuKillAt: Int64?
  }

  struct Plan: Sendable {
    var launchAt: Int64
    var targetOpen: Int64
    var idleWindow: Int
  }

  /// What the owner must do: run a live handler under a real budget.
  struct LiveStart: Sendable {
    let launch: Int
    let task: BackgroundTask
    let handler: LaunchHandler
    let budget: Duration
    /// The expiration reason at the budget: `budget`, or `early`.
    var budgetReason = ExpirationReason.budget
  }

  enum Step: Sendable { case advanced, live(LiveStart), done }

  static let dayMs: Int64 = 86_400_000
  static let hourMs: Int64 = 3_600_000

  let policy: SchedulingPolicy
  let clock: VirtualClock
  var traceDevice = false
  var now: Int64 = 0
  var random: SeededRandom
  var cursor: TimelineCursor
  var queue = EventQueue<Event>()

  // Device.
  var conditions: DeviceConditions
  var batteryAnchor: (time: Int64, level: Double)
  private let hasBattery: Bool
  private let drainPerHour: Double
  private let chargePerHour: Double
  var screenHolds = 0
  var appForeground = false
  var session = 0
  var forceQuit = false
  var screenOffSince: Int64? = 0
  var idleWindow = 0

  // Tasks.
  var registry = TaskRegistry()
  var models: [String: ModelBehavior] = [:]
  var enforcement = RuleEnforcement.lenient
  var pending = PendingRequests()
  var plans: [String: Plan] = [:]
  var running: [String: Running] = [:]
  var lifecycle: [(request: AnyTaskRequest, after: Duration?, replacing: Bool)] = []
  /// Requests the user submits on opening the app, at a share of the opens
  /// (a "refresh now" that starts a continued-processing task).
  var onOpen: [(request: AnyTaskRequest, share: Double)] = []
  var lastRequest: [String: AnyTaskRequest] = [:]
  var opens: [Int64] = []
  var firstOpen: Int64?
  /// The last app open; nil before the first (the run's start counts as
  /// the last use then: the app was just installed and opened).
  var lastOpen: Int64?
  /// The profile's early expiration of refresh launches, if any.
  let earlyRefreshExpirationMs: Int64?
  let earlyRefreshExpirationChance: Double
  var refreshLaunches: [Int64] = []
  var penaltyUntil: Int64 = .min
  /// Bytes transferred on cellular, by when, for the data budget (the last 24 h).
  var cellularUsage: [(time: Int64, bytes: Int64)] = []
  /// For live handlers: the bytes the next launch is expected to transfer
  /// (declared, then each launch's report).
  var expectedTransfer: [String: Int64] = [:]
  var launchCounter = 0
  var scheduledWake: Int64?
  var needsEvaluation = true
  var pendingLive: LiveStart?
  /// Live launches a device change cut short, for the owner to expire after unlocking.
  var liveExpirations: [(task: BackgroundTask, reason: ExpirationReason)] = []
  var injectedErrors: [SchedulerError] = []
  struct UsualKey: Equatable { var allowance: Int, count: Int, last: Int64, day: Int64 }
  var usualCache: (key: UsualKey, bins: [Int64])?

  var traceEvents: [TraceEvent] = []
  var deferralCounts: [String: [DeferralReason: Int]] = [:]
  var lastDeferral: [String: DeferralReason] = [:]

  init(timeline: DeviceTimeline, policy: SchedulingPolicy, clock: VirtualClock, seed: UInt64) {
    var policy = policy
    if let placement = timeline.profile?.refreshPlacement {
      policy.refreshPlacement = placement
      // A device nobody opens (a server) learns no usage, so none gates it.
      if placement == .asSoonAsEligible { policy.processingRequiresUseWithin = nil }
    }
    self.policy = policy
    earlyRefreshExpirationMs = timeline.profile?.earlyRefreshExpiration.flatMap(DeviceProfile.milliseconds)
    earlyRefreshExpirationChance = timeline.profile?.earlyRefreshExpirationProbability ?? 1
    self.clock = clock
    var master = SeededRandom(seed: seed)
    cursor = TimelineCursor(timeline, seed: master.next())
    random = master.fork()
    conditions = timeline.initial
    hasBattery = timeline.profile?.hasBattery ?? true
    drainPerHour = timeline.profile?.batteryDrainPerHour ?? SchedulerDefaults.batteryDrainPerHour
    chargePerHour = timeline.profile?.batteryChargePerHour ?? SchedulerDefaults.batteryChargePerHour
    batteryAnchor = (0, timeline.initial.batteryLevel)
  }

  // MARK: - Trace

  mutating func record(
    _ kind: TraceEvent.Kind, _ id: String? = nil, launch: Int? = nil, success: Bool? = nil, reason: String? = nil,
    conditions: DeviceConditions? = nil, duration: Double? = nil, sources: [String]? = nil, earliest: Date? = nil,
    bytes: Int64? = nil
  ) {
    var e = TraceEvent(
      time: clock.date(now), kind: kind, identifier: id, launch: launch, success: success, reason: reason,
      conditions: conditions, duration: duration, refreshedSources: sources)
    e.earliestBeginDate = earliest
    e.transferredBytes = bytes
    traceEvents.append(e)
  }

  var trace: Trace {
    var t = Trace(start: clock.start)
    t.end = clock.date(now)
    t.events = traceEvents
    for id in deferralCounts.keys.sorted() {
      for (reason, count) in deferralCounts[id]!.sorted(by: { $0.key < $1.key }) {
        t.deferrals.append(.init(identifier: id, reason: reason, count: count))
      }
    }
    return t
  }

  mutating func noteDeferral(_ id: String, _ reason: DeferralReason) {
    if lastDeferral[id] == reason { return }
    lastDeferral[id] = reason
    deferralCounts[id, default: [:]][reason, default: 0] += 1
  }

  // MARK: - Conditions

  var currentConditions: DeviceConditions {
    var c = conditions
    c.batteryLevel = batteryLevel
    return c
  }

  var batteryLevel: Double {
    guard hasBattery else { return 1 }
    let hours = Double(now - batteryAnchor.time) / Double(SimulationEngine.hourMs)
    let rate = conditions.isCharging ? chargePerHour : -drainPerHour
    return min(1, max(0, batteryAnchor.level + rate * hours))
  }

  var screenOn: Bool { screenHolds > 0 || appForeground }

  mutating func apply(_ change: DeviceChange) {
    if traceDevice { record(.device, reason: "\(change)") }
    switch change {
    case .charging(let on):
      guard hasBattery else { return }
      batteryAnchor = (now, batteryLevel)
      conditions.isCharging = on
      if !on { cutShort(where: { $0.requiresExternalPower }, reason: .powerLost) }
      watchCPU(charging: on)
      watchBattery()
    case .batteryLevel(let level):
      batteryAnchor = (now, min(1, max(0, level)))
      watchBattery()
    case .network(let status):
      conditions.network = status
      if !status.isAvailable { cutShort(where: { $0.requiresNetworkConnectivity && $0.kind == .processing }, reason: .networkLost) }
    case .lowPowerMode(let on):
      conditions.isLowPowerModeEnabled = on
    case .backgroundAppRefresh(let status):
      conditions.backgroundRefreshStatus = status
    case .thermalState(let state):
      conditions.thermalState = state
      if state >= .critical { cutShort(where: { _ in true }, reason: .thermal) }
    case .screen(let on):
      let wasOn = screenOn
      screenHolds = on ? screenHolds + 1 : max(0, screenHolds - 1)
      screenChanged(wasOn: wasOn)
    case .appOpened(let length):
      let wasOn = screenOn
      appForeground = true
      forceQuit = false
      session += 1
      opens.append(now)
      lastOpen = now
      if firstOpen == nil { firstOpen = now }
      let horizon = now - Int64(policy.usageHistoryDays) * SimulationEngine.dayMs
      if let first = opens.first, first < horizon { opens.removeAll { $0 < horizon } }
      record(.appOpened)
      queue.push(now + max(1, length.milliseconds), .sessionEnd(session))
      screenChanged(wasOn: wasOn)
      for entry in onOpen where random.chance(entry.share) { try? submit(entry.request) }
    case .appForceQuit:
      forceQuit = true
      record(.appForceQuit)
    }
  }

  mutating func screenChanged(wasOn: Bool) {
    if screenOn && !wasOn {
      screenOffSince = nil
      cutShort(where: { $0.kind == .processing }, reason: .deviceInUse)
    } else if !screenOn && wasOn {
      screenOffSince = now
      idleWindow += 1
    }
  }

  mutating func enterBackground() {
    let wasOn = screenOn
    appForeground = false
    record(.appBackgrounded)
    screenChanged(wasOn: wasOn)
    for entry in lifecycle {
      if !entry.replacing && pending[entry.request.identifier] != nil { continue }
      var request = entry.request
      if let after = entry.after { request.earliestBeginDate = clock.date(now + after.milliseconds) }
      try? submit(request)
    }
  }

  /// Expires running launches matching `predicate` (processing cut short).
  /// A live launch is only here when a test changed the device while it ran
  /// (`SimulatedScheduler.device`): its real task is expired by the owner,
  /// after unlocking (`liveExpirations`).
  mutating func cutShort(where predicate: (AnyTaskRequest) -> Bool, reason: ExpirationReason) {
    for id in running.keys.sorted() {
      guard let r = running[id], !r.expired, predicate(r.request) else { continue }
      expire(launch: r.launch, reason: reason)
      if case .live(let task) = r.mode { liveExpirations.append((task, reason)) }
    }
  }

  /// For a live processing launch: the first device change within `budget`
  /// of now that would cut it short, as an offset and a reason. The virtual
  /// clock waits while a live handler runs, so the timeline cannot reach
  /// that change; the launch's real-time budget ends there instead.
  mutating func interruption(of request: AnyTaskRequest, within budget: Duration) -> (Duration, ExpirationReason)? {
    guard request.kind != .appRefresh else { return nil }
    let continued = request.kind == .continuedProcessing
    let found = cursor.first(through: now + budget.milliseconds) { change -> ExpirationReason? in
      // Continued processing goes on while the device is used; only the
      // pressure that expires it in model mode (the battery aside) cuts it.
      if continued {
        if case .thermalState(let state) = change, state >= .critical { return .thermal }
        return nil
      }
      return switch change {
      case .screen(on: true), .appOpened: .deviceInUse
      case .charging(false) where request.requiresExternalPower && hasBattery: .powerLost
      case .network(let status) where !status.isAvailable && request.requiresNetworkConnectivity: .networkLost
      case .thermalState(let state) where state >= .critical: .thermal
      default: nil
      }
    }
    return found.map { (.milliseconds(max(0, $0.time - now)), $0.reason) }
  }

  // MARK: - Requests

  mutating func submit(_ request: AnyTaskRequest) throws(SchedulerError) {
    var request = request
    // Apple ignores a continued-processing request's earliest begin date.
    if request.kind == .continuedProcessing { request.earliestBeginDate = nil }
    do throws(SchedulerError) {
      if !injectedErrors.isEmpty {
        throw injectedErrors.removeFirst().with(identifier: request.identifier, detail: "injected")
      }
      try registry.checkSubmit(request)
      if request.kind != .continuedProcessing && conditions.backgroundRefreshStatus != .available {
        throw SchedulerError.unavailable.with(
          identifier: request.identifier, detail: "Background App Refresh is \(conditions.backgroundRefreshStatus.rawValue)")
      }
      if case .continuedProcessing(let c) = request {
        if policy.continuedProcessingRequiresForeground && !appForeground {
          throw SchedulerError.immediateRunIneligible.with(
            identifier: request.identifier,
            detail: "the app is not in the foreground (a continued-processing task starts from the user's action in the app)")
        }
        if c.strategy == .fail, let reason = continuedDeferral() {
          let detail = reason == .continuedProcessingBusy ? "another continued-processing task is running" : reason.explanation
          throw SchedulerError.immediateRunIneligible.with(identifier: request.identifier, detail: detail)
        }
      }
      try pending.insert(request, policy: policy)
    } catch {
      record(.rejected, request.identifier, reason: error.name)
      throw error
    }
    lastRequest[request.identifier] = request
    plans[request.identifier] = nil
    lastDeferral[request.identifier] = nil
    needsEvaluation = true
    record(.submitted, request.identifier, earliest: request.earliestBeginDate)
  }

  mutating func cancel(_ identifier: String) {
    if pending.remove(identifier) != nil {
      plans[identifier] = nil
      record(.cancelled, identifier)
      needsEvaluation = true
    }
  }

  mutating func cancelAll() {
    for r in pending.requests { cancel(r.identifier) }
  }

  var runningContinued: Int { running.values.reduce(0) { $0 + ($1.request.kind == .continuedProcessing ? 1 : 0) } }

  /// Why a continued-processing request could not start now (a busy slot,
  /// or the pressure that expires one); nil when it could.
  func continuedDeferral() -> DeferralReason? {
    let probe = AnyTaskRequest(ContinuedProcessingTaskRequest(identifier: "", title: "", subtitle: ""))
    let state = LaunchState(runningContinuedProcessing: runningContinued)
    return LaunchRules.deferral(for: probe, conditions: currentConditions, state: state, policy: policy)
  }

  /// Schedules, for each running continued-processing model launch off
  /// external power, the instant its battery reaches the critical floor,
  /// where the system expires it (`criticalBattery`); one already below
  /// expires now. Called at its launch and whenever power or the level changes.
  mutating func watchBattery() {
    guard hasBattery, !conditions.isCharging else { return }
    let floor = policy.discretionaryMinimumBattery
    for id in running.keys.sorted() {
      guard let r = running[id], !r.expired, r.request.kind == .continuedProcessing, case .model = r.mode else { continue }
      let level = batteryLevel
      if level < floor {
        expire(launch: r.launch, reason: .criticalBattery)
      } else if drainPerHour > 0 {
        let ms = ((level - floor) / drainPerHour * Double(SimulationEngine.hourMs)).rounded(.up)
        if ms.isFinite && ms < Double(Int64.max / 2) { queue.push(now + max(1, Int64(ms)), .batteryFloor(launch: r.launch)) }
      }
    }
  }

  // MARK: - The loop

  /// Handles the next event at or before `end`, or moves the clock to `end`.
  mutating func step(until end: Int64) -> Step {
    if let live = pendingLive {
      pendingLive = nil
      return .live(live)
    }
    if needsEvaluation {
      needsEvaluation = false
      evaluate()
      if let live = pendingLive {
        pendingLive = nil
        return .live(live)
      }
    }
    let deviceTime = cursor.peekTime(horizon: end)
    let queueTime = queue.peekTime.flatMap { $0 <= end ? $0 : nil }
    if let d = deviceTime, queueTime == nil || d <= queueTime! {
      now = max(now, d)
      let (_, change) = cursor.pop()
      apply(change)
    } else if let q = queueTime {
      now = max(now, q)
      let (_, event) = queue.pop()!
      handle(event)
    } else {
      now = max(now, end)
      return .done
    }
    evaluate()
    if let live = pendingLive {
      pendingLive = nil
      return .live(live)
    }
    return .advanced
  }

  mutating func handle(_ event: Event) {
    switch event {
    case .sessionEnd(let s):
      if s == session && appForeground { enterBackground() }
    case .wake:
      if scheduledWake == now { scheduledWake = nil }
    case .finish(let launch, let success):
      complete(launch: launch, success: success)
    case .expire(let launch, let reason):
      expire(launch: launch, reason: reason)
    case .respond(let launch):
      complete(launch: launch, success: false)
    case .kill(let launch):
      kill(launch: launch)
    case .cpuKill(let launch):
      cpuKill(launch: launch)
    case .batteryFloor(let launch):
      // Power or the level may have changed since: decide on the battery now.
      guard let id = runningID(launch), running[id]?.expired == false, hasBattery, !conditions.isCharging,
        batteryLevel <= policy.discretionaryMinimumBattery + 1e-9
      else { return }
      expire(launch: launch, reason: .criticalBattery)
    }
  }

  func runningID(_ launch: Int) -> String? {
    running.first { $0.value.launch == launch }?.key
  }

  /// Expires a model launch: it completes after its response time, or is
  /// killed after the grace when it ignores expiration.
  mutating func expire(launch: Int, reason: ExpirationReason) {
    guard let id = runningID(launch), var r = running[id], !r.expired else { return }
    r.expired = true
    running[id] = r
    record(.expired, id, launch: launch, reason: reason.rawValue)
    switch r.mode {
    case .model(let behavior, _):
      if behavior.honorsExpiration {
        queue.push(now + behavior.expirationResponse.milliseconds, .respond(launch: launch))
      } else {
        queue.push(now + policy.expirationGrace.milliseconds, .kill(launch: launch))
      }
    case .live:
      break  // the owner expires the real task after unlocking (see expireNow)
    }
  }

  mutating func complete(launch: Int, success: Bool) {
    guard let id = runningID(launch), let r = running.removeValue(forKey: id) else { return }
    guard case .model(let behavior, let durationMs) = r.mode else { return }
    let elapsed = now - r.start
    let bytes = chargeTransfer(r, elapsed: elapsed)
    var sources = behavior.sources
    if !success || elapsed < durationMs {
      let share = durationMs > 0 ? Double(elapsed) / Double(durationMs) : 1
      sources = Array(behavior.sources.prefix(success ? behavior.sources.count : Int(Double(behavior.sources.count) * min(1, share))))
    }
    record(.completed, id, launch: launch, success: success, duration: Double(elapsed) / 1000, sources: sources, bytes: bytes)
  }

  mutating func kill(launch: Int) {
    guard let id = runningID(launch), let r = running.removeValue(forKey: id) else { return }
    let bytes = chargeTransfer(r, elapsed: now - r.start)
    record(
      .killed, id, launch: launch, reason: KillReason.ignoredExpiration.rawValue, duration: Double(now - r.start) / 1000,
      bytes: bytes)
    penaltyUntil = now + policy.killPenalty.milliseconds
  }

  /// The CPU monitor kills a model launch (no expiration handler, no
  /// penalty: see `docs/scheduling-model.md`).
  mutating func cpuKill(launch: Int) {
    guard let id = runningID(launch), let r = running[id], r.cpuKillAt == now else { return }
    running[id] = nil
    let bytes = chargeTransfer(r, elapsed: now - r.start)
    record(.killed, id, launch: launch, reason: KillReason.cpuMonitor.rawValue, duration: Double(now - r.start) / 1000, bytes: bytes)
  }

  /// After the device was plugged in or unplugged: the CPU monitor stops
  /// or starts watching running processing launches (model mode; a live
  /// launch's CPU is judged when it ends).
  mutating func watchCPU(charging: Bool) {
    for id in running.keys.sorted() {
      guard var r = running[id], r.request.kind == .processing, case .model(let behavior, _) = r.mode else { continue }
      if !policy.cpuMonitorWatches(r.request.kind, charging: charging) {
        r.cpuKillAt = nil
      } else if r.cpuKillAt == nil, let share = behavior.cpuShare, let after = policy.cpuMonitorKill(cpuShare: share) {
        r.cpuKillAt = now + after.milliseconds
        queue.push(r.cpuKillAt!, .cpuKill(launch: r.launch))
      }
      running[id] = r
    }
  }

  // MARK: - Data budget

  /// The bytes a model launch transferred (its `bytesPerLaunch`, or the
  /// share of it the launch ran), counted against the data budget when it
  /// ran on cellular.
  mutating func chargeTransfer(_ r: Running, elapsed: Int64) -> Int64? {
    guard case .model(let behavior, let durationMs) = r.mode, let bytes = behavior.bytesPerLaunch else { return nil }
    let share = durationMs > 0 ? min(1, Double(max(0, elapsed)) / Double(durationMs)) : 1
    let used = Int64((Double(bytes) * share).rounded())
    if r.onCellular && used > 0 { cellularUsage.append((now, used)) }
    return used
  }

  /// The bytes a launch of `identifier` is expected to transfer, if known.
  func expectedBytes(_ identifier: String) -> Int64? {
    models[identifier]?.bytesPerLaunch ?? expectedTransfer[identifier]
  }

  /// Whether the cellular data budget holds `request` back now, and until
  /// when (nil: until something else changes, e.g. Wi-Fi).
  mutating func dataBudgetHold(_ request: AnyTaskRequest) -> (held: Bool, wake: Int64?) {
    guard let budget = policy.cellularDataBudget, request.kind != .continuedProcessing, conditions.network.isExpensive,
      let need = expectedBytes(request.identifier), need > 0
    else { return (false, nil) }
    if let first = cellularUsage.first, first.time <= now - SimulationEngine.dayMs {
      cellularUsage.removeAll { $0.time <= now - SimulationEngine.dayMs }
    }
    var used = cellularUsage.reduce(Int64(0)) { $0 + $1.bytes }
    if used + need <= budget { return (false, nil) }
    guard need <= budget else { return (true, nil) }
    for entry in cellularUsage {
      used -= entry.bytes
      if used + need <= budget { return (true, entry.time + SimulationEngine.dayMs + 1) }
    }
    return (true, nil)
  }

  /// Records the end of a live launch (the virtual clock waited for it).
  ///
  /// - Parameter cpu: the CPU time the process used during the launch;
  ///   a launch the CPU monitor watches that averaged more than its limit
  ///   long enough is recorded as killed by it, at the instant it would
  ///   have crossed the limit.
  mutating func finishLive(_ launch: Int, _ result: LiveLaunch.Result, cpu: Duration? = nil) {
    guard let id = runningID(launch), let r = running.removeValue(forKey: id) else { return }
    guard case .live(let task) = r.mode else { return }
    needsEvaluation = true
    let bytes = task.transferredBytes
    if let bytes {
      expectedTransfer[id] = bytes
      if r.onCellular && bytes > 0 { cellularUsage.append((now, bytes)) }
    }
    let watched = policy.cpuMonitorWatches(task.kind, charging: task.conditions.isCharging)
    if watched, let at = cpuKillTime(cpu: cpu, elapsed: result.elapsed) {
      record(.killed, id, launch: launch, reason: KillReason.cpuMonitor.rawValue, duration: at.seconds, bytes: bytes)
      return
    }
    if result.expired && !r.expired {
      record(.expired, id, launch: launch, reason: (result.expirationReason ?? .budget).rawValue)
    }
    switch result.outcome {
    case .completed(let success):
      record(
        .completed, id, launch: launch, success: success, duration: result.elapsed.seconds, sources: task.refreshedSources,
        bytes: bytes)
    case .killed:
      record(
        .killed, id, launch: launch, reason: KillReason.ignoredExpiration.rawValue, duration: result.elapsed.seconds,
        bytes: bytes)
      penaltyUntil = now + policy.killPenalty.milliseconds
    }
  }

  /// When the CPU monitor would have killed a watched live launch that used
  /// `cpu` over `elapsed` (its average taken as steady); nil when never.
  func cpuKillTime(cpu: Duration?, elapsed: Duration) -> Duration? {
    guard let cpu, elapsed > .zero, let limit = policy.cpuMonitorLimit else { return nil }
    let share = cpu.seconds / elapsed.seconds
    guard share > limit, share.isFinite else { return nil }
    // In seconds, unrounded: a launch shorter than a millisecond that used
    // more than the allowed CPU time is killed too (rounding the kill time up
    // to whole milliseconds put it past such a launch's end).
    let at = limit * policy.cpuMonitorWindow.seconds / share
    return at <= elapsed.seconds ? .seconds(at) : nil
  }

  // MARK: - Launching

  /// Starts a launch of `request` now.
  @discardableResult
  mutating func launch(_ request: AnyTaskRequest, forced: Bool) -> Int {
    let id = request.identifier
    pending.remove(id)
    plans[id] = nil
    launchCounter += 1
    let n = launchCounter
    let c = currentConditions
    record(.launched, id, launch: n, reason: forced ? "forced" : nil, conditions: c, earliest: request.earliestBeginDate)
    if request.kind == .appRefresh { refreshLaunches.append(now) }
    var budget = policy.budget(for: request.kind, identifier: id)
    var budgetReason = ExpirationReason.budget
    if request.kind == .appRefresh, let early = earlyRefreshExpirationMs, early < budget.milliseconds,
      random.chance(earlyRefreshExpirationChance)
    {
      budget = .milliseconds(early)
      budgetReason = .early
    }
    if let behavior = models[id] {
      if let after = behavior.resubmitAfter {
        var next = lastRequest[id] ?? request
        next.earliestBeginDate = clock.date(now + after.milliseconds)
        try? submit(next)
      }
      let d = behavior.duration.sampleMilliseconds(using: &random)
      let success = random.chance(behavior.successProbability)
      var run = Running(launch: n, request: request, start: now, mode: .model(behavior, durationMs: d))
      run.onCellular = c.network.isExpensive
      if policy.cpuMonitorWatches(request.kind, charging: c.isCharging), let share = behavior.cpuShare,
        let after = policy.cpuMonitorKill(cpuShare: share)
      {
        run.cpuKillAt = now + after.milliseconds
        queue.push(run.cpuKillAt!, .cpuKill(launch: n))
      }
      running[id] = run
      // A continued-processing model that stops reporting progress expires
      // the progress timeout after its last report.
      let stall = request.kind == .continuedProcessing
        ? behavior.progressStallsAfter.map { $0.milliseconds + policy.continuedProcessingProgressTimeout.milliseconds } : nil
      if let stall, stall < d, stall < budget.milliseconds {
        queue.push(now + stall, .expire(launch: n, reason: .noProgress))
      } else if d <= budget.milliseconds {
        queue.push(now + d, .finish(launch: n, success: success))
      } else {
        queue.push(now + budget.milliseconds, .expire(launch: n, reason: budgetReason))
      }
      if request.kind == .continuedProcessing { watchBattery() }
    } else if let handler = registry.handlers[id] {
      if let (cut, reason) = interruption(of: request, within: budget), cut < budget {
        budget = cut
        budgetReason = reason
      }
      let deadline = ContinuousClock.now + budget
      let task = BackgroundTask(
        request: request, conditions: c, launchNumber: n, remainingBudget: { deadline - ContinuousClock.now })
      var run = Running(launch: n, request: request, start: now, mode: .live(task))
      run.onCellular = c.network.isExpensive
      running[id] = run
      pendingLive = LiveStart(launch: n, task: task, handler: handler, budget: budget, budgetReason: budgetReason)
    } else {
      // Only reachable if a handler disappeared; record it as a failed launch.
      record(.completed, id, launch: n, success: false, reason: "no launch handler", duration: 0)
    }
    return n
  }

  /// Launches now if the rules allow, ignoring only the placement timing.
  mutating func tryLaunch(_ identifier: String) -> LaunchAttempt {
    guard let request = pending[identifier] else { return .notPending }
    switch decide(request, placement: false) {
    case .launch:
      return .launched(launch(request, forced: false))
    case .wait(let t):
      return .notDue(clock.date(t))
    case .blocked(let reason, _):
      return .deferred(reason)
    }
  }

  /// Launches now whatever the rules say (like `_simulateLaunchForTaskWithIdentifier`).
  mutating func forceLaunch(_ identifier: String) -> LaunchAttempt {
    if running[identifier] != nil { return .deferred(.alreadyRunning) }
    guard let request = pending[identifier] ?? lastRequest[identifier] else { return .notPending }
    return .launched(launch(request, forced: true))
  }

  /// Expires the running launch of `identifier` now.
  /// Returns the live task to expire after unlocking, if the launch is live.
  mutating func expireNow(_ identifier: String, launch number: Int? = nil) -> (expired: Bool, live: BackgroundTask?) {
    guard let r = running[identifier], !r.expired, number == nil || r.launch == number else { return (false, nil) }
    expire(launch: r.launch, reason: .forced)
    if case .live(let task) = r.mode { return (true, task) }
    return (true, nil)
  }

  mutating func takePendingLive() -> LiveStart? {
    defer { pendingLive = nil }
    return pendingLive
  }
}
