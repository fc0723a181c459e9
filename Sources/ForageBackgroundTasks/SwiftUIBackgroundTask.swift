// The SwiftUI helper. SwiftUI does not exist on Linux, so this file is not
// compiled in CI: it is checked only by reading, against Apple's
// documentation of `Scene.backgroundTask(_:action:)` and
// `BackgroundTask.appRefresh(_:)`
// (<https://developer.apple.com/documentation/swiftui/scene/backgroundtask(_:action:)>,
// <https://developer.apple.com/documentation/swiftui/backgroundtask/apprefresh(_:)>).
// Its rules are `AppBackgroundTasks.swiftUIAppRefreshProblem(_:)`, which
// the tests check on Linux.

#if canImport(SwiftUI) && (os(iOS) || os(visionOS))
import SwiftUI
import Forage

extension Scene {
  /// Runs the config's refresh tasks when iOS launches the app for an app
  /// refresh, through SwiftUI's `.backgroundTask(.appRefresh(identifier))`:
  /// SwiftUI registers `identifier` with `BGTaskScheduler` itself, so create
  /// `tasks` with `launchesFromSwiftUI: true` and call its
  /// `registerLaunchHandlers()` in the `App`'s initializer. `identifier` is
  /// the config's first `appRefresh` task, whose request every refresh task
  /// rides; a launch runs every refresh task that is due. The task
  /// completes when the launch returns; iOS's expiration cancels it, which
  /// stops the job the way its budget would. Processing tasks are
  /// registered with `BGTaskScheduler` by `registerLaunchHandlers()`.
  ///
  ///     WindowGroup { ContentView() }
  ///       .forageAppRefresh("com.example.refresh", tasks: tasks)
  ///
  /// Stops the app at once, with a sentence saying what to change, when
  /// `tasks` was created without `launchesFromSwiftUI: true` (iOS would end
  /// it for registering `identifier` twice) or `identifier` is not the
  /// first refresh task (it would never be launched).
  public func forageAppRefresh(_ identifier: String, tasks: AppBackgroundTasks) -> some Scene {
    if let problem = tasks.swiftUIAppRefreshProblem(identifier) { preconditionFailure(problem) }
    return backgroundTask(.appRefresh(identifier)) {
      _ = await tasks.handleLaunch(identifier)
    }
  }
}
#endif
