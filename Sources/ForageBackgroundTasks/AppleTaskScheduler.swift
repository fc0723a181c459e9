// ForageBackgroundTasks: Forage under Apple's BGTaskScheduler (iOS, iPadOS,
// Mac Catalyst, visionOS), NSBackgroundActivityScheduler (macOS),
// UserNotifications and background URLSession.
//
// BackgroundTasks exists on iOS, iPadOS, Mac Catalyst, tvOS and visionOS,
// and is `API_UNAVAILABLE(macos)` although the module can be imported there:
// the BG* code is compiled under `os(iOS) || os(visionOS)` (`os(iOS)` holds
// for Mac Catalyst too), never `canImport(BackgroundTasks)`. tvOS is left
// out: the adapter's notifications and battery reading do not exist there.
// On Linux the same files compile against `AppleFrameworksStandIn`, the
// test-only module declaring the subset of Apple's API used here, with the
// SDK's signatures and availability (docs/apple.md lists each, with the
// header it was checked against).
//
// The adapter stays thin: the launch life cycle is `HostedScheduler`
// (ForageScheduler), the jobs are `TaskRunner` (Forage), notification text is
// `LocalNotification`, downloads land through `Downloads`, and the
// completion handlers of background sessions are kept by
// `BackgroundSessionEvents`. What is here only translates to and from
// Apple's types, and keeps Apple's rules (one refresh request per app,
// completion soon after expiration) that Forage's own schedulers do not have.

#if os(Linux)
import AppleFrameworksStandIn
#elseif os(iOS) || os(visionOS)
import BackgroundTasks
#endif

#if os(iOS) || os(visionOS) || os(Linux)
import Foundation
import ForageScheduler
import ForageStore
import ForageSupport

/// How a config's tasks map onto `BGTaskScheduler`'s identifiers.
struct AppleTaskPlan: Sendable {
  /// The `appRefresh` tasks, in config order: served by one request (``SharedRefresh``).
  var refresh: [String] = []
  /// The `continuedProcessing` tasks: registered with iOS when started
  /// (under `<identifier>.<unique>`), never at launch.
  var continued: Set<String> = []
  /// Identifiers SwiftUI registers itself (`.backgroundTask(.appRefresh(id))`).
  var swiftUIOwned: Set<String> = []
}

/// `BGTaskScheduler.shared` as the host of a `HostedScheduler`.
///
/// Calls map onto Apple's and Apple's errors become `SchedulerError`s, with
/// three translations Apple's rules need: every `appRefresh` task rides one
/// refresh request (iOS keeps one per app); a continued-processing request
/// is registered and submitted under a fresh identifier below the task's
/// (`<task>.*` in Info.plist); and a launch is completed at most
/// ``AppleDefaults/expirationGrace`` after iOS's expiration handler.
final class BGTaskSchedulerHost: TaskSchedulerHost {
  let plan: AppleTaskPlan
  let grace: Duration
  private let log: SchedulerLog

  private struct State: Sendable {
    var handlers: [String: @Sendable (any HostTask) -> Void] = [:]
    var refresh: SharedRefresh
    /// Apple identifiers of submitted continued-processing requests, by task.
    var continuedIdentifiers: [String: [String]] = [:]
    /// The running continued-processing launches, by task.
    var progress: [String: ContinuedProgress] = [:]
    /// Continued-processing tasks submitted or running: each runs once per start.
    var continuedActive: Set<String> = []
    /// Whether refresh requests of other members (an earlier version of the
    /// app submitted one each) were cancelled: they would keep the shared one out.
    var straysCancelled = false
  }
  private let state: Locked<State>

  init(plan: AppleTaskPlan = AppleTaskPlan(), grace: Duration = AppleDefaults.expirationGrace, log: SchedulerLog = .silent) {
    self.plan = plan
    self.grace = grace
    self.log = log
    state = Locked(State(refresh: SharedRefresh(members: plan.refresh)))
  }

  private var carrier: String? { plan.refresh.first }

  func register(identifier: String, launchHandler: @escaping @Sendable (any HostTask) -> Void) -> Bool {
    state.withLock { $0.handlers[identifier] = launchHandler }
    // SwiftUI registers its own; continued-processing tasks register when started.
    if plan.swiftUIOwned.contains(identifier) || plan.continued.contains(identifier) { return true }
    let shared = identifier == carrier
    // nil queue: Apple runs the handler on a background queue of its own.
    return BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { [self] task in
      let launch = AppleLaunch(task, grace: grace)
      if shared {
        launchShared(launch)
      } else {
        run(identifier, kind: AppleLaunch.kind(of: task), in: launch)
      }
    }
  }

