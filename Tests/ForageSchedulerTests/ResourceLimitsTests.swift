import ForageSupport
import Foundation
import Testing

@testable import ForageScheduler

/// Issue 14: the CPU monitor on battery, a critically low battery and the
/// cellular data budget (docs/scheduling-model.md).
@Suite struct ResourceLimitsTests {
  let crawlID = "com.example.crawl"
  let refreshID = "com.example.refresh"

  /// A policy whose launches run as soon as the rules allow.
  var eager: SchedulingPolicy {
    var p = SchedulingPolicy.server
    p.processingRequiresUseWithin = nil
    return p
  }

  /// One processing launch of `behavior`, forced now, run to its end.
  func forcedCrawl(_ initial: DeviceConditions, _ behavior: ModelBehavior, events: [DeviceEvent] = []) async throws -> SimulatedScheduler {
    let s = scripted(initial, events, policy: eager)
    s.register(crawlID, model: behavior)
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: crawlID))
    #expect(s.forceLaunch(crawlID).attempt == .launched(1))
    await s.advance(by: .seconds(600))
    return s
  }

  // MARK: - The CPU monitor

  @Test func test_cpuMonitor_killsHeavyProcessingOnBattery_atItsLimit() async throws {
    let heavy = ModelBehavior(duration: .constant(.seconds(120)), sources: ["catalog"], cpuShare: 1.0)
    let onBattery = try await forcedCrawl(DeviceConditions(isCharging: false, batteryLevel: 0.9), heavy)
    let killed = try #require(onBattery.trace.events(for: crawlID).first { $0.kind == .killed })
    #expect(killed.killReason == .cpuMonitor)
    // 80 % of a core over 60 s is 48 s of CPU time: a full core reaches it after 48 s.
    #expect(killed.duration == 48)
    #expect(killed.time == start.addingTimeInterval(48))
    #expect(onBattery.trace.count(.completed) == 0)
    #expect(onBattery.trace.description.contains("killed") && onBattery.trace.description.contains("(cpu monitor)"))

    // On external power the monitor is off for processing (WWDC 2019).
    let onPower = try await forcedCrawl(.chargingOnWiFi, heavy)
    #expect(onPower.trace.count(.killed) == 0)
    #expect(onPower.trace.events(for: crawlID).first { $0.kind == .completed }?.success == true)
    // Under the limit, on battery: never killed.
    let light = ModelBehavior(duration: .constant(.seconds(120)), cpuShare: 0.5)
    #expect(try await forcedCrawl(DeviceConditions(isCharging: false, batteryLevel: 0.9), light).trace.count(.killed) == 0)
    // Twice the limit's share: killed after half the time.
    let twoCores = ModelBehavior(duration: .constant(.seconds(120)), cpuShare: 2)
    let fast = try await forcedCrawl(DeviceConditions(isCharging: false, batteryLevel: 0.9), twoCores)
    #expect(fast.trace.events(for: crawlID).first { $0.kind == .killed }?.duration == 24)
  }

  @Test func test_cpuMonitor_followsThePower_duringALaunch() async throws {
    let heavy = ModelBehavior(duration: .constant(.seconds(200)), cpuShare: 1.0)
    // Launched on power, unplugged 100 s in: killed 48 s after unplugging.
    let unplugged = try await forcedCrawl(.chargingOnWiFi, heavy, events: [DeviceEvent(at: .seconds(100), .charging(false))])
    let killed = try #require(unplugged.trace.events(for: crawlID).first { $0.kind == .killed })
    #expect(killed.killReason == .cpuMonitor)
    #expect(killed.time == start.addingTimeInterval(148))
    // Launched on battery, plugged in 20 s in: the monitor lets go.
    let pluggedIn = try await forcedCrawl(
      DeviceConditions(isCharging: false, batteryLevel: 0.9), heavy, events: [DeviceEvent(at: .seconds(20), .charging(true))])
    #expect(pluggedIn.trace.count(.killed) == 0)
    #expect(pluggedIn.trace.count(.completed) == 1)
  }

  @Test func test_cpuMonitor_watchesRefreshLaunches_evenOnPower() async throws {
    let s = scripted(.chargingOnWiFi, policy: eager)
    // Two cores busy reach 48 s of CPU time in 24 s, within a refresh's 30 s.
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(28)), sources: ["prices"], cpuShare: 2))
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    await s.advance(by: .seconds(60))
    #expect(s.trace.events(for: refreshID).first { $0.kind == .killed }?.killReason == .cpuMonitor)

    // No penalty follows a CPU kill (the model's choice, see the doc).
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    await s.advance(by: .seconds(60))
    #expect(s.trace.count(.launched) == 2)
    let forecast = FreshnessForecast(trace: s.trace, sources: [refreshID: ["prices"]])
    let row = try #require(forecast.tasks.first { $0.identifier == refreshID })
    #expect(row.kills == 2 && row.cpuKills == 2)
    #expect(forecast.sources[0].refreshes == 0 && forecast.sources[0].failures == 2)
    #expect(forecast.notes.contains { $0.contains("killed 2× by the CPU monitor") })
    #expect(!forecast.notes.contains { $0.contains("ignoring its expiration") })
    #expect(forecast.description.contains("2 (2 cpu)"))
  }

  @Test func test_cpuMonitor_judgesALiveLaunch_byItsMeasuredCPUTime() async throws {
    let cpu = Locked(Duration.zero)
    func scheduler(_ conditions: DeviceConditions) -> SimulatedScheduler {
      let s = scripted(conditions, policy: eager)
      s.measureCPUTime { cpu.withLock { $0 } }
      s.register(crawlID) { task in
        cpu.withLock { $0 += .seconds(60) }  // a minute of CPU time, at once
        task.reportRefreshed(sources: ["catalog"])
      }
      s.finishLaunching()
      return s
    }
    let onBattery = scheduler(DeviceConditions(isCharging: false, batteryLevel: 0.9))
    try onBattery.submit(ProcessingTaskRequest(identifier: crawlID))
    #expect(await onBattery.launch(crawlID) == .launched(1))
    let killed = try #require(onBattery.trace.events(for: crawlID).first { $0.kind == .killed })
    #expect(killed.killReason == .cpuMonitor)
    #expect(onBattery.trace.count(.completed) == 0)
    let forecast = FreshnessForecast(trace: onBattery.trace, sources: [crawlID: ["catalog"]])
    #expect(forecast.sources[0].refreshes == 0)

    let onPower = scheduler(.chargingOnWiFi)
    try onPower.submit(ProcessingTaskRequest(identifier: crawlID))
    #expect(await onPower.launch(crawlID) == .launched(1))
    #expect(onPower.trace.events(for: crawlID).first { $0.kind == .completed }?.success == true)
  }

  // MARK: - A critically low battery

  @Test func test_criticalBattery_holdsBackRefreshAndProcessing_untilCharged() async throws {
    for request in [AnyTaskRequest(AppRefreshTaskRequest(identifier: "r")), AnyTaskRequest(ProcessingTaskRequest(identifier: "p"))] {
      let low = DeviceConditions(isCharging: false, batteryLevel: 0.15)
      #expect(LaunchRules.deferral(for: request, conditions: low, state: LaunchState(), policy: .server) == .criticalBattery)
      var charging = low
      charging.isCharging = true
      #expect(LaunchRules.deferral(for: request, conditions: charging, state: LaunchState(), policy: .server) == nil)
    }
    // Issue 26: the pressure that expires a running continued-processing
    // task also keeps one from starting (it waits with `.queue`).
    let continued = AnyTaskRequest(ContinuedProcessingTaskRequest(identifier: "c", title: "Export", subtitle: ""))
    #expect(LaunchRules.deferral(
      for: continued, conditions: DeviceConditions(isCharging: false, batteryLevel: 0.05), state: LaunchState(), policy: .server)
      == .criticalBattery)
    #expect(LaunchRules.deferral(
      for: continued, conditions: DeviceConditions(isCharging: true, batteryLevel: 0.05), state: LaunchState(), policy: .server) == nil)

    // A refresh on a device at 15 % waits for the charger.
    let s = scripted(
      DeviceConditions(isCharging: false, batteryLevel: 0.15), [DeviceEvent(at: hours(2), .charging(true))], policy: eager)
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(5)), sources: ["prices"]))
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    await s.advance(by: hours(3))
    let launched = try #require(s.trace.events(for: refreshID).first { $0.kind == .launched })
    #expect(launched.time == start.addingTimeInterval(2 * 3600))
    #expect(s.trace.deferrals.contains { $0.identifier == refreshID && $0.reason == .criticalBattery })
  }

  @Test func test_criticalBattery_appearsInTheForecastNotes() async throws {
    // Never charged: after a day the battery is below the floor.
    let s = scripted(DeviceConditions(isCharging: false, batteryLevel: 0.8), dailyOpens(at: 9, days: 4), policy: eager)
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(5)), resubmitAfter: .seconds(3600), sources: ["prices"]))
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    await s.advance(by: days(4))
    let forecast = FreshnessForecast(trace: s.trace, sources: [refreshID: ["prices"]])
    #expect(forecast.findings.contains { $0.topic == "heldBack" || $0.topic == "criticalBattery" })
    #expect(forecast.notes.contains { $0.contains("battery was critically low") }, "\(forecast.notes)")
    // 0.8 at 4 %/h reaches 20 % after 15 h: nothing launches after that.
    let last = try #require(s.trace.events(for: refreshID).last { $0.kind == .launched })
    #expect(hoursSinceStart(last.time) <= 15)
  }

  // MARK: - The cellular data budget

  @Test func test_dataBudget_defersCellularLaunches_thatWouldExceedWhatIsLeft() async throws {
    var policy = eager
    policy.cellularDataBudget = 10_000_000
    let s = scripted(DeviceConditions(isCharging: true, network: .cellular), [DeviceEvent(at: hours(30), .network(.wifi))], policy: policy)
    s.register(refreshID, model: ModelBehavior(
      duration: .constant(.seconds(5)), resubmitAfter: .seconds(3600), sources: ["prices"], bytesPerLaunch: 4_000_000))
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    await s.advance(by: hours(29))
    // Two launches fit in 10 MB a day; the third waits until the first
    // leaves the 24-hour window.
    let launches = s.trace.events(for: refreshID).filter { $0.kind == .launched }.map { hoursSinceStart($0.time) }
    #expect(launches.count == 4, "\(launches)")
    #expect(launches.prefix(2) == [0, 1])
    #expect(launches[2] > 24 && launches[2] < 24.01, "\(launches)")
    #expect(s.trace.deferrals.contains { $0.identifier == refreshID && $0.reason == .dataBudget })
    let done = s.trace.events(for: refreshID).filter { $0.kind == .completed }
    #expect(done.allSatisfy { $0.transferredBytes == 4_000_000 })
    // On Wi-Fi the budget does not apply.
    await s.advance(by: hours(5))
    let later = s.trace.events(for: refreshID).filter { $0.kind == .launched && hoursSinceStart($0.time) >= 30 }
    #expect(later.count >= 4)
    let forecast = FreshnessForecast(trace: s.trace, sources: [refreshID: ["prices"]])
    #expect(forecast.notes.contains { $0.contains("cellular data budget") }, "\(forecast.notes)")
  }

  @Test func test_dataBudget_aLaunchLargerThanTheWholeBudget_waitsForWiFi() async throws {
    var policy = eager
    policy.cellularDataBudget = 1_000_000
    let s = scripted(DeviceConditions(isCharging: true, network: .cellular), [DeviceEvent(at: hours(3), .network(.wifi))], policy: policy)
    s.register(crawlID, model: ModelBehavior(duration: .constant(.seconds(30)), bytesPerLaunch: 2_000_000))
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: crawlID))
    #expect(await s.launch(crawlID) == .deferred(.dataBudget))
    await s.advance(by: hours(4))
    let launched = try #require(s.trace.events(for: crawlID).first { $0.kind == .launched })
    #expect(launched.time == start.addingTimeInterval(3 * 3600))
  }

  @Test func test_dataBudget_liveLaunches_countWhatTheyReport() async throws {
    var policy = eager
    policy.cellularDataBudget = 10_000_000
    let s = scripted(DeviceConditions(isCharging: true, network: .cellular), policy: policy)
    s.register(refreshID) { task in task.reportTransferred(bytes: 6_000_000) }
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    #expect(await s.launch(refreshID) == .launched(1))
    #expect(s.trace.events(for: refreshID).first { $0.kind == .completed }?.transferredBytes == 6_000_000)
    // The next launch is expected to transfer as much; 4 MB are left.
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    #expect(await s.launch(refreshID) == .deferred(.dataBudget))
    // A declared figure counts before any launch reports one.
    let fresh = scripted(DeviceConditions(isCharging: true, network: .cellular), policy: policy)
    fresh.register(refreshID) { _ in }
    fresh.expectTransfer(20_000_000, for: refreshID)
    fresh.finishLaunching()
    try fresh.submit(AppRefreshTaskRequest(identifier: refreshID))
    #expect(await fresh.launch(refreshID) == .deferred(.dataBudget))
  }

  // MARK: - Several seeds

  @Test func test_distribution_keepsTheSeedsNotes_withWhichSeedsMadeThem() async throws {
    func forecast(seed: UInt64) async -> FreshnessForecast {
      let s = SimulatedScheduler(device: .heavyUser, seed: seed)
      s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(5)), resubmitAfter: .seconds(900), sources: ["prices"]))
      s.register(crawlID, model: ModelBehavior(duration: .constant(.seconds(200)), resubmitAfter: .seconds(6 * 3600), cpuShare: 1))
      s.submitWhenEnteringBackground(AppRefreshTaskRequest(identifier: refreshID), replacingPending: false)
      s.submitWhenEnteringBackground(ProcessingTaskRequest(identifier: crawlID), replacingPending: false)
      s.finishLaunching()
      await s.advance(by: days(14))
      return FreshnessForecast(trace: s.trace, sources: [refreshID: ["prices"], crawlID: ["catalog"]])
    }
    let seeds: [UInt64] = [1, 2, 3]
    var forecasts: [FreshnessForecast] = []
    for seed in seeds { forecasts.append(await forecast(seed: seed)) }
    let spread = ForecastDistribution(seeds: seeds, forecasts: forecasts)
    #expect(!spread.notes.isEmpty)
    for note in spread.notes {
      let makers = zip(seeds, forecasts).filter { _, f in f.findings.contains { $0.topic == note.topic && $0.subject == note.subject } }
      #expect(note.seeds == makers.map(\.0), "\(note)")
    }
    #expect(spread.description.contains("\nNotes\n"))
    // Heavy processing on a heavy user's battery: the monitor kills some.
    let row = try #require(spread.tasks.first { $0.identifier == crawlID })
    #expect((row.cpuKills.median ?? 0) > 0, "\(row)")
  }
}
