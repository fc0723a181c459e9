#if os(Linux)
import AppleFrameworksStandIn
import Foundation
import Testing
import ForageSupport

/// The stand-in itself: Apple's documented runtime rules, each a violation
/// a test sees (issue 26), and the details Apple's headers give.
extension StandInTests {
  @Suite(.serialized) struct StandInRulesTests {
    @Test func test_registeringAnIdentifierTwice_isAViolation() {
      freshSystem(permitted: ["a"])
      #expect(BGTaskScheduler.shared.register(forTaskWithIdentifier: "a", using: nil) { _ in })
      #expect(!BGTaskScheduler.shared.register(forTaskWithIdentifier: "a", using: nil) { _ in })
      #expect(takeViolations() == [.registeredTwice])
    }

    @Test func test_launchingARequestWithNoHandler_isAViolation() throws {
      freshSystem(permitted: ["a"])
      try BGTaskScheduler.shared.submit(BGProcessingTaskRequest(identifier: "a"))
      #expect(!BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier("a"))
      #expect(takeViolations() == [.launchWithoutHandler])
    }

    @Test func test_completingTwice_isAViolation_andCompletionClearsTheExpirationHandler() async throws {
      freshSystem(permitted: ["a"])
      let seen = Locked<(handlerAfterCompletion: Bool, done: Bool)>((true, false))
      #expect(BGTaskScheduler.shared.register(forTaskWithIdentifier: "a", using: nil) { task in
        task.expirationHandler = {}
        task.setTaskCompleted(success: true)
        let cleared = task.expirationHandler == nil
        task.setTaskCompleted(success: true)
        seen.withLock { $0 = (!cleared, true) }
      })
      try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: "a"))
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier("a"))
      #expect(await eventually { seen.withLock { $0.done } })
      #expect(seen.withLock { $0.handlerAfterCompletion } == false, "Apple clears expirationHandler at setTaskCompleted")
      #expect(BGTaskScheduler.shared._completions.map(\.success) == [true], "only the first completion counts")
      #expect(takeViolations() == [.completedTwice])
    }

    @Test func test_handlersRegisteredWithANilQueue_runOneAtATime() async throws {
      freshSystem(permitted: ["a", "b"])
      let secondStarted = DispatchSemaphore(value: 0)
      let overlapped = Locked<Bool?>(nil)
      #expect(BGTaskScheduler.shared.register(forTaskWithIdentifier: "a", using: nil) { task in
        // A serial queue cannot start b's handler while this one runs: the
        // wait always times out there (a bound, not a measurement).
        let started = secondStarted.wait(timeout: .now() + 0.5) == .success
        overlapped.withLock { $0 = started }
        task.setTaskCompleted(success: true)
      })
      #expect(BGTaskScheduler.shared.register(forTaskWithIdentifier: "b", using: nil) { task in
        secondStarted.signal()
        task.setTaskCompleted(success: true)
      })
      try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: "a"))
      try BGTaskScheduler.shared.submit(BGProcessingTaskRequest(identifier: "b"))
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier("a"))
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier("b"))
      #expect(await eventually { BGTaskScheduler.shared._completions.count == 2 })
      #expect(overlapped.withLock { $0 } == false)
    }

    @Test func test_anEleventhPendingProcessingRequest_isRefused_andAViolation() throws {
      let ids = (0...10).map { "p\($0)" }
      freshSystem(permitted: ids)
      for id in ids.prefix(10) { try BGTaskScheduler.shared.submit(BGProcessingTaskRequest(identifier: id)) }
      #expect(throws: BGTaskScheduler.Error(.tooManyPendingTaskRequests)) {
        try BGTaskScheduler.shared.submit(BGProcessingTaskRequest(identifier: ids[10]))
      }
      #expect(takeViolations() == [.tooManyProcessingRequests])
      // Resubmitting a pending identifier replaces it, whatever the count.
      try BGTaskScheduler.shared.submit(BGProcessingTaskRequest(identifier: "p0"))
    }

    @Test func test_continuedProcessingIdentifiers_comeUnderAWildcard_andMayRegisterLate() throws {
      freshSystem(permitted: ["com.example.refresh", "com.example.export.*"])
      BGTaskScheduler.shared._finishLaunching()
      // Exempt from the before-launch rule, under `prefix.*` only.
      #expect(BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.export.1", using: nil) { _ in })
      #expect(!BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.refresh", using: nil) { _ in })
      #expect(takeViolations() == [.registeredAfterLaunch])
      let request = BGContinuedProcessingTaskRequest(identifier: "com.example.export.1", title: "Export", subtitle: "0 of 3")
      #expect(request.strategy == .queue && request.requiredResources == [])
      try BGTaskScheduler.shared.submit(request)
      // The GPU is not among the device's resources: refused.
      let gpu = BGContinuedProcessingTaskRequest(identifier: "com.example.export.2", title: "Export", subtitle: "")
      gpu.requiredResources = .gpu
      #expect(BGTaskScheduler.supportedResources == [])
      #expect(throws: BGTaskScheduler.Error(.notPermitted)) { try BGTaskScheduler.shared.submit(gpu) }
      #expect(takeViolations() == [.notPermitted])
      // `.fail` when the system cannot run it now.
      BGTaskScheduler.shared._setImmediateRunEligible(false)
      let now = BGContinuedProcessingTaskRequest(identifier: "com.example.export.3", title: "Export", subtitle: "")
      now.strategy = .fail
      #expect(throws: BGTaskScheduler.Error(.immediateRunIneligible)) { try BGTaskScheduler.shared.submit(now) }
    }

    @Test func test_activityScheduler_rules() async throws {
      let activity = NSBackgroundActivityScheduler(identifier: "com.example.activity")
      #expect(activity.qualityOfService == .background && !activity.repeats)
      activity.interval = 600
      #expect(activity.tolerance == 300, "half the interval by default")
      activity.schedule { completion in
        completion(.finished)
        completion(.finished)
      }
      activity.interval = 60  // after schedule(_:)
      #expect(activity._fire())
      #expect(await eventually { activity._results == [.finished] })
      activity.invalidate()
      #expect(!activity._fire())
      #expect(takeViolations() == [.activityMisuse, .activityMisuse])
    }
  }
}
#endif
