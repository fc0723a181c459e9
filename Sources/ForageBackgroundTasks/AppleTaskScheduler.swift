// ForageBackgroundTasks: Forage under Apple's BGTaskScheduler,
// UserNotifications and background URLSession.
//
// The same source files compile against the real frameworks on iOS, iPadOS,
// Mac Catalyst, tvOS and visionOS (`canImport(BackgroundTasks)`), and on
// Linux against `AppleFrameworksStandIn`, the test-only module that declares
// the subset of Apple's API used here (CI checks the adapter that way; it
// has never been compiled against Apple's SDK). On macOS, which has no
// BackgroundTasks framework, the module is empty (so is the stand-in on
// every platform but Linux).
//
// The adapter stays thin: the launch life cycle is `HostedScheduler`
// (ForageScheduler), the jobs are `TaskRunner` (Forage), notification text is
// `LocalNotification`, downloads land through `Downloads`, and the
// completion handlers of background sessions are kept by
// `BackgroundSessionEvents`. What is here only translates to and from
// Apple's types.

#if canImport(BackgroundTasks)
import BackgroundTasks
#elseif os(Linux)
import AppleFrameworksStandIn
#endif

#if canImport(BackgroundTasks) || os(Linux)
import Foundation
import ForageScheduler

/// `BGTaskScheduler.shared` as the host of a `HostedScheduler`: every call
/// maps one to one onto Apple's, and Apple's errors become `SchedulerError`s.
struct BGTaskSchedulerHost: TaskSchedulerHost {
  func register(identifier: String, launchHandler: @escaping @Sendable (any HostTask) -> Void) -> Bool {
    // nil queue: Apple runs the handler on a background queue of its own.
    BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
      launchHandler(AppleTask(task))
    }
  }

  func submit(_ request: AnyTaskRequest) throws(SchedulerError) {
    let apple: BGTaskRequest
    switch request {
    case .appRefresh(let r):
      let refresh = BGAppRefreshTaskRequest(identifier: r.identifier)
      refresh.earliestBeginDate = r.earliestBeginDate
      apple = refresh
    case .processing(let r):
      let processing = BGProcessingTaskRequest(identifier: r.identifier)
      processing.earliestBeginDate = r.earliestBeginDate
      processing.requiresNetworkConnectivity = r.requiresNetworkConnectivity
      processing.requiresExternalPower = r.requiresExternalPower
      apple = processing
    case .continuedProcessing(let r):
      throw SchedulerError.unsupportedTaskKind.with(
        identifier: r.identifier, detail: "continued-processing tasks are not scheduled through this adapter")
    }
    do {
      try BGTaskScheduler.shared.submit(apple)
    } catch {
      throw AppleErrors.schedulerError(error, identifier: request.identifier)
    }
  }

  func cancel(identifier: String) {
    BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: identifier)
  }

  func cancelAll() {
    BGTaskScheduler.shared.cancelAllTaskRequests()
  }

  func pendingRequests() async -> [AnyTaskRequest] {
    let requests = await BGTaskScheduler.shared.pendingTaskRequests()
    return requests.map(AppleErrors.forageRequest)
  }
}

/// Apple's task as a `HostTask`.
///
/// `@unchecked Sendable`: a `BGTask` is handed to the launch handler on one
/// queue and completed from whichever thread finishes the work, as Apple's
/// own samples do; its two members used here are the system's to
/// synchronize. Nothing else of it is touched.
struct AppleTask: HostTask, @unchecked Sendable {
  let task: BGTask
  let identifier: String
  let kind: TaskKind

  init(_ task: BGTask) {
    self.task = task
    self.identifier = task.identifier
    self.kind = task is BGProcessingTask ? .processing : .appRefresh
  }

  func setExpirationHandler(_ handler: (@Sendable () -> Void)?) {
    task.expirationHandler = handler.map { h in { h() } }
  }

  func setTaskCompleted(success: Bool) {
    task.setTaskCompleted(success: success)
  }
}

/// Translations between Apple's values and Forage's.
enum AppleErrors {
  /// Apple's `BGTaskScheduler.Error` as a `SchedulerError`, with a sentence
  /// saying what to do.
  static func schedulerError(_ error: any Error, identifier: String) -> SchedulerError {
    guard let apple = error as? BGTaskScheduler.Error else {
      return SchedulerError.unavailable.with(identifier: identifier, detail: "iOS refused the request: \(error)")
    }
    // Comparisons rather than a switch: Apple's code enum is open to new
    // cases, the stand-in's is not, and one switch cannot suit both.
    let code = apple.code
    if code == .unavailable {
      return SchedulerError.unavailable.with(
        identifier: identifier,
        detail: "iOS says background work is unavailable: Background App Refresh is off for this app, or it runs in Simulator")
    }
    if code == .tooManyPendingTaskRequests {
      return SchedulerError.tooManyPendingTaskRequests.with(
        identifier: identifier, detail: "iOS keeps one refresh and ten processing requests per app")
    }
    if code == .notPermitted {
      return SchedulerError.notPermitted.with(
        identifier: identifier,
        detail: "add it to BGTaskSchedulerPermittedIdentifiers in Info.plist, with the fetch and processing background modes")
    }
    // `.immediateRunIneligible` (4) is in the iOS 26 SDK only, and for
    // continued-processing requests, which this adapter never submits: its
    // raw value keeps the source compiling with older SDKs and iOS 17.
    if code.rawValue == 4 {
      return SchedulerError.immediateRunIneligible.with(identifier: identifier, detail: "iOS cannot start it now")
    }
    return SchedulerError.unavailable.with(identifier: identifier, detail: "iOS refused the request (code \(code.rawValue))")
  }

  /// Apple's pending request as Forage's.
  static func forageRequest(_ request: BGTaskRequest) -> AnyTaskRequest {
    if let processing = request as? BGProcessingTaskRequest {
      return .processing(
        ProcessingTaskRequest(
          identifier: processing.identifier, earliestBeginDate: processing.earliestBeginDate,
          requiresNetworkConnectivity: processing.requiresNetworkConnectivity,
          requiresExternalPower: processing.requiresExternalPower))
    }
    return .appRefresh(AppRefreshTaskRequest(identifier: request.identifier, earliestBeginDate: request.earliestBeginDate))
  }
}
#endif
