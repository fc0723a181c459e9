// AppleFrameworksStandIn — the only place in Forage that assumes Apple's
// behaviour.
//
// A test-support module for Linux: it declares the subset of Apple's
// BackgroundTasks, UserNotifications and background URLSession API that
// `ForageBackgroundTasks` uses, with Apple's names, signatures, optionality
// and documented behaviour, so that the adapter's source compiles unchanged
// here and against the real frameworks on Apple platforms
// (`#if canImport(BackgroundTasks)` chooses). Package.swift links it into the
// adapter on Linux only: it never ships in an Apple build.
//
// Each declaration cites the Apple documentation page its signature is
// copied from. Where Apple documents a behaviour (which queue runs the
// launch handler, that registering after launch terminates the app, one
// pending refresh request at a time…), the stand-in does the same; where a
// real app would be terminated, it records the failure instead
// (`BGTaskScheduler._preconditionFailures`) so a test can observe it.
//
// Members whose names start with an underscore are test-only hooks, in the
// spirit of the private debugger command
// `_simulateLaunchForTaskWithIdentifier:`; they do not exist on Apple's
// types, and the adapter never calls them.
//
// Sendable: Apple's documented declarations (`class BGTaskScheduler`,
// `class BGTask`, `var expirationHandler: (() -> Void)?`…) carry no
// `Sendable`, so neither do these; the adapter must not rely on it. The
// classes keep their state behind a lock, so they are safe to call from any
// thread, as Apple's are.

// Linux only: on Apple platforms this module is empty, so it can never
// stand in for the real frameworks there.
#if os(Linux)
import Foundation
import ForageSupport

/// A class for scheduling tasks that add background support to your app's
/// most critical work.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler>
open class BGTaskScheduler: NSObject {
  /// The errors of the `BGTaskSchedulerErrorDomain` domain.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/error>
  public struct Error: Swift.Error, Hashable, Sendable, CustomStringConvertible {
    /// An enumeration of the task scheduling errors.
    ///
    /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/error/code>
    public enum Code: Int, Sendable, Hashable {
      /// The app or extension can't schedule background work (Background
      /// App Refresh is off, or the app runs in Simulator).
      ///
      /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/error/code/unavailable>
      case unavailable = 1
      /// There are too many pending tasks of the type requested.
      ///
      /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/error/code/toomanypendingtaskrequests>
      case tooManyPendingTaskRequests = 2
      /// The app isn't permitted to launch the task (the identifier is not in
      /// `BGTaskSchedulerPermittedIdentifiers`, or the background mode is missing).
      ///
      /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/error/code/notpermitted>
      case notPermitted = 3
      /// A continued-processing task cannot run now.
      ///
      /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/error/code/immediaterunineligible>
      case immediateRunIneligible = 4

      /// `catch BGTaskScheduler.Error.notPermitted`, as with a bridged NSError code.
      public static func ~= (code: Code, error: any Swift.Error) -> Bool {
        (error as? BGTaskScheduler.Error)?.code == code
      }
    }


    /// The error's code.
    public let code: Code

    /// An error with `code` (Apple's errors are bridged `NSError`s; this
    /// initializer exists only here, for the stand-in to throw them).
    public init(_ code: Code) { self.code = code }

    /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/error/unavailable>
    public static var unavailable: Code { .unavailable }
    /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/error/toomanypendingtaskrequests>
    public static var tooManyPendingTaskRequests: Code { .tooManyPendingTaskRequests }
    /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/error/notpermitted>
    public static var notPermitted: Code { .notPermitted }

    public var description: String { "BGTaskSchedulerErrorDomain error \(code.rawValue)" }
  }

  /// The shared background task scheduler instance.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/shared>
  public class var shared: BGTaskScheduler { sharedInstance }
  nonisolated(unsafe) private static let sharedInstance = BGTaskScheduler()

  private struct Registration {
    let queue: DispatchQueue?
    let handler: (BGTask) -> Void
  }

