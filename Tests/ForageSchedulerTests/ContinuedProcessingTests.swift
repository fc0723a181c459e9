import Foundation
import Testing

@testable import ForageScheduler

/// Issue 26: the simulated scheduler models continued processing (iOS 26's
/// `BGContinuedProcessingTaskRequest`): submitted from the app in the
/// foreground, it starts at once (or fails with `.fail`, or waits with
/// `.queue`), continues in the background until done, and the system
/// expires it under pressure. Everything on the virtual clock.
@Suite struct ContinuedProcessingTests {
  static let id = "com.example.refresh-now"

  static func request(_ strategy: ContinuedProcessingTaskRequest.SubmissionStrategy = .queue, id: String = id)
    -> ContinuedProcessingTaskRequest
  {
    ContinuedProcessingTaskRequest(identifier: id, title: "Refreshing", subtitle: "", strategy: strategy)
  }

  /// A scheduler with a model for `id` that works for `minutes`.
  static func scheduler(
    _ initial: DeviceConditions = .chargingOnWiFi, _ events: [DeviceEvent] = [], minutes: Double = 10,
    stallsAfter: Duration? = nil, ids: [String] = [id]
  ) -> SimulatedScheduler {
    let s = scripted(initial, events)
    for id in ids {
      s.register(
        id,
        model: ModelBehavior(
          duration: .constant(.seconds(Int64(minutes * 60))), sources: ["prices"], progressStallsAfter: stallsAfter))
    }
    s.finishLaunching()
    return s
  }

  static func expiration(_ s: SimulatedScheduler, _ id: String = id) -> TraceEvent? {
    s.trace.events(for: id).first { $0.kind == .expired }
  }

