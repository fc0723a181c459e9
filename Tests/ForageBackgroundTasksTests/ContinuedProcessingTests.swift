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

let everythingID = "com.example.everything"

/// A person's "refresh everything now" as iOS 26's continued processing (issue 26).
extension StandInTests {
  @Suite(.serialized) struct ContinuedProcessingTests {
    func config(_ base: String, delay: Duration = .zero) -> ForageConfig {
      var config = shopConfig(base, delay: delay)
      config.tasks.append(
        TaskDefinition(id: everythingID, kind: .continuedProcessing, every: .seconds(3600), budget: .seconds(600), sources: ["catalog"]))
      return config
    }

    @Test func test_start_submitsUnderAFreshIdentifier_drivesProgress_andCompletes() async throws {
      freshSystem(permitted: [refreshID, everythingID + ".*"])
      let server = try TestServer(site: DemoSite(products: 12))
      defer { server.stop() }
      let dir = TemporaryDirectory()
      let engine = Engine(config: config(server.baseURL), store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil)
      tasks.registerLaunchHandlers()
      BGTaskScheduler.shared._finishLaunching()
      try await tasks.scheduleAll()
      #expect(await BGTaskScheduler.shared.pendingTaskRequests().map(\.identifier) == [refreshID], "not scheduled: started by a person")

      try tasks.startContinuedProcessing(everythingID, title: "Refreshing the shop", subtitle: "Starting")
      let pending = await BGTaskScheduler.shared.pendingTaskRequests()
      let request = try #require(pending.compactMap { $0 as? BGContinuedProcessingTaskRequest }.first)
      #expect(request.identifier.hasPrefix(everythingID + ".") && request.identifier.count > everythingID.count + 1)
      #expect(request.title == "Refreshing the shop" && request.subtitle == "Starting")
      #expect(request.strategy == .queue && request.requiredResources == [])
      #expect(await tasks.scheduler.pendingTaskRequests().map(\.identifier) == [everythingID, refreshID])
      // Started twice before it ran: one run.
      #expect(throws: SchedulerError.unavailable) { try tasks.startContinuedProcessing(everythingID, title: "Again") }

      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(request.identifier))
      #expect(await eventually { BGTaskScheduler.shared._completions.count == 1 })
      #expect(BGTaskScheduler.shared._completions.map(\.success) == [true])
      #expect(try await recordCount(engine.store) == 12)
      let task = try #require(BGTaskScheduler.shared._launched.last as? BGContinuedProcessingTask)
      #expect(task.progress.totalUnitCount > 0)
      #expect(task.progress.completedUnitCount == task.progress.totalUnitCount)
      #expect(task.title == "Refreshing the shop")
      #expect(task.subtitle.hasSuffix("pages, 12 changes"), "\(task.subtitle)")

      // Started again: another fresh identifier (each is registered once).
      try tasks.startContinuedProcessing(everythingID, title: "Refreshing the shop")
      let again = await BGTaskScheduler.shared.pendingTaskRequests().compactMap { $0 as? BGContinuedProcessingTaskRequest }
      #expect(again.count == 1 && again[0].identifier != request.identifier)
    }

    @Test func test_systemExpiration_stopsItAsItsBudget() async throws {
      freshSystem(permitted: [refreshID, everythingID + ".*"])
      let server = try TestServer(site: DemoSite(products: 40))
      defer { server.stop() }
      let dir = TemporaryDirectory()
      let engine = Engine(
        config: config(server.baseURL, delay: .milliseconds(100)), store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil)
      tasks.registerLaunchHandlers()
      try tasks.startContinuedProcessing(everythingID, title: "Refreshing the shop")
      let identifier = try #require(await BGTaskScheduler.shared.pendingTaskRequests().first?.identifier)
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(identifier))
      #expect(try await eventually { try await recordCount(engine.store) >= 3 })
      #expect(BGTaskScheduler.shared._simulateExpirationForTaskWithIdentifier(identifier))
      #expect(await eventually { !BGTaskScheduler.shared._completions.isEmpty })
      #expect(BGTaskScheduler.shared._completions.map(\.success) == [false])
      #expect(await eventually { (try? await engine.store.runs(limit: 1).first?.summary?.outcome) == .budget })
      #expect(try await recordCount(engine.store) < 40)
    }

    @Test func test_refusals_sayWhatToChange() async throws {
      freshSystem(permitted: [refreshID])
      let dir = TemporaryDirectory()
      let engine = Engine(config: config("http://127.0.0.1:9"), store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi), notifications: nil)
      tasks.registerLaunchHandlers()
      do {
        try tasks.startContinuedProcessing(everythingID, title: "t")
        Issue.record("Info.plist lacks \(everythingID).*")
      } catch {
        #expect(error == .notPermitted)
        #expect("\(error)".contains("\(everythingID).*"))
      }
      #expect(takeViolations() == [.notPermitted])
      #expect(throws: SchedulerError.unsupportedTaskKind) { try tasks.startContinuedProcessing(refreshID, title: "t") }

      freshSystem(permitted: [refreshID, everythingID + ".*"])
      BGTaskScheduler.shared._setImmediateRunEligible(false)
      #expect(throws: SchedulerError.immediateRunIneligible) {
        try tasks.startContinuedProcessing(everythingID, title: "t", strategy: .fail)
      }
      try tasks.startContinuedProcessing(everythingID, title: "t", strategy: .queue)  // waits instead
      tasks.scheduler.cancel(taskRequestWithIdentifier: everythingID)
      #expect(await BGTaskScheduler.shared.pendingTaskRequests().isEmpty)
      try tasks.startContinuedProcessing(everythingID, title: "t")  // cancelled: may start again
    }
  }
}
#endif
