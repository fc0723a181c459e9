#if os(Linux)
import AppleFrameworksStandIn
#elseif os(iOS) || os(visionOS)
import BackgroundTasks
#endif

#if os(iOS) || os(visionOS) || os(macOS) || os(Linux)
import Foundation
import Forage
import ForageScheduler
import ForageStore

/// A Forage config's tasks, run by the system: on iOS, iPadOS, Mac Catalyst
/// and visionOS registered with `BGTaskScheduler.shared`; on macOS
/// scheduled with `NSBackgroundActivityScheduler`. One API, so one app
/// target builds for iOS and macOS.
///
///     // In application(_:didFinishLaunchingWithOptions:) (or the App's init), before it returns:
///     let tasks = AppBackgroundTasks(engine: engine)
///     tasks.registerLaunchHandlers()
///     Task { try await tasks.scheduleAll() }
///
/// Each launch, in order: the next request is submitted (so a launch that
/// is cut short or killed still leaves the task scheduled); the job runs the
/// task's sources, adapted to the conditions (Wi-Fi-only sources wait on
/// cellular or an unknown network, only critical ones run in Low Power
/// Mode); the system's expiration (iOS's expiration handler, macOS's
/// `shouldDefer`) stops it the way its budget would (no new requests,
/// everything fetched is committed, the next launch resumes the crawl); and
/// the system hears whether every planned source was refreshed. On iOS the
/// completion follows the expiration within a second, whatever the job is
/// still waiting for. Notable changes go to the config's channels, `local`
/// ones as notifications on the device.
///
/// iOS keeps one pending refresh request per app: every `appRefresh` task
/// of the config rides one request, submitted under the first refresh
/// task's identifier, due at the soonest of theirs; its launch runs every
/// refresh task that is due. A `continuedProcessing` task (iOS 26) is
/// started from a person's action with ``startContinuedProcessing(_:title:subtitle:strategy:)``.
///
/// Apple's rules still hold: every identifier must be in
/// `BGTaskSchedulerPermittedIdentifiers` (Info.plist; `<id>.*` for a
/// continued-processing task), and ``registerLaunchHandlers()`` must run
/// before the app finishes launching.
public final class AppBackgroundTasks: Sendable {
  /// The engine whose config and store the tasks use.
  public let engine: Engine
  /// The scheduler the tasks are registered on, over the system's.
  public let scheduler: HostedScheduler
  /// What runs each launch.
  public let runner: TaskRunner
  /// Whether SwiftUI's `.backgroundTask(.appRefresh(id))` launches the refresh tasks.
  public let launchesFromSwiftUI: Bool
  private let log: SchedulerLog
  private let shared: SharedRefresh
  #if os(iOS) || os(visionOS) || os(Linux)
  private let appleHost: BGTaskSchedulerHost?
  #endif

  /// Which system scheduler the tasks run under.
  enum Backend: Sendable {
    #if os(iOS) || os(visionOS) || os(Linux)
    /// `BGTaskScheduler`, completing a launch `grace` after its expiration.
    case backgroundTasks(grace: Duration)
    #endif
    #if os(macOS) || os(Linux)
    /// `NSBackgroundActivityScheduler`, asking `shouldDefer` every `poll`.
    case activityScheduler(poll: Duration)
    #endif

    /// The platform's own.
    static var platform: Backend {
      #if os(macOS)
      .activityScheduler(poll: AppleDefaults.deferPollInterval)
      #else
      .backgroundTasks(grace: AppleDefaults.expirationGrace)
      #endif
    }
  }

