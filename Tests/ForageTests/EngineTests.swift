import Foundation
import Testing
import ForageHTTP
import ForageScheduler
import ForageStore
import ForageTestSupport
@testable import Forage

/// The engine facade: what every front end calls.
@Suite struct EngineTests {
  static let config = ForageConfig(
    tasks: [TaskDefinition(id: "com.example.refresh", kind: .appRefresh, budget: .seconds(20), sources: ["prices"])],
    sources: [
      Source(name: "prices", url: "http://127.0.0.1:9/", extract: ["t": "h1"]),
      Source(name: "news", url: "http://127.0.0.1:9/news", extract: ["t": "h1"]),
    ])

  @Test func test_launch_resolvesATask_orSources_andTheBudget() throws {
    let task = try Self.config.launch(task: "com.example.refresh", sources: nil, budget: nil)
    #expect(
      task
        == Launch(
          task: "com.example.refresh", definition: Self.config.tasks[0], sources: [Self.config.sources[0]],
          budget: .seconds(20)))
    let named = try Self.config.launch(task: nil, sources: ["news"], budget: .seconds(5))
    #expect(named == Launch(task: "run", sources: [Self.config.sources[1]], budget: .seconds(5)))
    let all = try Self.config.launch(task: nil, sources: nil, budget: nil)
    #expect(all.sources == Self.config.sources && all.budget == EngineDefaults.runBudget && all.definition == nil)
  }

  @Test func test_launch_unknownNames_areEngineErrors_withTheClosestName() {
    #expect {
      _ = try Self.config.launch(task: "com.example.refesh", sources: nil, budget: nil, configName: "f.json")
    } throws: { error in
      (error as? EngineError)?.kind == .unknownTask
        && "\(error)" == "no task \"com.example.refesh\" in f.json (did you mean \"com.example.refresh\"?)"
    }
    #expect {
      _ = try Self.config.launch(task: nil, sources: ["prices", "newz"], budget: nil)
    } throws: { error in
      (error as? EngineError)?.kind == .unknownSource && "\(error)".contains("did you mean \"news\"?")
    }
  }

  @Test func test_storeLocation_isBesideTheConfig_unlessAbsolute() {
    var config = Self.config
    #expect(Engine.storeLocation(for: config, configPath: "/etc/forage/forage.json") == "/etc/forage/forage.sqlite")
    #expect(Engine.storeLocation(for: config, configPath: "forage.json") == "forage.sqlite")
    config.store = "data/s.sqlite"
    #expect(Engine.storeLocation(for: config, configPath: "conf/forage.json") == "conf/data/s.sqlite")
    config.store = "/var/lib/s.sqlite"
    #expect(Engine.storeLocation(for: config, configPath: "conf/forage.json") == "/var/lib/s.sqlite")
  }

  @Test func test_postgresStore_isRefusedClearly() {
    #expect {
      _ = try Engine.openStore("postgres://db.example.com/forage")
    } throws: { error in
      (error as? EngineError)?.kind == .unsupportedStore && !"\(error)".contains("Error")
    }
  }

  @Test func test_open_readsTheConfig_andOpensItsStore() async throws {
    let dir = TemporaryDirectory()
    let path = dir.file("forage.json")
    try Data(Self.config.jsonText.utf8).write(to: URL(fileURLWithPath: path))
    let engine = try Engine.open(configPath: path)
    #expect(engine.config == Self.config)
    #expect(FileManager.default.fileExists(atPath: dir.file("forage.sqlite")))
    // An unknown source on export names what the store holds.
    await #expect {
      try await engine.export(format: .jsonl, source: "prices") { _ in }
    } throws: { error in
      (error as? EngineError)?.kind == .unknownSource && "\(error)".contains("it holds no sources yet")
    }
    try await engine.close()
  }

  @Test func test_simulate_withoutAStore_isTheModel_andTheSameSeedGivesTheSameForecast() async throws {
    let profile = try DeviceProfile.named("commuter")
    let a = try await Engine.simulate(config: Self.config, store: nil, profile: profile, days: 3, seed: 7)
    let b = try await Engine.simulate(config: Self.config, store: nil, profile: profile, days: 3, seed: 7)
    #expect(!a.live)
    #expect(a.profile == "commuter")
    #expect(a.forecast.description == b.forecast.description)
    #expect(a.trace.description == b.trace.description)
    #expect(a.trace.count(.launched) > 0)
  }
  /// Issue 14: with unreachable hosts every live launch fetched nothing, yet
  /// the trace said success, the forecast counted the sources as refreshed,
  /// and the next model run took those failures as the task's duration.
  @Test func test_issue14_liveFailedLaunches_areNotFreshData_norDurations() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    fetch.retries = 0
    let config = ForageConfig(
      fetch: fetch,
      tasks: [TaskDefinition(id: "t.crawl", kind: .processing, every: .seconds(6 * 3600), budget: .seconds(20),
                             requiresNetwork: false, sources: ["prices"])],
      sources: [Source(name: "prices", url: "http://127.0.0.1:9/", extract: ["t": "h1"])])
    let result = try await Engine.simulate(
      config: config, store: store, profile: .server, days: 1, seed: 1, live: true)
    let launches = result.trace.count(.launched, identifier: "t.crawl")
    #expect(launches >= 2)
    let completed = result.trace.events(for: "t.crawl").filter { $0.kind == .completed }
    #expect(completed.count == launches)
    #expect(completed.allSatisfy { $0.success == false && $0.refreshedSources == [] }, "\(result.trace)")
    let row = try #require(result.forecast.sources.first { $0.source == "prices" })
    #expect(row.refreshes == 0)
    #expect(row.failures == launches)
    #expect(row.freshShare == 0)
    #expect(result.forecast.description.contains("failed"))
    // The failed runs are in the store, and do not become the model's durations.
    #expect(try await store.runs(limit: 100).filter { $0.task == "t.crawl" }.count == launches)
    #expect(await Engine.recordedDurations(store, tasks: config.tasks).isEmpty)
    try await store.close()
  }
}
