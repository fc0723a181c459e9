import ForageSupport
import Foundation
import Testing

@testable import ForageScheduler

/// A host system in memory: records registrations and submissions, launches
/// on demand, refuses what it is told to.
final class RecordingHost: TaskSchedulerHost, Sendable {
  struct State {
    var handlers: [String: @Sendable (any HostTask) -> Void] = [:]
    var submitted: [AnyTaskRequest] = []
    var permitted: Set<String>
    var refusal: SchedulerError?
  }
  let state: Locked<State>

  init(permitted: Set<String>) { state = Locked(State(permitted: permitted)) }

  func register(identifier: String, launchHandler: @escaping @Sendable (any HostTask) -> Void) -> Bool {
    state.withLock { s in
      guard s.permitted.contains(identifier) else { return false }
      s.handlers[identifier] = launchHandler
      return true
    }
  }
  func submit(_ request: AnyTaskRequest) throws(SchedulerError) {
    if let refusal = state.withLock({ $0.refusal }) { throw refusal }
    state.withLock { $0.submitted.append(request) }
  }
  func cancel(identifier: String) { state.withLock { $0.submitted.removeAll { $0.identifier == identifier } } }
  func cancelAll() { state.withLock { $0.submitted.removeAll() } }
  func pendingRequests() async -> [AnyTaskRequest] { state.withLock { $0.submitted } }

  /// Launches `identifier` as the host would; nil when nothing is registered.
  func launch(_ identifier: String, kind: TaskKind = .appRefresh) -> RecordingHostTask? {
    guard let handler = state.withLock({ $0.handlers[identifier] }) else { return nil }
    let task = RecordingHostTask(identifier: identifier, kind: kind)
    handler(task)
    return task
  }
}

/// A host's task: keeps its expiration handler, records completions.
final class RecordingHostTask: HostTask, Sendable {
  let identifier: String
  let kind: TaskKind
  private let expiration = Locked<(@Sendable () -> Void)?>(nil)
  private let completions = Locked<[Bool]>([])

  init(identifier: String, kind: TaskKind) {
    self.identifier = identifier
    self.kind = kind
  }
  func setExpirationHandler(_ handler: (@Sendable () -> Void)?) { expiration.withLock { $0 = handler } }
  func setTaskCompleted(success: Bool) { completions.withLock { $0.append(success) } }

  var hasExpirationHandler: Bool { expiration.withLock { $0 != nil } }
  var completed: [Bool] { completions.withLock { $0 } }
  func expire() { expiration.withLock { $0 }?() }

  /// Waits (up to 10 s) until the host heard a completion.
  func waitForCompletion() async -> [Bool] {
    for _ in 0..<1000 where completed.isEmpty { try? await Task.sleep(for: .milliseconds(10)) }
    return completed
  }
}