  /// Runs every refresh task that is due in one launch of the shared request.
  private func launchShared(_ launch: AppleLaunch) {
    let run = dueRefreshMembers()
    launch.expect(run)
    for identifier in run { self.run(identifier, kind: .appRefresh, in: launch) }
  }

  /// The refresh tasks a launch of the shared request runs now (they are
  /// no longer pending); the others keep the request submitted.
  func dueRefreshMembers() -> [String] {
    let (run, next) = state.withLock { s -> ([String], Date??) in
      let run = s.refresh.launch(now: Date())
      return (run, s.refresh.hasPending ? .some(s.refresh.soonest) : nil)
    }
    // Members that did not run keep the request alive (those that run resubmit as they start).
    if let next { submitShared(earliest: next) }
    return run
  }

  private func run(_ identifier: String, kind: TaskKind, in launch: AppleLaunch) {
    launch.expect([identifier])
    guard let handler = state.withLock({ $0.handlers[identifier] }) else {
      log.write("iOS launched \(identifier), which has no Forage handler: it completes unsuccessfully")
      launch.completed(identifier, success: false)
      return
    }
    handler(LaunchMember(launch: launch, identifier: identifier, kind: kind))
  }

  private func submitShared(earliest: Date?) {
    guard let carrier else { return }
    let request = BGAppRefreshTaskRequest(identifier: carrier)
    request.earliestBeginDate = earliest
    do { try BGTaskScheduler.shared.submit(request) } catch {
      log.write("iOS refused the shared refresh request \(carrier): \(AppleErrors.schedulerError(error, identifier: carrier))")
    }
  }

