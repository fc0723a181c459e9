import Foundation
import ForageHTTP
import ForageScheduler
import ForageStore
import ForageSupport
import ForageTestSupport
import Testing

@testable import Forage

/// Issue 26: a config's `continuedProcessing` task (the user's "refresh
/// now"), its progress, how the daemon and the simulator treat it, and
/// several `appRefresh` tasks run as separate tasks.
@Suite struct ContinuedProcessingTaskTests {
  static func parse(_ tasks: String, sources: String = #"{"name": "s", "url": "https://example.com/"}"#) throws
    -> ForageConfig
  {
    try ForageConfig.parse(Array("""
      {"tasks": [\(tasks)], "sources": [\(sources)]}
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

  static let refreshNow =
    #"{"id": "com.example.refresh-now", "kind": "continuedProcessing", "title": "Refreshing prices", "subtitle": "Every shop", "strategy": "fail", "sources": ["s"]}"#

  // MARK: - The config

  @Test func test_config_readsTitleSubtitleAndStrategy_andWritesThemBack() throws {
    let config = try Self.parse(Self.refreshNow)
    let task = config.tasks[0]
    #expect(task.kind == .continuedProcessing)
    #expect(task.title == "Refreshing prices" && task.subtitle == "Every shop" && task.strategy == .fail)
    #expect(task.budget == SchedulerDefaults.continuedProcessingBudget)
    let again = try ForageConfig.parse(Array(config.jsonText.utf8))
    #expect(again.tasks == config.tasks)
    #expect(!config.jsonText.contains("every"))
    // The strategy defaults to Apple's, `queue`.
    let plain = try Self.parse(#"{"id": "n", "kind": "continuedProcessing", "title": "Now", "sources": ["s"]}"#)
    #expect(plain.tasks[0].strategy == .queue && plain.tasks[0].subtitle == nil)
  }

  @Test func test_config_mistakes_nameTheirPath() {
    #expect(
      Self.problems(#"{"id": "n", "kind": "continuedProcessing", "title": "Now", "every": "1h", "sources": ["s"]}"#)
        .first?.hasPrefix("tasks[0].every: a continuedProcessing task runs when the user starts it") == true)
    #expect(
      Self.problems(#"{"id": "n", "kind": "continuedProcessing", "sources": ["s"]}"#)
        == ["tasks[0].title: missing: a continuedProcessing task needs the title the system shows while it runs"])
    #expect(
      Self.problems(#"{"id": "n", "kind": "continuedProcessing", "title": " ", "sources": ["s"]}"#)
        == ["tasks[0].title: must not be empty: the system shows it while the task runs"])
    let strategy = Self.problems(#"{"id": "n", "kind": "continuedProcessing", "title": "Now", "strategy": "queued", "sources": ["s"]}"#)
    #expect(strategy.first?.hasPrefix(#"tasks[0].strategy: unknown strategy "queued" (did you mean "queue"?)"#) == true, "\(strategy)")
    #expect(
      Self.problems(#"{"id": "n", "kind": "continuedProcessing", "title": "Now", "requiresExternalPower": true, "sources": ["s"]}"#)
        .first?.hasPrefix("tasks[0].requiresExternalPower: does not apply to a continuedProcessing task") == true)
    #expect(
      Self.problems(#"{"id": "r", "title": "Now", "sources": ["s"]}"#)
        == ["tasks[0].title: applies to continuedProcessing tasks only (this task is appRefresh)"])
    let kind = Self.problems(#"{"id": "r", "kind": "continuedProcesing", "sources": ["s"]}"#)
    #expect(kind.first?.contains(#"did you mean "continuedProcessing"?"#) == true, "\(kind)")
  }

  // MARK: - Requests

  @Test func test_request_isAContinuedProcessingRequest_submittedOnlyByTheUsersAction() async throws {
    let config = try Self.parse(
      Self.refreshNow + #", {"id": "com.example.refresh", "sources": ["s"]}"#)
    let request = try #require(
      try TaskRunner.request(for: config.tasks[0], earliestBeginDate: nil) as? ContinuedProcessingTaskRequest)
    #expect(request.title == "Refreshing prices" && request.subtitle == "Every shop" && request.strategy == .fail)

    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let scheduler = SimulatedScheduler(device: .chargingOnWiFi, policy: .server)
    let runner = TaskRunner(config: config, store: store, transport: Engine.defaultTransport())
    runner.register(on: scheduler, now: { scheduler.now })
    scheduler.finishLaunching()
    try await runner.submitAll(to: scheduler, now: scheduler.now)
    #expect(await scheduler.pendingTaskRequests().map(\.identifier) == ["com.example.refresh"])
    try runner.startNow("com.example.refresh-now", on: scheduler)
    #expect(await scheduler.pendingTaskRequests().map(\.kind) == [.appRefresh, .continuedProcessing])
    #expect(throws: SchedulerError.unsupportedTaskKind) { try runner.startNow("com.example.refresh", on: scheduler) }
    try await store.close()
  }

  // MARK: - Progress

  @Test func test_pageProgress_countsPagesDone_ofTheKnownPages() {
    var summary = RunSummary()
    summary.pagesFetched = 2
    summary.pagesNotModified = 1
    summary.pagesFailed = 1
    let listed = TaskRunner.pageProgress(summary, knownPages: 6, finished: false)
    #expect(listed.completedUnitCount == 4 && listed.totalUnitCount == 6)
    let crawl = TaskRunner.pageProgress(summary, knownPages: 0, finished: false)
    #expect(crawl.completedUnitCount == 4 && crawl.totalUnitCount == 0)  // unknown while a crawl finds pages
    #expect(TaskRunner.pageProgress(summary, knownPages: 0, finished: true).fractionCompleted == 1)
    let sources = [Source(name: "a", urls: ["https://x.org/1", "https://x.org/2"]), Source(name: "b", url: "https://x.org/3")]
    #expect(TaskRunner.knownPages(sources) == 3)
    var crawling = sources
    crawling[1].crawl = CrawlScope(follow: "a")
    #expect(TaskRunner.knownPages(crawling) == 0)
  }

  @Test func test_launch_reportsPagesAsProgress_andIsNotResubmitted() async throws {
    let server = try TestServer(routes: [
      "/1": Route { _ in .html("<h1>One</h1>") }, "/2": Route { _ in .html("<h1>Two</h1>") },
      "/3": Route { _ in .html("<h1>Three</h1>") },
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    fetch.perHostDelay = .zero
    let id = "com.example.refresh-now"
    let config = ForageConfig(
      fetch: fetch,
      tasks: [TaskDefinition(id: id, kind: .continuedProcessing, budget: .seconds(20), sources: ["p"], title: "Refreshing")],
      sources: [Source(name: "p", urls: ["/1", "/2", "/3"].map(server.url), extract: ["t": "h1"])])
    let scheduler = SimulatedScheduler(device: .chargingOnWiFi, seed: 1, log: .silent)
    let reports = Locked<[TaskProgress]>([])
    let runner = TaskRunner(config: config, store: store, transport: Engine.defaultTransport())
    scheduler.register(id) { background in
      background.observeProgress { p in reports.withLock { $0.append(p) } }
      try await runner.launch(config.tasks[0], background, scheduler: scheduler, now: scheduler.now)
    }
    scheduler.finishLaunching()
    scheduler.device.openApp()
    try runner.startNow(id, on: scheduler)
    await scheduler.advance(by: .seconds(60))
    let seen = reports.withLock { $0 }
    #expect(seen.first == TaskProgress(completedUnitCount: 0, totalUnitCount: 3))
    #expect(seen.last == TaskProgress(completedUnitCount: 3, totalUnitCount: 3))
    #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.completedUnitCount <= $1.completedUnitCount })
    #expect(scheduler.trace.events(for: id).first { $0.kind == .completed }?.success == true)
    // The user starts each launch: it submitted nothing after itself.
    #expect(scheduler.trace.count(.submitted, identifier: id) == 1)
    #expect(await scheduler.pendingTaskRequests().isEmpty)
    try await store.close()
  }

  // MARK: - The forecast

  @Test func test_simulate_refreshNow_runsTheTaskAtTheUsersOpens_andRefreshesItsSources() async throws {
    let config = try Self.parse(Self.refreshNow)
    let none = try await Engine.simulate(config: config, store: nil, profile: .commuter, days: 3, seed: 1)
    #expect(none.trace.count(.launched) == 0)
    #expect(none.forecast.sources.first?.refreshes == 0)

    let tapped = try await Engine.simulate(config: config, store: nil, profile: .commuter, days: 3, seed: 1, refreshNow: 1)
    let opens = tapped.trace.count(.appOpened)
    let launches = tapped.trace.count(.launched, identifier: "com.example.refresh-now")
    #expect(opens > 0 && launches > 0 && launches <= opens)
    // Each launch starts at an open, the app in front.
    let openTimes = Set(tapped.trace.events.filter { $0.kind == .appOpened }.map(\.time))
    #expect(tapped.trace.events(for: "com.example.refresh-now").filter { $0.kind == .launched }.allSatisfy { openTimes.contains($0.time) })
    let refreshes = try #require(tapped.forecast.sources.first { $0.source == "s" }).refreshes
    #expect(refreshes > 0)

    let spread = try await Engine.simulate(config: config, store: nil, profile: .commuter, days: 3, seeds: [1, 2], refreshNow: 0.5)
    #expect(!spread.sources.isEmpty)
  }

  /// Issue 26 (3): a config with two refresh tasks ran only the first in the
  /// simulator; the second's submissions were refused (one pending refresh
  /// request per app, as on iOS).
  @Test func test_issue26_severalRefreshTasks_runAsSeparateTasks_andTheNoteSaysWhatIOSDoes() async throws {
    let config = try Self.parse(
      #"{"id": "prices", "every": "15m", "sources": ["s"]}, {"id": "news", "every": "1h", "sources": ["n"]}"#,
      sources: #"{"name": "s", "url": "https://example.com/"}, {"name": "n", "url": "https://example.com/n"}"#)
    let result = try await Engine.simulate(config: config, store: nil, profile: .server, days: 1, seed: 1)
    #expect(result.trace.count(.rejected) == 0)
    #expect(result.trace.count(.launched, identifier: "prices") > 0)
    #expect(result.trace.count(.launched, identifier: "news") > 0)
    let notes = Engine.iOSNotes(for: config, refreshNow: nil)
    #expect(notes.count == 1)
    #expect(notes.first?.hasPrefix("iOS keeps one pending refresh request per app: the 2 appRefresh tasks (prices, news)") == true)
    #expect(Engine.iOSNotes(for: try Self.parse(#"{"id": "only", "sources": ["s"]}"#), refreshNow: nil).isEmpty)
    #expect(Engine.iOSNotes(for: try Self.parse(Self.refreshNow), refreshNow: nil).first?.contains("--refresh-now") == true)
  }

  /// Issue 26 (3): the daemon's `submitAll` threw at the second refresh task.
  @Test func test_issue26_daemonPolicy_holdsARequestPerRefreshTask() async throws {
    let config = try Self.parse(
      #"{"id": "prices", "sources": ["s"]}, {"id": "news", "sources": ["s"]}, "# + Self.refreshNow)
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let scheduler = SystemScheduler(
      policy: Engine.separateRefreshTasks(TaskRunner.policy(.server, for: config), config),
      permittedIdentifiers: config.tasks.map(\.id), log: .silent)
    let runner = TaskRunner(config: config, store: store, transport: Engine.defaultTransport())
    runner.register(on: scheduler)
    scheduler.finishLaunching()
    try await runner.submitAll(to: scheduler, now: Date())
    #expect(await scheduler.pendingTaskRequests().map(\.identifier) == ["news", "prices"])
    try await store.close()
  }
}
