// AppleFrameworksStandIn — the only place in Forage that assumes Apple's
// behaviour.
//
// A test-support module for Linux: it declares the subset of Apple's
// BackgroundTasks, UserNotifications, Foundation (NSBackgroundActivityScheduler)
// and background URLSession API that `ForageBackgroundTasks` uses, with
// Apple's names, signatures, optionality and availability, so that the
// adapter's source compiles unchanged here and against the real frameworks
// on Apple platforms (`#if os(iOS) || os(visionOS)` chooses BackgroundTasks,
// `#if os(macOS)` NSBackgroundActivityScheduler). Package.swift links it
// into the adapter on Linux only: it never ships in an Apple build.
//
// Every signature was checked against Apple's SDK headers; docs/apple.md
// lists each with the header and SDK it was read in. Where Apple documents
// a runtime rule (one handler per identifier, registration before launch
// finishes, one pending refresh request…), the stand-in enforces it: what a
// device answers with a crash or a silent failure is reported as an
// `_AppleRuleViolation` (RuleViolations.swift), which the adapter's tests
// fail on unless they expect it.
//
// Members whose names start with an underscore are test-only hooks, in the
// spirit of the private debugger command
// `_simulateLaunchForTaskWithIdentifier:`; they do not exist on Apple's
// types, and the adapter never calls them.
//
// Sendable: Apple's headers mark none of these classes `NS_SWIFT_SENDABLE`,
// nor the launch handler or `expirationHandler` blocks, so neither are
// these; the adapter must not rely on it. The classes keep their state
// behind a lock, so they are safe to call from any thread, as Apple's are.

// Linux only: on Apple platforms this module is empty, so it can never
// stand in for the real frameworks there.
#if os(Linux)
import Foundation
import ForageSupport