  func submit(_ request: AnyTaskRequest) throws(SchedulerError) {
    let apple: BGTaskRequest
    switch request {
    case .appRefresh(let r):
      if let carrier, plan.refresh.contains(r.identifier) {
        let (earliest, strays) = state.withLock { s in
          defer { s.straysCancelled = true }
          return (s.refresh.submit(r.identifier, earliest: r.earliestBeginDate), s.straysCancelled ? [] : plan.refresh.dropFirst())
        }
        for stray in strays { BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: stray) }
        let shared = BGAppRefreshTaskRequest(identifier: carrier)
        shared.earliestBeginDate = earliest
        apple = shared
      } else {
        let refresh = BGAppRefreshTaskRequest(identifier: r.identifier)
        refresh.earliestBeginDate = r.earliestBeginDate
        apple = refresh
      }
    case .processing(let r):
      let processing = BGProcessingTaskRequest(identifier: r.identifier)
      processing.earliestBeginDate = r.earliestBeginDate
      processing.requiresNetworkConnectivity = r.requiresNetworkConnectivity
      processing.requiresExternalPower = r.requiresExternalPower
      apple = processing
    case .continuedProcessing(let r):
      try submitContinued(r)
      return
    }
    do {
      try BGTaskScheduler.shared.submit(apple)
    } catch {
      throw AppleErrors.schedulerError(error, identifier: request.identifier)
    }
  }

  func cancel(identifier: String) {
    if let carrier, plan.refresh.contains(identifier) {
      let (others, next) = state.withLock { s in (s.refresh.cancel(identifier), s.refresh.soonest) }
      if others { submitShared(earliest: next) } else { BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: carrier) }
      return
    }
    let continued: [String] = state.withLock { s in
      // A running one stays active: it ends by itself.
      if s.progress[identifier] == nil { s.continuedActive.remove(identifier) }
      return s.continuedIdentifiers.removeValue(forKey: identifier) ?? []
    }
    for apple in continued { BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: apple) }
    BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: identifier)
  }

  func cancelAll() {
    state.withLock { s in
      s.refresh.cancelAll()
      s.continuedIdentifiers = [:]
      s.continuedActive = Set(s.progress.keys)
    }
    BGTaskScheduler.shared.cancelAllTaskRequests()
  }

  func pendingRequests() async -> [AnyTaskRequest] {
    var out: [AnyTaskRequest] = []
    for request in await BGTaskScheduler.shared.pendingTaskRequests() {
      if request.identifier == carrier, request is BGAppRefreshTaskRequest {
        // The shared request stands for every member still waiting.
        let members = state.withLock { s in
          s.refresh.seed(request.identifier, earliest: request.earliestBeginDate)
          return s.refresh.pending
        }
        out += members.map { .appRefresh(AppRefreshTaskRequest(identifier: $0.identifier, earliestBeginDate: $0.earliest)) }
      } else if request is BGAppRefreshTaskRequest, plan.refresh.contains(request.identifier) {
        // Another member's own request, from an earlier version of the app:
        // not counted, so the member is submitted into the shared request
        // (which cancels this one).
        continue
      } else if let forage = continuedRequest(request) {
        out.append(forage)
      } else {
        out.append(AppleErrors.forageRequest(request))
      }
    }
    return out
  }

  // MARK: Continued processing (iOS 26)

  private func submitContinued(_ r: ContinuedProcessingTaskRequest) throws(SchedulerError) {
    #if ((os(iOS) && !targetEnvironment(macCatalyst)) || os(Linux)) && compiler(>=6.2)
    guard #available(iOS 26.0, *) else {
      throw SchedulerError.unsupportedTaskKind.with(identifier: r.identifier, detail: "continued processing needs iOS 26")
    }
    guard let handler = state.withLock({ $0.handlers[r.identifier] }) else {
      throw SchedulerError.launchHandlerNotRegistered.with(identifier: r.identifier, detail: "")
    }
    // One run per start: a second start while one is pending or running
    // (or a launch resubmitting itself) would show two progress bars.
    guard state.withLock({ $0.continuedActive.insert(r.identifier).inserted }) else {
      throw SchedulerError.unavailable.with(
        identifier: r.identifier, detail: "it is already started; it can be started again once it ends")
    }
    // iOS wants `<prefix>.<unique>` under a `<prefix>.*` entry, registered
    // when submitted (exempt from the before-launch rule), each once.
    let apple = r.identifier + "." + UUID().uuidString
    let registered = BGTaskScheduler.shared.register(forTaskWithIdentifier: apple, using: nil) { [self] task in
      let launch = AppleLaunch(task, grace: grace)
      launch.expect([r.identifier])
      if let continued = task as? BGContinuedProcessingTask {
        state.withLock { $0.progress[r.identifier] = ContinuedProgress(continued) }
      }
      launch.onComplete { [self] in
        state.withLock { s in
          s.progress[r.identifier]?.finish()
          s.progress[r.identifier] = nil
          s.continuedIdentifiers[r.identifier]?.removeAll { $0 == apple }
          s.continuedActive.remove(r.identifier)
        }
      }
      handler(LaunchMember(launch: launch, identifier: r.identifier, kind: .continuedProcessing))
    }
    guard registered else {
      state.withLock { _ = $0.continuedActive.remove(r.identifier) }
      throw SchedulerError.notPermitted.with(
        identifier: r.identifier, detail: "add \(r.identifier).* to BGTaskSchedulerPermittedIdentifiers in Info.plist")
    }
    let request = BGContinuedProcessingTaskRequest(identifier: apple, title: r.title, subtitle: r.subtitle)
    request.strategy = r.strategy == .fail ? .fail : .queue
    do {
      try BGTaskScheduler.shared.submit(request)
    } catch {
      state.withLock { _ = $0.continuedActive.remove(r.identifier) }
      throw AppleErrors.schedulerError(error, identifier: r.identifier)
    }
    state.withLock { $0.continuedIdentifiers[r.identifier, default: []].append(apple) }
    #else
    throw SchedulerError.unsupportedTaskKind.with(identifier: r.identifier, detail: "continued processing exists on iOS and iPadOS only")
    #endif
  }

  private func continuedRequest(_ request: BGTaskRequest) -> AnyTaskRequest? {
    #if ((os(iOS) && !targetEnvironment(macCatalyst)) || os(Linux)) && compiler(>=6.2)
    guard #available(iOS 26.0, *), let c = request as? BGContinuedProcessingTaskRequest,
      let task = plan.continued.first(where: { c.identifier.hasPrefix($0 + ".") })
    else { return nil }
    return .continuedProcessing(
      ContinuedProcessingTaskRequest(
        identifier: task, title: c.title, subtitle: c.subtitle, strategy: c.strategy == .fail ? .fail : .queue))
    #else
    return nil
    #endif
  }

  /// Shows a running continued-processing task's progress to the person:
  /// pages answered out of pages known, and a subtitle counting them.
  func reportProgress(_ identifier: String, _ summary: RunSummary) {
    state.withLock { $0.progress[identifier] }?.update(summary)
  }
}

/// One launch of an Apple `BGTask`, serving one Forage task or several (the
/// shared refresh request): Apple hears `setTaskCompleted(success:)` once,
/// when every member completed (success when all succeeded), or
/// ``AppleDefaults/expirationGrace`` after its expiration handler, whichever
/// comes first.
///
/// `@unchecked Sendable`: the `BGTask` is Apple's, not Sendable; only its
/// `expirationHandler` (set once, here) and `setTaskCompleted(success:)`
/// (called once, guarded by the lock) are touched, from any thread, as
/// Apple's samples do. The rest is behind the lock.
final class AppleLaunch: @unchecked Sendable {
  private let task: BGTask
  private let grace: Duration
  private struct State: Sendable {
    var waiting: Set<String> = []
    var expected = 0
    var failed = false
    var completed = false
    var expirationHandlers: [String: @Sendable () -> Void] = [:]
    var onComplete: [@Sendable () -> Void] = []
  }
  private let state = Locked(State())

