#if os(iOS) || os(visionOS) || os(macOS) || os(Linux)
import Foundation
import ForageScheduler
import ForageSupport
#if canImport(Network)
import Network
#endif
#if os(iOS)
import UIKit
#endif

/// The device's conditions as the system reports them, for the plan of each
/// launch: the network from `NWPathMonitor` (expensive: cellular or a
/// hotspot; constrained: Low Data Mode), the battery from `UIDevice` (iOS,
/// iPadOS, Mac Catalyst), Low Power Mode and the thermal state from
/// `ProcessInfo`.
///
/// A cold background launch asks before the path monitor has reported: the
/// network is then unknown, and the monitor waits up to half a second for
/// the first report; if none comes, the network counts as metered
/// (cellular), so `wifiOnly` sources wait rather than run on cellular. The
/// battery is read on the main actor (UIKit's `UIDevice` belongs to it) at
/// start and after each launch's question; until the first reading the
/// device counts as on battery, so launches use the smaller connection
/// pool. On macOS and visionOS the battery is not read (on battery, as above).
///
/// Where the Network framework is missing (Linux, where the adapter is
/// compiled against the stand-in), nothing reports: the network stays
/// unknown (metered) and the device counts as charging; tests pass
/// conditions of their own or report paths with `receive(_:)`. The
/// `canImport(Network)` and UIKit code is not compiled in CI.
///
/// `@unchecked Sendable`: the network and power readings are behind locks;
/// the monitor is started once, here, on a queue of its own, and cancelled
/// once, in `deinit`.
public final class DeviceConditionsMonitor: ConditionsProvider, @unchecked Sendable {
  /// What the battery last said.
  private struct Power: Sendable {
    var isCharging: Bool
    var level: Double
  }

  /// The network's status; nil until the first report.
  private let network = Locked<NetworkStatus?>(nil)
  /// Left once, at the first report.
  private let firstReport = DispatchGroup()
  private let reported = Locked(false)
  private let firstReportWait: Duration
  #if os(Linux)
  private let power = Locked(Power(isCharging: true, level: 1))
  #else
  private let power = Locked(Power(isCharging: false, level: 1))
  #endif
  #if canImport(Network)
  private let monitor = NWPathMonitor()
  #endif

  /// The network a launch assumes when none was reported: metered.
  static let unknownNetwork = NetworkStatus(.cellular, isExpensive: true)

  /// Starts watching the network (and, on iOS, the battery).
  public convenience init() {
    #if canImport(Network)
    self.init(firstReportWait: .milliseconds(500))
    #else
    self.init(firstReportWait: .zero)
    #endif
  }

  /// - Parameter firstReportWait: how long ``current()`` waits for the path
  ///   monitor's first report.
  init(firstReportWait: Duration) {
    self.firstReportWait = firstReportWait
    firstReport.enter()
    #if canImport(Network)
    monitor.pathUpdateHandler = { [weak self] path in
      let status: NetworkStatus
      if path.status != .satisfied {
        status = .none
      } else if path.usesInterfaceType(.wifi) {
        status = NetworkStatus(.wifi, isExpensive: path.isExpensive, isConstrained: path.isConstrained)
      } else if path.usesInterfaceType(.wiredEthernet) {
        status = NetworkStatus(.wired, isExpensive: path.isExpensive, isConstrained: path.isConstrained)
      } else {
        status = NetworkStatus(.cellular, isExpensive: true, isConstrained: path.isConstrained)
      }
      self?.receive(status)
    }
    monitor.start(queue: DispatchQueue(label: "DeviceConditionsMonitor.network", qos: .utility))
    #endif
    #if os(iOS)
    readBattery()
    #endif
  }

  deinit {
    #if canImport(Network)
    monitor.cancel()
    #endif
    if reported.withLock({ !$0 }) { firstReport.leave() }
  }

  /// A report of the network's status (the path monitor's, or a test's).
  func receive(_ status: NetworkStatus) {
    network.withLock { $0 = status }
    let first = reported.withLock { r -> Bool in
      defer { r = true }
      return !r
    }
    if first { firstReport.leave() }
  }

  /// The network as last reported; before the first report, waits up to
  /// `firstReportWait` for it, then answers ``unknownNetwork``.
  func currentNetwork() -> NetworkStatus {
    if let known = network.withLock({ $0 }) { return known }
    if firstReportWait > .zero {
      _ = firstReport.wait(timeout: .now() + firstReportWait.timeInterval)
    }
    return network.withLock { $0 } ?? Self.unknownNetwork
  }

  public func current() -> DeviceConditions {
    let battery = power.withLock { $0 }
    var conditions = DeviceConditions(isCharging: battery.isCharging, batteryLevel: battery.level, network: currentNetwork())
    #if !os(Linux)
    let info = ProcessInfo.processInfo
    conditions.isLowPowerModeEnabled = info.isLowPowerModeEnabled
    switch info.thermalState {
    case .nominal: conditions.thermalState = .nominal
    case .fair: conditions.thermalState = .fair
    case .serious: conditions.thermalState = .serious
    case .critical: conditions.thermalState = .critical
    @unknown default: conditions.thermalState = .serious
    }
    #endif
    #if os(iOS)
    readBattery()  // for the next launch
    #endif
    return conditions
  }

  #if os(iOS)
  /// Reads `UIDevice`'s battery on the main actor, for the next question.
  private func readBattery() {
    let power = self.power
    Task { @MainActor in
      let device = UIDevice.current
      device.isBatteryMonitoringEnabled = true
      let state = device.batteryState
      let level = device.batteryLevel  // -1 when unknown
      power.withLock { p in
        p.isCharging = state == .charging || state == .full
        p.level = level < 0 ? 1 : Double(level)
      }
    }
  }
  #endif
}
#endif
