import Foundation
import Testing

@testable import ForageScheduler

@Suite struct SchedulerRulesTests {
  let refresh = AppRefreshTaskRequest(identifier: "com.example.refresh")

  @Test func test_submit_rejectsIdentifierWithoutHandler() throws {
    let s = scripted()
    s.finishLaunching()
    #expect(throws: SchedulerError.launchHandlerNotRegistered) { try s.submit(refresh) }
    #expect(s.trace.count(.rejected) == 1)
  }

  @Test func test_submit_rejectsIdentifierNotPermitted() throws {
    let s = scripted(permitted: ["com.example.other"])
    #expect(s.register("com.example.refresh", model: ModelBehavior()) == false)
    do {
      try s.submit(refresh)
      Issue.record("submit should have thrown")
    } catch {
      #expect(error == .notPermitted)
      #expect(error.identifier == "com.example.refresh")
      #expect(error.description.contains("permitted"))
    }
  }

  @Test func test_permittedIdentifiers_wildcardSuffix() throws {
    let s = scripted(permitted: ["com.example.export.*"])
    #expect(s.register("com.example.export.photos", model: ModelBehavior()))
    #expect(s.register("com.example.import", model: ModelBehavior()) == false)
  }

  @Test func test_register_afterFinishLaunching_fails() {
    let s = scripted()
    s.finishLaunching()
    #expect(s.register("com.example.refresh", model: ModelBehavior()) == false)
    #expect(s.register("com.example.async") { _ in } == false)
  }

  @Test func test_register_twice_fails() {
    let s = scripted()
    #expect(s.register(forTaskWithIdentifier: "a", using: nil) { $0.setTaskCompleted(success: true) })
    #expect(s.register(forTaskWithIdentifier: "a", using: nil) { $0.setTaskCompleted(success: true) } == false)
  }

  @Test func test_submit_secondAppRefresh_tooManyPending() throws {
    let s = scripted()
    s.register("a", model: ModelBehavior())
    s.register("b", model: ModelBehavior())
    try s.submit(AppRefreshTaskRequest(identifier: "a"))
    #expect(throws: SchedulerError.tooManyPendingTaskRequests) { try s.submit(AppRefreshTaskRequest(identifier: "b")) }
  }

  @Test func test_submit_sameIdentifier_replacesRequest() async throws {
    let s = scripted()
    s.register("a", model: ModelBehavior())
    try s.submit(AppRefreshTaskRequest(identifier: "a"))
    let later = start.addingTimeInterval(7200)
    try s.submit(AppRefreshTaskRequest(identifier: "a", earliestBeginDate: later))
    let pending = await s.pendingTaskRequests()
    #expect(pending.count == 1)
    #expect(pending.first?.earliestBeginDate == later)
  }

  @Test func test_submit_eleventhProcessing_tooManyPending() throws {
    let s = scripted()
    for i in 0..<11 { s.register("p\(i)", model: ModelBehavior()) }
    for i in 0..<10 { try s.submit(ProcessingTaskRequest(identifier: "p\(i)")) }
    #expect(throws: SchedulerError.tooManyPendingTaskRequests) { try s.submit(ProcessingTaskRequest(identifier: "p10")) }
  }

  @Test func test_submit_backgroundRefreshDenied_unavailable() throws {
    let s = scripted(DeviceConditions(backgroundRefreshStatus: .denied))
    s.register("a", model: ModelBehavior())
    s.register("p", model: ModelBehavior())
    #expect(throws: SchedulerError.unavailable) { try s.submit(AppRefreshTaskRequest(identifier: "a")) }
    #expect(throws: SchedulerError.unavailable) { try s.submit(ProcessingTaskRequest(identifier: "p")) }
  }

