import Foundation
import Testing
import ForageStore
import ForageTestSupport
#if Postgres
@testable import ForagePostgres
#endif

/// The PostgreSQL server of the tests, from the environment.
enum FleetServer {
  static var url: String? {
    ProcessInfo.processInfo.environment["FORAGE_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
  }
  static var isCI: Bool { !(ProcessInfo.processInfo.environment["CI"] ?? "").isEmpty }
}

/// Several `forage run` processes on one PostgreSQL store: a fleet. The test
/// server is `FORAGE_TEST_POSTGRES_URL` (`scripts/test` starts one); without
/// it the suite is skipped, except under CI, where it fails.
@Suite(
  .serialized,
  .enabled(
    if: FleetServer.url != nil || FleetServer.isCI,
    "FORAGE_TEST_POSTGRES_URL is not set: the fleet tests are skipped (scripts/test starts a PostgreSQL server)"))
struct FleetTests {

  /// One source crawling a generated shop.
  static func config(base: String) -> String {
    """
    {
      "userAgent": "ForageFleetTest/1.0",
      "fetch": {"concurrency": 4, "perHostConcurrency": 2, "perHostDelay": "5ms", "timeout": "10s"},
      "sources": [{
        "name": "catalog", "url": "\(base)/",
        "crawl": {"follow": "a[href]", "sameHost": true, "maxDepth": 6, "maxPages": 100000, "revisitAfter": "0s"},
        "match": "div.product", "key": ["sku"],
        "extract": {"title": "h1.product-title", "price": {"css": "span.price", "type": "number"},
                    "sku": {"css": "div.product", "attr": "data-sku", "required": true}}
      }]
    }
    """
  }

  /// The records of one uninterrupted single-worker run on SQLite.
  static func reference(config: String, dir: TemporaryDirectory) async throws -> [String] {
    let path = dir.file("reference.sqlite")
    let run = try runForage(["run", "--config", config, "--store", path, "--budget", "120s"])
    #expect(run.status == 0, "\(run.stderr)")
    return try await storeContents(SQLiteStore(path: path))
  }

