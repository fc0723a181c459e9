import Foundation

/// The network a device has, as a task sees it.
public struct NetworkStatus: Codable, Sendable, Hashable, CustomStringConvertible {
  /// The kind of link.
  public enum Interface: String, Codable, Sendable, Hashable, CaseIterable {
    case none, cellular, wifi, wired
  }
  /// The kind of link (`none` when offline).
  public var interface: Interface
  /// Metered, like cellular or a personal hotspot (Apple: `isExpensive`).
  public var isExpensive: Bool
  /// Low Data Mode is on (Apple: `isConstrained`).
  public var isConstrained: Bool

  /// A network; cellular is expensive unless told otherwise.
  public init(_ interface: Interface, isExpensive: Bool? = nil, isConstrained: Bool = false) {
    self.interface = interface
    self.isExpensive = isExpensive ?? (interface == .cellular)
    self.isConstrained = isConstrained
  }

  /// No network.
  public static let none = NetworkStatus(.none)
  /// Wi-Fi, not expensive.
  public static let wifi = NetworkStatus(.wifi)
  /// Cellular, expensive.
  public static let cellular = NetworkStatus(.cellular)
  /// A wired network (servers).
  public static let wired = NetworkStatus(.wired)

  /// True when some network is reachable.
  public var isAvailable: Bool { interface != .none }

  public var description: String {
    var text = interface.rawValue
    if isExpensive && interface != .cellular { text += " expensive" }
    if isConstrained { text += " constrained" }
    return text
  }
}

/// The Background App Refresh setting (Apple: `UIBackgroundRefreshStatus`).
public enum BackgroundRefreshStatus: String, Codable, Sendable, Hashable, CaseIterable {
  /// On for this app.
  case available
  /// Turned off by the user (for this app or for all).
  case denied
  /// Not allowed by a policy such as parental controls or device management.
  case restricted
}

/// The device's thermal state (Apple: `ProcessInfo.ThermalState`).
public enum ThermalState: String, Codable, Sendable, Hashable, Comparable {
  case nominal, fair, serious, critical
  private var rank: Int {
    switch self {
    case .nominal: 0
    case .fair: 1
    case .serious: 2
    case .critical: 3
    }
  }
  public static func < (a: ThermalState, b: ThermalState) -> Bool { a.rank < b.rank }
}

/// The conditions a task launches under, so a job can adapt (lower
/// concurrency on battery, skip Wi-Fi-only sources on cellular…).
///
///     if task.conditions.network.isExpensive { skipWiFiOnlySources() }
///
/// The one conditions type: the scheduler's launch rules read it, a launch's
/// ``BackgroundTask`` carries it, and the store keeps it with each run
/// (`RunSummary.conditions`). Its JSON is the form stored runs have always
/// had: `{"charging": false, "batteryLevel": 0.54, "network": "cellular",
/// "lowPowerMode": true, "thermalState": "nominal"}`, with
/// `"backgroundRefresh"` only when the setting is not `available` (see
/// ``init(from:)`` for the forms it reads).
public struct DeviceConditions: Codable, Sendable, Hashable, CustomStringConvertible {
  /// Plugged into external power.
  public var isCharging: Bool
  /// Battery level from 0 to 1; 1 for a machine without a battery.
  public var batteryLevel: Double
  /// The network available.
  public var network: NetworkStatus
  /// Low Power Mode (no refresh or processing launches).
  public var isLowPowerModeEnabled: Bool
  /// The Background App Refresh setting.
  public var backgroundRefreshStatus: BackgroundRefreshStatus
  /// The thermal state (serious or worse holds launches back).
  public var thermalState: ThermalState

  /// Conditions; the defaults are a charging device on Wi-Fi with everything allowed.
  public init(
    isCharging: Bool = true, batteryLevel: Double = 1, network: NetworkStatus = .wifi,
    isLowPowerModeEnabled: Bool = false, backgroundRefreshStatus: BackgroundRefreshStatus = .available,
    thermalState: ThermalState = .nominal
  ) {
    self.isCharging = isCharging
    self.batteryLevel = batteryLevel
    self.network = network
    self.isLowPowerModeEnabled = isLowPowerModeEnabled
    self.backgroundRefreshStatus = backgroundRefreshStatus
    self.thermalState = thermalState
  }