  /// What the system keeps for the app. The handlers are Apple's
  /// non-Sendable closures: they are only called, never shared out.
  private struct State: @unchecked Sendable {
    var permitted: [String] = []
    var registrations: [String: Registration] = [:]
    var pending: [BGTaskRequest] = []
    var launchingFinished = false
    var refreshAvailable = true
    var running: [String: BGTask] = [:]
    var failures: [String] = []
    var completions: [(String, Bool)] = []
    var submissions: [String] = []
  }

  private let state = Locked(State())

  override init() { super.init() }

  /// Register a launch handler for the task with the associated identifier
  /// that's executed on the specified queue (`nil`: a default background
  /// queue). Every registration must be complete before the app finishes
  /// launching; registering later, or twice for one identifier, raises
  /// `NSInternalInconsistencyException` (here: recorded in
  /// ``_preconditionFailures``, and `false` is returned).
  ///
  /// - Returns: `true` if the handler was registered; `false` if the
  ///   identifier isn't in `BGTaskSchedulerPermittedIdentifiers`.
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/register(fortaskwithidentifier:using:launchhandler:)>
  open func register(
    forTaskWithIdentifier identifier: String, using queue: DispatchQueue?,
    launchHandler: @escaping (BGTask) -> Void
  ) -> Bool {
    let registration = Registration(queue: queue, handler: launchHandler)
    return state.withLock { s in
      if s.launchingFinished {
        s.failures.append("All launch handlers must be registered before application finishes launching")
        return false
      }
      if s.registrations[identifier] != nil {
        s.failures.append("Launch handler for task with identifier \(identifier) has already been registered")
        return false
      }
      guard s.permitted.contains(identifier) else { return false }
      s.registrations[identifier] = registration
      return true
    }
  }

  /// Submit a previously registered background task for execution. A
  /// request for an identifier already pending replaces it; at most one
  /// refresh request and ten processing requests may be pending.
  ///
  /// - Throws: `BGTaskScheduler.Error` `.notPermitted` (identifier not in
  ///   the permitted list), `.unavailable` (Background App Refresh off),
  ///   `.tooManyPendingTaskRequests`.
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/submit(_:)>
  open func submit(_ taskRequest: BGTaskRequest) throws {
    let copy = taskRequest.copy() as! BGTaskRequest
    let error: Code? = state.withLock { s in
      guard s.permitted.contains(copy.identifier) else { return .notPermitted }
      guard s.refreshAvailable else { return .unavailable }
      let isRefresh = copy is BGAppRefreshTaskRequest
      let others = s.pending.filter { $0.identifier != copy.identifier && ($0 is BGAppRefreshTaskRequest) == isRefresh }
      if others.count >= (isRefresh ? 1 : 10) { return .tooManyPendingTaskRequests }
      s.pending.removeAll { $0.identifier == copy.identifier }
      s.pending.append(copy)
      s.submissions.append(copy.identifier)
      if s.registrations[copy.identifier] == nil {
        // iOS accepts the request and raises when it would launch it.
        s.failures.append("No launch handler registered for task with identifier \(copy.identifier)")
      }
      return nil
    }
    if let error { throw Error(error) }
  }

  private typealias Code = Error.Code

  /// Cancel a previously scheduled task request.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/cancel(taskrequestwithidentifier:)>
  open func cancel(taskRequestWithIdentifier identifier: String) {
    state.withLock { $0.pending.removeAll { $0.identifier == identifier } }
  }

  /// Cancel all scheduled task requests.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/cancelalltaskrequests()>
  open func cancelAllTaskRequests() {
    state.withLock { $0.pending.removeAll() }
  }

  /// Request a list of unexecuted scheduled task requests.
  ///
  /// The `async` form Swift imports of `getPendingTaskRequests(completionHandler:)`.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/getpendingtaskrequests(completionhandler:)>
  open func pendingTaskRequests() async -> [BGTaskRequest] {
    state.withLock { s in s.pending.map { $0.copy() as! BGTaskRequest } }
  }

  // MARK: - Test-only hooks (not Apple API)

  /// Test only: the app's `BGTaskSchedulerPermittedIdentifiers` (Info.plist).
  public func _setPermittedIdentifiers(_ identifiers: [String]) {
    state.withLock { $0.permitted = identifiers }
  }