  #if Postgres
  /// Runs `body` with the URL of a new database on the test server, dropped afterwards.
  static func withDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
    guard let serverURL = FleetServer.url else {
      throw PostgresURL.Invalid(message: "FORAGE_TEST_POSTGRES_URL is not set (required under CI)")
    }
    let base = try PostgresURL(serverURL)
    let name = "forage_fleet_\(UInt64.random(in: 0...UInt64.max))"
    let admin = try PostgresConnection(url: base)
    try admin.exec("CREATE DATABASE \(name)")
    defer { _ = try? admin.exec("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    return try await body(base.replacingDatabase(with: name).text)
  }

  /// Waits for `process` to exit, at most `seconds`; kills it (and fails) past that.
  static func wait(_ process: Process, seconds: Double) async {
    let started = Date()
    while process.isRunning && Date().timeIntervalSince(started) < seconds {
      try? await Task.sleep(for: .milliseconds(50))
    }
    if process.isRunning {
      Issue.record("a worker did not finish within \(Int(seconds)) s")
      kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
  }

  @Test func test_threeWorkers_oneKilledMidCrawl_storeTheRecordsOfASingleRun_once() async throws {
    // Until the first worker is killed, the fleet may fetch only 50 of the
    // 150 product pages: it cannot finish first, however fast the machine.
    let gate = ProductPageGate()
    let server = try gate.server(DemoSite(products: 150))
    defer { server.stop() }
    // A slow site: requests of different workers overlap on the server, so
    // the fleet's per-host limit shows (3 workers x 2 would be 6).
    server.setLatency(.milliseconds(20))
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", Self.config(base: server.baseURL))
    let expected = try await Self.reference(config: config, dir: dir)
    #expect(expected.count == 150)

    try await Self.withDatabase { url in
      // Migrate once first, so the workers start on an equal footing.
      let watcher = try PostgresStore(url: url)
      server.clearRequests()
      gate.begin(allowance: 50)
      let workers = try (0..<3).map { _ in
        try startForage(["run", "--config", config, "--store", url, "--budget", "120s"])
      }
      let started = Date()
      while workers[0].isRunning, Date().timeIntervalSince(started) < 60,
        (try? await watcher.records(source: nil, afterID: 0, limit: 1000).count) ?? 0 < 40
      {
        try await Task.sleep(for: .milliseconds(5))
      }
      let killedMidCrawl = workers[0].isRunning
      if killedMidCrawl { kill(workers[0].processIdentifier, SIGKILL) }
      workers[0].waitUntilExit()
      gate.begin(allowance: .max)
      for worker in workers.dropFirst() { await Self.wait(worker, seconds: 120) }
      #expect(killedMidCrawl, "the first worker finished before it could be killed; the test did not test much")
      for worker in workers.dropFirst() {
        #expect(worker.terminationStatus == 0, "a surviving worker failed")
      }

      // The crawl completed: nothing is left claimed by the dead worker.
      let counts = try await watcher.frontierCounts(crawl: 1)
      #expect(counts.queued == 0 && counts.claimed == 0 && counts.done > 150, "\(counts)")
      let stored = try await storeContents(watcher)
      #expect(stored.count == expected.count)
      #expect(stored == expected)
      // Each record was new once: no page's records were committed twice.
      let news = try await watcher.changes(matching: ChangeQuery(kinds: [.new], limit: 10_000))
      #expect(news.count == expected.count)
      #expect(Set(news.map(\.key)).count == news.count)
      // Every worker took part: the frontier was shared, not crawled thrice.
      let productFetches = server.requests.filter { $0.target.hasPrefix("/product/") }.count
      #expect(productFetches < 2 * expected.count, "\(productFetches) product fetches for \(expected.count) products")
      // Robots.txt once per fleet: one worker downloaded it, the others read its answer.
      #expect(server.requestCount(path: "/robots.txt") == 1, "robots.txt was asked \(server.requestCount(path: "/robots.txt")) times")
      // Politeness is the fleet's: never more requests at once than one worker's limit.
      #expect(server.maxConcurrentRequests <= 2, "the server answered \(server.maxConcurrentRequests) requests at once")
      #expect(server.maxConcurrentRequests >= 1)
      try await watcher.close()
    }
  }

  /// `config(base:)` with `tasks`: `t.shared` and one task of the daemon's
  /// own (`own`), every hour, all refreshing the catalog.
  static func daemonConfig(base: String, own: String) -> String {
    let tasks = """
      "tasks": [
        {"id": "t.shared", "kind": "processing", "every": "1h", "budget": "120s", "sources": ["catalog"]},
        {"id": "\(own)", "kind": "processing", "every": "1h", "budget": "120s", "sources": ["catalog"]}
      ],

      """
    return config(base: base).replacingOccurrences(of: "\"userAgent\"", with: tasks + "\"userAgent\"")
  }

  /// Starts `forage --verbose daemon`, its standard error going to `log`.
  static func startDaemon(config: String, store: String, log: String) throws -> Process {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: forageBinary())
    p.arguments = ["--verbose", "daemon", "--config", config, "--store", store]
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    p.standardOutput = FileHandle.nullDevice
    p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    try p.run()
    return p
  }

  @Test func test_twoDaemons_launchEachDueTaskOnce_andKeepEachOthersPendingRequests() async throws {
    let server = try TestServer(site: DemoSite(products: 60))
    defer { server.stop() }
    server.setLatency(.milliseconds(5))
    let dir = TemporaryDirectory()
    let expected = try await Self.reference(config: try dir.write("forage.json", Self.config(base: server.baseURL)), dir: dir)
    #expect(expected.count == 60)
    let configA = try dir.write("a.json", Self.daemonConfig(base: server.baseURL, own: "t.a"))
    let configB = try dir.write("b.json", Self.daemonConfig(base: server.baseURL, own: "t.b"))

    try await Self.withDatabase { url in
      // Migrate once first, so the daemons start on an equal footing.
      let watcher = try PostgresStore(url: url)
      let started = Date()
      // The shared task is due in 3 s, so that both daemons read it as
      // pending and reach its launch (the election is always exercised);
      // each daemon's own task is due at once.
      try await watcher.updatePendingTaskRequests(
        [PendingTaskRequest(identifier: "t.shared", kind: "processing", earliestBeginDate: started + 3)], removing: [])
      let a = try Self.startDaemon(config: configA, store: url, log: dir.file("a.log"))
      let b = try Self.startDaemon(config: configB, store: url, log: dir.file("b.log"))
      func finished() async -> [String] {
        ((try? await watcher.runs(limit: 100)) ?? []).filter { $0.summary != nil }.map(\.task)
      }
      let skip = "t.shared: another daemon of the fleet runs this launch; skipped here"
      // Both daemons reached the shared launch: one ran it (a run, finished
      // or not), the other said it skipped it. Were the election broken, both
      // would have run it: two runs, and the checks below fail.
      func sharedLaunchesHandled() async -> Int {
        let runs = ((try? await watcher.runs(limit: 100)) ?? []).filter { $0.task == "t.shared" }.count
        let skips = [dir.file("a.log"), dir.file("b.log")].map {
          ((try? String(contentsOfFile: $0, encoding: .utf8)) ?? "").components(separatedBy: skip).count - 1
        }
        return runs + skips.reduce(0, +)
      }
      while Date().timeIntervalSince(started) < 120, a.isRunning, b.isRunning {
        let finishedCount = await finished().count
        if finishedCount >= 3, await sharedLaunchesHandled() >= 2 { break }
        try await Task.sleep(for: .milliseconds(100))
      }
      for daemon in [a, b] where daemon.isRunning { kill(daemon.processIdentifier, SIGTERM) }
      await Self.wait(a, seconds: 60)
      await Self.wait(b, seconds: 60)
      let logs = try [dir.file("a.log"), dir.file("b.log")].map { try String(contentsOfFile: $0, encoding: .utf8) }
      #expect(a.terminationStatus == 0 && b.terminationStatus == 0, "\(logs)")

      // Each due launch ran once in the fleet: t.shared in one daemon only.
      let runs = try await watcher.runs(limit: 100)
      #expect(runs.map(\.task).sorted() == ["t.a", "t.b", "t.shared"], "\(logs)")
      #expect(runs.allSatisfy { $0.summary != nil })
      #expect(logs.map { $0.components(separatedBy: skip).count - 1 }.sorted() == [0, 1], "\(logs)")
      // The records are those of a single run.
      #expect(try await storeContents(watcher) == expected)
      // Neither daemon erased the other's pending requests: each task's next
      // launch is kept, an hour on.
      let pending = try await watcher.pendingTaskRequests()
      #expect(pending.map(\.identifier) == ["t.a", "t.b", "t.shared"])
      #expect(
        pending.allSatisfy { ($0.earliestBeginDate ?? .distantPast) > started.addingTimeInterval(50 * 60) }, "\(pending)")
      try await watcher.close()
    }
  }

