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

/// The adapter under the stand-in of BGTaskScheduler (issue 18): what iOS
/// would do, as Apple documents it, driven the way the debugger commands
/// drive a device.
extension StandInTests {
  @Suite(.serialized) struct AppleAdapterTests {
    @Test func test_launch_runsTheJob_resubmits_andCompletesSuccessfully() async throws {
      freshSystem(permitted: [refreshID])
      let site = DemoSite(products: 12)
      let server = try TestServer(site: site)
      defer { server.stop() }
      let dir = TemporaryDirectory()
      let engine = Engine(config: shopConfig(server.baseURL), store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil)
      tasks.registerLaunchHandlers()
      BGTaskScheduler.shared._finishLaunching()
      try await tasks.scheduleAll()
      let pending = await BGTaskScheduler.shared.pendingTaskRequests()
      #expect(pending.map(\.identifier) == [refreshID])
      #expect(pending.first is BGAppRefreshTaskRequest)

      let before = Date()
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(refreshID))
      #expect(await eventually { !BGTaskScheduler.shared._completions.isEmpty })
      #expect(BGTaskScheduler.shared._completions.map(\.success) == [true])
      #expect(try await recordCount(engine.store) == 12)
      // The launch submitted the next request, 15 minutes on.
      let next = try #require(await BGTaskScheduler.shared.pendingTaskRequests().first)
      let due = try #require(next.earliestBeginDate)
      #expect(abs(due.timeIntervalSince(before) - 900) < 60)
      #expect(BGTaskScheduler.shared._preconditionFailures.isEmpty)
    }

