import ForageSupport
import Foundation

/// How a launch ended.
public enum TaskOutcome: Sendable, Hashable, Codable {
  /// The handler called `setTaskCompleted(success:)` (or the async handler returned or threw).
  case completed(success: Bool)
  /// The handler did not complete within the grace after expiration and was killed.
  case killed
}

/// Progress of a continued-processing task, shown to the user by the system:
/// `completedUnitCount` of `totalUnitCount` units (Apple's `Progress` of a
/// `BGContinuedProcessingTask`).
///
///     task.updateProgress(completedUnitCount: 2, totalUnitCount: 5)   // 2 of 5 sources
///     task.progress.fractionCompleted                                  // 0.4
public struct TaskProgress: Sendable, Hashable, Codable {
  /// Units of work done.
  public var completedUnitCount: Int64
  /// Units of work in all (0 when unknown).
  public var totalUnitCount: Int64
  /// Progress of `completedUnitCount` out of `totalUnitCount`.
  public init(completedUnitCount: Int64 = 0, totalUnitCount: Int64 = 0) {
    self.completedUnitCount = completedUnitCount
    self.totalUnitCount = totalUnitCount
  }
  /// Completed share from 0 to 1; 0 when the total is unknown.
  public var fractionCompleted: Double {
    totalUnitCount > 0 ? Double(completedUnitCount) / Double(totalUnitCount) : 0
  }
}

/// One launch of a background task, handed to its launch handler.
///
///     scheduler.register("com.example.refresh") { task in
///       try scheduler.submit(AppRefreshTaskRequest(identifier: task.identifier))  // next one first
///       while !task.isCancelled, let url = frontier.next() {
///         try await fetch(url)           // cancelled at expiration
///       }
///     }
///
/// With the callback form, set ``expirationHandler`` and call
/// ``setTaskCompleted(success:)`` exactly once. With the async form, returning
/// completes the task (successfully unless it was cancelled) and throwing fails it.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtask>
public final class BackgroundTask: Sendable {
  /// What changes during the launch. Callbacks (the expiration handler,
  /// continuations) are taken out under the lock and invoked after it.
  private struct State {
    var expirationHandler: (@Sendable () -> Void)?
    var isCancelled = false
    var expirationReason: ExpirationReason?
    var outcome: TaskOutcome?
    var waiters: [CheckedContinuation<TaskOutcome, Never>] = []
    var refreshedSources: [String]?
    var transferredBytes: Int64?
    var progress = TaskProgress()
    var hasProgress = false
    var lastProgressAt = ContinuousClock.now
    var progressObserver: (@Sendable (TaskProgress) -> Void)?
    var swiftTask: Task<Void, Never>?
  }

  private let state = Locked(State())
  private let remaining: @Sendable () -> Duration

  /// The identifier of the task, as registered.
  public let identifier: String
  /// The kind of task.
  public let kind: TaskKind
  /// The conditions at launch: power, network, Low Power Mode…
  public let conditions: DeviceConditions
  /// The request that was launched.
  public let request: AnyTaskRequest
  /// The number of this launch in the scheduler's trace (1, 2, …).
  public let launchNumber: Int

  init(
    request: AnyTaskRequest, conditions: DeviceConditions, launchNumber: Int,
    remainingBudget: @escaping @Sendable () -> Duration
  ) {
    self.identifier = request.identifier
    self.kind = request.kind
    self.request = request
    self.conditions = conditions
    self.launchNumber = launchNumber
    self.remaining = remainingBudget
  }

  /// Called when the task's time is up; stop, checkpoint, then complete.
  /// The async form also cancels the handler's Swift task.
  public var expirationHandler: (@Sendable () -> Void)? {
    get { state.withLock { $0.expirationHandler } }
    set { state.withLock { $0.expirationHandler = newValue } }
  }

  /// The time left before expiration (zero once expired).
  public var remainingBudget: Duration {
    if isCancelled { return .zero }
    return max(.zero, remaining())
  }

  /// True once the task expired: wind down and complete.
  public var isCancelled: Bool { state.withLock { $0.isCancelled } }

