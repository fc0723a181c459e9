#if os(Linux)
import AppleFrameworksStandIn
import Foundation
import Testing
import Forage
import ForageHTTP
import ForageScheduler
import ForageStore
import ForageSupport
import ForageTestSupport
@testable import ForageBackgroundTasks

let crawlID = "com.example.crawl"

/// A presenter that does not answer until released (at most 60 s), deaf
/// to cancellation.
final class HangingPresenter: LocalNotificationPresenter {
  private let state = Locked((calls: 0, released: false))
  var calls: Int { state.withLock { $0.calls } }
  var isReleased: Bool { state.withLock { $0.released } }
  func release() { state.withLock { $0.released = true } }
  func present(_ notification: LocalNotification) async throws {
    state.withLock { $0.calls += 1 }
    for _ in 0..<6000 where !isReleased { usleep(10_000) }
  }
}

/// The adapter's crash paths and silent failures on iOS (issue 26), each
/// tripping one of the stand-in's rules on the code before the fix.
extension StandInTests {
  @Suite(.serialized) struct AppleIssue26Tests {
    /// `shopConfig` plus a processing task crawling the same shop.
    func shopWithCrawl(_ base: String) -> ForageConfig {
      var config = shopConfig(base)
      config.tasks.append(
        TaskDefinition(id: crawlID, kind: .processing, every: .seconds(6 * 3600), budget: .seconds(60), sources: ["catalog"]))
      return config
    }

    @Test func test_issue26_swiftUIMode_stillRegistersProcessingTasks_soTheirLaunchHasAHandler() async throws {
      freshSystem(permitted: [refreshID, crawlID])
      let server = try TestServer(site: DemoSite(products: 4))
      defer { server.stop() }
      let dir = TemporaryDirectory()
      let engine = Engine(config: shopWithCrawl(server.baseURL), store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = AppBackgroundTasks(
        engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil, launchesFromSwiftUI: true)
      tasks.registerLaunchHandlers()
      // SwiftUI's `.backgroundTask(.appRefresh(refreshID))` registers the refresh identifier.
      #expect(BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { _ in })
      BGTaskScheduler.shared._finishLaunching()
      try await tasks.scheduleAll()
      // SwiftUI has no processing scene: the launch finds Forage's handler.
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(crawlID))
      #expect(await eventually { BGTaskScheduler.shared._completions.count == 1 })
      #expect(BGTaskScheduler.shared._completions.map(\.identifier) == [crawlID])
      #expect(BGTaskScheduler.shared._completions.map(\.success) == [true])
    }

    @Test func test_issue26_forageAppRefresh_withoutSwiftUIMode_isStoppedWithASentence() throws {
      freshSystem(permitted: [refreshID])
      let dir = TemporaryDirectory()
      let engine = Engine(config: shopConfig("http://127.0.0.1:9"), store: try SQLiteStore(path: dir.file("s.sqlite")))
      let plain = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil)
      plain.registerLaunchHandlers()
      let problem = try #require(plain.swiftUIAppRefreshProblem(refreshID))
      #expect(problem.contains("launchesFromSwiftUI: true"))
      // What iOS would do if the scene registered it anyway.
      #expect(!BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { _ in })
      #expect(takeViolations() == [.registeredTwice])

      let swiftUI = AppBackgroundTasks(
        engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil, launchesFromSwiftUI: true)
      #expect(swiftUI.swiftUIAppRefreshProblem(refreshID) == nil)
      #expect(swiftUI.swiftUIAppRefreshProblem("com.example.other")?.contains(".forageAppRefresh(\"\(refreshID)\")") == true)
    }

