/// The device of a ``SimulatedScheduler``, changed now by a test rather than
/// by a timeline written in advance.
///
///     let scheduler = SimulatedScheduler(device: .chargingOnWiFi)
///     scheduler.device.unplug()
///     scheduler.device.network(.cellular)
///     await scheduler.launch("com.example.refresh")   // sees battery and cellular
///     scheduler.device.pickUp()                        // running processing expires: .deviceInUse
///
/// A change takes effect at the scheduler's current time, exactly as the
/// same ``DeviceChange`` in a timeline would: a running processing launch is
/// cut short (screen on, unplugged, network lost), and pending requests are
/// decided again when the clock next moves (``SimulatedScheduler/advance(by:)``)
/// or at the next ``SimulatedScheduler/launch(_:)``.
public struct SimulatedDevice: Sendable {
  let scheduler: SimulatedScheduler

  /// Applies `change` now.
  public func apply(_ change: DeviceChange) { scheduler.applyNow(change) }

  /// The user picks the device up: the screen turns on (processing stops).
  /// Calls nest: the screen is off again after as many ``putDown()``s.
  public func pickUp() { apply(.screen(on: true)) }
  /// The user puts the device down: the screen turns off.
  public func putDown() { apply(.screen(on: false)) }
  /// The user opens the app for `session`; it enters the background when the
  /// session ends on the virtual clock.
  public func openApp(for session: Duration = .seconds(60)) { apply(.appOpened(session: session)) }
  /// The user force-quits the app from the app switcher.
  public func forceQuitApp() { apply(.appForceQuit) }
  /// Plugged into external power.
  public func plugIn() { apply(.charging(true)) }
  /// Unplugged from external power.
  public func unplug() { apply(.charging(false)) }
  /// The battery level, from 0 to 1.
  public func battery(_ level: Double) { apply(.batteryLevel(level)) }
  /// The network changes (`.none` to go offline).
  public func network(_ status: NetworkStatus) { apply(.network(status)) }
  /// Low Power Mode on or off.
  public func lowPowerMode(_ on: Bool) { apply(.lowPowerMode(on)) }
  /// The Background App Refresh setting changes.
  public func backgroundAppRefresh(_ status: BackgroundRefreshStatus) { apply(.backgroundAppRefresh(status)) }
  /// The thermal state changes.
  public func thermalState(_ state: ThermalState) { apply(.thermalState(state)) }
}

/// A launch started by ``SimulatedScheduler/forceLaunch(_:)``. A live
/// handler runs in the background meanwhile, so the test can expire it at
/// the moment it chooses and then wait for its end:
///
///     let launch = scheduler.forceLaunch("com.example.refresh")
///     launch.expire()
///     #expect(await launch.outcome() == .completed(success: false))
public struct SimulatedLaunch: Sendable {
  /// `.launched(n)`, or why nothing launched (`.notPending`, `.deferred(.alreadyRunning)`).
  public let attempt: LaunchAttempt
  /// The task's identifier.
  public let identifier: String
  /// The task as the live handler sees it; nil for a model-mode handler or
  /// when nothing launched.
  public let task: BackgroundTask?
  let scheduler: SimulatedScheduler
  let run: Task<Void, Never>?

  /// The launch's number in the trace, when it launched.
  public var number: Int? {
    if case .launched(let n) = attempt { return n }
    return nil
  }

  /// Expires this launch now (reason ``ExpirationReason/forced``), like the
  /// debugger's `_simulateExpirationForTaskWithIdentifier`.
  /// - Returns: `false` when it is no longer running (or never launched).
  @discardableResult
  public func expire() -> Bool {
    guard let number else { return false }
    return scheduler.expire(identifier, launch: number)
  }

  /// Waits until a live handler completes or is killed (its end is then in
  /// the trace) and returns how it ended. A model-mode launch ends as the
  /// virtual clock moves, so this returns `nil` for one (read the trace).
  public func outcome() async -> TaskOutcome? {
    guard let run, let task else { return nil }
    await run.value
    return task.outcome
  }
}
