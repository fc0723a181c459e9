// Forage example app: keeps a shop's prices fresh in the background.
//
// Not built by SwiftPM (Examples/ is outside Sources/): add these files and
// forage.json to an iOS app target in Xcode that depends on the package's
// ForageBackgroundTasks product, with the Info.plist keys of Info.plist
// beside this folder.

import BackgroundTasks
import SwiftUI
import UIKit
import Forage
import ForageBackgroundTasks

@main
struct ForageExampleApp: App {
  @UIApplicationDelegateAdaptor(AppDelegate.self) private var delegate

  var body: some Scene {
    WindowGroup {
      ContentView(model: delegate.model)
        // In the foreground, once: iOS shows the prompt the first time only.
        // Without it every local notification fails (and is retried).
        .task { _ = await UserNotificationsPresenter.requestAuthorization() }
    }
  }
}

/// Registers Forage's tasks while the app launches (iOS terminates an app
/// that registers later, or that is launched for an identifier with no
/// handler) and hands background-session events to Forage.
final class AppDelegate: NSObject, UIApplicationDelegate {
  let model = RecordsModel()
  private(set) var tasks: AppBackgroundTasks?
  private(set) var downloads: BackgroundDownloads?

  func application(
    _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil
  ) -> Bool {
    let engine: Engine
    do {
      engine = Engine(
        config: try ExampleConfig.make(wifiOnly: Settings.wifiOnly), store: try Engine.openStore(ExampleConfig.storePath))
    } catch {
      // Every permitted identifier still gets a handler before this method
      // returns: a request pending from an earlier run would otherwise end
      // the app at its next background launch. Each launch fails at once;
      // the next foreground launch tries the store again.
      model.problem = "\(error)"
      Self.registerFailingHandlers()
      return true
    }
    let downloads = BackgroundDownloads(identifier: ExampleConfig.downloadSession, store: engine.store)
    downloads.activate()  // a relaunch for the session's events needs the session again
    self.downloads = downloads
    let tasks = AppBackgroundTasks(engine: engine) { _, _, _ in
      // Feeds and `forage download` queue files: hand them to the background session.
      Task { try? await downloads.start() }
    }
    tasks.registerLaunchHandlers()  // before this method returns
    self.tasks = tasks
    model.attach(engine)
    Task {
      do { try await tasks.scheduleAll() } catch { model.problem = "\(error)" }
      _ = try? await downloads.start()
    }
    return true
  }

  /// A handler for each identifier of Info.plist that completes unsuccessfully.
  private static func registerFailingHandlers() {
    let identifiers = Bundle.main.object(forInfoDictionaryKey: "BGTaskSchedulerPermittedIdentifiers") as? [String] ?? []
    for identifier in identifiers {
      _ = BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
        task.setTaskCompleted(success: false)
      }
    }
  }

  func application(
    _ application: UIApplication, handleEventsForBackgroundURLSession identifier: String,
    completionHandler: @escaping () -> Void
  ) {
    // Kept, and called after the session's last event and its files are in place.
    if downloads?.handleEvents(forBackgroundURLSession: identifier, completionHandler: completionHandler) != true {
      completionHandler()
    }
  }
}
