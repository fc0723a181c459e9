#if os(Linux)
import AppleFrameworksStandIn
import Testing
import Foundation
import Forage
import ForageHTTP
import ForageStore
import ForageSupport
import ForageTestSupport

/// A temporary folder removed when the value is released.
final class TemporaryDirectory: Sendable {
  let path: String
  init() {
    path = NSTemporaryDirectory() + "forage-apple-tests-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }
  func file(_ name: String) -> String { path + "/" + name }
  deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// True once `condition` holds, checked every 20 ms for up to `seconds`.
func eventually(_ seconds: Double = 30, _ condition: () async throws -> Bool) async rethrows -> Bool {
  let end = Date().addingTimeInterval(seconds)
  while Date() < end {
    if try await condition() { return true }
    try? await Task.sleep(for: .milliseconds(20))
  }
  return try await condition()
}

/// Returns once the main queue has run every block given to it before the
/// call (the adapter calls Apple's completion handlers there).
func mainQueueDrained() async {
  await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in DispatchQueue.main.async { done.resume() } }
}

/// The system as a freshly installed app finds it: the stand-in's
/// singletons reset, `permitted` in Info.plist, Background App Refresh on.
func freshSystem(permitted: [String]) {
  BGTaskScheduler.shared._reset()
  BGTaskScheduler.shared._setPermittedIdentifiers(permitted)
  BGTaskScheduler.shared._setBackgroundRefreshAvailable(true)
  UNUserNotificationCenter.current()._reset()
}

let refreshID = "com.example.refresh"

/// A config crawling the demo shop at `base` for the task `refreshID`
/// (every 15 minutes), one request at a time, `delay` apart.
func shopConfig(_ base: String, delay: Duration = .zero, notify: [NotifyChannel] = []) -> ForageConfig {
  var fetch = FetchSettings()
  fetch.perHostDelay = delay
  fetch.perHostConcurrency = 1
  fetch.concurrency = 1
  fetch.timeout = .seconds(10)
  var config = ForageConfig(
    userAgent: "ForageAppleTests/1.0", fetch: fetch,
    tasks: [TaskDefinition(id: refreshID, kind: .appRefresh, every: .seconds(900), budget: .seconds(30), sources: ["catalog"])],
    sources: [
      Source(
        name: "catalog", url: base + "/",
        extract: [
          "title": "h1.product-title", "price": .css("span.price", as: .number),
          "sku": .css("div.product", attr: "data-sku", required: true),
        ],
        match: "div.product", key: ["sku"], crawl: CrawlScope(maxDepth: 6, maxPages: 10_000))
    ])
  config.notify = notify
  return config
}

/// How many records the store holds.
func recordCount(_ store: any Store) async throws -> Int {
  var count = 0
  var after: Int64 = 0
  while true {
    let batch = try await store.records(source: nil, afterID: after, limit: 500)
    guard let last = batch.last else { return count }
    count += batch.count
    after = last.id
  }
}

/// The suites that drive `BGTaskScheduler.shared` (one stand-in scheduler
/// for the whole process, as on iOS): serialized together, so that one
/// suite's launches and pending requests never meet another's, whether or
/// not the run is parallel; and strict: a test that breaks one of Apple's
/// rules without taking the violation (`_AppleRules._take()`) fails, as the
/// app would crash or lose the task on a device.
@Suite(.serialized, .appleRules) enum StandInTests {}

/// Fails a test that leaves one of Apple's rules broken (see `_AppleRules`).
struct AppleRulesTrait: SuiteTrait, TestTrait, TestScoping {
  var isRecursive: Bool { true }

  func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    guard !test.isSuite else { return try await function() }
    _AppleRules._reset()
    NSBackgroundActivityScheduler._reset()
    defer {
      for violation in _AppleRules._take() {
        Issue.record("on a device this would end the app or lose the task: \(violation)")
      }
    }
    try await function()
  }
}

extension Trait where Self == AppleRulesTrait {
  /// Fails a test that breaks one of Apple's rules without expecting it.
  static var appleRules: AppleRulesTrait { AppleRulesTrait() }
}

/// The rules broken since the last call, forgotten (a test that expects a
/// violation takes it, so what is left fails the test).
func takeViolations() -> [_AppleRuleViolation.Rule] { _AppleRules._take().map(\.rule) }
#endif
