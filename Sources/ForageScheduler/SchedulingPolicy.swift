import ForageSupport
import Foundation

/// The scheduling model: every number that decides when a task launches, how
/// long it may run and what happens when it overruns.
///
///     var policy = SchedulingPolicy()
///     policy.refreshLeadTime = .seconds(5 * 60)
///     let scheduler = SimulatedScheduler(device: .commuter, policy: policy, seed: 7)
///
/// Defaults come from ``SchedulerDefaults``; `docs/scheduling-model.md` says
/// which are documented by Apple and which are our assumptions.
public struct SchedulingPolicy: Codable, Sendable, Hashable {
  /// Where the system places refresh launches.
  public enum RefreshPlacement: String, Codable, Sendable, Hashable, CaseIterable {
    /// Shortly before the app is usually opened (iOS).
    case beforePredictedOpen
    /// As soon as the request is due and the conditions allow (a server, or a daemon).
    case asSoonAsEligible
  }

  /// Apple: pending app-refresh requests allowed (1).
  public var maxPendingAppRefreshRequests = SchedulerDefaults.maxPendingAppRefreshRequests
  /// Apple: pending processing requests allowed (10).
  public var maxPendingProcessingRequests = SchedulerDefaults.maxPendingProcessingRequests
  /// Apple (WWDC 2019): an app-refresh launch runs about 30 s before expiring.
  public var appRefreshBudget = SchedulerDefaults.appRefreshBudget
  /// Assumed: a processing launch runs 5 min before expiring (Apple: "minutes").
  public var processingBudget = SchedulerDefaults.processingBudget
  /// Assumed: the cap on one continued-processing launch (1 h).
  public var continuedProcessingBudget = SchedulerDefaults.continuedProcessingBudget
  /// Assumed: a live continued-processing task silent this long expires (`noProgress`).
  public var continuedProcessingProgressTimeout = SchedulerDefaults.continuedProcessingProgressTimeout
  /// Assumed: continued-processing tasks that may run at once.
  public var maxConcurrentContinuedProcessingTasks = SchedulerDefaults.maxConcurrentContinuedProcessingTasks
  /// Apple (the task starts from the user's action in the app): a
  /// continued-processing request submitted while the app is not in the
  /// foreground is refused (`immediateRunIneligible`; the refusal is
  /// assumed). `false` in ``server``, which has no app.
  public var continuedProcessingRequiresForeground = true
  /// Assumed: time from expiration to the kill of a handler that has not completed.
  public var expirationGrace = SchedulerDefaults.expirationGrace
  /// Assumed: no discretionary launches for this long after a kill.
  public var killPenalty = SchedulerDefaults.killPenalty
  /// Where refresh launches go: before predicted opens (iOS) or as soon as eligible.
  public var refreshPlacement = RefreshPlacement.beforePredictedOpen
  /// Assumed: a refresh runs this long before a predicted app open.
  public var refreshLeadTime = SchedulerDefaults.refreshLeadTime
  /// Assumed: width of the time-of-day bins app opens are learned in.
  public var predictionBinWidth = SchedulerDefaults.predictionBinWidth
  /// Assumed: days of app-open history the prediction uses.
  public var usageHistoryDays = SchedulerDefaults.usageHistoryDays
  /// Assumed: share of observed days a bin needs an open in to be a usual open time.
  public var usualOpenShare = SchedulerDefaults.usualOpenShare
  /// Assumed: refresh launches a day for an app with no usage yet.
  public var baseRefreshAllowance = SchedulerDefaults.baseRefreshAllowance
  /// Assumed: extra refresh launches a day per average daily open.
  public var refreshAllowancePerDailyOpen = SchedulerDefaults.refreshAllowancePerDailyOpen
  /// Assumed: the most refresh launches a day.
  public var maxRefreshAllowance = SchedulerDefaults.maxRefreshAllowance
  /// Assumed: no refresh launches for an app not opened for this many days.
  public var dormantAfterDays = SchedulerDefaults.dormantAfterDays
  /// Apple: no processing launches for an app not used within this long (a
  /// week); nil turns the rule off (a server, which nobody opens).
  public var processingRequiresUseWithin: Duration? = SchedulerDefaults.processingRequiresUseWithin
  /// Assumed: with no usage history, a due refresh runs this long later.
  public var coldStartDelay = SchedulerDefaults.coldStartDelay
  /// Assumed: screen-off time before processing starts on external power.
  public var idleDelay = SchedulerDefaults.idleDelay
  /// Assumed: screen-off time before processing starts on battery.
  public var batteryIdleDelay = SchedulerDefaults.batteryIdleDelay
  /// Assumed: processing starts at a uniform random delay up to this long after idle.
  public var processingStartJitter = SchedulerDefaults.processingStartJitter
  /// Assumed: battery level (0–1) processing on battery needs.
  public var processingMinimumBattery = SchedulerDefaults.processingMinimumBattery
  /// Assumed: below this battery level (0–1), off external power, no refresh
  /// or processing launch starts (Apple names a critically low battery as a
  /// factor and gives no number).
  public var discretionaryMinimumBattery = SchedulerDefaults.discretionaryMinimumBattery
  /// Assumed (from crash logs developers post): the CPU monitor kills a
  /// background launch averaging more than this share of one core over
  /// ``cpuMonitorWindow``; it watches refresh launches always and processing
  /// launches off external power (Apple turns it off for processing on
  /// power). `nil` turns the monitor off.
  public var cpuMonitorLimit: Double? = SchedulerDefaults.cpuMonitorLimit
  /// Assumed: the window the CPU monitor averages over.
  public var cpuMonitorWindow = SchedulerDefaults.cpuMonitorWindow
  /// Assumed: bytes the app's background launches may transfer on an
  /// expensive (cellular) network in any 24 hours; a launch on cellular
  /// expected to transfer more than what is left waits. `nil`: no budget.
  public var cellularDataBudget: Int64? = SchedulerDefaults.cellularDataBudget
  /// Whether a force-quit app's processing requests also wait for the next
  /// open. Refresh requests always do. Apple DTS says processing requests may
  /// still run after a force-quit, under tighter limits; the model
  /// (and the default) holds them back too.
  public var forceQuitBlocksProcessing = true
  /// Budgets for particular identifiers, overriding the budget of their kind
  /// (a daemon's `TaskDefinition.budget`).
  public var budgetOverrides: [String: Duration] = [:]

