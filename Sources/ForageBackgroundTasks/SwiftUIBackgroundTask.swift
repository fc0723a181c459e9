// The SwiftUI helper. SwiftUI does not exist on Linux, so this file is not
// compiled in CI: it is checked only by reading, against Apple's
// documentation of `Scene.backgroundTask(_:action:)` and
// `BackgroundTask.appRefresh(_:)`
// (<https://developer.apple.com/documentation/swiftui/scene/backgroundtask(_:action:)>,
// <https://developer.apple.com/documentation/swiftui/backgroundtask/apprefresh(_:)>).

#if canImport(SwiftUI) && os(iOS)
import SwiftUI
import Forage

extension Scene {
  /// Runs the Forage task `identifier` when iOS launches the app for an app
  /// refresh with that identifier, through SwiftUI's
  /// `.backgroundTask(.appRefresh(identifier))`: SwiftUI registers with
  /// `BGTaskScheduler` itself, so create `tasks` with
  /// `launchesFromSwiftUI: true` and call its `registerLaunchHandlers()` in
  /// the `App`'s initializer. The task completes when the launch returns;
  /// iOS's expiration cancels it, which stops the job the way its budget would.
  ///
  ///     WindowGroup { ContentView() }
  ///       .forageAppRefresh("com.example.refresh", tasks: tasks)
  public func forageAppRefresh(_ identifier: String, tasks: AppBackgroundTasks) -> some Scene {
    backgroundTask(.appRefresh(identifier)) {
      _ = await tasks.handleLaunch(identifier)
    }
  }
}
#endif