  /// Test only: the Background App Refresh setting (off: `submit` throws `.unavailable`).
  public func _setBackgroundRefreshAvailable(_ available: Bool) {
    state.withLock { $0.refreshAvailable = available }
  }

  /// Test only: the app finished launching (UIKit's
  /// `application(_:didFinishLaunchingWithOptions:)` returned).
  public func _finishLaunching() {
    state.withLock { $0.launchingFinished = true }
  }

  /// Test only: forgets everything, as a new process of the app would find
  /// the system (pending requests are kept when `keepPending`, as iOS keeps
  /// them across launches of the app).
  public func _reset(keepPending: Bool = false) {
    state.withLock { s in
      let pending = s.pending
      let permitted = s.permitted
      s = State()
      s.permitted = permitted
      if keepPending { s.pending = pending }
    }
  }

  /// Test only: what would have terminated the app, in order (Apple's
  /// `NSInternalInconsistencyException` reasons).
  public var _preconditionFailures: [String] { state.withLock { $0.failures } }

  /// Test only: every `setTaskCompleted(success:)` the system heard, in order.
  public var _completions: [(identifier: String, success: Bool)] {
    state.withLock { $0.completions.map { (identifier: $0.0, success: $0.1) } }
  }

  /// Test only: the identifiers of accepted submissions, in order.
  public var _submissions: [String] { state.withLock { $0.submissions } }

  /// Test only: launches the task, as the debugger command
  /// `e -l objc -- (void)[[BGTaskScheduler sharedScheduler]
  /// _simulateLaunchForTaskWithIdentifier:@"…"]` does: the pending request
  /// is taken off the list and the handler runs on its registration's
  /// queue (a background queue when it gave none).
  ///
  /// - Returns: false when no request for `identifier` is pending or no
  ///   handler is registered (the debugger command then only logs).
  @discardableResult
  public func _simulateLaunchForTaskWithIdentifier(_ identifier: String) -> Bool {
    typealias Launch = (registration: Registration, task: BGTask)
    let launch: Launch? = state.withLock { s -> Launch? in
      guard let registration = s.registrations[identifier],
        let index = s.pending.firstIndex(where: { $0.identifier == identifier })
      else { return nil }
      let request = s.pending.remove(at: index)
      let task: BGTask =
        request is BGProcessingTaskRequest
        ? BGProcessingTask(identifier: identifier, scheduler: self) : BGAppRefreshTask(identifier: identifier, scheduler: self)
      s.running[identifier] = task
      return (registration, task)
    }
    guard let launch else { return false }
    let run = UncheckedLaunch(launch.registration.handler, launch.task)
    (launch.registration.queue ?? DispatchQueue.global(qos: .background)).async { run.handler(run.task) }
    return true
  }

  /// Test only: calls the running task's expiration handler, as the
  /// debugger command `_simulateExpirationForTaskWithIdentifier:` does
  /// (then the handler is set to nil, as Apple documents).
  ///
  /// - Returns: false when the task is not running or has no handler.
  @discardableResult
  public func _simulateExpirationForTaskWithIdentifier(_ identifier: String) -> Bool {
    guard let task = state.withLock({ $0.running[identifier] }) else { return false }
    return task._expire()
  }

  /// Called by a task's `setTaskCompleted(success:)`.
  fileprivate func completed(_ task: BGTask, success: Bool) {
    state.withLock { s in
      s.completions.append((task.identifier, success))
      if s.running[task.identifier] === task { s.running[task.identifier] = nil }
    }
  }
}

/// Carries Apple's non-Sendable handler and task to the queue that runs
/// them, as the system does.
private struct UncheckedLaunch: @unchecked Sendable {
  let handler: (BGTask) -> Void
  let task: BGTask
  init(_ handler: @escaping (BGTask) -> Void, _ task: BGTask) {
    self.handler = handler
    self.task = task
  }
}

/// An abstract class for the framework's tasks.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtask>
open class BGTask: NSObject {
  private struct State: @unchecked Sendable {
    var expirationHandler: (() -> Void)?
    var completed = false
  }

