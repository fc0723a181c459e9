import Foundation
import ForageScheduler
import Testing

@testable import ForageStore

/// Issue 28: one conditions type. A run keeps the scheduler's
/// `DeviceConditions`, in the JSON form runs were stored in before (as the
/// string-typed `LaunchConditions`), so runs stored before still read and
/// runs stored now still read in a build from before.
@Suite struct RunConditionsTests {
  /// The shape runs were written in before issue 28, as that build declared it.
  struct OldLaunchConditions: Codable, Hashable {
    var charging: Bool
    var batteryLevel: Double
    var network: String
    var lowPowerMode: Bool
    var thermalState: String
  }

  @Test func test_issue28_aRunStoredBefore_readsAsDeviceConditions() throws {
    let stored = #"""
      {"outcome":"completed","pagesFetched":3,"conditions":{"charging":false,"batteryLevel":0.54,
      "network":"wifi expensive constrained","lowPowerMode":true,"thermalState":"serious"}}
      """#
    let summary = try JSONDecoder().decode(RunSummary.self, from: Data(stored.utf8))
    #expect(summary.pagesFetched == 3)
    let expected = DeviceConditions(
      isCharging: false, batteryLevel: 0.54, network: NetworkStatus(.wifi, isExpensive: true, isConstrained: true),
      isLowPowerModeEnabled: true, thermalState: .serious)
    #expect(summary.conditions == expected)
    let cellular = try JSONDecoder().decode(
      DeviceConditions.self,
      from: Data(#"{"charging":true,"batteryLevel":1,"network":"cellular","lowPowerMode":false,"thermalState":"nominal"}"#.utf8))
    #expect(cellular == DeviceConditions(network: .cellular))
    #expect(cellular.network.isExpensive)
  }

  @Test func test_issue28_aRunStoredNow_readsInTheOldShape() throws {
    var summary = RunSummary(outcome: .completed)
    summary.conditions = DeviceConditions(
      isCharging: false, batteryLevel: 0.25, network: .cellular, isLowPowerModeEnabled: true,
      backgroundRefreshStatus: .denied, thermalState: .fair)
    let json = try JSONEncoder().encode(summary)
    struct OldSummary: Decodable { var conditions: OldLaunchConditions? }
    let old = try JSONDecoder().decode(OldSummary.self, from: json)
    #expect(
      old.conditions
        == OldLaunchConditions(
          charging: false, batteryLevel: 0.25, network: "cellular", lowPowerMode: true, thermalState: "fair"))
    // And back, with nothing lost (the refresh setting rides along in a member old builds ignore).
    #expect(try JSONDecoder().decode(RunSummary.self, from: json).conditions == summary.conditions)
  }

  @Test func test_issue28_everyNetworkRoundTrips() throws {
    for interface in NetworkStatus.Interface.allCases {
      for expensive in [false, true] {
        for constrained in [false, true] {
          let c = DeviceConditions(network: NetworkStatus(interface, isExpensive: expensive, isConstrained: constrained))
          let back = try JSONDecoder().decode(DeviceConditions.self, from: JSONEncoder().encode(c))
          #expect(back == c, "\(interface) expensive \(expensive) constrained \(constrained)")
        }
      }
    }
  }

  @Test func test_issue28_traceConditionsWrittenMemberWise_stillRead() throws {
    let member = #"""
      {"isCharging":false,"batteryLevel":0.8,"network":{"interface":"cellular","isExpensive":true,"isConstrained":false},
      "isLowPowerModeEnabled":false,"backgroundRefreshStatus":"restricted","thermalState":"nominal"}
      """#
    let c = try JSONDecoder().decode(DeviceConditions.self, from: Data(member.utf8))
    #expect(c == DeviceConditions(isCharging: false, batteryLevel: 0.8, network: .cellular, backgroundRefreshStatus: .restricted))
  }
}