  /// The iOS-like policy with every default.
  public init() {}

  /// A policy for an always-on machine: refreshes run when due, not before a
  /// predicted app open.
  public static var server: SchedulingPolicy {
    var policy = SchedulingPolicy()
    policy.refreshPlacement = .asSoonAsEligible
    policy.idleDelay = .zero
    policy.batteryIdleDelay = .zero
    policy.processingStartJitter = .zero
    policy.killPenalty = .seconds(15 * 60)
    policy.processingRequiresUseWithin = nil
    policy.continuedProcessingRequiresForeground = false
    return policy
  }

  /// The time a launch of `kind` for `identifier` may run before it expires.
  /// An override may shorten a refresh launch but not lengthen it past
  /// ``appRefreshBudget``: the system, not the app, sets that time.
  ///
  ///     SchedulingPolicy().budget(for: .appRefresh, identifier: "x") // 30 s
  public func budget(for kind: TaskKind, identifier: String) -> Duration {
    if let override = budgetOverrides[identifier] {
      return kind == .appRefresh ? min(override, appRefreshBudget) : override
    }
    switch kind {
    case .appRefresh: return appRefreshBudget
    case .processing: return processingBudget
    case .continuedProcessing: return continuedProcessingBudget
    }
  }

  /// Whether the CPU monitor watches a launch of `kind` on a device
  /// `charging` or not: refresh launches always, processing launches only
  /// off external power, continued processing never (the user started it).
  public func cpuMonitorWatches(_ kind: TaskKind, charging: Bool) -> Bool {
    guard cpuMonitorLimit != nil else { return false }
    switch kind {
    case .appRefresh: return true
    case .processing: return !charging
    case .continuedProcessing: return false
    }
  }

  /// When the CPU monitor kills a watched launch using `cpuShare` of one
  /// core (CPU seconds per second): once its CPU time reaches
  /// `limit × window`, if it averages more than the limit; nil when it
  /// never does.
  ///
  ///     SchedulingPolicy().cpuMonitorKill(cpuShare: 1.0)   // 48 s
  public func cpuMonitorKill(cpuShare: Double) -> Duration? {
    guard let limit = cpuMonitorLimit, cpuShare > limit, cpuShare.isFinite else { return nil }
    let allowed = limit * cpuMonitorWindow.seconds
    return .milliseconds(Int64((allowed / cpuShare * 1000).rounded(.up)))
  }

  /// Refresh launches allowed in a day for an app opened `opensPerDay` times
  /// on average over the history window; 0 when the app is dormant.
  ///
  ///     allowance = min(max, base + perOpen × opensPerDay)
  public func refreshAllowance(opensPerDay: Double, daysSinceLastOpen: Double?) -> Int {
    if let days = daysSinceLastOpen, days >= Double(dormantAfterDays) { return 0 }
    let raw = baseRefreshAllowance + refreshAllowancePerDailyOpen * opensPerDay
    return Int(min(maxRefreshAllowance, raw).rounded(.down))
  }
}

extension Duration {
  /// A duration of `ms` milliseconds.
  static func ms(_ ms: Int64) -> Duration { .milliseconds(ms) }
}
