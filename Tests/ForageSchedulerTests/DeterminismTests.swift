import Foundation
import Testing

@testable import ForageScheduler

/// Same seed, same trace; and properties that must hold for every seed.
@Suite struct DeterminismTests {
  static let refresh = "com.example.refresh"
  static let crawl = "com.example.crawl"  // network + power
  static let feeds = "com.example.feeds"  // network
  static let cleanup = "com.example.cleanup"  // power

  static func simulate(profile: DeviceProfile, seed: UInt64, days count: Double, traceDevice: Bool = false) async -> Trace {
    let s = SimulatedScheduler(device: profile, seed: seed, traceDeviceChanges: traceDevice, log: .silent)
    let tasks: [(any TaskRequest, ModelBehavior)] = [
      (AppRefreshTaskRequest(identifier: refresh),
       ModelBehavior(duration: .logNormal(median: .seconds(10), spread: 0.8), successProbability: 0.9, resubmitAfter: .seconds(900), sources: ["prices"])),
      (ProcessingTaskRequest(identifier: crawl, requiresNetworkConnectivity: true, requiresExternalPower: true),
       ModelBehavior(duration: .logNormal(median: .seconds(200), spread: 0.6), resubmitAfter: .seconds(3 * 3600), sources: ["catalog"])),
      (ProcessingTaskRequest(identifier: feeds, requiresNetworkConnectivity: true),
       ModelBehavior(duration: .uniform(.seconds(10), .seconds(400)), honorsExpiration: seed % 3 != 0, resubmitAfter: .seconds(3600), sources: ["feeds"])),
      (ProcessingTaskRequest(identifier: cleanup, requiresExternalPower: true),
       ModelBehavior(duration: .constant(.seconds(30)), resubmitAfter: .seconds(12 * 3600))),
    ]
    for (request, behavior) in tasks {
      s.register(request.identifier, model: behavior)
      s.submitWhenEnteringBackground(request)
    }
    s.finishLaunching()
    for (request, _) in tasks {
      var r = AnyTaskRequest(request)
      r.earliestBeginDate = start.addingTimeInterval(Double(seed % 7) * 3600)
      try? s.submit(r)
    }
    await s.advance(by: days(count))
    return s.trace
  }

  @Test func test_sameSeed_sameTrace() async throws {
    for profile in DeviceProfile.builtIns {
      let a = await Self.simulate(profile: profile, seed: 11, days: 20)
      let b = await Self.simulate(profile: profile, seed: 11, days: 20)
      #expect(a.count(.launched) > 0, "\(profile.name): nothing launched")
      #expect(try encoded(a) == encoded(b), "\(profile.name): traces differ for the same seed")
      #expect(a == b)
    }
  }

  @Test func test_differentSeeds_differentTraces() async throws {
    let a = await Self.simulate(profile: .commuter, seed: 1, days: 10)
    let b = await Self.simulate(profile: .commuter, seed: 2, days: 10)
    #expect(try encoded(a) != encoded(b))
  }

  @Test func test_traceRoundTripsThroughJSON() async throws {
    let a = await Self.simulate(profile: .nightCharger, seed: 5, days: 5)
    let decoded = try JSONDecoder().decode(Trace.self, from: encoded(a))
    #expect(decoded == a)
  }

  /// Checks every property on one trace; returns the violations.
  static func violations(_ trace: Trace) -> [String] {
    var problems: [String] = []
    var charging = trace.events.first { $0.kind == .launched }?.conditions?.isCharging ?? true
    var network = true
    var runningSince: [String: Date] = [:]
    var expired: Set<String> = []
    let requirements: [String: (power: Bool, network: Bool)] = [
      refresh: (false, true), crawl: (true, true), feeds: (false, true), cleanup: (true, false),
    ]
    var chargingKnown = false
    for e in trace.events {
      switch e.kind {
      case .device:
        let r = e.reason ?? ""
        if r == "charging" || r == "unplugged" {
          charging = r == "charging"
          chargingKnown = true
        }
        if r.hasPrefix("network ") { network = r != "network none" }
        // Running work that needs what was just lost must be expired at this instant.
        for (id, _) in runningSince where !expired.contains(id) {
          let need = requirements[id] ?? (false, false)
          let lostPower = need.power && !charging
          let lostNetwork = need.network && !network && id != refresh
          if lostPower || lostNetwork {
            let expiredNow = trace.events.contains { $0.identifier == id && $0.kind == .expired && $0.time == e.time }
            if !expiredNow { problems.append("\(id) kept running at \(e.time) after \(r)") }
          }
        }
      case .launched:
        guard let id = e.identifier else { continue }
        if let due = e.earliestBeginDate, e.time < due { problems.append("\(id) launched at \(e.time) before \(due)") }
        if runningSince[id] != nil { problems.append("\(id) launched at \(e.time) while already running") }
        runningSince[id] = e.time
        let need = requirements[id] ?? (false, false)
        if need.power && e.conditions?.isCharging != true { problems.append("\(id) launched at \(e.time) without power") }
        if need.network && e.conditions?.network.isAvailable != true { problems.append("\(id) launched at \(e.time) without network") }
        if chargingKnown && need.power && !charging { problems.append("\(id) launched at \(e.time) while the timeline says unplugged") }
      case .expired:
        if let id = e.identifier { expired.insert(id) }
      case .completed, .killed:
        if let id = e.identifier {
          runningSince[id] = nil
          expired.remove(id)
        }
      default: break
      }
    }
    return problems
  }

  @Test func test_properties_holdForManySeeds() async throws {
    let profiles = DeviceProfile.builtIns
    var checkedLaunches = 0
    for seed in UInt64(1)...40 {
      let profile = profiles[Int(seed) % profiles.count]
      let trace = await Self.simulate(profile: profile, seed: seed, days: 12, traceDevice: true)
      checkedLaunches += trace.count(.launched)
      let problems = Self.violations(trace)
      #expect(problems.isEmpty, "seed \(seed), profile \(profile.name): \(problems.prefix(3))")
    }
    #expect(checkedLaunches > 500)
  }
}