  @Test func test_storeURL_worksForEveryCommand_andItsPasswordIsNeverPrinted() async throws {
    let server = try TestServer(site: DemoSite(products: 5))
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", Self.config(base: server.baseURL))
    try await Self.withDatabase { url in
      // Trust authentication accepts any password: it must still never be shown.
      let secret = "pw-\(UInt32.random(in: 0...UInt32.max))"
      let withPassword = url.replacingOccurrences(of: "://forage@", with: "://forage:\(secret)@")
      let run = try runForage(["--verbose", "run", "--config", config, "--store", withPassword, "--budget", "60s"])
      #expect(run.status == 0, "\(run.stderr)")
      let status = try runForage(["--verbose", "status", "--store", withPassword])
      #expect(status.status == 0, "\(status.stderr)")
      #expect(status.stdout.contains("catalog"), "\(status.stdout)")
      let export = try runForage(["export", "--store", withPassword])
      #expect(export.stdout.split(separator: "\n").count == 5, "\(export.stdout)\(export.stderr)")
      let missing = withPassword.replacingOccurrences(of: "/forage_fleet_", with: "/no_such_db_")
      let refused = try runForage(["--verbose", "status", "--store", missing])
      #expect(refused.status != 0)
      #expect(refused.stderr.contains("does not exist"), "\(refused.stderr)")
      for output in [run, status, export, refused] {
        #expect(!(output.stdout + output.stderr).contains(secret), "the password was printed")
      }
    }
  }