  /// Why the task expired (budget, device in use, power lost…), if it did.
  public var expirationReason: ExpirationReason? { state.withLock { $0.expirationReason } }

  /// Tells the system the work is done. Only the first call counts.
  ///
  /// - Parameter success: `false` when the work was cut short or failed.
  public func setTaskCompleted(success: Bool) {
    finish(.completed(success: success))
  }

  /// Records which sources this launch brought up to date, for the freshness
  /// forecast. Without it, a successful launch counts as refreshing every
  /// source of its task.
  public func reportRefreshed(sources: [String]) {
    state.withLock { $0.refreshedSources = ($0.refreshedSources ?? []) + sources }
  }

  /// The sources reported by ``reportRefreshed(sources:)``, if any.
  public var refreshedSources: [String]? { state.withLock { $0.refreshedSources } }

  /// Records bytes this launch transferred (calls add up). In a
  /// ``SimulatedScheduler``, a launch on cellular counts them against the
  /// cellular data budget, and the next launch of the task is expected to
  /// transfer as much.
  public func reportTransferred(bytes: Int64) {
    state.withLock { $0.transferredBytes = ($0.transferredBytes ?? 0) + max(0, bytes) }
  }

  /// The bytes reported by ``reportTransferred(bytes:)``, if any.
  public var transferredBytes: Int64? { state.withLock { $0.transferredBytes } }

  /// Reports progress of a continued-processing task; the system expires one
  /// that stops reporting (``SchedulingPolicy/continuedProcessingProgressTimeout``
  /// in the schedulers here). A Forage launch of a continued-processing task
  /// reports the sources it has completed of its own after each commit of
  /// its crawl, then the bytes of each download it works on. Each report
  /// reaches the observer set with ``observeProgress(_:)``.
  public func updateProgress(completedUnitCount: Int64, totalUnitCount: Int64) {
    let p = TaskProgress(completedUnitCount: completedUnitCount, totalUnitCount: totalUnitCount)
    let observer = state.withLock { s in
      s.progress = p
      s.hasProgress = true
      s.lastProgressAt = ContinuousClock.now
      return s.progressObserver
    }
    observer?(p)
  }

  /// Calls `observer` with every progress report from now on, and at once
  /// with the last one if there was one: an app's adapter copies the figures
  /// into `BGContinuedProcessingTask.progress` this way. One observer per
  /// launch (setting another replaces it); it runs on the reporting task,
  /// after the launch's lock is released, so it may read the task.
  ///
  ///     task.observeProgress { p in
  ///       bgTask.progress.totalUnitCount = p.totalUnitCount
  ///       bgTask.progress.completedUnitCount = p.completedUnitCount
  ///     }
  public func observeProgress(_ observer: @escaping @Sendable (TaskProgress) -> Void) {
    let last = state.withLock { s -> TaskProgress? in
      s.progressObserver = observer
      return s.hasProgress ? s.progress : nil
    }
    if let last { observer(last) }
  }

  /// The last reported progress.
  public var progress: TaskProgress { state.withLock { $0.progress } }

  /// When progress was last reported (or the launch started).
  var lastProgressAt: ContinuousClock.Instant { state.withLock { $0.lastProgressAt } }

  /// The outcome, once known.
  public var outcome: TaskOutcome? { state.withLock { $0.outcome } }

  // MARK: - Used by the schedulers

  func attach(_ task: Task<Void, Never>) {
    let cancelNow = state.withLock { s -> Bool in
      s.swiftTask = task
      return s.isCancelled
    }
    if cancelNow { task.cancel() }
  }

  /// Marks the task expired, calls its expiration handler and cancels its
  /// Swift task. Returns false when it had already expired or finished.
  @discardableResult
  func expire(reason: ExpirationReason) -> Bool {
    typealias Pending = (handler: (@Sendable () -> Void)?, task: Task<Void, Never>?)
    let pending: Pending? = state.withLock { s -> Pending? in
      if s.isCancelled || s.outcome != nil { return nil }
      s.isCancelled = true
      s.expirationReason = reason
      return (s.expirationHandler, s.swiftTask)
    }
    guard let pending else { return false }
    let handler = pending.handler, task = pending.task
    handler?()
    task?.cancel()
    return true
  }