  init(_ task: BGTask, grace: Duration) {
    self.task = task
    self.grace = grace
    // Set before any member starts: an expiration that comes at once still reaches them.
    task.expirationHandler = { [self] in expire() }
  }

  /// The kind of Forage task an Apple task is.
  static func kind(of task: BGTask) -> TaskKind {
    #if ((os(iOS) && !targetEnvironment(macCatalyst)) || os(Linux)) && compiler(>=6.2)
    if #available(iOS 26.0, *), task is BGContinuedProcessingTask { return .continuedProcessing }
    #endif
    return task is BGProcessingTask ? .processing : .appRefresh
  }

  /// Adds members the launch waits for.
  func expect(_ identifiers: [String]) {
    state.withLock { s in
      for id in identifiers where s.waiting.insert(id).inserted { s.expected += 1 }
    }
    if identifiers.isEmpty && state.withLock({ $0.expected == 0 }) { finish(success: true) }
  }

  /// Called once Apple has heard the completion.
  func onComplete(_ body: @escaping @Sendable () -> Void) {
    state.withLock { $0.onComplete.append(body) }
  }

  func setExpirationHandler(_ identifier: String, _ handler: (@Sendable () -> Void)?) {
    state.withLock { $0.expirationHandlers[identifier] = handler }
  }

  /// A member is done; the last one completes Apple's task.
  func completed(_ identifier: String, success: Bool) {
    let done: Bool? = state.withLock { s in
      guard !s.completed, s.waiting.remove(identifier) != nil else { return nil }
      if !success { s.failed = true }
      return s.waiting.isEmpty ? !s.failed : nil
    }
    if let done { finish(success: done) }
  }

  /// iOS's expiration: every member stops as at its budget, and Apple's
  /// task completes within the grace whatever they are still doing.
  private func expire() {
    let handlers = state.withLock { Array($0.expirationHandlers.values) }
    for handler in handlers { handler() }
    let seconds = grace.timeInterval
    DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + seconds) { [self] in finish(success: false) }
  }

  private func finish(success: Bool) {
    let after: [@Sendable () -> Void]? = state.withLock { s in
      guard !s.completed else { return nil }
      s.completed = true
      return s.onComplete
    }
    guard let after else { return }
    task.setTaskCompleted(success: success)
    for body in after { body() }
  }
}

/// One Forage task's part of an ``AppleLaunch``, as a `HostTask`.
struct LaunchMember: HostTask {
  let launch: AppleLaunch
  let identifier: String
  let kind: TaskKind

  func setExpirationHandler(_ handler: (@Sendable () -> Void)?) {
    launch.setExpirationHandler(identifier, handler)
  }

  func setTaskCompleted(success: Bool) {
    launch.completed(identifier, success: success)
  }
}

/// A running continued-processing task's `progress` and title, fed by the
/// job's commits.
///
/// `@unchecked Sendable`: the task is Apple's, not Sendable; `Progress` is
/// thread-safe and `updateTitle(_:subtitle:)` is Apple's to synchronize.
struct ContinuedProgress: @unchecked Sendable {
  private let update: (RunSummary) -> Void
  private let done: () -> Void

  #if ((os(iOS) && !targetEnvironment(macCatalyst)) || os(Linux)) && compiler(>=6.2)
  @available(iOS 26.0, *)
  init(_ task: BGContinuedProcessingTask) {
    let title = task.title
    update = { summary in
      let answered = summary.pagesFetched + summary.pagesNotModified + summary.pagesFresh + summary.pagesFailed
      let known = answered + summary.pagesDeferred
      // Never complete before the job ends: a crawl's total is only known then.
      task.progress.totalUnitCount = Int64(max(known, answered + 1))
      task.progress.completedUnitCount = Int64(answered)
      let changes = summary.recordsNew + summary.recordsChanged + summary.recordsRemoved
      task.updateTitle(title, subtitle: "\(answered) pages, \(changes) changes")
    }
    done = {
      task.progress.totalUnitCount = max(task.progress.totalUnitCount, 1)
      task.progress.completedUnitCount = task.progress.totalUnitCount
    }
  }
  #endif

  func update(_ summary: RunSummary) { update(summary) }
  func finish() { done() }
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
    // `.immediateRunIneligible` (4) is in the iOS 26 SDK only: its raw
    // value keeps the source compiling with the iOS 17 and 18 SDKs.
    if code.rawValue == 4 {
      return SchedulerError.immediateRunIneligible.with(
        identifier: identifier, detail: "iOS cannot start it now; try again in a moment, or submit it with the queue strategy")
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