  /// Prepares the config's tasks for the system.
  ///
  /// - Parameters:
  ///   - conditions: the device's conditions at each launch (default:
  ///     ``DeviceConditionsMonitor``: network, battery, Low Power Mode,
  ///     thermal state).
  ///   - notifications: what shows the `local` channel's notifications
  ///     (nil: none are shown, and those deliveries fail).
  ///   - launchesFromSwiftUI: true when the app declares
  ///     `.backgroundTask(.appRefresh(id))` scenes (see
  ///     `Scene.forageAppRefresh(_:tasks:)`): SwiftUI registers the refresh
  ///     identifier with the system itself, so ``registerLaunchHandlers()``
  ///     registers it only with Forage (processing tasks, which SwiftUI has
  ///     no scene for, are still registered with `BGTaskScheduler`).
  ///   - log: where refused submissions and registrations are written.
  ///   - onFinish: called after each launch with its plan and summary.
  public convenience init(
    engine: Engine, conditions: any ConditionsProvider = DeviceConditionsMonitor(),
    notifications: (any LocalNotificationPresenter)? = UserNotificationsPresenter(),
    launchesFromSwiftUI: Bool = false, log: SchedulerLog = .silent,
    onFinish: (@Sendable (TaskDefinition, LaunchPlan, RunSummary?) -> Void)? = nil
  ) {
    self.init(
      engine: engine, conditions: conditions, notifications: notifications, launchesFromSwiftUI: launchesFromSwiftUI,
      log: log, onFinish: onFinish, backend: .platform)
  }

  init(
    engine: Engine, conditions: any ConditionsProvider, notifications: (any LocalNotificationPresenter)?,
    launchesFromSwiftUI: Bool, log: SchedulerLog, onFinish: (@Sendable (TaskDefinition, LaunchPlan, RunSummary?) -> Void)?,
    backend: Backend
  ) {
    self.engine = engine
    self.launchesFromSwiftUI = launchesFromSwiftUI
    self.log = log
    let tasks = engine.config.tasks
    let refresh = tasks.filter { $0.kind == .appRefresh }.map(\.id)
    shared = SharedRefresh(members: refresh)
    let host: any TaskSchedulerHost
    var progress: (@Sendable (TaskDefinition, RunSummary) -> Void)?
    #if os(iOS) || os(visionOS) || os(Linux)
    var apple: BGTaskSchedulerHost?
    #endif
    switch backend {
    #if os(iOS) || os(visionOS) || os(Linux)
    case .backgroundTasks(let grace):
      let plan = AppleTaskPlan(
        refresh: refresh, continued: Set(tasks.filter { $0.kind == .continuedProcessing }.map(\.id)),
        swiftUIOwned: launchesFromSwiftUI ? Set(refresh) : [])
      let bg = BGTaskSchedulerHost(plan: plan, grace: grace, log: log)
      apple = bg
      host = bg
      progress = { task, summary in bg.reportProgress(task.id, summary) }
    #endif
    #if os(macOS) || os(Linux)
    case .activityScheduler(let poll):
      host = BackgroundActivityHost(poll: poll, log: log)
    #endif
    }
    #if os(iOS) || os(visionOS) || os(Linux)
    appleHost = apple
    #endif
    scheduler = HostedScheduler(
      host: host, conditions: conditions, policy: TaskRunner.policy(SchedulingPolicy(), for: engine.config), log: log)
    runner = TaskRunner(
      config: engine.config, store: engine.store, transport: engine.transport, log: log, onFinish: onFinish,
      progress: progress, localNotifications: notifications)
  }

  /// Registers a launch handler for every task of the config. Call it once,
  /// before the app finishes launching (`application(_:didFinishLaunchingWithOptions:)`,
  /// or the `App`'s initializer): iOS terminates an app that registers later.
  /// A second call is refused by Forage, with a logged sentence, before it
  /// reaches iOS.
  public func registerLaunchHandlers() {
    runner.register(on: scheduler)
    scheduler.finishLaunching()
  }

  /// Submits a request for every scheduled task that has none pending, to
  /// begin now (the system decides when). A refused task does not keep the
  /// others from being submitted: the first refusal is thrown after all
  /// were tried. `continuedProcessing` tasks are not scheduled: they start
  /// from a person's action.
  ///
  /// - Throws: `SchedulerError` (`.notPermitted` for an identifier missing
  ///   from Info.plist, `.unavailable` when Background App Refresh is off…).
  public func scheduleAll() async throws {
    let pending = Set(await scheduler.pendingTaskRequests().map(\.identifier))
    var first: (any Error)?
    for task in engine.config.tasks where task.kind != .continuedProcessing && !pending.contains(task.id) {
      do {
        try scheduler.submit(TaskRunner.request(for: task, earliestBeginDate: Date()))
      } catch {
        log.write("cannot schedule \(task.id): \(error)")
        first = first ?? error
      }
    }
    if let first { throw first }
  }