/// A class for scheduling task requests that launch your app in the background.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler>
@available(iOS 13.0, tvOS 13.0, *)
@available(macOS, unavailable)
@available(watchOS, unavailable)
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
      case unavailable = 1
      /// There are too many pending tasks of the type requested.
      case tooManyPendingTaskRequests = 2
      /// The app isn't permitted to schedule the task (the identifier is
      /// not in `BGTaskSchedulerPermittedIdentifiers`, the background mode
      /// is missing, or a continued-processing request asks for resources
      /// the device lacks).
      case notPermitted = 3
      /// A continued-processing request with the `.fail` strategy cannot
      /// run now (iOS 26 SDK).
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

    public static var unavailable: Code { .unavailable }
    public static var tooManyPendingTaskRequests: Code { .tooManyPendingTaskRequests }
    public static var notPermitted: Code { .notPermitted }
    public static var immediateRunIneligible: Code { .immediateRunIneligible }

    public var description: String { "BGTaskSchedulerErrorDomain error \(code.rawValue)" }
  }

  /// The shared background task scheduler instance.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/shared>
  public class var shared: BGTaskScheduler { sharedInstance }
  nonisolated(unsafe) private static let sharedInstance = BGTaskScheduler()

  /// The resources the device supports for continued-processing requests
  /// (iOS 26 SDK: a class property).
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/supportedresources>
  @available(iOS 26.0, *)
  @available(macOS, unavailable)
  @available(tvOS, unavailable)
  @available(visionOS, unavailable)
  @available(macCatalyst, unavailable)
  public class var supportedResources: BGContinuedProcessingTaskRequest.Resources {
    sharedInstance.state.withLock { BGContinuedProcessingTaskRequest.Resources(rawValue: $0.supportedResources) }
  }

  private struct Registration {
    let queue: DispatchQueue?
    let handler: (BGTask) -> Void
  }

  /// How an identifier matches `BGTaskSchedulerPermittedIdentifiers`.
  private enum Match { case none, exact, wildcard }

  /// The three families Apple counts pending requests by.
  private enum Family {
    case refresh, processing, continued
    init(_ request: BGTaskRequest) {
      if request is BGAppRefreshTaskRequest {
        self = .refresh
      } else if request is BGContinuedProcessingTaskRequest {
        self = .continued
      } else {
        self = .processing
      }
    }
  }

  /// What the system keeps for the app. The handlers are Apple's
  /// non-Sendable closures: they are only called, never shared out.
  private struct State: @unchecked Sendable {
    var permitted: [String] = []
    var registrations: [String: Registration] = [:]
    var pending: [BGTaskRequest] = []
    var launchingFinished = false
    var refreshAvailable = true
    var immediateRunEligible = true
    var supportedResources = 0
    var running: [String: BGTask] = [:]
    var completions: [(String, Bool)] = []
    var submissions: [String] = []
    var launched: [BGTask] = []

    func match(_ identifier: String) -> Match {
      if permitted.contains(identifier) { return .exact }
      for entry in permitted where entry.hasSuffix(".*") {
        let prefix = entry.dropLast()  // keeps the dot
        if identifier.hasPrefix(prefix) && identifier.count > prefix.count { return .wildcard }
      }
      return .none
    }
  }

  private let state = Locked(State())
  /// The queue of handlers registered with a nil queue: one serial queue,
  /// so two launches never run their handlers at once.
  private let defaultQueue = DispatchQueue(label: "com.apple.backgroundtasks.default", qos: .background)

  override init() { super.init() }

  /// Registers a launch handler for the task with the associated
  /// identifier, executed on `queue` (nil: a default background queue).
  ///
  /// Enforced as Apple's header says: every registration before the app
  /// finishes launching (continued-processing identifiers, matched by a
  /// `prefix.*` entry, are exempt), each identifier once. Breaking either
  /// is a crash on a device and an `_AppleRuleViolation` here.
  ///
  /// - Returns: `true` if the handler was registered; `false` if the
  ///   identifier isn't in `BGTaskSchedulerPermittedIdentifiers`.
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/register(fortaskwithidentifier:using:launchhandler:)>
  open func register(
    forTaskWithIdentifier identifier: String, using queue: DispatchQueue?,
    launchHandler: @escaping (BGTask) -> Void
  ) -> Bool {
    let registration = Registration(queue: queue, handler: launchHandler)
    typealias Refusal = (_AppleRuleViolation.Rule, String)
    let (accepted, refusal): (Bool, Refusal?) = state.withLock { s in
      let match = s.match(identifier)
      if s.launchingFinished && match != .wildcard {
        return (false, (.registeredAfterLaunch, "All launch handlers must be registered before application finishes launching"))
      }
      if s.registrations[identifier] != nil {
        return (false, (.registeredTwice, "Launch handler for task with identifier \(identifier) has already been registered"))
      }
      guard match != .none else {
        return (false, (.notPermitted, "No task request with identifier \(identifier) is permitted: it is not in BGTaskSchedulerPermittedIdentifiers"))
      }
      s.registrations[identifier] = registration
      return (true, nil)
    }
    if let refusal { _AppleRules.report(refusal.0, refusal.1) }
    return accepted
  }

  /// Submits a previously registered background task for execution. A
  /// request for an identifier already pending replaces it; at most one
  /// refresh request and ten processing requests may be pending (the
  /// refusal is also an `_AppleRuleViolation`: the task would never run).
  ///
  /// - Throws: `BGTaskScheduler.Error` `.notPermitted`, `.unavailable`,
  ///   `.tooManyPendingTaskRequests`, `.immediateRunIneligible`.
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/submit(_:)>
  open func submit(_ taskRequest: BGTaskRequest) throws {
    let copy = taskRequest.copy() as! BGTaskRequest
    typealias Outcome = (code: Code?, violation: (_AppleRuleViolation.Rule, String)?)
    let outcome: Outcome = state.withLock { s in
      let family = Family(copy)
      let match = s.match(copy.identifier)
      // Continued-processing identifiers come under a `prefix.*` entry, the others by name.
      guard family == .continued ? match == .wildcard : match == .exact else {
        return (.notPermitted, (.notPermitted, "Task request with identifier \(copy.identifier) is not permitted: add it to BGTaskSchedulerPermittedIdentifiers"))
      }
      guard s.refreshAvailable else { return (.unavailable, nil) }
      switch family {
      case .continued:
        let request = copy as! BGContinuedProcessingTaskRequest
        if request.requiredResources.rawValue & ~s.supportedResources != 0 {
          return (.notPermitted, (.notPermitted, "Task request with identifier \(copy.identifier) asks for resources this device does not support"))
        }
        if !s.immediateRunEligible && request.strategy == .fail { return (.immediateRunIneligible, nil) }
      case .refresh, .processing:
        let others = s.pending.filter { $0.identifier != copy.identifier && Family($0) == family }
        if family == .refresh && others.count >= 1 {
          return (.tooManyPendingTaskRequests, (.tooManyRefreshRequests, "A refresh request for \(others[0].identifier) is pending: \(copy.identifier) is refused (one refresh request per app)"))
        }
        if family == .processing && others.count >= 10 {
          return (.tooManyPendingTaskRequests, (.tooManyProcessingRequests, "Ten processing requests are pending: \(copy.identifier) is refused"))
        }
      }
      s.pending.removeAll { $0.identifier == copy.identifier }
      s.pending.append(copy)
      s.submissions.append(copy.identifier)
      return (nil, nil)
    }
    if let violation = outcome.violation { _AppleRules.report(violation.0, violation.1) }
    if let code = outcome.code { throw Error(code) }
  }

  private typealias Code = Error.Code

  /// Cancels a previously scheduled task request.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/cancel(taskrequestwithidentifier:)>
  open func cancel(taskRequestWithIdentifier identifier: String) {
    state.withLock { $0.pending.removeAll { $0.identifier == identifier } }
  }

  /// Cancels all scheduled task requests.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/cancelalltaskrequests()>
  open func cancelAllTaskRequests() {
    state.withLock { $0.pending.removeAll() }
  }

  /// The requests submitted and not yet launched (copies).
  ///
  /// The `async` form Swift imports of `getPendingTaskRequests(completionHandler:)`.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/getpendingtaskrequests(completionhandler:)>
  open func pendingTaskRequests() async -> [BGTaskRequest] {
    state.withLock { s in s.pending.map { $0.copy() as! BGTaskRequest } }
  }

  // MARK: - Test-only hooks (not Apple API)

  /// Test only: the app's `BGTaskSchedulerPermittedIdentifiers` (Info.plist);
  /// an entry ending in `.*` admits continued-processing identifiers under it.
  public func _setPermittedIdentifiers(_ identifiers: [String]) {
    state.withLock { $0.permitted = identifiers }
  }

  /// Test only: the Background App Refresh setting (off: `submit` throws `.unavailable`).
  public func _setBackgroundRefreshAvailable(_ available: Bool) {
    state.withLock { $0.refreshAvailable = available }
  }

  /// Test only: whether the system can start a continued-processing task
  /// now (when not, a `.fail` request throws `.immediateRunIneligible` and
  /// a `.queue` one waits).
  public func _setImmediateRunEligible(_ eligible: Bool) {
    state.withLock { $0.immediateRunEligible = eligible }
  }

  /// Test only: the device's `supportedResources` (none by default).
  @available(iOS 26.0, *)
  public func _setSupportedResources(_ resources: BGContinuedProcessingTaskRequest.Resources) {
    state.withLock { $0.supportedResources = resources.rawValue }
  }

  /// Test only: the app finished launching (UIKit's
  /// `application(_:didFinishLaunchingWithOptions:)` returned).
  public func _finishLaunching() {
    state.withLock { $0.launchingFinished = true }
  }

  /// Test only: forgets everything, as a new process of the app would find
  /// the system (pending requests are kept when `keepPending`, as iOS keeps
  /// them across launches of the app; the permitted list is kept).
  public func _reset(keepPending: Bool = false) {
    state.withLock { s in
      let pending = s.pending
      let permitted = s.permitted
      s = State()
      s.permitted = permitted
      if keepPending { s.pending = pending }
    }
  }

  /// Test only: the messages of the violations recorded so far (Apple's
  /// `NSInternalInconsistencyException` reasons), in order.
  public var _preconditionFailures: [String] { _AppleRules._recorded.map(\.message) }

  /// Test only: every `setTaskCompleted(success:)` the system heard, in order.
  public var _completions: [(identifier: String, success: Bool)] {
    state.withLock { $0.completions.map { (identifier: $0.0, success: $0.1) } }
  }

  /// Test only: the identifiers of accepted submissions, in order.
  public var _submissions: [String] { state.withLock { $0.submissions } }

  /// Test only: every task launched, in order.
  public var _launched: [BGTask] { state.withLock { $0.launched } }

  /// Test only: the task running under `identifier`, if any.
  public func _runningTask(_ identifier: String) -> BGTask? {
    state.withLock { $0.running[identifier] }
  }

  /// Test only: launches the task, as the debugger command
  /// `e -l objc -- (void)[[BGTaskScheduler sharedScheduler]
  /// _simulateLaunchForTaskWithIdentifier:@"…"]` does: the pending request
  /// is taken off the list and the handler runs on its registration's
  /// queue (the scheduler's serial background queue when it gave none).
  /// A pending request with no handler is a crash on a device: reported
  /// as `.launchWithoutHandler`.
  ///
  /// - Returns: false when no request for `identifier` is pending or no
  ///   handler is registered.
  @discardableResult
  public func _simulateLaunchForTaskWithIdentifier(_ identifier: String) -> Bool {
    enum Outcome { case launch(Registration, BGTask), noHandler, notPending }
    let outcome: Outcome = state.withLock { s in
      guard let index = s.pending.firstIndex(where: { $0.identifier == identifier }) else { return .notPending }
      let request = s.pending.remove(at: index)
      guard let registration = s.registrations[identifier] else { return .noHandler }
      let task: BGTask
      switch request {
      case let continued as BGContinuedProcessingTaskRequest:
        task = BGContinuedProcessingTask(
          identifier: identifier, scheduler: self, title: continued.title, subtitle: continued.subtitle)
      case is BGProcessingTaskRequest:
        task = BGProcessingTask(identifier: identifier, scheduler: self)
      default:
        task = BGAppRefreshTask(identifier: identifier, scheduler: self)
      }
      s.running[identifier] = task
      s.launched.append(task)
      return .launch(registration, task)
    }
    switch outcome {
    case .notPending:
      return false
    case .noHandler:
      _AppleRules.report(.launchWithoutHandler, "No launch handler registered for task with identifier \(identifier)")
      return false
    case .launch(let registration, let task):
      let run = UncheckedLaunch(registration.handler, task)
      (registration.queue ?? defaultQueue).async { run.handler(run.task) }
      return true
    }
  }

  /// Test only: calls the running task's expiration handler, as the
  /// debugger command `_simulateExpirationForTaskWithIdentifier:` does
  /// (then the handler is cleared, as Apple's header says). With no
  /// handler set, the task is marked complete and unsuccessful.
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

