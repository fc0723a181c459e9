import ForageSupport
import Foundation

/// One launch of a task by a host system (Apple's `BGTask`), seen through the
/// three things a ``HostedScheduler`` needs from it.
///
/// `ForageBackgroundTasks` wraps Apple's `BGTask` in one; tests write their own.
public protocol HostTask: Sendable {
  /// The identifier the task was registered under.
  var identifier: String { get }
  /// The kind of task the host launched (a refresh or a processing task).
  var kind: TaskKind { get }
  /// Sets the host's expiration handler: the host calls it shortly before
  /// the task's time is up.
  func setExpirationHandler(_ handler: (@Sendable () -> Void)?)
  /// Tells the host the task is done.
  func setTaskCompleted(success: Bool)
}

/// A system that keeps pending requests and launches tasks itself (Apple's
/// `BGTaskScheduler`), seen through what a ``HostedScheduler`` asks of it.
/// Every call maps one to one onto the host's own API; errors come back as
/// ``SchedulerError``.
public protocol TaskSchedulerHost: Sendable {
  /// Registers `launchHandler` with the host for `identifier`; the host's
  /// answer (Apple: `false` when the identifier is not permitted).
  func register(identifier: String, launchHandler: @escaping @Sendable (any HostTask) -> Void) -> Bool
  /// Submits `request` to the host.
  ///
  /// - Throws: the host's refusal as a ``SchedulerError``.
  func submit(_ request: AnyTaskRequest) throws(SchedulerError)
  /// Cancels the host's pending request for `identifier`.
  func cancel(identifier: String)
  /// Cancels every pending request the host keeps for the app.
  func cancelAll()
  /// The host's pending requests.
  func pendingRequests() async -> [AnyTaskRequest]
}

/// A ``TaskScheduler`` whose launches come from a host system (iOS's
/// `BGTaskScheduler`, through `ForageBackgroundTasks`): the host keeps the
/// pending requests and decides when to launch; this type turns each host
/// launch into a Forage ``BackgroundTask`` and runs the registered handler.
///
///     let scheduler = HostedScheduler(host: host, conditions: conditions)
///     runner.register(on: scheduler)        // before the app finishes launching
///     scheduler.finishLaunching()
///
/// For each launch: the host's expiration handler expires the Forage task
/// (reason ``ExpirationReason/system``: the host gives none), which calls the
/// handler's expiration handler and cancels its Swift task; when the handler
/// completes, the host hears `setTaskCompleted(success:)` with the same
/// answer. The budget a launch reports (``BackgroundTask/remainingBudget``)
/// is the policy's for its kind and identifier; the host may end it sooner,
/// through expiration.
///
/// Forage's own registration rules run first (one handler per identifier,
/// none after ``finishLaunching()``): a late or repeated registration is
/// refused here with a logged sentence in lenient mode, so it never reaches
/// a host that would terminate the app for it.
public final class HostedScheduler: TaskScheduler, Sendable {
  private struct State: Sendable {
    var registry = TaskRegistry()
    var launchCounter = 0
    var running: [Int: BackgroundTask] = [:]
  }

  private let host: any TaskSchedulerHost
  private let conditions: any ConditionsProvider
  private let policy: SchedulingPolicy
  private let log: SchedulerLog
  private let state = Locked(State())
  /// How rule violations are handled (lenient by default: the host's own
  /// reaction to one is to end the process).
  public let enforcement: RuleEnforcement
  private let onFinish: (@Sendable (BackgroundTask, TaskOutcome) -> Void)?
  /// Whether registrations go on to the host (false when the host's
  /// launches arrive another way, such as SwiftUI's `.backgroundTask`,
  /// through ``runRegisteredHandler(_:kind:)``).
  public let registersWithHost: Bool

  /// Creates a scheduler over `host`.
  ///
  /// - Parameters:
  ///   - conditions: the device's conditions at each launch (for the launch plan).
  ///   - policy: where each launch's budget comes from
  ///     (``SchedulingPolicy/budget(for:identifier:)``).
  ///   - log: where refused registrations are written.
  ///   - registersWithHost: false when launches arrive through
  ///     ``runRegisteredHandler(_:kind:)`` (SwiftUI registers with the
  ///     system itself; a second registration would end the app).
  ///   - onFinish: called once a launch's outcome is known, after the host
  ///     was told.
  public init(
    host: any TaskSchedulerHost, conditions: any ConditionsProvider, policy: SchedulingPolicy = SchedulingPolicy(),
    enforcement: RuleEnforcement = .lenient, log: SchedulerLog = .silent, registersWithHost: Bool = true,
    onFinish: (@Sendable (BackgroundTask, TaskOutcome) -> Void)? = nil
  ) {
    self.registersWithHost = registersWithHost
    self.host = host
    self.conditions = conditions
    self.policy = policy
    self.enforcement = enforcement
    self.log = log
    self.onFinish = onFinish
  }

