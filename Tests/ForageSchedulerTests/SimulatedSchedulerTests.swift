import Foundation
import Testing

@testable import ForageScheduler

@Suite struct SimulatedSchedulerTests {
  let refreshID = "com.example.refresh"
  let crawlID = "com.example.crawl"

  /// A scheduler with a refresh task on daily opens at 08:00, submitted on
  /// entering the background; a device on battery charges at night.
  func refreshScheduler(_ initial: DeviceConditions = .onBatteryCellular, extra: [DeviceEvent] = [], days count: Int = 10) -> SimulatedScheduler {
    let charge = initial.isCharging ? [] : nightlyCharge(days: count)
    let s = scripted(initial, dailyOpens(at: 8, days: count) + charge + extra)
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(5)), resubmitAfter: .seconds(900), sources: ["prices"]))
    s.submitWhenEnteringBackground(AppRefreshTaskRequest(identifier: refreshID))
    s.finishLaunching()
    return s
  }

  @Test func test_refresh_isPlacedShortlyBeforeTheUsualOpen() async throws {
    let s = refreshScheduler()
    await s.advance(by: days(10))
    let launches = s.trace.events(for: refreshID).filter { $0.kind == .launched && hoursSinceStart($0.time) > 48 }
    #expect(launches.count >= 7)
    for l in launches {
      let tod = timeOfDay(l.time)
      #expect(tod >= 7.5 && tod < 8, "launch at \(l.time) is not shortly before 08:00")
    }
  }

  @Test func test_refresh_coldStartRunsAfterTheDelay() async throws {
    let s = scripted(.chargingOnWiFi)
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(5))))
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    await s.advance(by: hours(3))
    let launch = try #require(s.trace.events(for: refreshID).first { $0.kind == .launched })
    #expect(hoursSinceStart(launch.time) == SchedulerDefaults.coldStartDelay.seconds / 3600)
  }

  @Test func test_nothingLaunchesBeforeEarliestBeginDate() async throws {
    var policy = SchedulingPolicy()
    policy.refreshPlacement = .asSoonAsEligible
    let s = scripted(policy: policy)
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(5))))
    s.finishLaunching()
    let due = start.addingTimeInterval(5 * 3600)
    try s.submit(AppRefreshTaskRequest(identifier: refreshID, earliestBeginDate: due))
    await s.advance(by: hours(4.99))
    #expect(s.trace.count(.launched) == 0)
    #expect(await s.launch(refreshID) == .notDue(due))
    await s.advance(by: hours(1))
    let launch = try #require(s.trace.events(for: refreshID).first { $0.kind == .launched })
    #expect(launch.time == due)
  }

  @Test func test_refresh_neverRunsWithBackgroundAppRefreshOff() async throws {
    let s = refreshScheduler(extra: [DeviceEvent(at: .zero, .backgroundAppRefresh(.denied))])
    await s.advance(by: days(5))
    #expect(s.trace.count(.launched) == 0)
    #expect(s.trace.count(.rejected, identifier: refreshID) >= 4)
    let forecast = FreshnessForecast(trace: s.trace, sources: [refreshID: ["prices"]])
    #expect(forecast.notes.contains { $0.contains("never ran") && $0.contains("Background App Refresh is off") })
  }

  @Test func test_refresh_heldBackInLowPowerMode() async throws {
    let s = refreshScheduler(extra: [DeviceEvent(at: .zero, .lowPowerMode(true))], days: 4)
    await s.advance(by: days(4))
    #expect(s.trace.count(.launched) == 0)
    #expect(s.trace.deferrals.contains { $0.identifier == refreshID && $0.reason == .lowPowerMode })
    #expect(await s.launch(refreshID) == .deferred(.lowPowerMode))
  }

  @Test func test_refresh_heldBackWithoutNetwork_forceLaunchBypasses() async throws {
    let s = scripted(DeviceConditions(network: .none))
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(5))))
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    await s.advance(by: hours(3))
    #expect(s.trace.count(.launched) == 0)
    #expect(await s.launch(refreshID) == .deferred(.noNetwork))
    #expect(s.forceLaunch(refreshID).attempt == .launched(1))
    await s.advance(by: .seconds(10))
    let launched = try #require(s.trace.events(for: refreshID).first { $0.kind == .launched })
    #expect(launched.reason == "forced")
    #expect(s.trace.count(.completed, identifier: refreshID) == 1)
  }

  @Test func test_forceQuit_stopsLaunchesUntilNextOpen() async throws {
    let events = [
      DeviceEvent(at: hours(8), .appOpened(session: .seconds(60))),
      DeviceEvent(at: hours(8.1), .appForceQuit),
      DeviceEvent(at: hours(48 + 8), .appOpened(session: .seconds(60))),
    ]
    var policy = SchedulingPolicy()
    policy.refreshPlacement = .asSoonAsEligible
    let s = scripted(.chargingOnWiFi, events, policy: policy)
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(5)), resubmitAfter: .seconds(3600)))
    s.submitWhenEnteringBackground(AppRefreshTaskRequest(identifier: refreshID))
    s.finishLaunching()
    await s.advance(by: days(3))
    let launches = s.trace.events(for: refreshID).filter { $0.kind == .launched }.map { hoursSinceStart($0.time) }
    #expect(!launches.isEmpty)
    #expect(!launches.contains { $0 > 8.1 && $0 < 56 }, "launched while force-quit: \(launches)")
    #expect(launches.contains { $0 > 56 })
    #expect(s.trace.deferrals.contains { $0.reason == .forceQuit })
  }

  @Test func test_lifecycle_enteringBackgroundSubmits() async throws {
    let s = refreshScheduler(days: 1)
    await s.advance(by: hours(8.5))
    let kinds = s.trace.events.map(\.kind)
    let opened = try #require(kinds.firstIndex(of: .appOpened))
    let backgrounded = try #require(kinds.firstIndex(of: .appBackgrounded))
    #expect(opened < backgrounded)
    #expect(s.trace.events[backgrounded + 1].kind == .submitted)
    #expect(s.trace.events[backgrounded + 1].identifier == refreshID)
  }

  @Test func test_rescheduleRule_handlerSubmitsNextRequestAtLaunch() async throws {
    var policy = SchedulingPolicy()
    policy.refreshPlacement = .asSoonAsEligible
    let s = scripted(policy: policy)
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(5)), resubmitAfter: .seconds(1800)))
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    await s.advance(by: .seconds(1))
    let pending = await s.pendingTaskRequests()
    #expect(pending.count == 1)
    #expect(pending.first?.earliestBeginDate == start.addingTimeInterval(1800))
    await s.advance(by: hours(3))
    let times = s.trace.events(for: refreshID).filter { $0.kind == .launched }.map { hoursSinceStart($0.time) }
    #expect(times == [0, 0.5, 1, 1.5, 2, 2.5, 3])
  }

  @Test func test_liveHandler_rescheduleRule() async throws {
    var policy = SchedulingPolicy()
    policy.refreshPlacement = .asSoonAsEligible
    let s = scripted(policy: policy)
    s.register(refreshID) { [s] task in
      try s.submit(AppRefreshTaskRequest(identifier: task.identifier, earliestBeginDate: s.now.addingTimeInterval(3600)))
    }
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    await s.advance(by: hours(2.5))
    #expect(s.trace.count(.launched) == 3)
    #expect(s.trace.count(.completed) == 3)
    #expect(s.trace.events.filter { $0.kind == .completed }.allSatisfy { $0.success == true })
  }

  @Test func test_processing_requiresPower_runsOnlyWhileCharging() async throws {
    let events = [DeviceEvent(at: hours(1), .charging(false)), DeviceEvent(at: hours(22), .charging(true))]
    let s = scripted(DeviceConditions(isCharging: true, batteryLevel: 0.9), events, traceDevice: true)
    s.register(crawlID, model: ModelBehavior(duration: .constant(.seconds(60))))
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: crawlID, earliestBeginDate: start.addingTimeInterval(2 * 3600), requiresExternalPower: true))
    await s.advance(by: days(1))
    let launch = try #require(s.trace.events(for: crawlID).first { $0.kind == .launched })
    #expect(hoursSinceStart(launch.time) >= 22)
    #expect(launch.conditions?.isCharging == true)
  }

  @Test func test_processing_deviceInUse_expiresRunningLaunch() async throws {
    var policy = SchedulingPolicy()
    policy.processingBudget = .seconds(6 * 3600)
    let s = scripted(.chargingOnWiFi, [DeviceEvent(at: hours(2.5), .screen(on: true))], policy: policy)
    s.register(crawlID, model: ModelBehavior(duration: .constant(.seconds(4 * 3600)), sources: ["a", "b"]))
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: crawlID))
    await s.advance(by: hours(3))
    let events = s.trace.events(for: crawlID)
    let launched = try #require(events.first { $0.kind == .launched })
    #expect(hoursSinceStart(launched.time) < 2.5)
    let expired = try #require(events.first { $0.kind == .expired })
    #expect(expired.reason == "deviceInUse")
    #expect(hoursSinceStart(expired.time) == 2.5)
    let completed = try #require(events.first { $0.kind == .completed })
    #expect(completed.success == false)
  }

  @Test func test_devicePickUp_expiresRunningProcessingNow() async throws {
    let s = scripted(.chargingOnWiFi)
    s.register(crawlID, model: ModelBehavior(duration: .constant(.seconds(200))))
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: crawlID))
    #expect(s.forceLaunch(crawlID).attempt == .launched(1))
    await s.advance(by: .seconds(10))
    s.device.pickUp()
    let expired = try #require(s.trace.events(for: crawlID).first { $0.kind == .expired })
    #expect(expired.expirationReason == .deviceInUse)
    #expect(expired.time == start.addingTimeInterval(10))
    try s.submit(ProcessingTaskRequest(identifier: crawlID))
    await s.advance(by: hours(1))
    #expect(await s.launch(crawlID) == .deferred(.deviceInUse))
    s.device.putDown()
    s.device.unplug()
    s.device.battery(0.25)
    #expect(await s.launch(crawlID) == .deferred(.lowBattery))
    s.device.battery(0.1)
    #expect(await s.launch(crawlID) == .deferred(.criticalBattery))
    #expect(s.conditions.isCharging == false)
  }

  @Test func test_expirationIgnored_killedAfterGraceAndPenalised() async throws {
    var policy = SchedulingPolicy()
    policy.refreshPlacement = .asSoonAsEligible
    let s = scripted(policy: policy)
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(120)), honorsExpiration: false, resubmitAfter: .seconds(600)))
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    await s.advance(by: hours(2))
    let events = s.trace.events(for: refreshID)
    let expired = try #require(events.first { $0.kind == .expired })
    let killed = try #require(events.first { $0.kind == .killed })
    #expect(expired.time == start.addingTimeInterval(SchedulerDefaults.appRefreshBudget.seconds))
    #expect(killed.time == expired.time.addingTimeInterval(SchedulerDefaults.expirationGrace.seconds))
    #expect(s.trace.count(.launched) == 1, "the penalty should hold back the next launch")
    #expect(s.trace.deferrals.contains { $0.reason == .penalty })
    await s.advance(by: SchedulerDefaults.killPenalty)
    #expect(s.trace.count(.launched) == 2)
    let forecast = FreshnessForecast(trace: s.trace, sources: [refreshID: []])
    #expect(forecast.notes.contains { $0.contains("killed") })
  }

  @Test func test_expirationHonoured_completesWithFailureAndPartialSources() async throws {
    var policy = SchedulingPolicy()
    policy.refreshPlacement = .asSoonAsEligible
    let s = scripted(policy: policy)
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(60)), sources: ["a", "b", "c", "d"]))
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    await s.advance(by: .seconds(120))
    let completed = try #require(s.trace.events(for: refreshID).first { $0.kind == .completed })
    #expect(completed.success == false)
    #expect(completed.refreshedSources == ["a", "b"])  // 31 s of 60 s reaches half the sources
    #expect(s.trace.count(.killed) == 0)
  }

  @Test func test_expireControl_expiresRunningModelLaunch() async throws {
    let s = scripted()
    s.register(crawlID, model: ModelBehavior(duration: .constant(.seconds(200))))
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: crawlID))
    #expect(s.forceLaunch(crawlID).attempt == .launched(1))
    #expect(s.expire(crawlID))
    #expect(s.expire(crawlID) == false)
    await s.advance(by: .seconds(5))
    #expect(s.trace.events(for: crawlID).first { $0.kind == .expired }?.reason == "forced")
    #expect(s.trace.count(.completed, identifier: crawlID) == 1)
  }

  @Test func test_neverTwoConcurrentLaunchesOfOneIdentifier() async throws {
    var policy = SchedulingPolicy()
    policy.refreshPlacement = .asSoonAsEligible
    let s = scripted(policy: policy)
    // Resubmits due in 10 s while each launch runs 25 s.
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(25)), resubmitAfter: .seconds(10)))
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID))
    await s.advance(by: .seconds(300))
    var running = false
    for e in s.trace.events(for: refreshID) {
      if e.kind == .launched { #expect(!running); running = true }
      if e.kind == .completed || e.kind == .killed { running = false }
    }
    #expect(s.trace.count(.launched) >= 5)
    #expect(s.trace.deferrals.contains { $0.reason == .alreadyRunning })
    #expect(s.forceLaunch(refreshID).attempt == .deferred(.alreadyRunning) || s.runningIdentifiers.isEmpty)
  }

  @Test func test_allowanceGrowsWithUse() {
    let policy = SchedulingPolicy()
    #expect(policy.refreshAllowance(opensPerDay: 0, daysSinceLastOpen: nil) == 1)
    #expect(policy.refreshAllowance(opensPerDay: 3, daysSinceLastOpen: 0.5) == 4)
    #expect(policy.refreshAllowance(opensPerDay: 50, daysSinceLastOpen: 0) == 12)
    #expect(policy.refreshAllowance(opensPerDay: 3, daysSinceLastOpen: 9) == 0)
  }

  @Test func test_rarelyUsedApp_getsFewerRefreshesThanHeavyUser() async throws {
    func launches(_ profile: DeviceProfile) async -> Int {
      let s = SimulatedScheduler(device: profile, seed: 3, log: .silent)
      s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(5)), resubmitAfter: .seconds(900)))
      s.submitWhenEnteringBackground(AppRefreshTaskRequest(identifier: refreshID))
      s.finishLaunching()
      await s.advance(by: days(28))
      return s.trace.count(.launched)
    }
    let rare = await launches(.rarelyUsed)
    let heavy = await launches(.heavyUser)
    #expect(rare * 3 < heavy, "rarely used \(rare), heavy user \(heavy)")
  }

  @Test func test_traceIsPrintable() async throws {
    let s = refreshScheduler(days: 2)
    await s.advance(by: days(2))
    let text = s.trace.description
    #expect(text.contains("2026-01-05 08:00:00  appOpened"))
    #expect(text.contains("launched        com.example.refresh #1"))
    #expect(!text.contains("appOpened "))  // no trailing padding
  }

  @Test func test_refresh_waitsWhileTheAppIsInTheForeground() async throws {
    var policy = SchedulingPolicy()
    policy.refreshPlacement = .asSoonAsEligible
    let s = scripted(.chargingOnWiFi, [DeviceEvent(at: hours(0.5), .appOpened(session: hours(2)))], policy: policy)
    s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(5))))
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: refreshID, earliestBeginDate: start.addingTimeInterval(3600)))
    await s.advance(by: hours(4))
    let launch = try #require(s.trace.events(for: refreshID).first { $0.kind == .launched })
    #expect(hoursSinceStart(launch.time) == 2.5)
    #expect(s.trace.deferrals.contains { $0.reason == .appInForeground })
  }

  @Test func test_thermal_seriousHoldsBack_criticalCutsProcessingShort() async throws {
    var policy = SchedulingPolicy()
    policy.processingStartJitter = .zero
    policy.processingBudget = .seconds(6 * 3600)
    let events = [
      DeviceEvent(at: .zero, .thermalState(.serious)),
      DeviceEvent(at: hours(1), .thermalState(.nominal)),
      DeviceEvent(at: hours(1.5), .thermalState(.critical)),
    ]
    let s = scripted(.chargingOnWiFi, events, policy: policy)
    s.register(crawlID, model: ModelBehavior(duration: .constant(.seconds(3 * 3600))))
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: crawlID))
    await s.advance(by: hours(2))
    let events2 = s.trace.events(for: crawlID)
    let launch = try #require(events2.first { $0.kind == .launched })
    #expect(hoursSinceStart(launch.time) == 1)
    let expired = try #require(events2.first { $0.kind == .expired })
    #expect(expired.reason == "thermal")
    #expect(hoursSinceStart(expired.time) == 1.5)
  }

  @Test func test_lifecycle_replacingPendingFalse_keepsTheEarlierRequest() async throws {
    let opens = dailyOpens(at: 8, days: 2) + dailyOpens(at: 12, days: 2)
    let s = scripted(DeviceConditions(isCharging: false, batteryLevel: 0.9), opens)
    s.register(crawlID, model: ModelBehavior())
    s.submitWhenEnteringBackground(
      ProcessingTaskRequest(identifier: crawlID, requiresExternalPower: true), earliestBeginAfter: hours(6), replacingPending: false)
    s.finishLaunching()
    await s.advance(by: hours(13))
    let pending = await s.pendingTaskRequests()
    // Submitted when leaving the 08:00 session (due 14:05), not pushed back by the 12:00 one.
    #expect(pending.first?.earliestBeginDate == start.addingTimeInterval((8 + 5.0 / 60 + 6) * 3600))
    #expect(s.trace.count(.submitted, identifier: crawlID) == 1)
  }
  /// Issue 14: Apple's BGProcessingTaskRequest documentation runs processing
  /// "as long as the user has used the app within the past week"; an app
  /// never opened got processing runs all year.
  @Test func test_issue14_processing_needsAppUseWithinThePastWeek() async throws {
    let s = scripted(.chargingOnWiFi, [DeviceEvent(at: days(20), .appOpened(session: .seconds(60)))])
    s.register(crawlID, model: ModelBehavior(duration: .constant(.seconds(30)), resubmitAfter: .seconds(6 * 3600)))
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: crawlID))
    await s.advance(by: days(30))
    let launches = s.trace.events(for: crawlID).filter { $0.kind == .launched }.map { hoursSinceStart($0.time) / 24 }
    #expect(launches.contains { $0 < 7 }, "used at the start: runs in the first week")
    #expect(!launches.contains { $0 >= 7 && $0 < 20 }, "not used for a week: no processing; \(launches)")
    #expect(launches.contains { $0 >= 20 && $0 < 27 }, "opened on day 20: runs again")
    #expect(!launches.contains { $0 >= 27 })
    #expect(s.trace.deferrals.contains { $0.identifier == crawlID && $0.reason == .appDormant })

    // A server is never opened, and never gated.
    let server = scripted(.chargingOnWiFi, policy: .server)
    server.register(crawlID, model: ModelBehavior(duration: .constant(.seconds(30)), resubmitAfter: .seconds(6 * 3600)))
    server.finishLaunching()
    try server.submit(ProcessingTaskRequest(identifier: crawlID))
    await server.advance(by: days(14))
    #expect(server.trace.events(for: crawlID).filter { $0.kind == .launched && hoursSinceStart($0.time) > 8 * 24 }.count > 10)
  }

  /// Issue 14: developers report refreshes cut after a few seconds; a
  /// profile can say so, and a refresh then expires (`early`) at that time.
  @Test func test_issue14_earlyRefreshExpiration_isAProfileParameter_offByDefault() async throws {
    func run(_ early: String?) async -> Trace {
      var profile = DeviceProfile.server
      profile.earlyRefreshExpiration = early
      let s = SimulatedScheduler(device: profile, seed: 3, log: .silent)
      s.register(refreshID, model: ModelBehavior(duration: .constant(.seconds(12)), resubmitAfter: .seconds(3600)))
      s.finishLaunching()
      try? s.submit(AppRefreshTaskRequest(identifier: refreshID))
      await s.advance(by: hours(5.5))
      return s.trace
    }
    let normal = await run(nil)
    #expect(normal.count(.launched) >= 5)
    #expect(normal.count(.expired) == 0, "12 s fits the 30 s budget")
    let early = await run("5s")
    #expect(early.count(.launched) == normal.count(.launched))
    let expired = early.events.filter { $0.kind == .expired }
    #expect(expired.count == early.count(.launched))
    #expect(expired.allSatisfy { $0.reason == "early" })
    let launched = early.events.filter { $0.kind == .launched }
    for (l, e) in zip(launched, expired) { #expect(e.time.timeIntervalSince(l.time) == 5) }
  }
}
