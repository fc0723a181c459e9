/// What a scheduler knows, besides the device conditions, when it decides
/// whether a due request may launch.
///
/// A ``SystemScheduler`` has no app life cycle: its force-quit, foreground
/// and in-use flags stay `false`.
public struct LaunchState: Sendable, Hashable {
  /// A launch of the same identifier is running (never two at once).
  public var isRunning: Bool
  /// Continued-processing launches running now.
  public var runningContinuedProcessing: Int
  /// Discretionary launches are held back after a kill
  /// (``SchedulingPolicy/killPenalty``).
  public var isPenalized: Bool
  /// The user force-quit the app and has not opened it since.
  public var isForceQuit: Bool
  /// The app is in the foreground: no refresh launches.
  public var isAppInForeground: Bool
  /// The screen is on or the app is open: no processing launches.
  public var isDeviceInUse: Bool

  /// A state; the defaults are an idle device with nothing running.
  public init(
    isRunning: Bool = false, runningContinuedProcessing: Int = 0, isPenalized: Bool = false,
    isForceQuit: Bool = false, isAppInForeground: Bool = false, isDeviceInUse: Bool = false
  ) {
    self.isRunning = isRunning
    self.runningContinuedProcessing = runningContinuedProcessing
    self.isPenalized = isPenalized
    self.isForceQuit = isForceQuit
    self.isAppInForeground = isAppInForeground
    self.isDeviceInUse = isDeviceInUse
  }
}

/// The launch-eligibility rules, in one order, for every scheduler: why a
/// request that is due may not launch now. The ``SimulatedScheduler`` and the
/// ``SystemScheduler`` both ask it, so the same conditions give the same
/// reason in both; when to launch an eligible request (before a predicted app
/// open, in an idle window) is the simulator's own business.
///
///     let reason = LaunchRules.deferral(
///       for: AnyTaskRequest(ProcessingTaskRequest(identifier: "crawl", requiresExternalPower: true)),
///       conditions: .onBatteryCellular, state: LaunchState(), policy: .server)
///     // .notCharging
///
/// The order (`docs/scheduling-model.md`, "What the simulator does"):
/// 1. already running; force-quit (refresh always, processing when
///    ``SchedulingPolicy/forceQuitBlocksProcessing``);
/// 2. continued processing runs when a slot is free, unless the device is
///    critically hot or its battery critically low off power (the pressure
///    under which the system also expires a running one);
/// 3. the kill penalty, thermal state serious or worse, Background App
///    Refresh not available, Low Power Mode, a critically low battery off
///    power (``SchedulingPolicy/discretionaryMinimumBattery``);
/// 4. refresh: the app in the background, a network;
/// 5. processing: power when required, a network when required, enough
///    battery when not charging, the device not in use.
public enum LaunchRules {
  /// Why `request`, due now, may not launch; nil when it may.
  public static func deferral(
    for request: AnyTaskRequest, conditions: DeviceConditions, state: LaunchState, policy: SchedulingPolicy
  ) -> DeferralReason? {
    if state.isRunning { return .alreadyRunning }
    if state.isForceQuit && (request.kind == .appRefresh || policy.forceQuitBlocksProcessing) { return .forceQuit }
    if request.kind == .continuedProcessing {
      if state.runningContinuedProcessing >= policy.maxConcurrentContinuedProcessingTasks { return .continuedProcessingBusy }
      if conditions.thermalState >= .critical { return .thermal }
      if !conditions.isCharging && conditions.batteryLevel < policy.discretionaryMinimumBattery { return .criticalBattery }
      return nil
    }
    if state.isPenalized { return .penalty }
    if conditions.thermalState >= .serious { return .thermal }
    if conditions.backgroundRefreshStatus != .available { return .backgroundAppRefreshOff }
    if conditions.isLowPowerModeEnabled { return .lowPowerMode }
    if !conditions.isCharging && conditions.batteryLevel < policy.discretionaryMinimumBattery { return .criticalBattery }
    if request.kind == .appRefresh {
      if state.isAppInForeground { return .appInForeground }
      if !conditions.network.isAvailable { return .noNetwork }
      return nil
    }
    if request.requiresExternalPower && !conditions.isCharging { return .notCharging }
    if request.requiresNetworkConnectivity && !conditions.network.isAvailable { return .noNetwork }
    if !conditions.isCharging && conditions.batteryLevel < policy.processingMinimumBattery { return .lowBattery }
    if state.isDeviceInUse { return .deviceInUse }
    return nil
  }
}