  /// Charging on Wi-Fi, full battery, everything allowed.
  public static let chargingOnWiFi = DeviceConditions()
  /// On battery (80 %) over cellular.
  public static let onBatteryCellular = DeviceConditions(isCharging: false, batteryLevel: 0.8, network: .cellular)

  public var description: String {
    var parts = [network.description]
    parts.append(isCharging ? "charging" : "battery \(Int((batteryLevel * 100).rounded()))%")
    if isLowPowerModeEnabled { parts.append("low power") }
    if backgroundRefreshStatus != .available { parts.append("refresh \(backgroundRefreshStatus.rawValue)") }
    if thermalState >= .serious { parts.append("thermal \(thermalState.rawValue)") }
    return parts.joined(separator: ", ")
  }
}

// MARK: - JSON

extension DeviceConditions {
  private enum CodingKeys: String, CodingKey {
    // The form stored runs are written in (and were, as `LaunchConditions`).
    case charging, batteryLevel, network, lowPowerMode, thermalState, backgroundRefresh
    // The member-wise form traces were written in before issue 28.
    case isCharging, isLowPowerModeEnabled, backgroundRefreshStatus
  }

  /// Reads conditions in either form: the stored runs' (`charging`,
  /// `network` in words such as `"wifi expensive"`, `lowPowerMode`,
  /// `thermalState`), which ``encode(to:)`` writes, or the member-wise one
  /// traces had (`isCharging`, `network` as an object...). A member missing
  /// or not understood reads as ``chargingOnWiFi``'s, so a run stored by
  /// another version still reads.
  public init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    self.init()
    if let v = try c.decodeIfPresent(Bool.self, forKey: .charging) ?? c.decodeIfPresent(Bool.self, forKey: .isCharging) {
      isCharging = v
    }
    if let v = try c.decodeIfPresent(Double.self, forKey: .batteryLevel) { batteryLevel = v }
    if let words = try? c.decodeIfPresent(String.self, forKey: .network) {
      network = NetworkStatus(words: words)
    } else if let v = try? c.decodeIfPresent(NetworkStatus.self, forKey: .network) {
      network = v
    }
    if let v = try c.decodeIfPresent(Bool.self, forKey: .lowPowerMode)
      ?? c.decodeIfPresent(Bool.self, forKey: .isLowPowerModeEnabled)
    {
      isLowPowerModeEnabled = v
    }
    if let raw = try c.decodeIfPresent(String.self, forKey: .thermalState), let v = ThermalState(rawValue: raw) {
      thermalState = v
    }
    let refresh = try c.decodeIfPresent(String.self, forKey: .backgroundRefresh)
      ?? c.decodeIfPresent(String.self, forKey: .backgroundRefreshStatus)
    if let refresh, let v = BackgroundRefreshStatus(rawValue: refresh) { backgroundRefreshStatus = v }
  }

  /// Writes the stored runs' form (which versions before issue 28 read
  /// as `LaunchConditions`: they ignore `backgroundRefresh`).
  public func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(isCharging, forKey: .charging)
    try c.encode(batteryLevel, forKey: .batteryLevel)
    try c.encode(network.words, forKey: .network)
    try c.encode(isLowPowerModeEnabled, forKey: .lowPowerMode)
    try c.encode(thermalState.rawValue, forKey: .thermalState)
    if backgroundRefreshStatus != .available {
      try c.encode(backgroundRefreshStatus.rawValue, forKey: .backgroundRefresh)
    }
  }
}

extension NetworkStatus {
  /// The network in words, as stored runs keep it: the interface, then
  /// `expensive` (any but cellular, which is by default) or `unmetered`
  /// (cellular that is not), then `constrained`.
  var words: String {
    var text = interface.rawValue
    if isExpensive != (interface == .cellular) { text += isExpensive ? " expensive" : " unmetered" }
    if isConstrained { text += " constrained" }
    return text
  }

  /// Reads ``words``; an interface not named reads as `none`.
  init(words: String) {
    let parts = words.split(separator: " ")
    let interface = parts.first.flatMap { Interface(rawValue: String($0)) } ?? .none
    let expensive: Bool? = parts.contains("expensive") ? true : parts.contains("unmetered") ? false : nil
    self.init(interface, isExpensive: expensive, isConstrained: parts.contains("constrained"))
  }
}
