// Forage example app: keeps a shop's prices fresh in the background.
//
// Not built by SwiftPM (Examples/ is outside Sources/): add these files to an
// iOS app target in Xcode that depends on the package's ForageBackgroundTasks
// product, with the Info.plist keys of Info.plist beside this folder.

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
    }
  }
}

/// Registers Forage's tasks while the app launches (iOS terminates an app
/// that registers later) and hands background-session events to Forage.
final class AppDelegate: NSObject, UIApplicationDelegate {
  let model = RecordsModel()
  private(set) var tasks: AppBackgroundTasks?
  private(set) var downloads: BackgroundDownloads?

  func application(
    _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil
  ) -> Bool {
    do {
      let engine = Engine(
        config: ExampleConfig.make(wifiOnly: Settings.wifiOnly), store: try Engine.openStore(ExampleConfig.storePath))
      let tasks = AppBackgroundTasks(engine: engine)
      tasks.registerLaunchHandlers()  // before this method returns
      self.tasks = tasks
      let downloads = BackgroundDownloads(identifier: ExampleConfig.downloadSession, store: engine.store)
      downloads.activate()  // a relaunch for the session's events needs the session again
      self.downloads = downloads
      model.attach(engine)
      Task {
        do { try await tasks.scheduleAll() } catch { model.problem = "\(error)" }
      }
    } catch {
      model.problem = "\(error)"
    }
    return true
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
