/// Why a launch expired before its handler finished: the `reason` of an
/// `expired` trace event and ``BackgroundTask/expirationReason``.
///
///     if task.expirationReason == .deviceInUse { saveAndStop() }
///
/// Apple's expiration handler carries no reason; the simulator and the
/// daemon record one so that tests and forecasts can tell the causes apart
/// (`docs/scheduling-model.md`, "Expiration").
public enum ExpirationReason: String, Codable, Sendable, Hashable, CaseIterable {
  /// The task's time budget ran out.
  case budget
  /// A refresh launch cut short by the profile's `earlyRefreshExpiration`.
  case early
  /// Processing cut short because the user started using the device.
  case deviceInUse
  /// Processing that requires external power cut short when it was unplugged.
  case powerLost
  /// Processing that requires a network cut short when the network went away.
  case networkLost
  /// Cut short because the device became critically hot.
  case thermal
  /// A continued-processing task that stopped reporting progress.
  case noProgress
  /// A continued-processing task off external power cut short when the
  /// battery fell critically low (``SchedulingPolicy/discretionaryMinimumBattery``).
  case criticalBattery
  /// Expired by a test or a tool (``SimulatedScheduler/expire(_:)``, like the
  /// debugger's `_simulateExpirationForTaskWithIdentifier`).
  case forced
  /// The daemon is shutting down.
  case shutdown
  /// ``SystemScheduler/stopRunning(reason:)`` was called.
  case stopped
  /// The host system (iOS, through a ``HostedScheduler``) called the
  /// task's expiration handler; Apple's handler carries no reason.
  case system
}

extension TraceEvent {
  /// For `expired` events: the reason as an ``ExpirationReason``.
  public var expirationReason: ExpirationReason? {
    kind == .expired ? reason.flatMap(ExpirationReason.init(rawValue:)) : nil
  }
}

/// Why a launch was killed: the `reason` of a `killed` trace event.
///
///     if event.killReason == .cpuMonitor { spreadTheWork() }
///
/// The raw values are the words the trace shows.
public enum KillReason: String, Codable, Sendable, Hashable, CaseIterable {
  /// The handler did not complete within the grace after its expiration.
  case ignoredExpiration = "ignored expiration"
  /// The CPU monitor: the launch used the CPU heavily in the background
  /// (``SchedulingPolicy/cpuMonitorLimit``), on battery for processing.
  case cpuMonitor = "cpu monitor"
}

extension TraceEvent {
  /// For `killed` events: the reason as a ``KillReason``.
  public var killReason: KillReason? {
    kind == .killed ? reason.flatMap(KillReason.init(rawValue:)) : nil
  }
}
