import Foundation
import Testing

@testable import ForageScheduler

/// Issue 31: a daemon's SIGHUP replaces the scheduler's tasks while it runs,
/// and its watchdog hears from the scheduler's loop.
@Suite struct SystemSchedulerReplaceTests {
  func system(persistence: (any PendingRequestPersistence)? = nil, pollInterval: Duration = .seconds(60)) -> SystemScheduler {
    SystemScheduler(
      policy: .server, conditions: FixedConditions(.chargingOnWiFi), persistence: persistence, log: .silent,
      pollInterval: pollInterval)
  }

  @Test func test_issue31_replaceTasks_keepsPendingRequestsOfRemainingTasks_cancelsTheOthers_andAddsNewOnesAfterLaunch() async throws {
    let store = InMemoryPendingRequestStore()
    let s = system(persistence: store)
    let ran = Collector<String>()
    s.register("kept") { task in ran.append("old " + task.identifier) }
    s.register("gone") { task in ran.append("old " + task.identifier) }
    s.finishLaunching()
    let later = Date(timeIntervalSinceNow: 3600)
    try s.submit(ProcessingTaskRequest(identifier: "kept", earliestBeginDate: later))
    try s.submit(ProcessingTaskRequest(identifier: "gone", earliestBeginDate: later))

    var policy = SchedulingPolicy.server
    policy.budgetOverrides["added"] = .seconds(7)
    let cancelled = s.replaceTasks(
      handlers: [
        "kept": .async { task in ran.append("new " + task.identifier) },
        "added": .async { task in ran.append("new " + task.identifier) },
      ], policy: policy)
    #expect(cancelled == ["gone"])
    let pending = await s.pendingTaskRequests()
    #expect(pending.map(\.identifier) == ["kept"])
    #expect(pending.first?.earliestBeginDate == later)
    // The persistence holds the new set (a restarted daemon keeps it).
    #expect(try store.loadPendingRequests().map(\.identifier) == ["kept"])
    // A task added by the reload can be submitted after launching finished;
    // a removed one no longer can.
    try s.submit(AppRefreshTaskRequest(identifier: "added"))
    #expect(throws: SchedulerError.self) { try s.submit(ProcessingTaskRequest(identifier: "gone")) }
    #expect(await s.launchDueTasks() == 1)
    #expect(ran.all == ["new added"])
    let launched = try #require(s.trace.events(for: "added").first { $0.kind == .completed })
    #expect(launched.success == true)
    #expect(s.trace.events(for: "gone").contains { $0.kind == .cancelled })
  }

  @Test func test_issue31_runWithHeartbeat_callsItFromTheLoop_atLeastEveryInterval() async throws {
    // A poll of an hour: only the heartbeat interval wakes the loop.
    let s = system(pollInterval: .seconds(3600))
    s.finishLaunching()
    let beats = Collector<Int>()
    let loop = Task { await s.run(heartbeatEvery: .milliseconds(50)) { beats.append(1) } }
    // Bounded: five rounds of an idle loop can only come from the interval.
    for _ in 0..<2000 where beats.all.count < 5 { try await Task.sleep(for: .milliseconds(10)) }
    loop.cancel()
    await loop.value
    #expect(beats.all.count >= 5)
  }
}
