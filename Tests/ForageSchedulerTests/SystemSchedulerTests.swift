import Foundation
import Testing

@testable import ForageScheduler

@Suite struct SystemSchedulerTests {
  func system(
    _ conditions: DeviceConditions = .chargingOnWiFi, persistence: (any PendingRequestPersistence)? = nil,
    budget: Duration? = nil, grace: Duration = .seconds(5)
  ) -> SystemScheduler {
    var policy = SchedulingPolicy.server
    if let budget { policy.appRefreshBudget = budget; policy.processingBudget = budget }
    policy.expirationGrace = grace
    return SystemScheduler(policy: policy, conditions: FixedConditions(conditions), persistence: persistence, log: .silent)
  }

  @Test func test_restartedDaemon_keepsItsSchedule() async throws {
    let store = InMemoryPendingRequestStore()
    let due = Date(timeIntervalSinceNow: 3600)
    do {
      let first = system(persistence: store)
      first.register("r") { _ in }
      first.register("p") { _ in }
      first.finishLaunching()
      try first.submit(AppRefreshTaskRequest(identifier: "r", earliestBeginDate: due))
      try first.submit(ProcessingTaskRequest(identifier: "p", requiresExternalPower: true))
      first.cancel(taskRequestWithIdentifier: "p")
      try first.submit(ProcessingTaskRequest(identifier: "p", requiresNetworkConnectivity: true))
    }
    let second = system(persistence: store)
    let pending = await second.pendingTaskRequests().map(AnyTaskRequest.init)
    #expect(pending == [
      .processing(ProcessingTaskRequest(identifier: "p", requiresNetworkConnectivity: true)),
      .appRefresh(AppRefreshTaskRequest(identifier: "r", earliestBeginDate: due)),
    ])
    #expect(second.nextDueDate() == .distantPast)
  }

  @Test func test_launchDueTasks_runsDueRequestsOnly() async throws {
    let ran = Collector<String>()
    let s = system()
    s.register("now") { task in ran.append(task.identifier) }
    s.register("later") { task in ran.append(task.identifier) }
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: "now"))
    try s.submit(ProcessingTaskRequest(identifier: "later", earliestBeginDate: Date(timeIntervalSinceNow: 3600)))
    #expect(await s.launchDueTasks() == 1)
    #expect(ran.all == ["now"])
    #expect(await s.pendingTaskRequests().map(\.identifier) == ["later"])
    let completed = try #require(s.trace.events(for: "now").first { $0.kind == .completed })
    #expect(completed.success == true)
  }

  @Test func test_requirements_holdBackLaunches() async throws {
    let s = system(DeviceConditions(isCharging: false, batteryLevel: 0.5, network: .none))
    s.register("power") { _ in }
    s.register("net") { _ in }
    s.register("plain") { _ in }
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: "power", requiresExternalPower: true))
    try s.submit(ProcessingTaskRequest(identifier: "net", requiresNetworkConnectivity: true))
    try s.submit(ProcessingTaskRequest(identifier: "plain"))
    #expect(await s.launchDueTasks() == 1)
    #expect(await s.pendingTaskRequests().map(\.identifier) == ["net", "power"])
  }

  @Test func test_budgetEnforced_ignoringHandlerIsKilledAndPenalised() async throws {
    let events = Collector<TraceEvent.Kind>()
    var policy = SchedulingPolicy.server
    policy.appRefreshBudget = .milliseconds(10)
    policy.expirationGrace = .milliseconds(10)
    let s = SystemScheduler(policy: policy, conditions: FixedConditions(.chargingOnWiFi), log: .silent, onEvent: { events.append($0.kind) })
    let release = Flag()
    s.register("stubborn") { _ in
      while !release.isSet { await stubbornSleep() }
    }
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: "stubborn"))
    #expect(await s.launchDueTasks() == 1)
    release.set()
    #expect(events.all == [.submitted, .launched, .expired, .killed])
    try s.submit(AppRefreshTaskRequest(identifier: "stubborn"))
    #expect(await s.launchDueTasks() == 0, "the kill penalty should hold the next launch back")
  }

  @Test func test_budgetEnforced_cooperativeHandlerCompletesWithFailure() async throws {
    let s = system(budget: .milliseconds(10))
    s.register("polite") { task in
      while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
    }
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: "polite"))
    await s.launchDueTasks()
    let kinds = s.trace.events(for: "polite").map(\.kind)
    #expect(kinds == [.submitted, .launched, .expired, .completed])
    #expect(s.trace.events(for: "polite").last?.success == false)
  }

  @Test func test_run_untilCancelled_expiresRunningTasks() async throws {
    let s = system(budget: .seconds(600))
    let started = Flag()
    s.register("long") { task in
      started.set()
      while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
    }
    s.finishLaunching()
    try s.submit(ProcessingTaskRequest(identifier: "long"))
    let daemon = Task { await s.run() }
    while !started.isSet { try await Task.sleep(for: .milliseconds(2)) }
    daemon.cancel()
    await daemon.value
    let events = s.trace.events(for: "long")
    #expect(events.map(\.kind) == [.submitted, .launched, .expired, .completed])
    #expect(events.first { $0.kind == .expired }?.reason == "shutdown")
    #expect(s.runningIdentifiers.isEmpty)
  }

  @Test func test_run_picksUpSubmissionsWithoutWaitingForThePoll() async throws {
    let s = SystemScheduler(conditions: FixedConditions(.chargingOnWiFi), log: .silent, pollInterval: .seconds(3600))
    let ran = Flag()
    s.register("r") { _ in ran.set() }
    s.finishLaunching()
    let daemon = Task { await s.run() }
    // The loop is asleep (for an hour) before the submission: only the
    // submission's wake-up can launch the task.
    for _ in 0..<3000 where !s.isWaitingForNextRound { try await Task.sleep(for: .milliseconds(10)) }
    #expect(s.isWaitingForNextRound)
    try s.submit(AppRefreshTaskRequest(identifier: "r"))
    for _ in 0..<3000 where !ran.isSet { try await Task.sleep(for: .milliseconds(10)) }
    #expect(ran.isSet, "the submission did not wake the run loop")
    daemon.cancel()
    await daemon.value
    #expect(s.trace.count(.completed, identifier: "r") == 1)
  }

  @Test func test_sharedRules_applyToTheSystemScheduler() throws {
    let s = SystemScheduler(conditions: FixedConditions(DeviceConditions(backgroundRefreshStatus: .restricted)), permittedIdentifiers: ["a", "b"], log: .silent)
    #expect(s.register("a") { _ in })
    #expect(s.register("a") { _ in } == false)
    #expect(s.register("x") { _ in } == false)
    s.finishLaunching()
    #expect(s.register("b") { _ in } == false)
    #expect(throws: SchedulerError.unavailable) { try s.submit(AppRefreshTaskRequest(identifier: "a")) }
    #expect(throws: SchedulerError.launchHandlerNotRegistered) { try s.submit(AppRefreshTaskRequest(identifier: "b")) }
    #expect(throws: SchedulerError.notPermitted) { try s.submit(AppRefreshTaskRequest(identifier: "x")) }
  }

  @Test func test_unreadablePersistence_startsEmpty_andSaysSo() throws {
    struct Unreadable: PendingRequestPersistence {
      struct Corrupt: Error {}
      func loadPendingRequests() throws -> [AnyTaskRequest] { throw Corrupt() }
      func savePendingRequests(_ requests: [AnyTaskRequest]) throws {}
    }
    let lines = Collector<String>()
    let s = SystemScheduler(persistence: Unreadable(), log: SchedulerLog { lines.append($0) })
    #expect(s.nextDueDate() == nil)
    #expect(lines.all.contains { $0.contains("cannot load pending task requests") })
  }
}

