import Foundation

/// Something that tells a scheduler the device's conditions now.
public protocol ConditionsProvider: Sendable {
  /// The conditions at this moment.
  func current() -> DeviceConditions
}

/// Fixed conditions (for tests, or machines where nothing can be read).
public struct FixedConditions: ConditionsProvider {
  /// The conditions reported.
  public var conditions: DeviceConditions
  /// Always reports `conditions`.
  public init(_ conditions: DeviceConditions) { self.conditions = conditions }
  public func current() -> DeviceConditions { conditions }
}

/// The machine's real conditions, read from Linux's `/sys` and `/proc`:
/// power from `/sys/class/power_supply` (mains `online`, battery `capacity`
/// and `status`), the network from the default route in `/proc/net/route`
/// (or `/proc/net/ipv6_route`) and the kind of its interface in
/// `/sys/class/net`. Low Power Mode and Background App Refresh come from
/// the configuration. Elsewhere (macOS) the files are absent and the machine
/// counts as on power with a wired network.
///
///     let conditions = SystemConditions().current()
///     let test = SystemConditions(root: URL(fileURLWithPath: "/tmp/fake-root"))
///
/// - SeeAlso: <https://www.kernel.org/doc/html/latest/power/power_supply_class.html>
public struct SystemConditions: ConditionsProvider {
  /// The folder holding `sys` and `proc` (`/` on a real machine).
  public var root: URL
  /// Low Power Mode, as configured.
  public var lowPowerMode: Bool
  /// Background App Refresh, as configured.
  public var backgroundRefreshStatus: BackgroundRefreshStatus

  /// Reads below `root`, with Low Power Mode and the refresh setting from the configuration.
  public init(
    root: URL = URL(fileURLWithPath: "/"), lowPowerMode: Bool = false,
    backgroundRefreshStatus: BackgroundRefreshStatus = .available
  ) {
    self.root = root
    self.lowPowerMode = lowPowerMode
    self.backgroundRefreshStatus = backgroundRefreshStatus
  }

  public func current() -> DeviceConditions {
    let (charging, level) = power()
    return DeviceConditions(
      isCharging: charging, batteryLevel: level, network: network(),
      isLowPowerModeEnabled: lowPowerMode, backgroundRefreshStatus: backgroundRefreshStatus)
  }

  private func read(_ path: String) -> String? {
    let url = root.appendingPathComponent(path)
    guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  }

  private func list(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(path).path)) ?? []).sorted()
  }

  /// Charging and battery level. No battery means mains power and a full level.
  func power() -> (charging: Bool, level: Double) {
    var mainsOnline: Bool?
    var batteries: [(level: Double, status: String)] = []
    for supply in list("sys/class/power_supply") {
      let base = "sys/class/power_supply/\(supply)/"
      switch read(base + "type") ?? "" {
      case "Mains", "USB", "USB_C", "USB_PD", "UPS":
        if let online = read(base + "online") { mainsOnline = (mainsOnline ?? false) || online == "1" }
      case "Battery":
        if read(base + "scope") == "Device" { continue }  // a mouse or a keyboard
        let capacity = read(base + "capacity").flatMap(Double.init) ?? 100
        batteries.append((min(1, max(0, capacity / 100)), read(base + "status") ?? "Unknown"))
      default: continue
      }
    }
    guard !batteries.isEmpty else { return (mainsOnline ?? true, 1) }
    let level = batteries.map(\.level).reduce(0, +) / Double(batteries.count)
    let charging = mainsOnline ?? batteries.contains { ["Charging", "Full", "Not charging"].contains($0.status) }
    return (charging, level)
  }

  /// The interface of the default route (lowest metric), if any.
  func defaultRouteInterface() -> String? {
    var best: (metric: Int, name: String)?
    if let table = read("proc/net/route") {
      for line in table.split(separator: "\n").dropFirst() {
        let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard f.count >= 7, f[1] == "00000000", let flags = Int(f[3], radix: 16), flags & 1 == 1 else { continue }
        let metric = Int(f[6]) ?? 0
        if best == nil || metric < best!.metric { best = (metric, f[0]) }
      }
    }
    if best == nil, let table = read("proc/net/ipv6_route") {
      for line in table.split(separator: "\n") {
        let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard f.count >= 10, f[0] == String(repeating: "0", count: 32), f[1] == "00", f[9] != "lo",
          let flags = Int(f[8], radix: 16), flags & 1 == 1
        else { continue }
        let metric = Int(f[5], radix: 16) ?? 0
        if best == nil || metric < best!.metric { best = (metric, f[9]) }
      }
    }
    return best?.name
  }

  /// The network of the default route: Wi-Fi when the interface is wireless,
  /// cellular (expensive) for modem interfaces, wired otherwise.
  func network() -> NetworkStatus {
    let hasProc = read("proc/net/route") != nil || read("proc/net/ipv6_route") != nil
    guard hasProc else { return .wired }  // not Linux: assume a wired machine
    guard let name = defaultRouteInterface() else { return .none }
    if read("sys/class/net/\(name)/operstate") == "down" { return .none }
    let base = root.appendingPathComponent("sys/class/net/\(name)")
    if FileManager.default.fileExists(atPath: base.appendingPathComponent("wireless").path)
      || FileManager.default.fileExists(atPath: base.appendingPathComponent("phy80211").path)
    {
      return .wifi
    }
    for prefix in ["wwan", "wwp", "rmnet", "ppp", "usb"] where name.hasPrefix(prefix) {
      return .cellular
    }
    return .wired
  }
}