    @Test func test_resubmission_happensAtTheStartOfTheHandler() async throws {
      freshSystem(permitted: [refreshID])
      let release = Locked(false)
      let server = try TestServer(routes: [
        "/": Route { _ in
          // The first page hangs until the test has looked (at most 10 s).
          for _ in 0..<1000 where !release.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.01) }
          return .html("<h1>home</h1>")
        }
      ])
      defer {
        release.withLock { $0 = true }
        server.stop()
      }
      var config = shopConfig(server.baseURL)
      config.fetch.robotsTxt = false
      let dir = TemporaryDirectory()
      let engine = Engine(config: config, store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil)
      tasks.registerLaunchHandlers()
      try await tasks.scheduleAll()
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(refreshID))

      // While the first request of the job hangs, the next one is already submitted.
      #expect(await eventually { server.requestCount > 0 })
      #expect(await BGTaskScheduler.shared.pendingTaskRequests().map(\.identifier) == [refreshID])
      #expect(BGTaskScheduler.shared._submissions == [refreshID, refreshID])
      #expect(BGTaskScheduler.shared._completions.isEmpty)

      // Expired there, it still leaves the next launch scheduled.
      #expect(BGTaskScheduler.shared._simulateExpirationForTaskWithIdentifier(refreshID))
      release.withLock { $0 = true }
      #expect(await eventually { !BGTaskScheduler.shared._completions.isEmpty })
      #expect(BGTaskScheduler.shared._completions.map(\.success) == [false])
      #expect(await BGTaskScheduler.shared.pendingTaskRequests().map(\.identifier) == [refreshID])
    }

    @Test func test_expirationMidCrawl_losesNothing_andTheNextLaunchResumes() async throws {
      freshSystem(permitted: [refreshID])
      let site = DemoSite(products: 40)
      let server = try TestServer(site: site)
      defer { server.stop() }
      let dir = TemporaryDirectory()
      // One request at a time, 100 ms apart: the crawl takes several seconds.
      let engine = Engine(
        config: shopConfig(server.baseURL, delay: .milliseconds(100)), store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil)
      tasks.registerLaunchHandlers()
      try await tasks.scheduleAll()

      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(refreshID))
      // Expire while pages are being committed: some records are in, not all.
      #expect(try await eventually { try await recordCount(engine.store) >= 3 })
      #expect(BGTaskScheduler.shared._simulateExpirationForTaskWithIdentifier(refreshID))
      #expect(await eventually { !BGTaskScheduler.shared._completions.isEmpty })
      #expect(BGTaskScheduler.shared._completions.map(\.success) == [false])
      let afterFirst = try await recordCount(engine.store)
      #expect(afterFirst >= 3 && afterFirst < 40, "the expiration stopped the crawl midway (\(afterFirst) records)")
      let run = try #require(try await engine.store.runs(limit: 1).first)
      // Stopped as by its budget: what was fetched is committed, the crawl saved.
      #expect(run.summary?.outcome == .budget)

      // The next launch (already submitted) resumes: every product stored, none fetched twice.
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(refreshID))
      #expect(await eventually(60) { BGTaskScheduler.shared._completions.count == 2 })
      #expect(BGTaskScheduler.shared._completions.map(\.success) == [false, true])
      #expect(try await recordCount(engine.store) == 40)
      for n in 1...40 { #expect(server.requestCount(path: site.productPath(n)) == 1, "product \(n)") }
    }

    @Test func test_appleErrors_becomeSchedulerErrors_withSentences() async throws {
      freshSystem(permitted: ["a.refresh", "b.refresh", "c.crawl"])
      let host = BGTaskSchedulerHost()
      do {
        try host.submit(.appRefresh(AppRefreshTaskRequest(identifier: "not.in.plist")))
        Issue.record("an identifier missing from Info.plist is refused")
      } catch {
        #expect(error == .notPermitted)
        #expect(error.identifier == "not.in.plist")
        #expect("\(error)".contains("BGTaskSchedulerPermittedIdentifiers in Info.plist"))
      }
      #expect(takeViolations() == [.notPermitted])
      try host.submit(.appRefresh(AppRefreshTaskRequest(identifier: "a.refresh")))
      #expect(throws: SchedulerError.tooManyPendingTaskRequests) {
        try host.submit(.appRefresh(AppRefreshTaskRequest(identifier: "b.refresh")))
      }
      #expect(takeViolations() == [.tooManyRefreshRequests])
      // Resubmitting the pending identifier replaces it.
      try host.submit(.appRefresh(AppRefreshTaskRequest(identifier: "a.refresh", earliestBeginDate: Date(timeIntervalSince1970: 5))))
      try host.submit(
        .processing(ProcessingTaskRequest(identifier: "c.crawl", requiresNetworkConnectivity: true, requiresExternalPower: true)))
      let pending = await host.pendingRequests().sorted { $0.identifier < $1.identifier }
      #expect(pending.map(\.identifier) == ["a.refresh", "c.crawl"])
      #expect(pending[0].earliestBeginDate == Date(timeIntervalSince1970: 5))
      #expect(pending[1].requiresNetworkConnectivity && pending[1].requiresExternalPower && pending[1].kind == .processing)
      // A continued-processing request needs its task's handler (registered by AppBackgroundTasks).
      #expect(throws: SchedulerError.launchHandlerNotRegistered) {
        try host.submit(.continuedProcessing(ContinuedProcessingTaskRequest(identifier: "c.crawl", title: "t", subtitle: "s")))
      }

      BGTaskScheduler.shared._setBackgroundRefreshAvailable(false)
      do {
        try host.submit(.appRefresh(AppRefreshTaskRequest(identifier: "a.refresh")))
        Issue.record("with Background App Refresh off, iOS refuses")
      } catch {
        #expect(error == .unavailable)
        #expect("\(error)".contains("Background App Refresh is off"))
      }
      struct Other: Error {}
      #expect(AppleErrors.schedulerError(Other(), identifier: "x") == .unavailable)
    }

    @Test func test_scheduleAll_withRefreshOff_throwsUnavailable() async throws {
      freshSystem(permitted: [refreshID])
      BGTaskScheduler.shared._setBackgroundRefreshAvailable(false)
      let dir = TemporaryDirectory()
      let engine = Engine(config: shopConfig("http://127.0.0.1:9"), store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil)
      tasks.registerLaunchHandlers()
      await #expect(throws: SchedulerError.unavailable) { try await tasks.scheduleAll() }
    }

    @Test func test_registerAfterLaunch_isWhatIOSTerminatesFor_andASecondCallNeverReachesIt() async throws {
      freshSystem(permitted: [refreshID])
      let dir = TemporaryDirectory()
      let engine = Engine(config: shopConfig("http://127.0.0.1:9"), store: try SQLiteStore(path: dir.file("s.sqlite")))
      let lines = Locked<[String]>([])
      let log = SchedulerLog { line in lines.withLock { $0.append(line) } }

      // Registered in time, then a second call: refused by Forage, not by iOS.
      let tasks = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil, log: log)
      tasks.registerLaunchHandlers()
      BGTaskScheduler.shared._finishLaunching()
      tasks.registerLaunchHandlers()
      #expect(BGTaskScheduler.shared._preconditionFailures.isEmpty)
      #expect(lines.withLock { $0 }.contains { $0.contains("must be registered before application finishes launching") })

      // Registered only after the app finished launching: iOS would terminate the app.
      freshSystem(permitted: [refreshID])
      BGTaskScheduler.shared._finishLaunching()
      let late = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil)
      late.registerLaunchHandlers()
      #expect(
        BGTaskScheduler.shared._preconditionFailures
          == ["All launch handlers must be registered before application finishes launching"])
      #expect(takeViolations() == [.registeredAfterLaunch])
      await #expect(throws: SchedulerError.launchHandlerNotRegistered) { try await late.scheduleAll() }
    }

    @Test func test_swiftUILaunches_registerOnlyWithForage_andRunInTheCallersTask() async throws {
      freshSystem(permitted: [refreshID])
      let site = DemoSite(products: 5)
      let server = try TestServer(site: site)
      defer { server.stop() }
      let dir = TemporaryDirectory()
      let engine = Engine(config: shopConfig(server.baseURL), store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = AppBackgroundTasks(
        engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil, launchesFromSwiftUI: true)
      tasks.registerLaunchHandlers()
      // SwiftUI registers with BGTaskScheduler itself: a second registration would end the app.
      #expect(!BGTaskScheduler.shared.register(forTaskWithIdentifier: "unlisted", using: nil) { _ in })
      #expect(takeViolations() == [.notPermitted])
      #expect(BGTaskScheduler.shared.register(forTaskWithIdentifier: refreshID, using: nil) { _ in })
      #expect(BGTaskScheduler.shared._preconditionFailures.isEmpty)
      #expect(await tasks.handleLaunch(refreshID))
      #expect(try await recordCount(engine.store) == 5)
    }
  }
}
#endif