@Suite struct SystemSchedulerPersistenceOrderTests {
  /// Submits and cancels from many threads at once: the set saved last is the
  /// scheduler's pending set (each save reads the newest set under one lock;
  /// before, a thread could save its older snapshot after a newer one).
  /// Keeps what it is given, after a short pause that varies by thread, so
  /// saves made at about the same time overlap.
  final class SlowStore: PendingRequestPersistence {
    let inner = InMemoryPendingRequestStore()
    func loadPendingRequests() throws -> [AnyTaskRequest] { try inner.loadPendingRequests() }
    func savePendingRequests(_ requests: [AnyTaskRequest]) throws {
      usleep(UInt32.random(in: 0...300))
      try inner.savePendingRequests(requests)
    }
  }

  @Test func test_concurrentChanges_leaveTheNewestSetSaved() async throws {
    let store = SlowStore()
    let s = SystemScheduler(
      policy: .server, conditions: FixedConditions(.chargingOnWiFi), persistence: store, log: .silent)
    let ids = (0..<16).map { "task.\($0)" }
    for id in ids { s.register(id) { _ in } }
    let later = Date(timeIntervalSinceNow: 3600)
    for round in 0..<20 {
      DispatchQueue.concurrentPerform(iterations: ids.count) { i in
        if (i + round) % 3 == 0 {
          s.cancel(taskRequestWithIdentifier: ids[i])
        } else {
          try? s.submit(AppRefreshTaskRequest(identifier: ids[i], earliestBeginDate: later))
        }
      }
      let pending = Set(await s.pendingTaskRequests().map(\.identifier))
      let saved = Set(try store.loadPendingRequests().map(\.identifier))
      #expect(saved == pending, "round \(round)")
    }
  }
}