  /// Restarts the test server's PostgreSQL (`pg_ctl restart`, as the user
  /// that runs it); false when the environment does not say how or it failed.
  /// The restarted server must not inherit this process's output: it would
  /// hold `swift test`'s pipe open after the tests end (and `swift test` would
  /// wait for it forever), so pg_ctl runs with /dev/null for its standard
  /// streams and the server logs to the cluster's log file.
  static func restartPostgreSQL() -> Bool {
    let env = ProcessInfo.processInfo.environment
    guard let data = env["FORAGE_TEST_POSTGRES_DATA"], let bin = env["FORAGE_TEST_POSTGRES_BIN"] else { return false }
    let log = (data as NSString).deletingLastPathComponent + "/server.log"
    let pgCtl = [bin + "/pg_ctl", "-D", data, "-l", log, "-m", "fast", "-w", "-s", "restart"]
    let arguments = getuid() == 0 ? ["/usr/sbin/runuser", "-u", env["FORAGE_TEST_POSTGRES_USER"] ?? "postgres", "--"] + pgCtl : pgCtl
    let cArguments = arguments.map { strdup($0) } + [nil]
    defer { for argument in cArguments { free(argument) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for fd: Int32 in [0, 1, 2] {
      posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    var pid: pid_t = 0
    guard posix_spawn(&pid, arguments[0], &actions, nil, cArguments, environ) == 0 else { return false }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    return status == 0
  }

  /// Issue 27: a page that keeps failing goes back to the queue, and a
  /// worker does not fetch it again in the same launch; it holds it claimed
  /// until the launch ends. A fleet's worker counted that claim as another
  /// worker's and waited for it, looking again until its budget ran out.
  /// Now the launch ends once the rest is done, and the page is queued for
  /// the next one.
  @Test func test_issue27_aPageThatKeepsFailing_doesNotKeepAWorkerWaitingForItself() async throws {
    let server = try TestServer(
      routes: ["/product/3": Route { _ in .text("busy", status: 503) }], site: DemoSite(products: 60))
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let config = try dir.write(
      "forage.json",
      Self.config(base: server.baseURL).replacingOccurrences(of: "\"timeout\": \"10s\"", with: "\"timeout\": \"10s\", \"retries\": 0"))
    // The same site on SQLite: its records, product 3's missing.
    let expected = try await Self.reference(config: config, dir: dir)
    #expect(!expected.isEmpty && !expected.contains { $0.contains("/product/3\t") }, "\(expected.prefix(3))")
    try await Self.withDatabase { url in
      let worker = try startForage(["run", "--config", config, "--store", url, "--budget", "45s"])
      await Self.wait(worker, seconds: 90)
      #expect(worker.terminationStatus == 0)
      let watcher = try PostgresStore(url: url)
      let run = try #require(try await watcher.runs(limit: 1).first)
      #expect(run.summary?.outcome != .budget, "the worker waited for its own claim until its budget ran out")
      // Released at the end of the launch: queued for the next, one attempt spent.
      let counts = try await watcher.frontierCounts(crawl: 1)
      #expect(counts.queued == 1 && counts.claimed == 0, "\(counts)")
      #expect(try await storeContents(watcher) == expected)
      try await watcher.close()
    }
  }

  @Test func test_postgreSQLRestartedMidCrawl_workersReconnect_andLoseNothing() async throws {
    // Until PostgreSQL has restarted, the workers may fetch only 40 of the
    // 120 product pages: they cannot finish first, however fast the machine.
    let gate = ProductPageGate()
    let server = try gate.server(DemoSite(products: 120, seed: 3))
    defer { server.stop() }
    server.setLatency(.milliseconds(20))
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", Self.config(base: server.baseURL))
    let expected = try await Self.reference(config: config, dir: dir)
    #expect(expected.count == 120)

    try await Self.withDatabase { url in
      let watcher = try PostgresStore(url: url)
      gate.begin(allowance: 40)
      let workers = try (0..<2).map { _ in
        try startForage(["run", "--config", config, "--store", url, "--budget", "120s"])
      }
      let started = Date()
      while workers.allSatisfy(\.isRunning), Date().timeIntervalSince(started) < 60,
        (try? await watcher.records(source: nil, afterID: 0, limit: 1000).count) ?? 0 < 30
      {
        try await Task.sleep(for: .milliseconds(5))
      }
      let restartedMidCrawl = workers.allSatisfy(\.isRunning)
      #expect(Self.restartPostgreSQL(), "pg_ctl restart failed")
      gate.begin(allowance: .max)
      for worker in workers { await Self.wait(worker, seconds: 120) }
      #expect(restartedMidCrawl, "the workers finished before the restart; the test did not test much")
      for worker in workers { #expect(worker.terminationStatus == 0, "a worker failed after the restart") }

      let stored = try await storeContents(watcher)
      #expect(stored == expected)
      let news = try await watcher.changes(matching: ChangeQuery(kinds: [.new], limit: 10_000))
      #expect(news.count == expected.count)
      #expect(await watcher.reconnections >= 1, "the watcher's connection should have been made again")
      try await watcher.close()
    }
  }
  #endif
}
