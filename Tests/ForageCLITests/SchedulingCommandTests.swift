import Foundation
import Testing
import ForageStore
import ForageTestSupport

@Suite struct SimulateCommandTests {
  static let config = """
    {"tasks": [
       {"id": "com.example.refresh", "kind": "appRefresh", "every": "15m", "budget": "30s", "sources": ["prices"]},
       {"id": "com.example.crawl", "kind": "processing", "every": "6h", "budget": "5m",
        "requiresExternalPower": true, "sources": ["catalog"]}],
     "sources": [{"name": "prices", "url": "https://example.com/item/1", "extract": {"p": ".price"}},
                 {"name": "catalog", "url": "https://example.com/", "crawl": {}}]}
    """

  @Test func test_forecast_namesEverySourceAndTask_andIsDeterministic() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", SimulateCommandTests.config)
    let a = try runForage(["simulate", "--config", config, "--days", "14", "--seed", "7", "--json"])
    #expect(a.status == 0, "\(a.stderr)")
    let b = try runForage(["simulate", "--config", config, "--days", "14", "--seed", "7", "--json"])
    #expect(a.stdout == b.stdout, "same seed, same forecast")
    let c = try runForage(["simulate", "--config", config, "--days", "14", "--seed", "8", "--json"])
    #expect(a.stdout != c.stdout, "another seed, another trace")

    let json = try #require(try JSONSerialization.jsonObject(with: Data(a.stdout.utf8)) as? [String: Any])
    let forecast = try #require(json["forecast"] as? [String: Any])
    let sources = try #require(forecast["sources"] as? [[String: Any]])
    #expect(Set(sources.compactMap { $0["source"] as? String }) == ["prices", "catalog"])
    for s in sources { #expect((s["refreshes"] as? Int ?? 0) > 0, "\(s)") }
    let text = try runForage(["simulate", "--config", config, "--days", "14", "--seed", "7"])
    #expect(text.stdout.contains("Freshness forecast: 14.0 days"))
    #expect(text.stdout.contains("com.example.crawl"))
  }

  @Test func test_badProfileAndDays_exit2() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", SimulateCommandTests.config)
    let a = try runForage(["simulate", "--config", config, "--profile", "nocturnal"])
    #expect(a.status == 2)
    #expect(a.stderr.contains("nocturnal"))
    let b = try runForage(["simulate", "--config", config, "--days", "0"])
    #expect(b.status == 2)
  }

  @Test func test_issue8_profileFile_isValidatedLikeAConfig() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", SimulateCommandTests.config)
    let profile = try dir.write("me.json", #"{"name": "me", "appOpens": [{"atx": "07:00"}], "chargng": []}"#)
    let r = try runForage(["simulate", "--config", config, "--profile", profile])
    #expect(r.status == 2)
    #expect(r.stderr == """
      forage simulate: invalid profile \(profile) (3 problems):
        chargng: unknown key "chargng" (did you mean "charging"?)
        appOpens[0].atx: unknown key "atx" (did you mean "at"?)
        appOpens[0].at: missing: give the time of day, such as "07:30"

      """)
    // A profile with a byte order mark, as some editors save it.
    let bom = dir.file("bom.json")
    try Data([0xEF, 0xBB, 0xBF] + Array(#"{"name": "bom", "appOpens": [{"at": "12:00"}]}"#.utf8)).write(to: URL(fileURLWithPath: bom))
    let ok = try runForage(["simulate", "--config", config, "--profile", bom, "--days", "2"])
    #expect(ok.status == 0, "\(ok.stderr)")
    #expect(ok.stdout.contains("Profile: bom"))
  }
}

@Suite(.serialized) struct DaemonCommandTests {
  @Test func test_daemon_runsTasksOnSchedule_andStopsCleanlyOnSIGTERM() async throws {
    let server = try TestServer(site: DemoSite(products: 20))
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", """
      {"fetch": {"perHostDelay": "0s"},
       "tasks": [{"id": "t.refresh", "kind": "appRefresh", "every": "1s", "budget": "10s", "sources": ["catalog"]}],
       "sources": [{"name": "catalog", "url": "\(server.baseURL)/", "crawl": {"revisitAfter": "0s"},
                    "match": "div.product", "key": ["sku"],
                    "extract": {"sku": {"css": "div.product", "attr": "data-sku"}}}]}
      """)
    let store = dir.file("s.sqlite")
    let p = Process()
    p.executableURL = URL(fileURLWithPath: forageBinary())
    p.arguments = ["daemon", "--config", config, "--store", store, "--json"]
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    try p.run()
    // Wait for two finished runs of the task (bounded).
    let started = Date()
    var finished = 0
    while finished < 2 && Date().timeIntervalSince(started) < 60 && p.isRunning {
      try await Task.sleep(for: .milliseconds(200))
      if let s = try? SQLiteStore(path: store) {
        finished = (try? await s.runs(limit: 10))?.filter { $0.task == "t.refresh" && $0.summary != nil }.count ?? 0
      }
    }
    #expect(finished >= 2, "the daemon should have run the task at least twice")
    kill(p.processIdentifier, SIGTERM)
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
    let lines = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
    #expect(lines.count >= 2)
    #expect(lines.first?.contains(#""task":"t.refresh""#) == true)
    // The schedule survives a restart: the pending request was saved.
    #expect(FileManager.default.fileExists(atPath: store + ".pending.json"))
    let records = try await SQLiteStore(path: store).records(source: "catalog", afterID: 0, limit: 100)
    #expect(records.count == 20)
  }
}
