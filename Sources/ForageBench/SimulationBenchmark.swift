import Foundation
import Forage
import ForageScheduler
import ForageSupport

/// Model-mode simulation benchmark: a year of a device (default profile
/// `commuter`) with five tasks (one app refresh, four processing), printed as
/// simulated days per second.
///
///     forage-bench simulate [--days 365] [--profile commuter] [--seed 1] [--repeat 5] [--trace]
enum SimulationBenchmark {
  /// The five tasks: identifier, request, behaviour.
  static func tasks() -> [(any TaskRequest, ModelBehavior)] {
    [
      (AppRefreshTaskRequest(identifier: "com.forage.refresh"),
       ModelBehavior(duration: .logNormal(median: .seconds(8), spread: 0.6), resubmitAfter: .seconds(15 * 60), sources: ["prices", "news"])),
      (ProcessingTaskRequest(identifier: "com.forage.crawl", requiresNetworkConnectivity: true, requiresExternalPower: true),
       ModelBehavior(duration: .logNormal(median: .seconds(180), spread: 0.5), resubmitAfter: .seconds(6 * 3600), sources: ["catalog"])),
      (ProcessingTaskRequest(identifier: "com.forage.feeds", requiresNetworkConnectivity: true),
       ModelBehavior(duration: .uniform(.seconds(20), .seconds(90)), resubmitAfter: .seconds(2 * 3600), sources: ["feeds"])),
      (ProcessingTaskRequest(identifier: "com.forage.cleanup", requiresExternalPower: true),
       ModelBehavior(duration: .constant(.seconds(20)), resubmitAfter: .seconds(24 * 3600))),
      (ProcessingTaskRequest(identifier: "com.forage.images", requiresNetworkConnectivity: true, requiresExternalPower: true),
       ModelBehavior(duration: .normal(mean: .seconds(480), deviation: .seconds(120)), resubmitAfter: .seconds(12 * 3600), sources: ["images"])),
    ]
  }

  /// Runs one simulation and returns its trace.
  static func simulate(days: Int, profile: DeviceProfile, seed: UInt64) async -> Trace {
    let scheduler = SimulatedScheduler(device: profile, seed: seed, log: .silent)
    for (request, behavior) in tasks() {
      scheduler.register(request.identifier, model: behavior)
      scheduler.submitWhenEnteringBackground(request, earliestBeginAfter: behavior.resubmitAfter, replacingPending: false)
    }
    scheduler.finishLaunching()
    for (request, _) in tasks() { try? scheduler.submit(request) }
    await scheduler.advance(by: .seconds(Int64(days) * 86_400))
    return scheduler.trace
  }

  static func run(_ arguments: [String]) throws -> Int32 {
    var days = 365, seed: UInt64 = 1, repeats = 5, profileName = "commuter", quiet = false, printTrace = false
    var i = 0
    func value() -> String? {
      i += 1
      return i < arguments.count ? arguments[i] : nil
    }
    while i < arguments.count {
      switch arguments[i] {
      case "--days": days = value().flatMap { Int($0) } ?? days
      case "--seed": seed = value().flatMap { UInt64($0) } ?? seed
      case "--repeat": repeats = max(1, value().flatMap { Int($0) } ?? repeats)
      case "--profile": profileName = value() ?? profileName
      case "--quiet": quiet = true
      case "--trace": printTrace = true
      case "simulate": break
      default:
        FileHandle.standardError.write(Data("usage: forage-bench simulate [--days N] [--profile NAME|FILE] [--seed S] [--repeat R] [--quiet] [--trace]\n".utf8))
        return 2
      }
      i += 1
    }
    let profile: DeviceProfile
    do { profile = try DeviceProfile.named(orPath: profileName) } catch {
      FileHandle.standardError.write(Data("\(error)\n".utf8))
      return 2
    }
    let box = Locked<(times: [Double], trace: Trace)?>(nil)
    let semaphore = DispatchSemaphore(value: 0)
    let (runDays, runSeed, runs) = (days, seed, repeats)
    Task {
      var times: [Double] = []
      var last: Trace?
      for _ in 0..<runs {
        let began = ContinuousClock.now
        last = await simulate(days: runDays, profile: profile, seed: runSeed)
        let elapsed = ContinuousClock.now - began
        let c = elapsed.components
        times.append(Double(c.seconds) + Double(c.attoseconds) * 1e-18)
      }
      box.withLock { $0 = (times, last!) }
      semaphore.signal()
    }
    semaphore.wait()
    let (times, trace) = box.withLock { $0! }
    let sorted = times.sorted()
    let median = sorted[sorted.count / 2]
    if printTrace { print(trace) }
    if !quiet {
      let sources = Dictionary(uniqueKeysWithValues: tasks().map { ($0.0.identifier, $0.1.sources) })
      print(FreshnessForecast(trace: trace, sources: sources))
      print("")
    }
    print("simulate: profile \(profile.name), \(days) days, 5 tasks, seed \(seed): \(trace.events.count) trace events, \(trace.count(.launched)) launches")
    print(String(format: "simulate: median %.4f s per run (best %.4f s) over %ld runs = %.0f simulated days/s",
                 median, sorted[0], sorted.count, Double(days) / median))
    return 0
  }
}
