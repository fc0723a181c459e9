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

/// A Mac app's tasks under NSBackgroundActivityScheduler (issue 26), the
/// same `AppBackgroundTasks` API as on iOS.
extension StandInTests {
  @Suite(.serialized) struct MacActivityTests {
    func macTasks(_ engine: Engine) -> AppBackgroundTasks {
      AppBackgroundTasks(
        engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil, launchesFromSwiftUI: false,
        log: .silent, onFinish: nil, backend: .activityScheduler(poll: .milliseconds(20)))
    }

    func activities(_ identifier: String) -> [NSBackgroundActivityScheduler] {
      NSBackgroundActivityScheduler._scheduled.filter { $0.identifier == identifier }
    }

    @Test func test_eachTaskIsAnActivity_whoseRunFinishes_andSchedulesTheNext() async throws {
      let server = try TestServer(site: DemoSite(products: 5))
      defer { server.stop() }
      let dir = TemporaryDirectory()
      let engine = Engine(config: shopConfig(server.baseURL), store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = macTasks(engine)
      tasks.registerLaunchHandlers()
      try await tasks.scheduleAll()
      let activity = try #require(activities(refreshID).first)
      #expect(activities(refreshID).count == 1)
      #expect(!activity.repeats && activity.qualityOfService == .utility)
      #expect(activity.interval >= 1 && activity.tolerance == activity.interval / 2)
      #expect(await tasks.scheduler.pendingTaskRequests().map(\.identifier) == [refreshID])

      let before = Date()
      #expect(activity._fire())
      #expect(await eventually { activity._results == [.finished] })
      #expect(try await recordCount(engine.store) == 5)
      // The run submitted the next: a new activity, 15 minutes on; the one that ran is gone.
      let next = try #require(activities(refreshID).first)
      #expect(activities(refreshID).count == 1 && next !== activity)
      #expect(abs(next.interval - 900 + Date().timeIntervalSince(before)) < 60)
      #expect(!activity._fire())
    }

    @Test func test_shouldDefer_stopsTheRunAsItsBudget_andDefers() async throws {
      let server = try TestServer(site: DemoSite(products: 40))
      defer { server.stop() }
      let dir = TemporaryDirectory()
      let engine = Engine(
        config: shopConfig(server.baseURL, delay: .milliseconds(100)), store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = macTasks(engine)
      tasks.registerLaunchHandlers()
      try await tasks.scheduleAll()
      let activity = try #require(activities(refreshID).first)
      #expect(activity._fire())
      #expect(try await eventually { try await recordCount(engine.store) >= 3 })
      activity._setShouldDefer(true)
      #expect(await eventually { activity._results == [.deferred] })
      #expect(try await engine.store.runs(limit: 1).first?.summary?.outcome == .budget)
      #expect(try await recordCount(engine.store) < 40)
    }

    @Test func test_continuedProcessing_isRefusedOnAMac_withASentence() async throws {
      let dir = TemporaryDirectory()
      var config = shopConfig("http://127.0.0.1:9")
      config.tasks.append(TaskDefinition(id: everythingID, kind: .continuedProcessing, sources: ["catalog"]))
      let tasks = macTasks(Engine(config: config, store: try SQLiteStore(path: dir.file("s.sqlite"))))
      tasks.registerLaunchHandlers()
      #expect(throws: SchedulerError.unsupportedTaskKind) { try tasks.startContinuedProcessing(everythingID, title: "t") }
    }
  }
}
#endif