  /// Starts the `continuedProcessing` task `identifier` now, from a
  /// person's action ("refresh everything"): iOS 26 shows `title` and
  /// `subtitle` with the job's progress (pages answered) while it runs, in
  /// the foreground and on in the background, until it is done or the
  /// system expires it (which stops it as its budget would). Info.plist
  /// must permit `<identifier>.*`.
  ///
  ///     Button("Refresh everything") {
  ///       try? tasks.startContinuedProcessing("com.example.forage.everything", title: "Refreshing prices")
  ///     }
  ///
  /// - Parameter strategy: `.queue` waits when iOS cannot start it at
  ///   once; `.fail` throws `.immediateRunIneligible` instead.
  /// - Throws: `SchedulerError`: `.unsupportedTaskKind` before iOS 26 or on
  ///   macOS, `.launchHandlerNotRegistered` for a task the config lacks,
  ///   `.notPermitted`, `.immediateRunIneligible`.
  public func startContinuedProcessing(
    _ identifier: String, title: String, subtitle: String = "",
    strategy: ContinuedProcessingTaskRequest.SubmissionStrategy = .queue
  ) throws(SchedulerError) {
    guard engine.config.task(withID: identifier)?.kind == .continuedProcessing else {
      throw SchedulerError.unsupportedTaskKind.with(
        identifier: identifier, detail: "the config has no continuedProcessing task with this identifier")
    }
    try scheduler.submit(
      ContinuedProcessingTaskRequest(identifier: identifier, title: title, subtitle: subtitle, strategy: strategy))
  }

  /// Runs one launch of the refresh task `identifier` in the calling Swift
  /// task, as SwiftUI's `.backgroundTask(.appRefresh(identifier))` closure
  /// does: cancelling the calling task is the expiration. A launch of the
  /// shared refresh request runs every refresh task that is due.
  ///
  /// - Returns: true when the launch refreshed every planned source.
  @discardableResult
  public func handleLaunch(_ identifier: String) async -> Bool {
    let kind = engine.config.task(withID: identifier)?.kind ?? .appRefresh
    guard kind == .appRefresh, identifier == shared.carrier else {
      return await scheduler.runRegisteredHandler(identifier, kind: kind) == .completed(success: true)
    }
    #if os(iOS) || os(visionOS) || os(Linux)
    let members = appleHost?.dueRefreshMembers() ?? shared.members
    #else
    let members = shared.members
    #endif
    let scheduler = self.scheduler
    return await withTaskGroup(of: Bool.self) { group in
      for member in members {
        group.addTask { await scheduler.runRegisteredHandler(member, kind: .appRefresh) == .completed(success: true) }
      }
      return await group.reduce(true) { $0 && $1 }
    }
  }

  /// Why `.forageAppRefresh(identifier, tasks: self)` would break iOS's
  /// rules, or nil when it is right: these tasks must be created with
  /// `launchesFromSwiftUI: true` (else the identifier is registered twice,
  /// which ends the app), and `identifier` must be the config's first
  /// refresh task (the one request every refresh task rides).
  public func swiftUIAppRefreshProblem(_ identifier: String) -> String? {
    guard launchesFromSwiftUI else {
      return "AppBackgroundTasks must be created with launchesFromSwiftUI: true to use .forageAppRefresh(\"\(identifier)\"): "
        + "its launch handlers are registered with BGTaskScheduler, and SwiftUI registering \(identifier) again ends the app"
    }
    guard let carrier = shared.carrier else {
      return "the config has no appRefresh task: .forageAppRefresh(\"\(identifier)\") would never run"
    }
    guard identifier == carrier else {
      return "use .forageAppRefresh(\"\(carrier)\"): every appRefresh task rides the request of the config's first one, "
        + "so \(identifier) is never launched on its own"
    }
    return nil
  }
}
#endif
