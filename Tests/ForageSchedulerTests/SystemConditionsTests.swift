import Foundation
import Testing

@testable import ForageScheduler

@Suite struct SystemConditionsTests {
  /// Builds a fake root with the given files.
  func root(_ files: [String: String], dirs: [String] = []) throws -> URL {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("forage-root-\(UUID().uuidString)")
    for (path, text) in files {
      let url = base.appendingPathComponent(path)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(text.utf8).write(to: url)
    }
    for d in dirs {
      try FileManager.default.createDirectory(at: base.appendingPathComponent(d), withIntermediateDirectories: true)
    }
    return base
  }

  let routeHeader = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"

  @Test func test_laptopOnBatteryOverWiFi() throws {
    let r = try root([
      "sys/class/power_supply/AC/type": "Mains\n", "sys/class/power_supply/AC/online": "0\n",
      "sys/class/power_supply/BAT0/type": "Battery\n", "sys/class/power_supply/BAT0/capacity": "42\n",
      "sys/class/power_supply/BAT0/status": "Discharging\n",
      "proc/net/route": routeHeader
        + "wlp2s0\t00000000\t0102A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0\n"
        + "wlp2s0\t0002A8C0\t00000000\t0001\t0\t0\t600\t00FFFFFF\t0\t0\t0\n",
      "sys/class/net/wlp2s0/operstate": "up\n",
    ], dirs: ["sys/class/net/wlp2s0/wireless"])
    defer { try? FileManager.default.removeItem(at: r) }
    let c = SystemConditions(root: r).current()
    #expect(c.isCharging == false)
    #expect(abs(c.batteryLevel - 0.42) < 1e-9)
    #expect(c.network == .wifi)
  }

  @Test func test_serverWithoutBattery_wiredDefaultRoute() throws {
    let r = try root([
      "proc/net/route": routeHeader + "eth0\t00000000\t0100000A\t0003\t0\t0\t100\t00000000\t0\t0\t0\n",
      "sys/class/net/eth0/operstate": "up\n",
    ])
    defer { try? FileManager.default.removeItem(at: r) }
    let c = SystemConditions(root: r, lowPowerMode: true, backgroundRefreshStatus: .denied).current()
    #expect(c.isCharging && c.batteryLevel == 1)
    #expect(c.network == .wired)
    #expect(c.isLowPowerModeEnabled && c.backgroundRefreshStatus == .denied)
  }

  @Test func test_noDefaultRoute_meansNoNetwork_modemIsCellular() throws {
    let none = try root(["proc/net/route": routeHeader + "eth0\t0000000A\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0\n"])
    defer { try? FileManager.default.removeItem(at: none) }
    #expect(SystemConditions(root: none).current().network == .none)
    let modem = try root(["proc/net/route": routeHeader + "wwan0\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0\n"])
    defer { try? FileManager.default.removeItem(at: modem) }
    let n = SystemConditions(root: modem).current().network
    #expect(n.interface == .cellular && n.isExpensive)
  }

  @Test func test_ipv6OnlyDefaultRoute() throws {
    let zeros = String(repeating: "0", count: 32)
    let r = try root([
      "proc/net/route": routeHeader,
      "proc/net/ipv6_route": "\(zeros) 00 \(zeros) 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 enp1s0\n",
    ])
    defer { try? FileManager.default.removeItem(at: r) }
    #expect(SystemConditions(root: r).current().network == .wired)
  }

  @Test func test_chargingBatteryWithoutMainsSupply() throws {
    let r = try root([
      "sys/class/power_supply/BAT1/type": "Battery", "sys/class/power_supply/BAT1/capacity": "80",
      "sys/class/power_supply/BAT1/status": "Charging",
      "sys/class/power_supply/hidpp_battery_0/type": "Battery", "sys/class/power_supply/hidpp_battery_0/scope": "Device",
      "sys/class/power_supply/hidpp_battery_0/capacity": "5",
    ])
    defer { try? FileManager.default.removeItem(at: r) }
    let c = SystemConditions(root: r).current()
    #expect(c.isCharging)
    #expect(abs(c.batteryLevel - 0.8) < 1e-9)  // the mouse's battery does not count
  }
}