/// An abstract class representing a task that's run while the app is in
/// the background.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtask>
@available(iOS 13.0, tvOS 13.0, *)
@available(macOS, unavailable)
@available(watchOS, unavailable)
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
  /// Cleared after the system calls it and by `setTaskCompleted(success:)`.
  /// Without one, the system marks the task complete and unsuccessful at
  /// expiration.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtask/expirationhandler>
  open var expirationHandler: (() -> Void)? {
    get { state.withLock { $0.expirationHandler } }
    set { state.withLock { $0.expirationHandler = newValue } }
  }

  /// Informs the background task scheduler that the task is complete. A
  /// second call is reported as `.completedTwice`.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtask/settaskcompleted(success:)>
  open func setTaskCompleted(success: Bool) {
    let first = state.withLock { s -> Bool in
      defer {
        s.completed = true
        s.expirationHandler = nil
      }
      return !s.completed
    }
    if first {
      scheduler?.completed(self, success: success)
    } else {
      _AppleRules.report(.completedTwice, "setTaskCompleted(success:) called again for task \(identifier)")
    }
  }

  /// Test only: runs the expiration handler (see
  /// ``BGTaskScheduler/_simulateExpirationForTaskWithIdentifier(_:)``).
  fileprivate func _expire() -> Bool {
    let handler = state.withLock { s -> (() -> Void)? in
      defer { s.expirationHandler = nil }
      return s.completed ? nil : s.expirationHandler
    }
    guard let handler else {
      if !state.withLock({ $0.completed }) { setTaskCompleted(success: false) }
      return false
    }
    handler()
    return true
  }
}