  @Test func test_continuedProcessing_failStrategy_immediateRunIneligible() async throws {
    let s = scripted()
    s.register("com.example.export.a", model: ModelBehavior(duration: .constant(.seconds(600))))
    s.register("com.example.export.b", model: ModelBehavior())
    s.device.openApp(for: .seconds(1800))  // submitted from the user's action in the app
    try s.submit(ContinuedProcessingTaskRequest(identifier: "com.example.export.a", title: "Export", subtitle: ""))
    await s.advance(by: .seconds(1))
    #expect(s.runningIdentifiers == ["com.example.export.a"])
    #expect(throws: SchedulerError.immediateRunIneligible) {
      try s.submit(ContinuedProcessingTaskRequest(identifier: "com.example.export.b", title: "B", subtitle: "", strategy: .fail))
    }
    // `.queue` waits for the running one instead.
    try s.submit(ContinuedProcessingTaskRequest(identifier: "com.example.export.b", title: "B", subtitle: "", strategy: .queue))
    await s.advance(by: .seconds(900))
    #expect(s.trace.count(.launched, identifier: "com.example.export.b") == 1)
    let aEnd = try #require(s.trace.events(for: "com.example.export.a").last { $0.kind == .completed })
    let bStart = try #require(s.trace.events(for: "com.example.export.b").first { $0.kind == .launched })
    #expect(bStart.time >= aEnd.time)
  }

  @Test func test_errorInjection_failsNextSubmissions() throws {
    let s = scripted()
    s.register("a", model: ModelBehavior())
    s.failNextSubmissions(with: .unavailable, count: 2)
    #expect(throws: SchedulerError.unavailable) { try s.submit(AppRefreshTaskRequest(identifier: "a")) }
    #expect(throws: SchedulerError.unavailable) { try s.submit(AppRefreshTaskRequest(identifier: "a")) }
    try s.submit(AppRefreshTaskRequest(identifier: "a"))
    #expect(s.trace.count(.rejected) == 2)
    #expect(s.trace.count(.submitted) == 1)
  }

  @Test func test_pendingTaskRequests_copiesSortedAndCancel() async throws {
    let s = scripted()
    for id in ["c", "a", "b"] { s.register(id, model: ModelBehavior()) }
    try s.submit(ProcessingTaskRequest(identifier: "c"))
    try s.submit(ProcessingTaskRequest(identifier: "a", requiresExternalPower: true))
    try s.submit(AppRefreshTaskRequest(identifier: "b"))
    var copies = await s.pendingTaskRequests()
    #expect(copies.map(\.identifier) == ["a", "b", "c"])
    copies[0].earliestBeginDate = .distantFuture
    #expect(await s.pendingTaskRequests().first?.earliestBeginDate == nil)
    #expect((copies[0] as? ProcessingTaskRequest)?.requiresExternalPower == true)
    s.cancel(taskRequestWithIdentifier: "b")
    #expect(await s.pendingTaskRequests().map(\.identifier) == ["a", "c"])
    s.cancelAllTaskRequests()
    #expect(await s.pendingTaskRequests().isEmpty)
    #expect(s.trace.count(.cancelled) == 3)
  }

  @Test func test_errors_compareByKindAndDescribeTheRemedy() {
    let e = SchedulerError.unavailable.with(identifier: "x", detail: "denied")
    #expect(e == .unavailable)
    #expect(e != .notPermitted)
    #expect(e.description.contains("Background App Refresh"))
    #expect(e.description.hasPrefix("x: "))
    #expect(SchedulerError.tooManyPendingTaskRequests.name == "tooManyPendingTaskRequests")
  }

  @Test func test_anyTaskRequest_roundTripsThroughJSON() throws {
    let requests: [AnyTaskRequest] = [
      .init(AppRefreshTaskRequest(identifier: "a", earliestBeginDate: start)),
      .init(ProcessingTaskRequest(identifier: "p", requiresNetworkConnectivity: true, requiresExternalPower: true)),
      .init(ContinuedProcessingTaskRequest(identifier: "c", title: "T", subtitle: "S", strategy: .fail)),
    ]
    let data = try JSONEncoder().encode(requests)
    #expect(try JSONDecoder().decode([AnyTaskRequest].self, from: data) == requests)
    #expect(requests[1].requiresExternalPower && requests[1].requiresNetworkConnectivity)
    #expect(requests[0].requiresNetworkConnectivity)  // refresh needs a network
  }

  @Test func test_strictMode_registerAfterLaunch_traps() async {
    await #expect(processExitsWith: .failure) {
      let s = SimulatedScheduler(device: .chargingOnWiFi, enforcement: .strict, log: .silent)
      s.finishLaunching()
      _ = s.register("late") { _ in }
    }
  }

  @Test func test_strictMode_submitWithoutHandler_traps() async {
    await #expect(processExitsWith: .failure) {
      let s = SimulatedScheduler(device: .chargingOnWiFi, enforcement: .strict, log: .silent)
      try? s.submit(AppRefreshTaskRequest(identifier: "nobody"))
    }
  }

  @Test func test_lenientMode_logsViolations() {
    let lines = Collector<String>()
    let s = SimulatedScheduler(device: .chargingOnWiFi, log: SchedulerLog { lines.append($0) })
    s.register("a", model: ModelBehavior())
    s.register("a", model: ModelBehavior())
    #expect(lines.all.count == 1)
    #expect(lines.all.first?.contains("already been registered") == true)
  }
}
