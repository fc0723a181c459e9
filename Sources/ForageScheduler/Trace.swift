import Foundation

/// Everything that happened to the tasks of a scheduler, in order: requests,
/// launches, expirations, completions, kills, and the app's life cycle.
///
///     let trace = await scheduler.trace
///     print(trace)                                   // one line per event
///     let json = try JSONEncoder().encode(trace)     // for tools and diffs
///
/// A ``SimulatedScheduler`` with the same seed, device and tasks always
/// produces the same trace.
public struct Trace: Codable, Sendable, Hashable, CustomStringConvertible {
  /// The events in the order they happened.
  public var events: [TraceEvent] = []
  /// When the run started.
  public var start: Date
  /// When the run ended (the clock at the last read).
  public var end: Date
  /// Why pending requests were held back, counted per identifier and reason
  /// (a count is a stretch of time a request was held back for that reason).
  public var deferrals: [Deferral] = []

  /// A count of times a request was held back for one reason.
  public struct Deferral: Codable, Sendable, Hashable {
    /// The task held back.
    public var identifier: String
    /// Why it was held back.
    public var reason: DeferralReason
    /// Stretches of time held back for this reason.
    public var count: Int
  }

  /// An empty trace starting at `start`.
  public init(start: Date) {
    self.start = start
    self.end = start
  }

  /// The events of one task.
  public func events(for identifier: String) -> [TraceEvent] {
    events.filter { $0.identifier == identifier }
  }

  /// How many events of `kind` the trace holds, for one identifier or all.
  public func count(_ kind: TraceEvent.Kind, identifier: String? = nil) -> Int {
    events.reduce(0) { $0 + ($1.kind == kind && (identifier == nil || $1.identifier == identifier) ? 1 : 0) }
  }

  public var description: String {
    events.map(\.description).joined(separator: "\n")
  }
}

/// Why a pending request was not launched at some moment.
public enum DeferralReason: String, Codable, Sendable, Hashable, CaseIterable, Comparable {
  case backgroundAppRefreshOff
  case lowPowerMode
  case forceQuit
  case noNetwork
  case notCharging
  case lowBattery
  case deviceInUse
  case appInForeground
  case allowanceExhausted
  case appDormant
  case penalty
  case thermal
  case alreadyRunning
  case continuedProcessingBusy
  /// The battery was critically low and the device not charging.
  case criticalBattery
  /// On cellular, the launch would transfer more than what is left of the
  /// app's cellular data budget.
  case dataBudget

  public static func < (a: DeferralReason, b: DeferralReason) -> Bool { a.rawValue < b.rawValue }

  /// What a person reads: the cause and, where there is one, the remedy.
  public var explanation: String {
    switch self {
    case .backgroundAppRefreshOff: "Background App Refresh is off (Settings > General > Background App Refresh)"
    case .lowPowerMode: "Low Power Mode was on"
    case .forceQuit: "the user force-quit the app; nothing launches until it is opened again"
    case .noNetwork: "there was no network"
    case .notCharging: "it requires external power and the device was not charging"
    case .lowBattery: "the battery was too low for processing on battery"
    case .deviceInUse: "the device was in use (processing waits for the screen to be off for a while)"
    case .appInForeground: "the app was in the foreground"
    case .allowanceExhausted: "the app's daily refresh allowance was used up (it grows with use)"
    case .appDormant: "the app had not been opened for days, so iOS gives it no background time (processing needs use within the past week)"
    case .penalty: "the app was penalised after a task was killed for ignoring its expiration"
    case .thermal: "the device was too hot"
    case .alreadyRunning: "the previous launch of the same task was still running"
    case .continuedProcessingBusy: "another continued-processing task was running"
    case .criticalBattery: "the battery was critically low and the device not charging (discretionary work waits for a charge)"
    case .dataBudget: "the app's cellular data budget was used up (a launch on cellular expected to transfer more than what was left waited for Wi-Fi or for the budget to recover)"
    }
  }
}

/// One thing that happened in a scheduler.
public struct TraceEvent: Codable, Sendable, Hashable, CustomStringConvertible {
  /// What happened.
  public enum Kind: String, Codable, Sendable, Hashable {
    case submitted, rejected, cancelled
    case launched, expired, completed, killed
    case appOpened, appBackgrounded, appForceQuit
    /// A change of the simulated device (only when device tracing is on).
    case device
  }