/// A short task typically used to refresh content, run while the app is
/// in the background.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgapprefreshtask>
@available(iOS 13.0, tvOS 13.0, *)
@available(macOS, unavailable)
@available(watchOS, unavailable)
open class BGAppRefreshTask: BGTask {}

/// A time-consuming processing task that runs while the app is in the background.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgprocessingtask>
@available(iOS 13.0, tvOS 13.0, *)
@available(macOS, unavailable)
@available(watchOS, unavailable)
open class BGProcessingTask: BGTask {}

/// A task performing work the user started, with its progress shown by the
/// system (iOS 26 SDK). It must report progress through `progress`
/// (`NSProgressReporting`): a task that appears stalled may be expired.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgcontinuedprocessingtask>
@available(iOS 26.0, *)
@available(macOS, unavailable)
@available(tvOS, unavailable)
@available(visionOS, unavailable)
@available(macCatalyst, unavailable)
@available(watchOS, unavailable)
open class BGContinuedProcessingTask: BGTask, ProgressReporting {
  private let texts: Locked<[String]>

  /// The task's progress, shown by the system.
  public let progress = Progress(totalUnitCount: 0)

  fileprivate init(identifier: String, scheduler: BGTaskScheduler, title: String, subtitle: String) {
    texts = Locked([title, subtitle])
    super.init(identifier: identifier, scheduler: scheduler)
  }

