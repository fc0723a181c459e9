import Foundation
import Testing

@testable import ForageScheduler

/// Live handlers: real async code under a real-time budget while the virtual
/// clock waits. No assertions on elapsed time.
@Suite struct LiveModeTests {
  func scheduler(budget: Duration = .seconds(30), grace: Duration = .seconds(5)) -> SimulatedScheduler {
    var policy = SchedulingPolicy()
    policy.refreshPlacement = .asSoonAsEligible
    policy.appRefreshBudget = budget
    policy.expirationGrace = grace
    return scripted(policy: policy)
  }

  @Test func test_asyncHandler_returning_completesWithSuccess() async throws {
    let s = scheduler()
    let seen = Collector<Duration>()
    s.register("live") { task in
      seen.append(task.remainingBudget)
      try await Task.sleep(for: .milliseconds(1))
      task.reportRefreshed(sources: ["prices"])
    }
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: "live"))
    await s.advance(by: .seconds(1))
    let done = try #require(s.trace.events(for: "live").first { $0.kind == .completed })
    #expect(done.success == true)
    #expect(done.refreshedSources == ["prices"])
    #expect(seen.all.first.map { $0 > .zero && $0 <= .seconds(30) } == true)
    #expect(s.now == start.addingTimeInterval(1))
  }

  @Test func test_asyncHandler_throwing_completesWithFailure() async throws {
    struct Boom: Error {}
    let s = scheduler()
    s.register("live") { _ in throw Boom() }
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: "live"))
    await s.advance(by: .seconds(1))
    #expect(s.trace.events(for: "live").first { $0.kind == .completed }?.success == false)
  }

  @Test func test_asyncHandler_cancelledAtExpiration() async throws {
    let s = scheduler(budget: .milliseconds(20))
    let expirationCalled = Flag()
    s.register("live") { task in
      task.expirationHandler = { expirationCalled.set() }
      while !Task.isCancelled { await Task.yield() ; try? await Task.sleep(for: .milliseconds(2)) }
      #expect(task.isCancelled)
      #expect(task.remainingBudget == .zero)
    }
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: "live"))
    await s.advance(by: .seconds(1))
    let events = s.trace.events(for: "live")
    #expect(events.map(\.kind) == [.submitted, .launched, .expired, .completed])
    #expect(events.last?.success == false)
    #expect(expirationCalled.isSet)
  }

  @Test func test_asyncHandler_ignoringExpiration_isKilledAndPenalised() async throws {
    let s = scheduler(budget: .milliseconds(10), grace: .milliseconds(10))
    let release = Flag()
    s.register("stubborn") { [s] task in
      try? s.submit(AppRefreshTaskRequest(identifier: task.identifier))
      while !release.isSet { await stubbornSleep() }  // swallows cancellation
    }
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: "stubborn"))
    await s.advance(by: .seconds(1))
    release.set()
    let kinds = s.trace.events(for: "stubborn").map(\.kind)
    #expect(kinds.contains(.killed))
    #expect(s.trace.count(.launched) == 1)
    #expect(await s.launch("stubborn") == .deferred(.penalty))
  }

  @Test func test_callbackHandler_onQueue_completes() async throws {
    let s = scheduler()
    let queue = DispatchQueue(label: "test.handlers")
    s.register(forTaskWithIdentifier: "cb", using: queue) { task in
      dispatchPrecondition(condition: .onQueue(queue))
      task.expirationHandler = {}
      task.setTaskCompleted(success: true)
      task.setTaskCompleted(success: false)  // only the first call counts
    }
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: "cb"))
    await s.advance(by: .seconds(1))
    #expect(s.trace.events(for: "cb").first { $0.kind == .completed }?.success == true)
  }

  @Test func test_expireControl_expiresLiveHandlerFromAnotherTask() async throws {
    let s = scheduler(budget: .seconds(600))
    let started = Flag()
    s.register("long") { task in
      started.set()
      while !task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
    }
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: "long"))
    let expirer = Task {
      while !started.isSet { try? await Task.sleep(for: .milliseconds(2)) }
      return s.expire("long")
    }
    await s.advance(by: .seconds(1))
    #expect(await expirer.value)
    let expired = try #require(s.trace.events(for: "long").first { $0.kind == .expired })
    #expect(expired.reason == "forced")
  }

  /// Issue 14: the user picks up the device while a live processing
  /// launch runs. A test's `device.pickUp()` expires it at once, reason
  /// `deviceInUse`, as in model mode (it used to run on to its budget).
  @Test func test_issue14_pickUp_expiresLiveProcessing() async throws {
    var policy = SchedulingPolicy()
    policy.processingBudget = .seconds(2)
    let s = scripted(policy: policy)
    s.register("crawl") { task in
      while !task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
    }
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: "crawl"))
    let launch = s.forceLaunch("crawl")
    s.device.pickUp()
    #expect(await launch.outcome() == .completed(success: false))
    #expect(launch.task?.expirationReason == .deviceInUse)
    let expired = s.trace.events(for: "crawl").filter { $0.kind == .expired }
    #expect(expired.map(\.expirationReason) == [.deviceInUse])
  }

  /// Issue 14: a timeline's screen-on (or app open) during a live processing
  /// launch ends the launch's real-time budget at that offset, reason
  /// `deviceInUse`: the virtual clock waits while the handler runs, so the
  /// timeline cannot reach the event itself. Refresh launches are not cut.
  @Test func test_issue14_timelinePickUp_cutsLiveProcessingAtItsOffset() async throws {
    var policy = SchedulingPolicy()
    policy.processingBudget = .seconds(2)
    policy.refreshPlacement = .asSoonAsEligible
    let events = [DeviceEvent(at: .milliseconds(50), .screen(on: true))]
    let s = scripted(.chargingOnWiFi, events, policy: policy)
    s.register("crawl") { task in
      while !task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
    }
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: "crawl"))
    let crawl = s.forceLaunch("crawl")
    #expect(await crawl.outcome() == .completed(success: false))
    // Cut at the pick-up (50 ms in), not at the 2 s budget: the reason says
    // which (no timing threshold, the machine may be busy).
    #expect(crawl.task?.expirationReason == .deviceInUse)
    #expect(s.trace.events(for: "crawl").first { $0.kind == .expired }?.expirationReason == .deviceInUse)

    var refreshPolicy = policy
    refreshPolicy.appRefreshBudget = .milliseconds(300)
    let r = scripted(.chargingOnWiFi, events, policy: refreshPolicy)
    r.register("refresh") { task in
      while !task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
    }
    r.finishLaunching()
    try r.submit(AppRefreshTaskRequest(identifier: "refresh"))
    let refresh = r.forceLaunch("refresh")
    #expect(await refresh.outcome() == .completed(success: false))
    #expect(refresh.task?.expirationReason == .budget)
  }

  @Test func test_continuedProcessing_reportsProgress() async throws {
    let s = scheduler()
    let progress = Collector<Double>()
    s.register("com.example.export.job") { task in
      for i in 1...4 {
        task.updateProgress(completedUnitCount: Int64(i), totalUnitCount: 4)
        progress.append(task.progress.fractionCompleted)
      }
    }
    s.finishLaunching()
    s.device.openApp()  // submitted from the user's action in the app
    try s.submit(ContinuedProcessingTaskRequest(identifier: "com.example.export.job", title: "Export", subtitle: "4 files"))
    await s.advance(by: .seconds(1))
    #expect(progress.all == [0.25, 0.5, 0.75, 1])
    #expect(s.trace.events(for: "com.example.export.job").first { $0.kind == .completed }?.success == true)
  }

  @Test func test_continuedProcessing_withoutProgress_expires() async throws {
    var policy = SchedulingPolicy()
    policy.continuedProcessingProgressTimeout = .milliseconds(20)
    let s = scripted(policy: policy)
    s.register("com.example.export.silent") { task in
      while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
    }
    s.finishLaunching()
    s.device.openApp()
    try s.submit(ContinuedProcessingTaskRequest(identifier: "com.example.export.silent", title: "Export", subtitle: ""))
    await s.advance(by: .seconds(1))
    let expired = try #require(s.trace.events(for: "com.example.export.silent").first { $0.kind == .expired })
    #expect(expired.reason == "noProgress")
  }
}
