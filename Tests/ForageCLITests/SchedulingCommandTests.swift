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

  /// Issue 26: a config's continuedProcessing task (the user's "refresh
  /// now") is forecast with --refresh-now, and the output says what iOS does
  /// with several refresh tasks.
  @Test func test_issue26_refreshNow_forecastsTheContinuedTask_andTheNotesSayWhatIOSDoes() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write(
      "forage.json",
      """
      {"tasks": [
         {"id": "prices", "every": "15m", "sources": ["prices"]},
         {"id": "news", "every": "1h", "sources": ["prices"]},
         {"id": "refresh-now", "kind": "continuedProcessing", "title": "Refreshing", "sources": ["catalog"]}],
       "sources": [{"name": "prices", "url": "https://example.com/item/1"},
                   {"name": "catalog", "url": "https://example.com/"}]}
      """)
    let without = try runForage(["simulate", "--config", config, "--days", "3", "--seed", "1"])
    #expect(without.status == 0, "\(without.stderr)")
    #expect(without.stdout.contains("On iOS:\n- iOS keeps one pending refresh request per app: the 2 appRefresh tasks (prices, news)"))
    #expect(without.stdout.contains("refresh-now (continuedProcessing) runs only when the user starts it from the app"))
    #expect(!without.stderr.contains("news"), "the second refresh task is not refused: \(without.stderr)")

    let tapped = try runForage(["simulate", "--config", config, "--days", "3", "--seed", "1", "--refresh-now", "1", "--json"])
    #expect(tapped.status == 0, "\(tapped.stderr)")
    let json = try #require(try JSONSerialization.jsonObject(with: Data(tapped.stdout.utf8)) as? [String: Any])
    let notes = try #require(json["iOSNotes"] as? [String])
    #expect(notes.contains { $0.hasPrefix("refresh-now (continuedProcessing) was started by the user at 100% of app opens") })
    let forecast = try #require(json["forecast"] as? [String: Any])
    let sources = try #require(forecast["sources"] as? [[String: Any]])
    let catalog = try #require(sources.first { $0["source"] as? String == "catalog" })
    #expect((catalog["refreshes"] as? Int ?? 0) > 0, "\(catalog)")

    let spread = try runForage(["simulate", "--config", config, "--days", "3", "--seeds", "2", "--refresh-now", "0.5"])
    #expect(spread.status == 0, "\(spread.stderr)")
    #expect(spread.stdout.contains("On iOS:"))

    let bad = try runForage(["simulate", "--config", config, "--refresh-now", "2"])
    #expect(bad.status == 2)
    #expect(bad.stderr.contains("--refresh-now expects a share of app opens from 0 to 1"), "\(bad.stderr)")
    let plain = try dir.write("plain.json", SimulateCommandTests.config)
    let none = try runForage(["simulate", "--config", plain, "--refresh-now", "1"])
    #expect(none.status == 2)
    #expect(none.stderr.contains("--refresh-now starts the config's continuedProcessing tasks"), "\(none.stderr)")
  }

  /// Issue 14: a refresh budget past 30 s is clamped, and the command says so
  /// on standard error without refusing the config.
  @Test func test_issue14_longRefreshBudget_isAWarning_notAnError() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write(
      "forage.json", SimulateCommandTests.config.replacingOccurrences(of: #""budget": "30s""#, with: #""budget": "10m""#))
    let a = try runForage(["simulate", "--config", config, "--days", "1"])
    #expect(a.status == 0, "\(a.stderr)")
    #expect(a.stderr.contains("warning: \(config): tasks[0].budget: an appRefresh launch gets about 30s"), "\(a.stderr)")
  }

  /// Issue 14: with Background App Refresh off nothing runs in the
  /// background; an app that fetches when opened (`--refresh-on-open`, or a
  /// profile's `refreshOnOpen`) shows data as old as the previous open, and
  /// the forecast says so instead of a median of days.
  @Test func test_issue14_refreshOnOpen_withRefreshOff_showsWhatTheUserSees() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", SimulateCommandTests.config)
    let profile = #"{"name": "refresh-off", "backgroundAppRefresh": "denied", "appOpens": [{"at": "08:00", "session": "5m"}, {"at": "20:00", "session": "5m"}]}"#
    let file = try dir.write("off.json", profile)
    func prices(_ extra: [String], profile: String = file) throws -> [String: Any] {
      let r = try runForage(["simulate", "--config", config, "--days", "14", "--profile", profile, "--seed", "1", "--json"] + extra)
      #expect(r.status == 0, "\(r.stderr)")
      let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
      let forecast = try #require(json["forecast"] as? [String: Any])
      let sources = try #require(forecast["sources"] as? [[String: Any]])
      return try #require(sources.first { $0["source"] as? String == "prices" })
    }
    let plain = try prices([])
    #expect((plain["refreshes"] as? Int) == 0)
    #expect((plain["medianAge"] as? Double ?? 0) > 3 * 86_400, "\(plain)")
    let onOpen = try prices(["--refresh-on-open"])
    #expect((onOpen["refreshes"] as? Int) == 0)
    #expect((onOpen["medianAge"] as? Double) == 43_200, "\(onOpen)")
    #expect((onOpen["worstAge"] as? Double ?? .infinity) <= 12 * 3600 + 300, "\(onOpen)")
    let inProfile = try dir.write("off-open.json", profile.replacingOccurrences(of: #""name": "refresh-off","#, with: #""name": "refresh-off", "refreshOnOpen": true,"#))
    #expect(try prices([], profile: inProfile)["medianAge"] as? Double == 43_200)
  }

  /// Issue 14: one seed is one possible year; --seeds N reports each figure
  /// as the median over the seeds with its p10–p90 range, the same for the
  /// same seeds.
  @Test func test_issue14_seeds_reportMedianAndRange_deterministically() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", SimulateCommandTests.config)
    let args = ["simulate", "--config", config, "--days", "14", "--profile", "rarely-used", "--seed", "3", "--seeds", "5"]
    let a = try runForage(args + ["--json"])
    #expect(a.status == 0, "\(a.stderr)")
    let b = try runForage(args + ["--json"])
    #expect(a.stdout == b.stdout, "same seeds, same distribution")
    let json = try #require(try JSONSerialization.jsonObject(with: Data(a.stdout.utf8)) as? [String: Any])
    #expect(json["seeds"] as? [Int] == [3, 4, 5, 6, 7])
    let spread = try #require(json["distribution"] as? [String: Any])
    let sources = try #require(spread["sources"] as? [[String: Any]])
    let prices = try #require(sources.first { $0["source"] as? String == "prices" })
    let median = try #require(prices["medianAge"] as? [String: Double])
    let (p10, mid, p90) = (try #require(median["p10"]), try #require(median["median"]), try #require(median["p90"]))
    #expect(p10 <= mid && mid <= p90)
    #expect(p10 < p90, "five seeds of a rarely used app do not agree: \(median)")

    let text = try runForage(args)
    #expect(text.stdout.contains("Freshness forecast: 14.0 days, 5 seeds (3–7)"), "\(text.stdout)")
    #expect(text.stdout.contains("the median over the seeds, with the 10th–90th percentile range"))
    #expect(try runForage(args + ["--live"]).status == 2)
    #expect(try runForage(["simulate", "--config", config, "--seeds", "0"]).status == 2)
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
       "tasks": [{"id": "t.refresh", "kind": "appRefresh", "every": "1m", "budget": "10s", "sources": ["catalog"]}],
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
    // Wait for the first finished run of the task (bounded). The next one
    // is a minute later (the shortest interval a config accepts), so the
    // schedule is checked in the pending request the launch submitted.
    let started = Date()
    var runs: [TaskRun] = []
    while runs.isEmpty && Date().timeIntervalSince(started) < 60 && p.isRunning {
      try await Task.sleep(for: .milliseconds(200))
      if let s = try? SQLiteStore(path: store) {
        runs = (try? await s.runs(limit: 10))?.filter { $0.task == "t.refresh" && $0.summary != nil } ?? []
      }
    }
    #expect(runs.count == 1, "the daemon should have run the task once")
    kill(p.processIdentifier, SIGTERM)
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
    let lines = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
    #expect(lines.count >= 1)
    #expect(lines.first?.contains(#""task":"t.refresh""#) == true)
    // The schedule survives a restart: the pending request is in the store,
    // due `every` after the launch started, and nothing is written beside it.
    let reopened = try SQLiteStore(path: store)
    let pending = try await reopened.pendingTaskRequests()
    #expect(pending.map(\.identifier) == ["t.refresh"])
    if let launched = runs.first?.startedAt, let next = pending.first?.earliestBeginDate {
      // Generous: the request is submitted as the launch starts, before its run row.
      #expect(abs(next.timeIntervalSince(launched) - 60) < 5, "next launch at \(next), run started \(launched)")
    } else {
      Issue.record("the pending request has no earliest begin date")
    }
    #expect(!FileManager.default.fileExists(atPath: store + ".pending.json"))
    let records = try await reopened.records(source: "catalog", afterID: 0, limit: 100)
    #expect(records.count == 20)
  }

  static let hourlyConfig = """
    {"fetch": {"perHostDelay": "0s"},
     "tasks": [{"id": "t.hourly", "kind": "processing", "every": "1h", "budget": "10s", "sources": ["catalog"]}],
     "sources": [{"name": "catalog", "url": "BASE/", "crawl": {},
                  "match": "div.product", "key": ["sku"],
                  "extract": {"sku": {"css": "div.product", "attr": "data-sku"}}}]}
    """

  /// Starts `forage daemon`, its standard error going to `stderr` in `dir`.
  static func startDaemon(_ config: String, _ store: String, in dir: TemporaryDirectory, log: String) throws -> Process {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: forageBinary())
    p.arguments = ["daemon", "--config", config, "--store", store]
    _ = FileManager.default.createFile(atPath: dir.file(log), contents: nil)
    p.standardOutput = FileHandle.nullDevice
    p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: dir.file(log)))
    try p.run()
    return p
  }

  /// Waits (bounded) until `condition` holds.
  static func waitFor(_ seconds: Double = 60, _ condition: () async throws -> Bool) async throws {
    let started = Date()
    while try await !condition(), Date().timeIntervalSince(started) < seconds {
      try await Task.sleep(for: .milliseconds(100))
    }
  }

  /// The finished runs in `store` (of `task` only, when given).
  static func finishedRuns(_ store: String, task: String? = nil) async -> Int {
    guard let s = try? SQLiteStore(path: store), let runs = try? await s.runs(limit: 10) else { return 0 }
    return runs.filter { $0.summary != nil && (task == nil || $0.task == task) }.count
  }

  /// `config` with one more task, `id`, over the same source: new to the
  /// store, it is due at once. Its finished launch is the event that shows a
  /// daemon went through its due requests (one pass takes every due one), so
  /// a task that did not run by then was not due: no waiting for something
  /// not to happen.
  static func withMarkerTask(_ config: String, _ id: String) -> String {
    config.replacingOccurrences(
      of: #""tasks": ["#,
      with: #""tasks": [{"id": "\#(id)", "kind": "processing", "every": "1h", "budget": "10s", "sources": ["catalog"]}, "#)
  }

  @Test func test_issue9_daemonKilledAndRestarted_keepsItsScheduleFromTheStoreOnly() async throws {
    let server = try TestServer(site: DemoSite(products: 5))
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", Self.hourlyConfig.replacingOccurrences(of: "BASE", with: server.baseURL))
    let store = dir.file("s.sqlite")
    // The first daemon runs the task (due at once) and is killed outright.
    let first = try Self.startDaemon(config, store, in: dir, log: "first.log")
    try await Self.waitFor { await Self.finishedRuns(store) >= 1 || !first.isRunning }
    kill(first.processIdentifier, SIGKILL)
    first.waitUntilExit()
    #expect(await Self.finishedRuns(store) == 1)
    let kept = try await SQLiteStore(path: store).pendingTaskRequests()
    #expect(kept.map(\.identifier) == ["t.hourly"])
    #expect(kept.first?.kind == "processing")
    let due = try #require(kept.first?.earliestBeginDate)
    #expect(due > Date().addingTimeInterval(50 * 60), "the next run is an hour after the first")
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".json") } == ["forage.json"])

    // The second one finds the request in the store: nothing is due, nothing
    // runs. Its config has a new task too, due at once: once that one's
    // launch finished, the daemon had gone through its due requests.
    let secondConfig = try dir.write(
      "second.json", Self.withMarkerTask(Self.hourlyConfig, "t.marker").replacingOccurrences(of: "BASE", with: server.baseURL))
    let second = try Self.startDaemon(secondConfig, store, in: dir, log: "second.log")
    try await Self.waitFor { await Self.finishedRuns(store, task: "t.marker") >= 1 || !second.isRunning }
    kill(second.processIdentifier, SIGTERM)
    second.waitUntilExit()
    let log = try String(contentsOfFile: dir.file("second.log"), encoding: .utf8)
    #expect(second.terminationStatus == 0, "\(log)")
    #expect(await Self.finishedRuns(store, task: "t.marker") == 1, "the new task ran: \(log)")
    #expect(await Self.finishedRuns(store, task: "t.hourly") == 1, "\(log)")
    let pendingAfter = try await SQLiteStore(path: store).pendingTaskRequests()
    #expect(pendingAfter.filter { $0.identifier == "t.hourly" }.map(\.earliestBeginDate) == [due])
  }

  @Test func test_issue9_daemon_importsAnEarlierVersionsPendingFile_once_andKeepsIt() async throws {
    let server = try TestServer(site: DemoSite(products: 5))
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = dir.file("s.sqlite")
    // As JSONFilePendingRequestStore wrote it: due in an hour (seconds since 2001).
    let due = Date(timeIntervalSinceReferenceDate: (Date().timeIntervalSinceReferenceDate + 3600).rounded())
    let file = try dir.write("s.sqlite.pending.json", """
      [
        {
          "processing" : {
            "_0" : {
              "earliestBeginDate" : \(Int(due.timeIntervalSinceReferenceDate)),
              "identifier" : "t.hourly",
              "requiresExternalPower" : false,
              "requiresNetworkConnectivity" : true
            }
          }
        }
      ]
      """)
    let bytes = FileManager.default.contents(atPath: file)
    for (n, log) in ["first.log", "second.log"].enumerated() {
      // Each daemon has a task of its own, new to the store and so due at
      // once: its finished launch shows the daemon went through its due
      // requests, and the imported one was not among them.
      let marker = "t.marker\(n)"
      let markedConfig = try dir.write(
        "forage\(n).json", Self.withMarkerTask(Self.hourlyConfig, marker).replacingOccurrences(of: "BASE", with: server.baseURL))
      let p = try Self.startDaemon(markedConfig, store, in: dir, log: log)
      try await Self.waitFor { await Self.finishedRuns(store, task: marker) >= 1 || !p.isRunning }
      kill(p.processIdentifier, SIGTERM)
      p.waitUntilExit()
      let text = try String(contentsOfFile: dir.file(log), encoding: .utf8)
      #expect(p.terminationStatus == 0, "\(text)")
      let imported = text.split(separator: "\n").filter { $0.contains("imported") }
      if n == 0 {
        #expect(imported == ["forage daemon: imported 1 pending request(s) from \(file) into the store; that file is no longer used and may be removed"])
      } else {
        #expect(imported.isEmpty, "the store holds requests now: the file is not read again")
      }
      #expect(await Self.finishedRuns(store, task: marker) == 1, "the daemon's new task ran: \(text)")
      #expect(await Self.finishedRuns(store, task: "t.hourly") == 0, "the imported request is due in an hour")
      let kept = try await SQLiteStore(path: store).pendingTaskRequests().filter { $0.identifier == "t.hourly" }
      #expect(kept.map(\.earliestBeginDate) == [due])
      #expect(kept.first?.requiresNetworkConnectivity == true)
      #expect(FileManager.default.contents(atPath: file) == bytes, "the user's file is left as it was")
    }
  }
}