  /// The localized title displayed to the user.
  open var title: String { texts.withLock { $0[0] } }
  /// The localized subtitle displayed to the user.
  open var subtitle: String { texts.withLock { $0[1] } }

  /// Updates the title and subtitle displayed to the user.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgcontinuedprocessingtask/updatetitle(_:subtitle:)>
  open func updateTitle(_ title: String, subtitle: String) {
    texts.withLock { $0 = [title, subtitle] }
  }
}

/// An abstract class for representing task requests.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskrequest>
@available(iOS 13.0, tvOS 13.0, *)
@available(macOS, unavailable)
@available(watchOS, unavailable)
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
@available(iOS 13.0, tvOS 13.0, *)
@available(macOS, unavailable)
@available(watchOS, unavailable)
open class BGAppRefreshTaskRequest: BGTaskRequest {
  /// Returns a new refresh task request for the specified identifier.
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
@available(iOS 13.0, tvOS 13.0, *)
@available(macOS, unavailable)
@available(watchOS, unavailable)
open class BGProcessingTaskRequest: BGTaskRequest {
  /// Whether the task requires network connectivity (default `false`).
  open var requiresNetworkConnectivity = false

  /// Whether the task requires a device connected to power (default `false`).
  open var requiresExternalPower = false

  /// Returns a new processing task request for the specified identifier.
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

/// A request to begin work the user started at once (or shortly after
/// submission), allowed to continue when the app goes to the background
/// (iOS 26 SDK). Its identifier is `<a permitted prefix>.<anything>`, where
/// Info.plist permits `<prefix>.*`; `earliestBeginDate` is ignored.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgcontinuedprocessingtaskrequest>
@available(iOS 26.0, *)
@available(macOS, unavailable)
@available(tvOS, unavailable)
@available(visionOS, unavailable)
@available(macCatalyst, unavailable)
@available(watchOS, unavailable)
open class BGContinuedProcessingTaskRequest: BGTaskRequest {
  /// What the scheduler does when the task cannot start at once
  /// (`NS_SWIFT_NAME(BGContinuedProcessingTaskRequest.SubmissionStrategy)`).
  public enum SubmissionStrategy: Int, Sendable, Hashable {
    /// Submission fails (`.immediateRunIneligible`) when the task cannot run now.
    case fail = 0
    /// The request waits at the back of a queue.
    case queue = 1
  }

  /// Additional system resources a task needs
  /// (`NS_SWIFT_NAME(BGContinuedProcessingTaskRequest.Resources)`; the
  /// zero-valued `Default` member is not imported: it is `[]`).
  public struct Resources: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Background GPU use (needs an entitlement and a device that supports it).
    public static let gpu = Resources(rawValue: 1 << 0)
  }

  /// The localized title displayed to the user.
  open var title: String
  /// The localized subtitle displayed to the user.
  open var subtitle: String
  /// The submission strategy (default `.queue`).
  open var strategy: SubmissionStrategy = .queue
  /// The additional resources the task needs (default none).
  open var requiredResources: Resources = []

  /// A request on behalf of the app in the foreground.
  public init(identifier: String, title: String, subtitle: String) {
    self.title = title
    self.subtitle = subtitle
    super.init(requestIdentifier: identifier)
  }

  open override func copy(with zone: NSZone? = nil) -> Any {
    let copy = BGContinuedProcessingTaskRequest(identifier: identifier, title: title, subtitle: subtitle)
    copy.earliestBeginDate = earliestBeginDate
    copy.strategy = strategy
    copy.requiredResources = requiredResources
    return copy
  }
}
#endif