    @Test func test_issue26_severalRefreshTasks_rideOneRequest_whoseLaunchRunsEachThatIsDue() async throws {
      let prices = "com.example.prices", news = "com.example.news"
      freshSystem(permitted: [prices, news])
      let server = try TestServer(routes: [
        "/prices": Route { _ in .html("<h1>Lamp 12</h1>") },
        "/news": Route { _ in .html("<h1>Lamps are back</h1>") },
      ])
      defer { server.stop() }
      var config = ForageConfig(
        userAgent: "ForageAppleTests/1.0",
        tasks: [
          TaskDefinition(id: prices, kind: .appRefresh, every: .seconds(15 * 60), budget: .seconds(30), sources: ["prices"]),
          TaskDefinition(id: news, kind: .appRefresh, every: .seconds(3600), budget: .seconds(30), sources: ["news"]),
        ],
        sources: [
          Source(name: "prices", url: server.url("/prices"), extract: ["title": "h1"]),
          Source(name: "news", url: server.url("/news"), extract: ["title": "h1"]),
        ])
      config.fetch.robotsTxt = false
      let dir = TemporaryDirectory()
      let engine = Engine(config: config, store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil)
      tasks.registerLaunchHandlers()
      BGTaskScheduler.shared._finishLaunching()
      // An earlier version of the app left news's own request pending.
      try BGTaskScheduler.shared.submit(BGAppRefreshTaskRequest(identifier: news))
      let before = Date()
      try await tasks.scheduleAll()

      // One request at iOS, two at Forage.
      let pending = await BGTaskScheduler.shared.pendingTaskRequests()
      #expect(pending.map(\.identifier) == [prices])
      #expect(pending.first is BGAppRefreshTaskRequest)
      #expect(await tasks.scheduler.pendingTaskRequests().map(\.identifier) == [news, prices])

      // Its launch runs both (both are due).
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(prices))
      #expect(await eventually { BGTaskScheduler.shared._completions.count == 1 })
      #expect(BGTaskScheduler.shared._completions.map(\.success) == [true])
      #expect(server.requestCount(path: "/prices") == 1 && server.requestCount(path: "/news") == 1)
      // The next request is due at the soonest of theirs: prices', 15 minutes on.
      let next = try #require(await BGTaskScheduler.shared.pendingTaskRequests().first)
      #expect(next.identifier == prices)
      let due = try #require(next.earliestBeginDate)
      #expect(abs(due.timeIntervalSince(before) - 900) < 60)

      // The next launch runs prices only: news is due in an hour.
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(prices))
      #expect(await eventually { BGTaskScheduler.shared._completions.count == 2 })
      #expect(server.requestCount(path: "/prices") == 2 && server.requestCount(path: "/news") == 1)
      #expect(await tasks.scheduler.pendingTaskRequests().map(\.identifier) == [news, prices])
    }

    @Test func test_issue26_expiration_isFollowedByCompletionWithinTheGrace_whileTheJobStillWaits() async throws {
      freshSystem(permitted: [refreshID])
      let price = Locked(12)
      let server = try TestServer(routes: [
        "/": Route { _ in
          .html(#"<div class="product" data-sku="lamp"><h1 class="product-title">Lamp</h1><span class="price">$\#(price.withLock { $0 })</span></div>"#)
        }
      ])
      defer { server.stop() }
      var config = shopConfig(server.baseURL, notify: [NotifyChannel(target: .local)])
      config.fetch.robotsTxt = false
      config.sources[0].crawl = nil
      let dir = TemporaryDirectory()
      let engine = Engine(config: config, store: try SQLiteStore(path: dir.file("s.sqlite")))
      let presenter = HangingPresenter()
      defer { presenter.release() }
      let tasks = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: presenter)
      tasks.registerLaunchHandlers()
      try await tasks.scheduleAll()
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(refreshID))
      #expect(await eventually { BGTaskScheduler.shared._completions.count == 1 })

      // The price changes; its notification is handed to a presenter that
      // does not answer (a system service stuck, deaf to cancellation).
      price.withLock { $0 = 10 }
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(refreshID))
      #expect(await eventually { presenter.calls > 0 })
      #expect(BGTaskScheduler.shared._simulateExpirationForTaskWithIdentifier(refreshID))
      // The grace is 1 s; 15 s is a generous bound for a loaded machine.
      // iOS hears the completion while the job still waits.
      #expect(await eventually(15) { BGTaskScheduler.shared._completions.count == 2 })
      #expect(!presenter.isReleased)
      #expect(BGTaskScheduler.shared._completions.map(\.success) == [true, false])
      // What the launch fetched is committed, and the next launch is scheduled.
      #expect(try await recordCount(engine.store) == 1)
      #expect(await BGTaskScheduler.shared.pendingTaskRequests().map(\.identifier) == [refreshID])
    }

    @Test func test_issue26_aMonitorThatHeardNoNetwork_countsItAsMetered_soWifiOnlySourcesWait() {
      let monitor = DeviceConditionsMonitor()
      let conditions = monitor.current()
      #expect(conditions.network.isExpensive, "an unknown network is not taken for Wi-Fi")
      var config = shopConfig("http://127.0.0.1:9")
      config.sources[0].wifiOnly = true
      let plan = LaunchPlan(task: config.tasks[0], config: config, conditions: conditions)
      #expect(plan.sources.isEmpty)
      #expect(plan.waiting["catalog"] != nil)

      monitor.receive(.wifi)
      #expect(monitor.current().network == .wifi)
    }
  }
}
#endif
