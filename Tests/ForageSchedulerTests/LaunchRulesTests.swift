import Foundation
import Testing

@testable import ForageScheduler

@Suite struct LaunchRulesTests {
  /// Every combination of the conditions the rules read.
  static let conditions: [DeviceConditions] = {
    var all: [DeviceConditions] = []
    for charging in [true, false] {
      for battery in [0.8, 0.1] {
        for network in [NetworkStatus.wifi, .cellular, .none] {
          for lowPower in [false, true] {
            for thermal in [ThermalState.nominal, .serious] {
              for refresh in [BackgroundRefreshStatus.available, .denied] {
                all.append(DeviceConditions(
                  isCharging: charging, batteryLevel: battery, network: network, isLowPowerModeEnabled: lowPower,
                  backgroundRefreshStatus: refresh, thermalState: thermal))
              }
            }
          }
        }
      }
    }
    return all
  }()

  /// One request of each shape.
  static let requests: [AnyTaskRequest] = [
    AnyTaskRequest(AppRefreshTaskRequest(identifier: "refresh")),
    AnyTaskRequest(ProcessingTaskRequest(identifier: "plain")),
    AnyTaskRequest(ProcessingTaskRequest(identifier: "network", requiresNetworkConnectivity: true)),
    AnyTaskRequest(ProcessingTaskRequest(identifier: "power", requiresExternalPower: true)),
    AnyTaskRequest(ProcessingTaskRequest(identifier: "both", requiresNetworkConnectivity: true, requiresExternalPower: true)),
    AnyTaskRequest(ContinuedProcessingTaskRequest(identifier: "continued", title: "Exporting", subtitle: "")),
  ]

  /// What a scheduler did with a request submitted under `conditions`:
  /// rejected, held back (with the reasons of its trace), or launched.
  static func outcome(submit: () throws(SchedulerError) -> Void, launch: () async -> Trace) async -> String {
    do throws(SchedulerError) {
      try submit()
    } catch {
      return "rejected \(error.name)"
    }
    let trace = await launch()
    let reasons = trace.deferrals.map(\.reason.rawValue)
    return trace.count(.launched) > 0 ? "launched" : "deferred \(reasons)"
  }

  @Test func test_sameConditions_sameReason_inBothSchedulers() async throws {
    for c in Self.conditions {
      for request in Self.requests {
        let simulated = scripted(c, policy: .server)
        simulated.register(request.identifier, model: ModelBehavior())
        simulated.finishLaunching()
        let inSimulator = await Self.outcome(submit: { () throws(SchedulerError) in try simulated.submit(request) }) {
          await simulated.advance(by: .seconds(1))
          return simulated.trace
        }

        let system = SystemScheduler(policy: .server, conditions: FixedConditions(c), log: .silent)
        system.register(request.identifier) { _ in }
        system.finishLaunching()
        let onDaemon = await Self.outcome(submit: { () throws(SchedulerError) in try system.submit(request) }) {
          await system.launchDueTasks()
          return system.trace
        }

        #expect(inSimulator == onDaemon, "\(request.identifier) under \(c)")
        let expected = LaunchRules.deferral(for: request, conditions: c, state: LaunchState(), policy: .server)
        if !inSimulator.hasPrefix("rejected") {
          #expect(onDaemon == (expected.map { "deferred \([$0.rawValue])" } ?? "launched"), "\(request.identifier) under \(c)")
        }
      }
    }
  }

  @Test func test_powerIsCheckedBeforeNetwork() {
    let both = AnyTaskRequest(ProcessingTaskRequest(identifier: "p", requiresNetworkConnectivity: true, requiresExternalPower: true))
    let offline = DeviceConditions(isCharging: false, batteryLevel: 0.8, network: .none)
    #expect(LaunchRules.deferral(for: both, conditions: offline, state: LaunchState(), policy: .server) == .notCharging)
  }

  @Test func test_deviceOnlyFacts_holdBackTheirKinds() {
    let refresh = AnyTaskRequest(AppRefreshTaskRequest(identifier: "r"))
    let processing = AnyTaskRequest(ProcessingTaskRequest(identifier: "p"))
    let ok = DeviceConditions.chargingOnWiFi
    func reason(_ r: AnyTaskRequest, _ state: LaunchState) -> DeferralReason? {
      LaunchRules.deferral(for: r, conditions: ok, state: state, policy: SchedulingPolicy())
    }
    #expect(reason(refresh, LaunchState(isAppInForeground: true)) == .appInForeground)
    #expect(reason(processing, LaunchState(isAppInForeground: true)) == nil)
    #expect(reason(processing, LaunchState(isDeviceInUse: true)) == .deviceInUse)
    #expect(reason(refresh, LaunchState(isForceQuit: true)) == .forceQuit)
    #expect(reason(processing, LaunchState(isRunning: true, isForceQuit: true)) == .alreadyRunning)
    #expect(reason(processing, LaunchState(isPenalized: true)) == .penalty)
  }
}