  private let state = Locked(State())
  private weak var scheduler: BGTaskScheduler?

  /// The string identifier of the task.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtask/identifier>
  public let identifier: String

  fileprivate init(identifier: String, scheduler: BGTaskScheduler) {
    self.identifier = identifier
    self.scheduler = scheduler
  }

  /// A handler called shortly before the task's background time expires.
  /// The system sets it to `nil` after the handler completes. Without one,
  /// the system marks the task complete and unsuccessful at expiration.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtask/expirationhandler>
  open var expirationHandler: (() -> Void)? {
    get { state.withLock { $0.expirationHandler } }
    set { state.withLock { $0.expirationHandler = newValue } }
  }

  /// Informs the background task scheduler that the task is complete. Only
  /// the first call counts.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtask/settaskcompleted(success:)>
  open func setTaskCompleted(success: Bool) {
    let first = state.withLock { s -> Bool in
      defer { s.completed = true }
      return !s.completed
    }
    if first { scheduler?.completed(self, success: success) }
  }

  /// Test only: runs the expiration handler (see
  /// ``BGTaskScheduler/_simulateExpirationForTaskWithIdentifier(_:)``).
  fileprivate func _expire() -> Bool {
    let handler = state.withLock { s -> (() -> Void)? in s.completed ? nil : s.expirationHandler }
    guard let handler else {
      if !state.withLock({ $0.completed }) { setTaskCompleted(success: false) }
      return false
    }
    handler()
    state.withLock { $0.expirationHandler = nil }
    return true
  }
}

/// An object representing a short task typically used to refresh content
/// that's run while the app is in the background.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgapprefreshtask>
open class BGAppRefreshTask: BGTask {}

/// A time-consuming processing task that runs while the app is in the background.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgprocessingtask>
open class BGProcessingTask: BGTask {}

/// An abstract class for representing task requests.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskrequest>
open class BGTaskRequest: NSObject, NSCopying {
  /// The identifier of the task associated with the request.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskrequest/identifier>
  public let identifier: String

  /// The earliest date and time at which to run the task; `nil` for no start delay.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskrequest/earliestbegindate>
  open var earliestBeginDate: Date?

  fileprivate init(requestIdentifier: String) {
    self.identifier = requestIdentifier
  }

  open func copy(with zone: NSZone? = nil) -> Any {
    let copy = BGTaskRequest(requestIdentifier: identifier)
    copy.earliestBeginDate = earliestBeginDate
    return copy
  }
}

/// A request to launch your app in the background to execute a short
/// refresh task.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgapprefreshtaskrequest>
open class BGAppRefreshTaskRequest: BGTaskRequest {
  /// Return a new refresh task request for the specified identifier.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgapprefreshtaskrequest/init(identifier:)>
  public init(identifier: String) {
    super.init(requestIdentifier: identifier)
  }

  open override func copy(with zone: NSZone? = nil) -> Any {
    let copy = BGAppRefreshTaskRequest(identifier: identifier)
    copy.earliestBeginDate = earliestBeginDate
    return copy
  }
}

/// A request to launch your app in the background to execute a processing
/// task that can take minutes to complete.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgprocessingtaskrequest>
open class BGProcessingTaskRequest: BGTaskRequest {
  /// A Boolean specifying if the processing task requires network
  /// connectivity (default `false`).
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgprocessingtaskrequest/requiresnetworkconnectivity>
  open var requiresNetworkConnectivity = false

  /// A Boolean specifying if the processing task requires a device connected
  /// to power (default `false`).
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgprocessingtaskrequest/requiresexternalpower>
  open var requiresExternalPower = false

  /// Return a new processing task request for the specified identifier.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgprocessingtaskrequest/init(identifier:)>
  public init(identifier: String) {
    super.init(requestIdentifier: identifier)
  }

  open override func copy(with zone: NSZone? = nil) -> Any {
    let copy = BGProcessingTaskRequest(identifier: identifier)
    copy.earliestBeginDate = earliestBeginDate
    copy.requiresNetworkConnectivity = requiresNetworkConnectivity
    copy.requiresExternalPower = requiresExternalPower
    return copy
  }
}
#endif
