import Foundation

/// When a pending request may launch: the rules every scheduler shares
/// (``LaunchRules``: conditions, penalty, force-quit), the simulator's own
/// allowance, and the timing (before a predicted app open, in an idle
/// window). See `docs/scheduling-model.md`.
extension SimulationEngine {
  // MARK: - Decisions

  enum Decision { case launch, wait(Int64), blocked(DeferralReason, wake: Int64?) }

  /// Looks at every pending request in identifier order; launches the
  /// eligible ones and schedules a wake-up for the earliest future instant.
  mutating func evaluate() {
    var wake: Int64?
    for request in pending.requests {
      guard pendingLive == nil else {
        needsEvaluation = true
        break
      }
      switch decide(request, placement: true) {
      case .launch:
        lastDeferral[request.identifier] = nil
        launch(request, forced: false)
      case .wait(let t):
        wake = min(wake ?? t, t)
      case .blocked(let reason, let t):
        noteDeferral(request.identifier, reason)
        if let t { wake = min(wake ?? t, t) }
      }
    }
    if let wake, wake > now, scheduledWake == nil || wake < scheduledWake! || scheduledWake! <= now {
      scheduledWake = wake
      queue.push(wake, .wake)
    }
  }

  func earliest(_ request: AnyTaskRequest) -> Int64 {
    request.earliestBeginDate.map { clock.offset($0) } ?? .min
  }

  mutating func decide(_ request: AnyTaskRequest, placement: Bool) -> Decision {
    let id = request.identifier
    let due = earliest(request)
    if now < due { return .wait(due) }
    // This runs for every pending request after every event, so what only
    // some rules read is worked out only for them: the running
    // continued-processing tasks (a walk over `running`) and the battery
    // level (the rules read it only on battery).
    let continued = request.kind == .continuedProcessing ? runningContinued : 0
    let state = LaunchState(
      isRunning: running[id] != nil, runningContinuedProcessing: continued, isPenalized: now < penaltyUntil,
      isForceQuit: forceQuit, isAppInForeground: appForeground, isDeviceInUse: screenOffSince == nil || appForeground)
    var c = conditions
    if !c.isCharging { c.batteryLevel = batteryLevel }
    if let reason = LaunchRules.deferral(for: request, conditions: c, state: state, policy: policy) {
      return .blocked(reason, wake: reason == .penalty ? penaltyUntil : nil)
    }
    if request.kind == .continuedProcessing { return .launch }
    let hold = dataBudgetHold(request)
    if hold.held { return .blocked(.dataBudget, wake: hold.wake) }
    if request.kind == .appRefresh {
      if policy.refreshPlacement == .asSoonAsEligible { return .launch }
      let allowance = refreshAllowance
      if allowance == 0 { return .blocked(.appDormant, wake: nil) }
      if let first = refreshLaunches.first, first <= now - SimulationEngine.dayMs {
        refreshLaunches.removeAll { $0 <= now - SimulationEngine.dayMs }
      }
      if refreshLaunches.count >= allowance {
        return .blocked(.allowanceExhausted, wake: refreshLaunches[0] + SimulationEngine.dayMs + 1)
      }
      guard placement else { return .launch }
      var plan = plans[id]
      if plan == nil || now >= plan!.targetOpen {
        plan = refreshPlan(from: max(now, due), allowance: allowance)
        plans[id] = plan
      }
      return now >= plan!.launchAt ? .launch : .wait(plan!.launchAt)
    }
    // Processing: only for an app used within the past week (Apple,
    // BGProcessingTaskRequest); the run's start counts as a use.
    if let window = policy.processingRequiresUseWithin, now - (lastOpen ?? 0) >= window.milliseconds {
      return .blocked(.appDormant, wake: nil)
    }
    // Eligible, so the device is idle (the screen off since `off`).
    guard placement, let off = screenOffSince else { return .launch }
    if plans[id]?.idleWindow != idleWindow {
      let delay = (conditions.isCharging ? policy.idleDelay : policy.batteryIdleDelay).milliseconds
      let jitterMax = policy.processingStartJitter.milliseconds
      let jitter = jitterMax > 0 ? Int64(Double(jitterMax) * random.unit()) : 0
      let at = max(off + delay, due == .min ? off + delay : due, now) + jitter
      plans[id] = Plan(launchAt: at, targetOpen: .max, idleWindow: idleWindow)
    }
    let at = plans[id]!.launchAt
    return now >= at ? .launch : .wait(at)
  }

  // MARK: - Usage learning

  var opensPerDay: (perDay: Double, daysObserved: Int) {
    guard let firstOpen else { return (0, 0) }
    let span = (now - firstOpen) / SimulationEngine.dayMs + 1
    let days = Int(min(Int64(policy.usageHistoryDays), max(1, span)))
    return (Double(opens.count) / Double(days), days)
  }

  var refreshAllowance: Int {
    let days = opens.last.map { Double(now - $0) / Double(SimulationEngine.dayMs) }
    if opens.isEmpty && firstOpen != nil { return 0 }  // not opened within the history window
    return policy.refreshAllowance(opensPerDay: opensPerDay.perDay, daysSinceLastOpen: days)
  }

  /// Times of day (ms after midnight) of the usual app opens, at most `allowance`.
  mutating func usualOpenTimes(allowance: Int) -> [Int64] {
    let key = UsualKey(allowance: allowance, count: opens.count, last: opens.last ?? -1, day: now / SimulationEngine.dayMs)
    if let cache = usualCache, cache.key == key { return cache.bins }
    let width = max(60_000, policy.predictionBinWidth.milliseconds)
    let binCount = Int((SimulationEngine.dayMs + width - 1) / width)
    var weight = [Int](repeating: 0, count: binCount)
    var lastDay = [Int64](repeating: -1, count: binCount)
    for t in opens {
      let day = t / SimulationEngine.dayMs
      let bin = Int((t % SimulationEngine.dayMs) / width)
      if lastDay[bin] != day {
        lastDay[bin] = day
        weight[bin] += 1
      }
    }
    let threshold = max(1, Int((policy.usualOpenShare * Double(opensPerDay.daysObserved)).rounded(.up)))
    var candidates = (0..<binCount).filter { weight[$0] >= threshold }
    if candidates.isEmpty { candidates = (0..<binCount).filter { weight[$0] > 0 } }
    candidates.sort { weight[$0] != weight[$1] ? weight[$0] > weight[$1] : $0 < $1 }
    let bins = candidates.prefix(allowance).map { Int64($0) * width }.sorted()
    usualCache = (key, bins)
    return bins
  }

  mutating func refreshPlan(from t: Int64, allowance: Int) -> Plan {
    let lead = policy.refreshLeadTime.milliseconds
    let times = usualOpenTimes(allowance: allowance)
    if times.isEmpty {
      let at = t + policy.coldStartDelay.milliseconds
      return Plan(launchAt: at, targetOpen: at + lead, idleWindow: -1)
    }
    let today = (t / SimulationEngine.dayMs) * SimulationEngine.dayMs
    for day in 0...2 {
      for tod in times {
        let open = today + Int64(day) * SimulationEngine.dayMs + tod
        if open > t { return Plan(launchAt: max(t, open - lead), targetOpen: open, idleWindow: -1) }
      }
    }
    return Plan(launchAt: t + SimulationEngine.dayMs, targetOpen: t + SimulationEngine.dayMs + lead, idleWindow: -1)
  }
}
