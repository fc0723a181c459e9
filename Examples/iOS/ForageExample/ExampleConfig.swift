import Foundation
import Forage

/// The app's Forage config: `forage.json`, bundled with the app (its task
/// identifiers are the `BGTaskSchedulerPermittedIdentifiers` of Info.plist;
/// a test in Tests/ForageBackgroundTasksTests checks they agree).
enum ExampleConfig {
  static let downloadSession = "com.example.forage.downloads"

  static var storePath: String {
    let folder = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent("forage.sqlite").path
  }

  /// The shop's product pages, refreshed every 15 minutes when iOS allows;
  /// the whole catalogue crawled in processing time. With `wifiOnly`, the
  /// catalogue waits for a network that is neither cellular nor in Low
  /// Data Mode (the prices stay critical and always run).
  ///
  /// - Throws: `ConfigError` when the bundled file is missing or wrong.
  static func make(wifiOnly: Bool) throws -> ForageConfig {
    guard let path = Bundle.main.path(forResource: "forage", ofType: "json") else {
      throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "forage.json"])
    }
    var config = try ForageConfig.load(path: path)
    if let catalog = config.sources.firstIndex(where: { $0.name == "catalog" }) {
      config.sources[catalog].wifiOnly = wifiOnly
    }
    return config
  }
}

/// The app's settings, in UserDefaults. Background launches read them too:
/// a change applies from the next launch of the app.
enum Settings {
  static var wifiOnly: Bool {
    get { UserDefaults.standard.bool(forKey: "wifiOnly") }
    set { UserDefaults.standard.set(newValue, forKey: "wifiOnly") }
  }
}
