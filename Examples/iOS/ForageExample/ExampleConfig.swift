import Foundation
import Forage

/// The app's Forage config, built in code.
enum ExampleConfig {
  /// Must match BGTaskSchedulerPermittedIdentifiers in Info.plist.
  static let refreshTask = "com.example.forage.refresh"
  static let crawlTask = "com.example.forage.crawl"
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
  static func make(wifiOnly: Bool) -> ForageConfig {
    var config = ForageConfig(
      userAgent: "ForageExample/1.0 (+https://example.com/bot)",
      tasks: [
        TaskDefinition(id: refreshTask, kind: .appRefresh, every: .seconds(15 * 60), sources: ["prices"]),
        TaskDefinition(id: crawlTask, kind: .processing, every: .seconds(6 * 3600), sources: ["catalog"]),
      ],
      sources: [
        Source(
          name: "prices", url: "https://example.com/item/1",
          extract: ["title": "h1", "price": .css(".price", as: .number)], critical: true),
        Source(
          name: "catalog", url: "https://example.com/",
          extract: ["title": "h1.product-title", "price": .css("span.price", as: .number)],
          match: "div.product", crawl: CrawlScope(maxDepth: 3, maxPages: 500), wifiOnly: wifiOnly),
      ])
    config.notify = [NotifyChannel(target: .local)]
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
