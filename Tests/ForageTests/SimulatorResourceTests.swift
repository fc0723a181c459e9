import ForageHTTP
import ForageScheduler
import ForageStore
import ForageTestSupport
import Foundation
import Testing

@testable import Forage

/// Issue 14: a task's CPU and transfer in the config, how the simulator
/// uses them (the CPU monitor, the cellular data budget), and a
/// continued-processing task that is never run as processing.
@Suite struct SimulatorResourceTests {
  static func parse(_ tasks: String) throws -> ForageConfig {
    try ForageConfig.parse(Array("""
      {"tasks": [\(tasks)],
       "sources": [{"name": "s", "url": "https://example.com/"}]}
      """.utf8))
  }

  static func problems(_ tasks: String) -> [String] {
    do {
      _ = try parse(tasks)
      return []
    } catch {
      return (error as? ConfigError)?.problems.map(\.description) ?? ["\(error)"]
    }
  }

  @Test func test_config_cpuAndTransfer_areReadValidatedAndWritten() throws {
    let config = try Self.parse(#"{"id": "p", "kind": "processing", "cpu": 0.6, "transfer": "2MiB", "sources": ["s"]}"#)
    #expect(config.tasks[0].cpu == 0.6)
    #expect(config.tasks[0].transfer == Int64(2_097_152))
    let again = try ForageConfig.parse(Array(config.jsonText.utf8))
    #expect(again.tasks == config.tasks)
    let plain = try Self.parse(#"{"id": "r", "sources": ["s"]}"#)
    #expect(plain.tasks[0].cpu == nil && plain.tasks[0].transfer == nil)
    #expect(!plain.jsonText.contains("cpu") && !plain.jsonText.contains("transfer"))

    #expect(Self.problems(#"{"id": "p", "cpu": -1, "sources": ["s"]}"#) == ["tasks[0].cpu: -1 is out of range; it must be from 0 to 64"])
    #expect(Self.problems(#"{"id": "p", "cpu": "lots", "sources": ["s"]}"#).first?.hasPrefix("tasks[0].cpu: expected a number from 0 to 64") == true)
    #expect(Self.problems(#"{"id": "p", "transfer": "much", "sources": ["s"]}"#).first?.hasPrefix("tasks[0].transfer: expected a size") == true)
    #expect(Self.problems(#"{"id": "p", "cpus": 1, "sources": ["s"]}"#).first?.contains(#"did you mean "cpu"?"#) == true)
  }

  // MARK: - Continued processing

  /// Issue 14 refused the kind rather than run it as processing; issue 26
  /// runs it as itself: a continued-processing request, never scheduled.
  @Test func test_continuedProcessingDefinition_isNeverScheduled_norSubmittedAsProcessing() async throws {
    let task = TaskDefinition(id: "com.example.export", kind: .continuedProcessing, sources: ["s"])
    let request = try #require(try TaskRunner.request(for: task, earliestBeginDate: nil) as? ContinuedProcessingTaskRequest)
    #expect(request.identifier == "com.example.export" && request.title == "com.example.export" && request.strategy == .queue)
    let config = ForageConfig(tasks: [task], sources: [Source(name: "s", url: "https://example.com/")])
    // Without the user's "refresh now", a forecast never runs it.
    let result = try await Engine.simulate(config: config, store: nil, profile: .commuter, days: 1)
    #expect(result.trace.count(.submitted, identifier: "com.example.export") == 0)
    #expect(result.trace.count(.launched) == 0)
    _ = try await Engine.simulate(config: config, store: nil, profile: .commuter, days: 1, seeds: [1, 2])
    // Nothing submits it on a schedule.
    let scheduler = SimulatedScheduler(device: .chargingOnWiFi)
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let runner = TaskRunner(config: config, store: store, transport: Engine.defaultTransport())
    runner.register(on: scheduler)
    scheduler.finishLaunching()
    try await runner.submitAll(to: scheduler, now: scheduler.now)
    #expect(await scheduler.pendingTaskRequests().isEmpty)
    try await store.close()
  }

  // MARK: - The model uses the declared figures

  /// Charges 22:00–06:00 on Wi-Fi; nobody touches the screen.
  static var nightCharger: DeviceProfile {
    var p = DeviceProfile(name: "night-charger-idle")
    p.charging = [.init(from: "22:00", to: "06:00")]
    p.network = .init(default: .wifi)
    return p
  }

  @Test func test_declaredCPU_killsProcessingOnBattery_inTheForecast() async throws {
    func run(cpu: Double?) async throws -> FreshnessForecast.TaskSummary {
      let config = ForageConfig(
        tasks: [TaskDefinition(id: "crawl", kind: .processing, every: .seconds(3600), sources: ["s"], cpu: cpu)],
        sources: [Source(name: "s", url: "https://example.com/")])
      let result = try await Engine.simulate(config: config, store: nil, profile: Self.nightCharger, days: 3, seed: 2)
      #expect(result.trace.events(for: "crawl").filter { $0.kind == .killed }.allSatisfy { $0.killReason == .cpuMonitor })
      return try #require(result.forecast.tasks.first { $0.identifier == "crawl" })
    }
    let heavy = try await run(cpu: 1.0)
    #expect(heavy.cpuKills > 0, "\(heavy)")
    #expect(heavy.kills == heavy.cpuKills)
    let light = try await run(cpu: 0.3)
    #expect(light.kills == 0)
    #expect(light.succeeded > heavy.succeeded)
  }

  /// On cellular all day, with no battery and refreshes as soon as due.
  static var cellularOnly: DeviceProfile {
    var p = DeviceProfile(name: "cellular-only")
    p.hasBattery = false
    p.network = .init(default: .cellular)
    p.refreshPlacement = .asSoonAsEligible
    return p
  }

  @Test func test_declaredTransfer_countsAgainstTheCellularDataBudget() async throws {
    func run(transfer: Int64?) async throws -> SimulationResult {
      let config = ForageConfig(
        tasks: [TaskDefinition(id: "refresh", every: .seconds(900), sources: ["s"], transfer: transfer)],
        sources: [Source(name: "s", url: "https://example.com/")])
      return try await Engine.simulate(config: config, store: nil, profile: Self.cellularOnly, days: 1, seed: 1)
    }
    let unknown = try await run(transfer: nil)
    #expect(unknown.trace.count(.launched) > 50)
    // 6 MB a launch against 10 MB a day: one launch.
    let big = try await run(transfer: 6_000_000)
    #expect(big.trace.count(.launched) == 1)
    #expect(big.trace.deferrals.contains { $0.reason == .dataBudget })
    #expect(big.forecast.notes.contains { $0.contains("cellular data budget") }, "\(big.forecast.notes)")
  }

  // MARK: - Live mode measures

  @Test func test_live_measuredBytes_areInTheTrace_andBecomeTheModelsFigure() async throws {
    let page = "<html><body><h1>" + String(repeating: "x", count: 5000) + "</h1></body></html>"
    let server = try TestServer(routes: ["/p": Route { _ in .html(page) }])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    fetch.retries = 0
    let config = ForageConfig(
      fetch: fetch,
      tasks: [TaskDefinition(id: "crawl", kind: .processing, every: .seconds(6 * 3600), budget: .seconds(20), sources: ["page"])],
      sources: [Source(name: "page", url: server.url("/p"), extract: ["t": "h1"])])
    let live = try await Engine.simulate(config: config, store: store, profile: Self.cellularOnly, days: 0.5, seed: 1, live: true)
    let completed = live.trace.events(for: "crawl").filter { $0.kind == .completed }
    #expect(completed.count >= 2)
    let runs = try await store.runs(limit: 10).filter { $0.task == "crawl" }
    let stored = Set(runs.compactMap { $0.summary?.bytes })
    #expect(completed.allSatisfy { ($0.transferredBytes ?? 0) >= Int64(page.utf8.count) }, "\(completed)")
    #expect(Set(completed.compactMap(\.transferredBytes)) == stored)

    // A model run takes the recorded average as each launch's transfer.
    let model = try await Engine.simulate(config: config, store: store, profile: Self.cellularOnly, days: 0.5, seed: 1)
    let average = stored.reduce(0, +) / Int64(stored.count)
    let modelled = model.trace.events(for: "crawl").filter { $0.kind == .completed }
    #expect(!modelled.isEmpty)
    #expect(modelled.allSatisfy { $0.transferredBytes == average || $0.success == false }, "\(modelled)")
    try await store.close()
  }
}