  @Test func test_submit_isRefusedWhileTheAppIsInTheBackground_andStartsAtOnceInTheForeground() async throws {
    let s = Self.scheduler()
    #expect {
      try s.submit(Self.request())
    } throws: { error in
      (error as? SchedulerError) == .immediateRunIneligible && "\(error)".contains("the app is not in the foreground")
    }
    #expect(s.trace.count(.rejected, identifier: Self.id) == 1)
    s.device.openApp(for: .seconds(60))
    try s.submit(Self.request())
    await s.advance(by: .milliseconds(1))
    // It launched at the instant it was submitted, with the app in front.
    let launched = try #require(s.trace.events(for: Self.id).first { $0.kind == .launched })
    #expect(launched.time == start)
    #expect(s.runningIdentifiers == [Self.id])
  }

  @Test func test_continuesInTheBackground_untilDone_whileTheDeviceIsUsed() async throws {
    // The app is open a minute; the user then uses the phone (screen on),
    // which cuts processing short but not this task.
    let s = Self.scheduler(
      .chargingOnWiFi, [DeviceEvent(at: .seconds(120), .screen(on: true))], minutes: 10)
    s.device.openApp(for: .seconds(60))
    try s.submit(Self.request())
    await s.advance(by: .seconds(3600))
    let events = s.trace.events(for: Self.id)
    #expect(Self.expiration(s) == nil)
    let done = try #require(events.first { $0.kind == .completed })
    #expect(done.success == true && done.duration == 600 && done.refreshedSources == ["prices"])
    #expect(s.trace.events.contains { $0.kind == .appBackgrounded && $0.time < done.time })
  }

  @Test func test_earliestBeginDate_isIgnored() async throws {
    let s = Self.scheduler(minutes: 1)
    s.device.openApp()
    var r = Self.request()
    r.earliestBeginDate = start.addingTimeInterval(86_400)
    try s.submit(r)
    await s.advance(by: .seconds(1))
    #expect(s.trace.count(.launched, identifier: Self.id) == 1)
  }

  @Test func test_failStrategy_failsAtOnce_underPressure_queueWaitsItOut() async throws {
    // Critically hot for the first ten minutes.
    let s = Self.scheduler(
      DeviceConditions(thermalState: .critical), [DeviceEvent(at: .seconds(600), .thermalState(.nominal))], minutes: 1,
      ids: [Self.id, "com.example.other"])
    s.device.openApp(for: .seconds(60))
    #expect {
      try s.submit(Self.request(.fail))
    } throws: { error in
      (error as? SchedulerError) == .immediateRunIneligible && "\(error)".contains("too hot")
    }
    try s.submit(Self.request(.queue, id: "com.example.other"))
    await s.advance(by: .seconds(3600))
    let launched = try #require(s.trace.events(for: "com.example.other").first { $0.kind == .launched })
    #expect(launched.time == start.addingTimeInterval(600))
    #expect(s.trace.count(.launched, identifier: Self.id) == 0)
  }

  @Test func test_thermalCritical_expiresARunningTask() async throws {
    let s = Self.scheduler(.chargingOnWiFi, [DeviceEvent(at: .seconds(120), .thermalState(.critical))], minutes: 10)
    s.device.openApp()
    try s.submit(Self.request())
    await s.advance(by: .seconds(3600))
    let expired = try #require(Self.expiration(s))
    #expect(expired.expirationReason == .thermal && expired.time == start.addingTimeInterval(120))
    #expect(s.trace.events(for: Self.id).last { $0.kind == .completed }?.success == false)
  }

  @Test func test_criticalBattery_offPower_expiresARunningTask_whenTheBatteryReachesTheFloor() async throws {
    // 22 % on battery, draining 4 %/h: the 20 % floor is reached after 30 min.
    let s = Self.scheduler(DeviceConditions(isCharging: false, batteryLevel: 0.22), minutes: 50)
    s.device.openApp()
    try s.submit(Self.request())
    await s.advance(by: .seconds(7200))
    let expired = try #require(Self.expiration(s))
    #expect(expired.expirationReason == .criticalBattery)
    #expect(abs(expired.time.timeIntervalSince(start) - 1800) <= 1, "\(expired.time)")

    // Plugged in at 20 min, it runs to its end.
    let charged = Self.scheduler(
      DeviceConditions(isCharging: false, batteryLevel: 0.22), [DeviceEvent(at: .seconds(1200), .charging(true))], minutes: 50)
    charged.device.openApp()
    try charged.submit(Self.request())
    await charged.advance(by: .seconds(7200))
    #expect(Self.expiration(charged) == nil)
    #expect(charged.trace.events(for: Self.id).first { $0.kind == .completed }?.success == true)
  }

  @Test func test_criticalBattery_failStrategy_cannotStart() async throws {
    let s = Self.scheduler(DeviceConditions(isCharging: false, batteryLevel: 0.1))
    s.device.openApp()
    #expect(throws: SchedulerError.immediateRunIneligible) { try s.submit(Self.request(.fail)) }
  }

  @Test func test_modelThatStopsReportingProgress_expiresWithNoProgress_afterTheTimeout() async throws {
    let s = Self.scheduler(minutes: 10, stallsAfter: .seconds(90))
    s.device.openApp()
    try s.submit(Self.request())
    await s.advance(by: .seconds(3600))
    let expired = try #require(Self.expiration(s))
    let timeout = SchedulingPolicy().continuedProcessingProgressTimeout
    #expect(expired.expirationReason == .noProgress)
    #expect(expired.time == start.addingTimeInterval(90 + timeout.seconds))
    // Work that ends before the silence runs out is not expired.
    let quick = Self.scheduler(minutes: 2, stallsAfter: .seconds(90))
    quick.device.openApp()
    try quick.submit(Self.request())
    await quick.advance(by: .seconds(3600))
    #expect(Self.expiration(quick) == nil)
  }

  @Test func test_submitWhenOpeningApp_startsTheTaskAtTheUsersOpens() async throws {
    let opens = dailyOpens(at: 8, days: 3, session: .seconds(120))
    let s = Self.scheduler(.chargingOnWiFi, opens, minutes: 5)
    s.submitWhenOpeningApp(Self.request())
    await s.advance(by: days(3))
    let launches = s.trace.events(for: Self.id).filter { $0.kind == .launched }.map { hoursSinceStart($0.time) }
    #expect(launches == [8, 32, 56])
    #expect(s.trace.events(for: Self.id).filter { $0.kind == .completed }.allSatisfy { $0.success == true })

    let never = Self.scheduler(.chargingOnWiFi, opens, minutes: 5)
    never.submitWhenOpeningApp(Self.request(), share: 0)
    await never.advance(by: days(3))
    #expect(never.trace.count(.submitted, identifier: Self.id) == 0)
  }

  @Test func test_liveTask_progressReachesItsObserver_andTheLastReportAtOnce() async throws {
    let s = scripted()
    let seen = Collector<TaskProgress>()
    s.register(Self.id) { task in
      task.updateProgress(completedUnitCount: 0, totalUnitCount: 3)
      task.observeProgress { seen.append($0) }  // set late: gets the last report first
      for i in 1...3 { task.updateProgress(completedUnitCount: Int64(i), totalUnitCount: 3) }
    }
    s.finishLaunching()
    s.device.openApp()
    try s.submit(Self.request())
    await s.advance(by: .seconds(1))
    #expect(seen.all.map(\.completedUnitCount) == [0, 1, 2, 3])
    #expect(seen.all.allSatisfy { $0.totalUnitCount == 3 })
  }

  @Test func test_failStrategy_underPressure_isRefusedByBothSchedulers_queueIsAccepted() throws {
    for conditions in [DeviceConditions(isCharging: false, batteryLevel: 0.1), DeviceConditions(thermalState: .critical)] {
      let system = SystemScheduler(policy: .server, conditions: FixedConditions(conditions), log: .silent)
      let simulated = scripted(conditions, policy: .server)
      for s in [system, simulated] as [any TaskScheduler] {
        s.register(Self.id) { _ in }
        s.finishLaunching()
        #expect(throws: SchedulerError.immediateRunIneligible, "\(conditions) \(s)") { try s.submit(Self.request(.fail)) }
        try s.submit(Self.request(.queue))
      }
    }
  }

  @Test func test_serverPolicy_needsNoApp() throws {
    let s = SimulatedScheduler(device: .chargingOnWiFi, policy: .server)
    s.register(Self.id, model: ModelBehavior())
    s.finishLaunching()
    try s.submit(Self.request())
  }
}
