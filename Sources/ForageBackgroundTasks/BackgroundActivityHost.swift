// The Mac side of `AppBackgroundTasks`: NSBackgroundActivityScheduler
// (Foundation, macOS only). Compiled on macOS, and on Linux against the
// stand-in's declaration of the class, so the logic is tested here.

#if os(Linux)
import AppleFrameworksStandIn
#endif

#if os(macOS) || os(Linux)
import Foundation
import ForageScheduler
import ForageSupport

/// `NSBackgroundActivityScheduler` as the host of a `HostedScheduler`: a
/// Mac app's tasks, scheduled by the system's XPC activities.
///
/// Each submitted request becomes one non-repeating activity named after
/// the task, whose interval is the time to the request's earliest begin
/// date (at least one second) and whose tolerance is half of it, Apple's
/// default; a new request for the task invalidates the previous activity
/// (as `BGTaskScheduler` replaces a pending request). Refresh tasks run at
/// `.utility`, processing tasks at `.background`, the recommended level.
/// While a launch runs, `shouldDefer` is asked every
/// ``AppleDefaults/deferPollInterval``: when the system wants the Mac back,
/// the task stops as at its budget (everything fetched is committed) and
/// the activity completes `.deferred`; otherwise `.finished`. macOS has no
/// per-launch time limit: the task's budget is the config's.
final class BackgroundActivityHost: TaskSchedulerHost {
  private let poll: Duration
  private let log: SchedulerLog

  /// A scheduled activity and the request it stands for.
  private struct Pending: @unchecked Sendable {
    // @unchecked Sendable: the activity is touched only under the host's
    // lock or by its own thread-safe methods (`invalidate`).
    let activity: NSBackgroundActivityScheduler
    let request: AnyTaskRequest
  }

  private struct State: Sendable {
    var handlers: [String: @Sendable (any HostTask) -> Void] = [:]
    var pending: [String: Pending] = [:]
  }
  private let state = Locked(State())

  init(poll: Duration = AppleDefaults.deferPollInterval, log: SchedulerLog = .silent) {
    self.poll = poll
    self.log = log
  }

  func register(identifier: String, launchHandler: @escaping @Sendable (any HostTask) -> Void) -> Bool {
    state.withLock { $0.handlers[identifier] = launchHandler }
    return true
  }

  func submit(_ request: AnyTaskRequest) throws(SchedulerError) {
    if request.kind == .continuedProcessing {
      throw SchedulerError.unsupportedTaskKind.with(
        identifier: request.identifier, detail: "continued processing exists on iOS and iPadOS only; a Mac app runs the task directly")
    }
    let identifier = request.identifier
    let activity = NSBackgroundActivityScheduler(identifier: identifier)
    let wait = max(1, (request.earliestBeginDate ?? Date()).timeIntervalSinceNow)
    activity.repeats = false
    activity.interval = wait
    activity.tolerance = wait / 2
    activity.qualityOfService = request.kind == .appRefresh ? .utility : .background
    let previous = state.withLock { s in
      defer { s.pending[identifier] = Pending(activity: activity, request: request) }
      return s.pending[identifier]
    }
    previous?.activity.invalidate()
    let launch = ActivityLaunchStarter(host: self, identifier: identifier, kind: request.kind, activity: activity)
    activity.schedule { completion in launch.start(completion) }
  }

  /// An invocation of `identifier`'s activity: the Forage launch, bound to
  /// the activity's completion handler and `shouldDefer`.
  fileprivate func launched(
    _ identifier: String, kind: TaskKind, activity: NSBackgroundActivityScheduler,
    completion: @escaping NSBackgroundActivityScheduler.CompletionHandler
  ) {
    let handler = state.withLock { s -> (@Sendable (any HostTask) -> Void)? in
      if s.pending[identifier]?.activity === activity { s.pending[identifier] = nil }
      return s.handlers[identifier]
    }
    // Served: the launch submits the task's next request as a new activity
    // (a deferred run resumes there, not in this one).
    activity.invalidate()
    let task = ActivityTask(identifier: identifier, kind: kind, activity: activity, completion: completion, poll: poll)
    guard let handler else {
      log.write("macOS ran \(identifier), which has no Forage handler")
      task.setTaskCompleted(success: false)
      return
    }
    handler(task)
    task.watchShouldDefer()
  }

  func cancel(identifier: String) {
    state.withLock { $0.pending.removeValue(forKey: identifier) }?.activity.invalidate()
  }

  func cancelAll() {
    let all = state.withLock { s in
      defer { s.pending = [:] }
      return Array(s.pending.values)
    }
    for p in all { p.activity.invalidate() }
  }

  func pendingRequests() async -> [AnyTaskRequest] {
    state.withLock { s in s.pending.values.map(\.request) }
  }
}

/// Starts a launch from the activity's block.
///
/// `@unchecked Sendable`: the activity is touched only through the host.
private struct ActivityLaunchStarter: @unchecked Sendable {
  let host: BackgroundActivityHost
  let identifier: String
  let kind: TaskKind
  let activity: NSBackgroundActivityScheduler

  func start(_ completion: @escaping NSBackgroundActivityScheduler.CompletionHandler) {
    host.launched(identifier, kind: kind, activity: activity, completion: completion)
  }
}

/// One invocation of an activity as a `HostTask`: `shouldDefer` is its
/// expiration, the completion handler its `setTaskCompleted`.
///
/// `@unchecked Sendable`: the activity's `shouldDefer` is a thread-safe
/// read; its completion handler is Apple's non-Sendable block, called once,
/// guarded by the lock.
private final class ActivityTask: HostTask, @unchecked Sendable {
  let identifier: String
  let kind: TaskKind
  private let activity: NSBackgroundActivityScheduler
  private let completion: NSBackgroundActivityScheduler.CompletionHandler
  private let poll: Duration
  private struct State: Sendable {
    var expiration: (@Sendable () -> Void)?
    var deferred = false
    var completed = false
  }
  private let state = Locked(State())

  init(
    identifier: String, kind: TaskKind, activity: NSBackgroundActivityScheduler,
    completion: @escaping NSBackgroundActivityScheduler.CompletionHandler, poll: Duration
  ) {
    self.identifier = identifier
    self.kind = kind
    self.activity = activity
    self.completion = completion
    self.poll = poll
  }

  func setExpirationHandler(_ handler: (@Sendable () -> Void)?) {
    state.withLock { $0.expiration = handler }
  }

  func setTaskCompleted(success: Bool) {
    let deferred: Bool? = state.withLock { s in
      guard !s.completed else { return nil }
      s.completed = true
      return s.deferred
    }
    guard let deferred else { return }
    completion(deferred ? .deferred : .finished)
  }

  /// Asks `shouldDefer` until the launch ends; when the system says so, the
  /// task stops as at its budget.
  func watchShouldDefer() {
    let seconds = poll.timeInterval
    DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + seconds) { [self] in
      guard !state.withLock({ $0.completed }) else { return }
      guard activity.shouldDefer else { return watchShouldDefer() }
      let expiration = state.withLock { s -> (@Sendable () -> Void)? in
        s.deferred = true
        defer { s.expiration = nil }
        return s.expiration
      }
      expiration?()
    }
  }
}
#endif
