#if canImport(BackgroundTasks)
import BackgroundTasks
#elseif os(Linux)
import AppleFrameworksStandIn
#endif

#if canImport(BackgroundTasks) || os(Linux)
import Foundation
import ForageScheduler
import ForageSupport
#if canImport(Network)
import Network
#endif

/// The device's conditions as iOS reports them, for the plan of each launch:
/// the network from `NWPathMonitor` (expensive: cellular or a hotspot;
/// constrained: Low Data Mode), Low Power Mode and the thermal state from
/// `ProcessInfo`. The battery is not read (UIKit's `UIDevice` belongs to the
/// main actor): the device counts as on battery, so launches use the
/// smaller connection pool.
///
/// Where the Network framework is missing (Linux, where the adapter is
/// compiled against the stand-in), it reports Wi-Fi and nothing else; tests
/// pass conditions of their own. The `canImport(Network)` code is not
/// compiled in CI.
///
/// `@unchecked Sendable`: the network status is behind a lock; the monitor
/// is started once, here, on a queue of its own, and cancelled once, in
/// `deinit` (whether Apple's SDK marks `NWPathMonitor` Sendable could not be
/// checked without it).
public final class DeviceConditionsMonitor: ConditionsProvider, @unchecked Sendable {
  private let network = Locked(NetworkStatus.wifi)
  #if canImport(Network)
  private let monitor = NWPathMonitor()
  #endif

  /// Starts watching the network.
  public init() {
    #if canImport(Network)
    let network = self.network
    monitor.pathUpdateHandler = { path in
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
      network.withLock { $0 = status }
    }
    monitor.start(queue: DispatchQueue.global(qos: .utility))
    #endif
  }

  deinit {
    #if canImport(Network)
    monitor.cancel()
    #endif
  }

  public func current() -> DeviceConditions {
    var conditions = DeviceConditions(isCharging: false, batteryLevel: 1, network: network.withLock { $0 })
    #if canImport(BackgroundTasks)
    let info = ProcessInfo.processInfo
    conditions.isLowPowerModeEnabled = info.isLowPowerModeEnabled
    switch info.thermalState {
    case .nominal: conditions.thermalState = .nominal
    case .fair: conditions.thermalState = .fair
    case .serious: conditions.thermalState = .serious
    case .critical: conditions.thermalState = .critical
    @unknown default: conditions.thermalState = .serious
    }
    #else
    conditions.isCharging = true
    #endif
    return conditions
  }
}
#endif
