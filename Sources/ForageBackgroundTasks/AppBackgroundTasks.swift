#if canImport(BackgroundTasks)
import BackgroundTasks
#elseif os(Linux)
import AppleFrameworksStandIn
#endif

#if canImport(BackgroundTasks) || os(Linux)
import Foundation
import Forage
import ForageScheduler
import ForageStore

/// A Forage config's tasks, run by iOS: registered with
/// `BGTaskScheduler.shared`, launched by the system, each launch one Forage
/// job within the time iOS gives it.
///
///     // In application(_:didFinishLaunchingWithOptions:), before it returns:
///     let engine = try Engine.open(configPath: Bundle.main.path(forResource: "forage", ofType: "json")!,
///                                  store: documents + "/forage.sqlite")
///     let tasks = AppBackgroundTasks(engine: engine)
///     tasks.registerLaunchHandlers()
///     Task { try await tasks.scheduleAll() }
///
/// Each launch, in order: the next request is submitted (so a launch that
/// is cut short or killed still leaves the task scheduled); the job runs the
/// task's sources, adapted to the conditions (Wi-Fi-only sources wait on
/// cellular, only critical ones run in Low Power Mode); iOS's expiration
/// handler stops it the way its budget would (no new requests, everything
/// fetched is committed, the next launch resumes the crawl); and
/// `setTaskCompleted(success:)` reports whether every planned source was
/// refreshed. Notable changes go to the config's channels, `local` ones as
/// notifications on the device.
///
/// Apple's rules still hold: every identifier must be in
/// `BGTaskSchedulerPermittedIdentifiers` (Info.plist), and
/// ``registerLaunchHandlers()`` must run before the app finishes launching.
public final class AppBackgroundTasks: Sendable {
  /// The engine whose config and store the tasks use.
  public let engine: Engine
  /// The scheduler the tasks are registered on, over `BGTaskScheduler.shared`.
  public let scheduler: HostedScheduler
  /// What runs each launch.
  public let runner: TaskRunner

  /// Prepares the config's tasks for iOS.
  ///
  /// - Parameters:
  ///   - conditions: the device's conditions at each launch (default:
  ///     ``DeviceConditionsMonitor``: network, Low Power Mode, thermal state).
  ///   - notifications: what shows the `local` channel's notifications
  ///     (nil: none are shown, and those deliveries fail).
  ///   - launchesFromSwiftUI: true when the app declares
  ///     `.backgroundTask(.appRefresh(id))` scenes (see
  ///     `Scene.forageAppRefresh(_:tasks:)`): SwiftUI registers with the
  ///     system itself, so ``registerLaunchHandlers()`` registers only with Forage.
  ///   - log: where refused submissions and registrations are written.
  public init(
    engine: Engine, conditions: any ConditionsProvider = DeviceConditionsMonitor(),
    notifications: (any LocalNotificationPresenter)? = UserNotificationsPresenter(),
    launchesFromSwiftUI: Bool = false, log: SchedulerLog = .silent,
    onFinish: (@Sendable (TaskDefinition, LaunchPlan, RunSummary?) -> Void)? = nil
  ) {
    self.engine = engine
    scheduler = HostedScheduler(
      host: BGTaskSchedulerHost(), conditions: conditions, policy: TaskRunner.policy(SchedulingPolicy(), for: engine.config),
      log: log, registersWithHost: !launchesFromSwiftUI)
    runner = TaskRunner(
      config: engine.config, store: engine.store, transport: engine.transport, log: log, onFinish: onFinish,
      localNotifications: notifications)
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

  /// Submits a request for every task that has none pending, to begin now
  /// (iOS decides when).
  ///
  /// - Throws: `SchedulerError` (`.notPermitted` for an identifier missing
  ///   from Info.plist, `.unavailable` when Background App Refresh is off…).
  public func scheduleAll() async throws {
    try await runner.submitAll(to: scheduler, now: Date())
  }

  /// Runs one launch of the task `identifier` in the calling Swift task, as
  /// SwiftUI's `.backgroundTask(.appRefresh(identifier))` closure does:
  /// cancelling the calling task is the expiration.
  ///
  /// - Returns: true when the launch refreshed every planned source.
  @discardableResult
  public func handleLaunch(_ identifier: String) async -> Bool {
    let kind = engine.config.task(withID: identifier)?.kind ?? .appRefresh
    return await scheduler.runRegisteredHandler(identifier, kind: kind) == .completed(success: true)
  }
}
#endif
