import Foundation
import Testing
import ForageHTTP
import ForageScheduler
import ForageStore
import ForageSupport
import ForageTestSupport
@testable import Forage

@Suite struct TaskRunnerTests {
  @Test func test_plan_adaptsToConditions() {
    var fetch = FetchSettings()
    fetch.concurrency = 16
    let config = ForageConfig(fetch: fetch, sources: [
      Source(name: "prices", url: "https://x.org/p", critical: true),
      Source(name: "images", url: "https://x.org/i", wifiOnly: true),
      Source(name: "news", url: "https://x.org/n"),
    ])
    let task = TaskDefinition(id: "t", sources: ["prices", "images", "news"])
    let home = LaunchPlan(task: task, config: config, conditions: .chargingOnWiFi)
    #expect(home.sources == ["prices", "images", "news"])
    #expect(home.concurrencyLimit == nil)

    let cellular = LaunchPlan(task: task, config: config, conditions: DeviceConditions(
      isCharging: false, batteryLevel: 0.5, network: NetworkStatus(.cellular)))
    #expect(cellular.sources == ["prices", "news"])
    #expect(cellular.waiting["images"] != nil)
    #expect(cellular.concurrencyLimit == 4)

    let lowPower = LaunchPlan(task: task, config: config, conditions: DeviceConditions(isLowPowerModeEnabled: true))
    #expect(lowPower.sources == ["prices"])
  }

  @Test func test_liveHandler_resubmitsOnTheSchedulersClock_andRunsTheJob() async throws {
    let server = try TestServer(routes: ["/p": Route { _ in .html("<h1>Lamp</h1>") }])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    let config = ForageConfig(
      fetch: fetch,
      tasks: [TaskDefinition(id: "t.refresh", kind: .processing, every: .seconds(3600), budget: .seconds(20),
                             requiresNetwork: false, sources: ["p"])],
      sources: [Source(name: "p", url: server.url("/p"), extract: ["t": "h1"])])
    let scheduler = SimulatedScheduler(device: .server, seed: 3, log: .silent)
    let runner = TaskRunner(config: config, store: store, transport: Engine.defaultTransport())
    runner.register(on: scheduler, now: { scheduler.now })
    scheduler.finishLaunching()
    try await runner.submitAll(to: scheduler, now: scheduler.now)
    await scheduler.advance(by: .seconds(12 * 3600))
    let launches = scheduler.trace.count(.launched, identifier: "t.refresh")
    #expect(launches >= 3, "each launch should resubmit an hour ahead on the virtual clock; \(launches) launches")
    #expect(server.requestCount(path: "/p") == launches)
    let runs = try await store.runs(limit: 100)
    #expect(runs.filter { $0.task == "t.refresh" && $0.summary?.outcome == .completed }.count == launches)
  }

  @Test func test_refusedResubmission_goesToTheLog() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = ForageConfig(
      tasks: [TaskDefinition(id: "t", kind: .processing, every: .seconds(3600), requiresNetwork: false, sources: [])],
      sources: [Source(name: "p", url: "https://example.com/")])
    let lines = Locked<[String]>([])
    let scheduler = SimulatedScheduler(device: .server, policy: .server, seed: 1, log: .silent)
    let runner = TaskRunner(
      config: config, store: store, transport: CurlTransport(), log: SchedulerLog { line in lines.withLock { $0.append(line) } })
    runner.register(on: scheduler, now: { scheduler.now })
    scheduler.finishLaunching()
    try await runner.submitAll(to: scheduler, now: scheduler.now)
    scheduler.failNextSubmissions(with: .tooManyPendingTaskRequests)
    await scheduler.advance(by: .seconds(60))
    #expect(scheduler.trace.count(.launched, identifier: "t") == 1)
    let logged = lines.withLock { $0 }
    #expect(logged.count == 1 && logged[0].hasPrefix("cannot resubmit t: "), "\(logged)")
  }
}
