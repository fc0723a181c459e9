// The stand-in's NSBackgroundActivityScheduler (Foundation, macOS only): see
// BackgroundTasks.swift for what this module is. Linux's Foundation has no
// such class, so the one here is the only one in a Linux build.

// Linux only: on Apple platforms this module is empty, so it can never
// stand in for the real frameworks there.
#if os(Linux)
import Foundation
import ForageSupport

/// A task scheduler suitable for low-priority operations that can run in
/// the background (macOS: the XPC Activity API).
///
/// The stand-in runs nothing by itself: a test fires an activity with
/// ``_fire()``, as the system would at a moment of its choosing, and
/// answers ``shouldDefer`` with ``_setShouldDefer(_:)``. Enforced, as
/// Apple's header says (each an `.activityMisuse` violation): a non-empty
/// identifier, every property set before `schedule(_:)`, one
/// `schedule(_:)` per object, and the completion handler called once per
/// invocation.
///
/// - SeeAlso: <https://developer.apple.com/documentation/foundation/nsbackgroundactivityscheduler>
@available(macOS 10.10, *)
@available(iOS, unavailable)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
open class NSBackgroundActivityScheduler: NSObject {
  /// What the completion handler tells the scheduler
  /// (`NSBackgroundActivityResult`).
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/foundation/nsbackgroundactivityscheduler/result>
  public enum Result: Int, Sendable, Hashable {
    /// The work is finished; the next invocation can be scheduled.
    case finished = 1
    /// The rest of the work is deferred; the system invokes the block again soon.
    case deferred = 2
  }

  /// The handler the block calls when its work ends
  /// (`NSBackgroundActivityCompletionHandler`, `@Sendable` in the macOS 26 SDK).
  public typealias CompletionHandler = @Sendable (NSBackgroundActivityScheduler.Result) -> Void

  private struct State: @unchecked Sendable {
    var qualityOfService = QualityOfService.background
    var repeats = false
    var interval: TimeInterval = 0
    var tolerance: TimeInterval?
    var block: (@Sendable (@escaping CompletionHandler) -> Void)?
    var invalidated = false
    var shouldDefer = false
    var invocations = 0
    var results: [Result] = []
  }

  private let state = Locked(State())
  private let queue: DispatchQueue
  /// The schedulers scheduled and not invalidated, as the system keeps them.
  private static let live = Locked<[NSBackgroundActivityScheduler]>([])

  /// The identifier this object was initialized with.
  public let identifier: String

  /// A scheduler for the activity `identifier` (reverse DNS, non-empty).
  public init(identifier: String) {
    self.identifier = identifier
    self.queue = DispatchQueue(label: "NSBackgroundActivityScheduler." + identifier)
    super.init()
    if identifier.isEmpty {
      _AppleRules.report(.activityMisuse, "NSBackgroundActivityScheduler needs a non-empty identifier")
    }
  }

  private func setting(_ name: String, _ change: (inout State) -> Void) {
    let scheduled = state.withLock { s -> Bool in
      change(&s)
      return s.block != nil
    }
    if scheduled {
      _AppleRules.report(.activityMisuse, "\(identifier): \(name) was set after schedule(_:); set every property before it")
    }
  }

  /// How the system treats the activity (default `.background`).
  open var qualityOfService: QualityOfService {
    get { state.withLock { $0.qualityOfService } }
    set { setting("qualityOfService") { $0.qualityOfService = newValue } }
  }

  /// Whether the activity is rescheduled after it finishes (default `false`).
  open var repeats: Bool {
    get { state.withLock { $0.repeats } }
    set { setting("repeats") { $0.repeats = newValue } }
  }

  /// Seconds between invocations (repeating), or from scheduling to the
  /// invocation (not repeating).
  open var interval: TimeInterval {
    get { state.withLock { $0.interval } }
    set { setting("interval") { $0.interval = newValue } }
  }

  /// Seconds before or after the nominal fire date the activity may run
  /// (default: half the interval).
  open var tolerance: TimeInterval {
    get { state.withLock { $0.tolerance ?? $0.interval / 2 } }
    set { setting("tolerance") { $0.tolerance = newValue } }
  }

  /// Begins scheduling the activity; the block runs on a serial background
  /// queue and must call its completion handler when its work ends (the
  /// block is `@Sendable` in the macOS 26 SDK).
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/foundation/nsbackgroundactivityscheduler/schedule(_:)>
  open func schedule(_ block: @escaping @Sendable (@escaping NSBackgroundActivityScheduler.CompletionHandler) -> Void) {
    let again = state.withLock { s -> Bool in
      defer { s.block = block }
      return s.block != nil
    }
    if again { _AppleRules.report(.activityMisuse, "\(identifier): schedule(_:) called twice on one scheduler") }
    Self.live.withLock { $0.append(self) }
  }

  /// Stops scheduling the activity; a running block still completes.
  open func invalidate() {
    state.withLock { $0.invalidated = true }
    Self.live.withLock { $0.removeAll { $0 === self } }
  }

  /// Whether system conditions changed so that the running activity should
  /// save its state and finish with `.deferred`.
  open var shouldDefer: Bool { state.withLock { $0.shouldDefer } }

  // MARK: - Test-only hooks (not Apple API)

  /// Test only: the schedulers scheduled and not invalidated, oldest first.
  public static var _scheduled: [NSBackgroundActivityScheduler] { live.withLock { $0 } }

  /// Test only: forgets every scheduler.
  public static func _reset() { live.withLock { $0 = [] } }

  /// Test only: the system's answer to ``shouldDefer`` from now on.
  public func _setShouldDefer(_ defer: Bool) { state.withLock { $0.shouldDefer = `defer` } }

  /// Test only: the results the completion handler was called with, in order.
  public var _results: [Result] { state.withLock { $0.results } }

  /// Test only: invokes the block on the activity's serial queue, as the
  /// system does when it chooses to run it.
  ///
  /// - Returns: false when the activity is not scheduled or was invalidated.
  @discardableResult
  public func _fire() -> Bool {
    let invocation: Int? = state.withLock { s in
      guard s.block != nil, !s.invalidated else { return nil }
      s.invocations += 1
      return s.invocations
    }
    guard let invocation, let block = state.withLock({ $0.block }) else { return false }
    let run = UncheckedActivityRun(block: block, scheduler: self, invocation: invocation)
    queue.async { run.start() }
    return true
  }

  fileprivate func finished(_ result: Result, invocation: Int, answered: Locked<Bool>) {
    let first = answered.withLock { a -> Bool in
      defer { a = true }
      return !a
    }
    guard first else {
      _AppleRules.report(.activityMisuse, "\(identifier): the completion handler was called twice")
      return
    }
    let done = state.withLock { s -> Bool in
      s.results.append(result)
      return result == .finished && !s.repeats
    }
    // A non-repeating activity that finished is not invoked again.
    if done { invalidate() }
  }
}

/// Carries the activity's non-Sendable block to its queue, as the system does.
private struct UncheckedActivityRun: @unchecked Sendable {
  let block: @Sendable (@escaping NSBackgroundActivityScheduler.CompletionHandler) -> Void
  let scheduler: NSBackgroundActivityScheduler
  let invocation: Int

  func start() {
    let answered = Locked(false)
    block { [self] result in scheduler.finished(result, invocation: invocation, answered: answered) }
  }
}
#endif