@Suite struct HostedSchedulerTests {
  @Test func test_hostLaunch_runsTheHandler_andTellsTheHostItsOutcome() async throws {
    let host = RecordingHost(permitted: ["refresh"])
    var policy = SchedulingPolicy()
    policy.budgetOverrides["refresh"] = .seconds(12)
    let scheduler = HostedScheduler(host: host, conditions: FixedConditions(.onBatteryCellular), policy: policy)
    let seen = Locked<(kind: TaskKind, budget: Duration, network: NetworkStatus)?>(nil)
    #expect(scheduler.register("refresh") { task in
      seen.withLock { $0 = (task.kind, task.remainingBudget, task.conditions.network) }
    })
    scheduler.finishLaunching()

    let task = try #require(host.launch("refresh"))
    #expect(task.hasExpirationHandler, "the host's expiration handler is set for every launch")
    #expect(await task.waitForCompletion() == [true])
    let launch = try #require(seen.withLock { $0 })
    #expect(launch.kind == .appRefresh)
    #expect(launch.budget <= .seconds(12) && launch.budget > .seconds(10))
    #expect(launch.network == .cellular)
    #expect(scheduler.running.isEmpty)
  }

  @Test func test_hostExpiration_cancelsTheHandler_andCompletesUnsuccessfully() async throws {
    let host = RecordingHost(permitted: ["crawl"])
    let scheduler = HostedScheduler(host: host, conditions: FixedConditions(.chargingOnWiFi))
    let started = Locked(false)
    scheduler.register("crawl") { task in
      started.withLock { $0 = true }
      while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
    }
    scheduler.finishLaunching()
    let task = try #require(host.launch("crawl", kind: .processing))
    for _ in 0..<500 where !started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
    #expect(scheduler.running.first?.kind == .processing)
    task.expire()
    #expect(await task.waitForCompletion() == [false])
    #expect(scheduler.running.isEmpty)
  }

  @Test func test_callbackHandler_seesTheExpirationReason() async throws {
    let host = RecordingHost(permitted: ["refresh"])
    let scheduler = HostedScheduler(host: host, conditions: FixedConditions(.chargingOnWiFi))
    let reason = Locked<ExpirationReason?>(nil)
    let handlerSet = Locked(false)
    scheduler.register(forTaskWithIdentifier: "refresh", using: nil) { task in
      task.expirationHandler = {
        reason.withLock { $0 = task.expirationReason }
        task.setTaskCompleted(success: false)
      }
      handlerSet.withLock { $0 = true }
    }
    let hostTask = try #require(host.launch("refresh"))
    // Expired once the launch handler has set its expiration handler.
    for _ in 0..<3000 where !handlerSet.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
    #expect(handlerSet.withLock { $0 })
    hostTask.expire()
    #expect(await hostTask.waitForCompletion() == [false])
    #expect(reason.withLock { $0 } == .system)
  }

  @Test func test_registrationAfterLaunching_isRefusedBeforeTheHost() async throws {
    let host = RecordingHost(permitted: ["a", "b"])
    let lines = Locked<[String]>([])
    let scheduler = HostedScheduler(
      host: host, conditions: FixedConditions(.chargingOnWiFi), log: SchedulerLog { line in lines.withLock { $0.append(line) } })
    #expect(scheduler.register("a") { _ in })
    #expect(!scheduler.register("a") { _ in }, "a second handler for one identifier")
    scheduler.finishLaunching()
    #expect(!scheduler.register("b") { _ in })
    #expect(host.state.withLock { Array($0.handlers.keys) } == ["a"], "only the first registration reached the host")
    #expect(lines.withLock { $0 }.contains { $0.contains("before application finishes launching") })
  }

  @Test func test_hostRefusingARegistration_leavesNoHandler() async throws {
    let host = RecordingHost(permitted: [])
    let scheduler = HostedScheduler(host: host, conditions: FixedConditions(.chargingOnWiFi))
    #expect(!scheduler.register("missing") { _ in })
    #expect(throws: SchedulerError.launchHandlerNotRegistered) {
      try scheduler.submit(AppRefreshTaskRequest(identifier: "missing"))
    }
  }

  @Test func test_submit_passesTheHostsRefusalOn() async throws {
    let host = RecordingHost(permitted: ["a"])
    let scheduler = HostedScheduler(host: host, conditions: FixedConditions(.chargingOnWiFi))
    scheduler.register("a") { _ in }
    try scheduler.submit(AppRefreshTaskRequest(identifier: "a", earliestBeginDate: Date(timeIntervalSince1970: 100)))
    #expect(await scheduler.pendingTaskRequests().map(\.earliestBeginDate) == [Date(timeIntervalSince1970: 100)])
    host.state.withLock { $0.refusal = SchedulerError.unavailable.with(identifier: "a", detail: "off") }
    #expect(throws: SchedulerError.unavailable) { try scheduler.submit(AppRefreshTaskRequest(identifier: "a")) }
    // A continued-processing request goes to the host too: the host knows
    // whether its system has them (iOS 26's BGContinuedProcessingTaskRequest).
    host.state.withLock { $0.refusal = nil }
    try scheduler.submit(ContinuedProcessingTaskRequest(identifier: "a", title: "t", subtitle: ""))
    #expect(host.state.withLock { $0.submitted.last?.kind } == .continuedProcessing)
  }

  @Test func test_runRegisteredHandler_cancellationIsTheExpiration() async throws {
    let host = RecordingHost(permitted: [])
    let scheduler = HostedScheduler(host: host, conditions: FixedConditions(.chargingOnWiFi), registersWithHost: false)
    let reason = Locked<ExpirationReason?>(nil)
    let started = Locked(false)
    #expect(scheduler.register("refresh") { task in
      started.withLock { $0 = true }
      while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
      reason.withLock { $0 = task.expirationReason }
    })
    let run = Task { await scheduler.runRegisteredHandler("refresh", kind: .appRefresh) }
    // Cancelled while the handler runs.
    for _ in 0..<3000 where !started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
    #expect(started.withLock { $0 })
    run.cancel()
    #expect(await run.value == .completed(success: false))
    #expect(reason.withLock { $0 } == .system)
    #expect(await scheduler.runRegisteredHandler("unknown", kind: .appRefresh) == .completed(success: false))

    let done = HostedScheduler(host: host, conditions: FixedConditions(.chargingOnWiFi), registersWithHost: false)
    done.register("quick") { _ in }
    #expect(await done.runRegisteredHandler("quick", kind: .appRefresh) == .completed(success: true))
  }
}