  // MARK: TaskScheduler

  /// Registers `handler` for `identifier` (see ``TaskScheduler/register(_:_:)``).
  @discardableResult
  public func register(_ identifier: String, _ handler: LaunchHandler) -> Bool {
    if let violation = state.withLock({ $0.registry.register(identifier, handler) }) {
      return report(violation, enforcement: enforcement, log: log)
    }
    guard registersWithHost else { return true }
    let accepted = host.register(identifier: identifier) { [self] hostTask in launch(hostTask, handler) }
    if !accepted {
      state.withLock { _ = $0.registry.handlers.removeValue(forKey: identifier) }
      log.write(TaskRegistry.Violation.notPermitted(identifier).message)
    }
    return accepted
  }

  public func submit(_ request: any TaskRequest) throws(SchedulerError) {
    // Every kind goes to the host, which refuses what its system lacks
    // (continued processing before iOS 26, or on a Mac).
    let wrapped = AnyTaskRequest(request)
    if state.withLock({ $0.registry.handlers[wrapped.identifier] == nil }) {
      throw SchedulerError.launchHandlerNotRegistered.with(identifier: wrapped.identifier, detail: "")
    }
    try host.submit(wrapped)
  }

  public func cancel(taskRequestWithIdentifier identifier: String) { host.cancel(identifier: identifier) }

  public func cancelAllTaskRequests() { host.cancelAll() }

  public func pendingTaskRequests() async -> [any TaskRequest] {
    await host.pendingRequests().sorted { $0.identifier < $1.identifier }.map(\.request)
  }

  public func finishLaunching() {
    state.withLock { $0.registry.launchingFinished = true }
  }

  /// The launches running now, by launch number.
  public var running: [BackgroundTask] {
    state.withLock { s in s.running.keys.sorted().map { s.running[$0]! } }
  }

  // MARK: Launching

  /// Runs the handler registered for `identifier` in the calling Swift task,
  /// for a host that launches through a closure of its own (SwiftUI's
  /// `.backgroundTask(.appRefresh(id)) { … }`): cancelling the calling task
  /// is the expiration. Returns when the handler completed.
  ///
  /// - Returns: the outcome; `.completed(success: false)` at once when no
  ///   handler is registered for `identifier` (logged).
  @discardableResult
  public func runRegisteredHandler(_ identifier: String, kind: TaskKind) async -> TaskOutcome {
    guard let handler = state.withLock({ $0.registry.handlers[identifier] }) else {
      log.write("no launch handler is registered for \(identifier): register the config's tasks before the app finishes launching")
      return .completed(success: false)
    }
    let task = makeTask(identifier, kind)
    LiveLaunch.start(task, handler: handler)
    let outcome = await withTaskCancellationHandler {
      await task.waitForOutcome()
    } onCancel: {
      task.expire(reason: .system)
    }
    ended(task, outcome)
    return outcome
  }

  /// Runs one host launch: a Forage task bound to the host's expiration and
  /// completion.
  private func launch(_ hostTask: any HostTask, _ handler: LaunchHandler) {
    let task = makeTask(hostTask.identifier, hostTask.kind)
    // Before the handler starts: an expiration that comes at once still reaches it.
    hostTask.setExpirationHandler { task.expire(reason: .system) }
    LiveLaunch.start(task, handler: handler)
    Task { [self] in
      let outcome = await task.waitForOutcome()
      hostTask.setTaskCompleted(success: outcome == .completed(success: true))
      ended(task, outcome)
    }
  }

  /// A running Forage task for a launch of `identifier`, with the policy's budget.
  private func makeTask(_ identifier: String, _ kind: TaskKind) -> BackgroundTask {
    let budget = policy.budget(for: kind, identifier: identifier)
    let deadline = ContinuousClock.now + budget
    let request: AnyTaskRequest =
      switch kind {
      case .appRefresh: .appRefresh(AppRefreshTaskRequest(identifier: identifier))
      case .processing: .processing(ProcessingTaskRequest(identifier: identifier))
      case .continuedProcessing:
        .continuedProcessing(ContinuedProcessingTaskRequest(identifier: identifier, title: identifier, subtitle: ""))
      }
    let current = conditions.current()
    return state.withLock { s in
      s.launchCounter += 1
      let task = BackgroundTask(
        request: request, conditions: current, launchNumber: s.launchCounter,
        remainingBudget: { deadline - ContinuousClock.now })
      s.running[s.launchCounter] = task
      return task
    }
  }

  private func ended(_ task: BackgroundTask, _ outcome: TaskOutcome) {
    state.withLock { _ = $0.running.removeValue(forKey: task.launchNumber) }
    onFinish?(task, outcome)
  }
}