  /// When it happened.
  public var time: Date
  /// What happened.
  public var kind: Kind
  /// The task's identifier; `nil` for app life-cycle events.
  public var identifier: String?
  /// The launch this event belongs to (1, 2, … in launch order).
  public var launch: Int?
  /// For `completed`: whether the task reported success.
  public var success: Bool?
  /// For `expired`: the cause (`budget`, `deviceInUse`, `powerLost`, …); for
  /// `killed`: why (``KillReason``: `ignored expiration`, `cpu monitor`); for
  /// `rejected`: the error; for `launched`: `forced` when bypassing the rules.
  public var reason: String?
  /// For `launched`: the conditions at launch.
  public var conditions: DeviceConditions?
  /// For `completed` and `killed`: how long the launch ran, in seconds.
  public var duration: Double?
  /// For `completed`: the sources the launch brought up to date, when known.
  public var refreshedSources: [String]?
  /// For `submitted` and `launched`: the request's earliest begin date.
  public var earliestBeginDate: Date?
  /// For `completed` and `killed`: the bytes the launch transferred, when
  /// known (a live handler's ``BackgroundTask/reportTransferred(bytes:)``,
  /// or the share of a model's ``ModelBehavior/bytesPerLaunch`` it ran).
  public var transferredBytes: Int64?

  /// An event; only `time` and `kind` are required.
  public init(
    time: Date, kind: Kind, identifier: String? = nil, launch: Int? = nil, success: Bool? = nil,
    reason: String? = nil, conditions: DeviceConditions? = nil, duration: Double? = nil,
    refreshedSources: [String]? = nil
  ) {
    self.time = time
    self.kind = kind
    self.identifier = identifier
    self.launch = launch
    self.success = success
    self.reason = reason
    self.conditions = conditions
    self.duration = duration
    self.refreshedSources = refreshedSources
  }

  public var description: String {
    var line = TraceFormat.timestamp(time) + "  " + kind.rawValue
    if let identifier { line = line.padding(toLength: 36, withPad: " ", startingAt: 0) + " " + identifier }
    if let launch { line += " #\(launch)" }
    if let success { line += success ? " success" : " failure" }
    if let duration { line += " after " + TraceFormat.duration(seconds: duration) }
    if let reason { line += " (\(reason))" }
    if let conditions { line += " [\(conditions)]" }
    if let earliestBeginDate, kind == .submitted { line += " earliest " + TraceFormat.timestamp(earliestBeginDate) }
    if let transferredBytes { line += " \(transferredBytes) bytes" }
    if let refreshedSources, !refreshedSources.isEmpty { line += " sources: " + refreshedSources.joined(separator: ",") }
    return line
  }
}

/// Formatting shared by traces and reports (UTC, fixed width, no locale).
enum TraceFormat {
  static func timestamp(_ date: Date) -> String {
    let total = Int64(date.timeIntervalSince1970.rounded(.down))
    let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
    let secs = total - days * 86_400
    let (y, m, d) = civil(fromDays: days)
    return String(format: "%04lld-%02lld-%02lld %02lld:%02lld:%02lld", y, m, d, secs / 3600, secs / 60 % 60, secs % 60)
  }

  /// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
  static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
    let z = z0 + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
    let y = yoe + era * 400
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (m <= 2 ? y + 1 : y, m, d)
  }

  /// `1h`, `15m`, `90s`: a threshold in one unit.
  static func compact(seconds: Double) -> String {
    let s = Int(seconds.rounded())
    if s % 86_400 == 0 && s > 0 { return "\(s / 86_400)d" }
    if s % 3600 == 0 && s > 0 { return "\(s / 3600)h" }
    if s % 60 == 0 && s > 0 { return "\(s / 60)m" }
    return "\(s)s"
  }

  /// `42s`, `3m 05s`, `2h 10m`, `3d 4h`.
  static func duration(seconds: Double) -> String {
    if seconds < 60 {
      return seconds < 10 && seconds != seconds.rounded() ? String(format: "%.1fs", seconds) : "\(Int(seconds.rounded()))s"
    }
    let s = Int(seconds.rounded())
    if s < 3600 { return String(format: "%ldm %02lds", s / 60, s % 60) }
    if s < 86_400 { return String(format: "%ldh %02ldm", s / 3600, s / 60 % 60) }
    return "\(s / 86_400)d \(s / 3600 % 24)h"
  }
}