  /// Ends the launch as killed unless it already completed.
  func kill() { finish(.killed) }

  private func finish(_ outcome: TaskOutcome) {
    let resumed: [CheckedContinuation<TaskOutcome, Never>] = state.withLock { s in
      if s.outcome != nil { return [] }
      s.outcome = outcome
      defer { s.waiters = [] }
      return s.waiters
    }
    for w in resumed { w.resume(returning: outcome) }
  }

  /// Waits until the task completes or is killed.
  func waitForOutcome() async -> TaskOutcome {
    await withCheckedContinuation { (c: CheckedContinuation<TaskOutcome, Never>) in
      let ready: TaskOutcome? = state.withLock { s in
        if let o = s.outcome { return o }
        s.waiters.append(c)
        return nil
      }
      if let ready { c.resume(returning: ready) }
    }
  }
}

/// What runs when a task launches: the one value every scheduler's
/// ``TaskScheduler/register(_:_:)`` takes (the two `register` forms an app
/// writes make one).
public enum LaunchHandler: Sendable {
  /// Apple's callback form, run on the queue (a background queue when nil):
  /// the handler sets `expirationHandler` and calls `setTaskCompleted(success:)`.
  case callback(DispatchQueue?, @Sendable (BackgroundTask) -> Void)
  /// The async form: its Swift task is cancelled at expiration, and
  /// returning completes the task.
  case async(@Sendable (BackgroundTask) async throws -> Void)
}

/// Runs a real handler under a real-time budget: at the budget the expiration
/// handler runs and the Swift task is cancelled; after the grace, a handler
/// that has not completed is recorded as killed.
enum LiveLaunch {
  struct Result: Sendable {
    var outcome: TaskOutcome
    var expired: Bool
    var expirationReason: ExpirationReason?
    var elapsed: Duration
  }

  static func start(_ task: BackgroundTask, handler: LaunchHandler) {
    switch handler {
    case .callback(let queue, let body):
      (queue ?? DispatchQueue.global()).async { body(task) }
    case .async(let body):
      let swiftTask = Task {
        do {
          try await body(task)
          task.setTaskCompleted(success: !Task.isCancelled && !task.isCancelled)
        } catch {
          task.setTaskCompleted(success: false)
        }
      }
      task.attach(swiftTask)
    }
  }

  /// Expires `task` now and kills it after `grace` unless it completes.
  static func expire(_ task: BackgroundTask, reason: ExpirationReason, grace: Duration) {
    guard task.expire(reason: reason) else { return }
    Task {
      try? await Task.sleep(for: grace)
      task.kill()
    }
  }

  /// Runs `task`; with a `progressTimeout` (continued processing), a task
  /// that reports no progress for that long expires with reason `noProgress`.
  static func run(
    _ task: BackgroundTask, handler: LaunchHandler, budget: Duration, grace: Duration,
    progressTimeout: Duration? = nil, budgetReason: ExpirationReason = .budget, clock: ContinuousClock = ContinuousClock()
  ) async -> Result {
    let began = clock.now
    start(task, handler: handler)
    let timer = Task {
      let deadline = began + budget
      while true {
        var wake = deadline
        if let progressTimeout { wake = min(wake, task.lastProgressAt + progressTimeout) }
        try? await clock.sleep(until: wake)
        if Task.isCancelled { return }
        let now = clock.now
        if now >= deadline {
          expire(task, reason: budgetReason, grace: grace)
          return
        }
        if let progressTimeout, now >= task.lastProgressAt + progressTimeout {
          expire(task, reason: .noProgress, grace: grace)
          return
        }
      }
    }
    let outcome = await task.waitForOutcome()
    timer.cancel()
    return Result(
      outcome: outcome, expired: task.isCancelled, expirationReason: task.expirationReason,
      elapsed: clock.now - began)
  }
}
