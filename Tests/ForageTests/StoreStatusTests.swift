import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageSupport
import ForageTestSupport
@testable import Forage

@Suite(.serialized) struct StoreStatusTests {
  @Test func test_healthySource_showsRecordsChangesAndLaunches() async throws {
    let shop = try ChangingShop()
    defer { shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config([])
    try await launch(config, store)
    shop.setPrice("Lamp", 10)
    shop.remove("Desk")
    try await launch(config, store)

    let status = try await StoreStatus.gather(store: store, config: config)
    #expect(status.attention.isEmpty)
    let source = try #require(status.sources.first)
    #expect(source.name == "shop" && source.records == 1 && source.removed == 1)
    #expect(source.changesLastDay == 4)  // two new, one changed, one removed
    #expect(source.lastLaunchPages == 1 && source.lastLaunchFailures == 0)
    #expect(source.newestData != nil)
    let task = try #require(status.tasks.first)
    #expect(task.id == "run" && task.launches.count == 2)
    #expect(task.launches.allSatisfy { $0.outcome == "completed" })
    let text = status.text()
    #expect(text.contains("shop: data 0s old, 1 record (1 removed), 4 changes in the last day"))
    #expect(text.contains("Healthy."))
  }

  @Test func test_sourceFailingEveryLaunch_needsAttention_withItsErrorsGrouped() async throws {
    let server = try TestServer(routes: ["/gone": Route { _ in .text("no", status: 404) }])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    let config = ForageConfig(fetch: fetch, sources: [Source(name: "broken", url: server.url("/gone"), extract: ["t": "h1"])])
    for i in 1...3 {
      try await launch(config, store)
      let status = try await StoreStatus.gather(store: store, config: config)
      // Two failing launches are not yet a pattern; the third is.
      #expect(status.attention.isEmpty == (i < 3))
    }
    let status = try await StoreStatus.gather(store: store, config: config)
    let source = try #require(status.sources.first)
    #expect(source.failingLaunches == 3)
    #expect(source.errors == [StoreStatus.ErrorGroup(cause: "HTTP 404", count: 3, firstURL: server.url("/gone"))])
    #expect(status.attention.first?.hasPrefix("broken: every page failed in its last 3 launches: HTTP 404") == true)
    #expect(status.text().contains("HTTP 404 ×3"))
  }

  @Test func test_deadNotifications_needAttention() async throws {
    let shop = try ChangingShop()
    let receiver = try WebhookReceiver(script: [.gone])
    defer { receiver.stop(); shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config([NotifyChannel(name: "hook", target: .webhook(url: receiver.url, secretEnv: nil))])
    try await launch(config, store)
    shop.setPrice("Lamp", 10)
    try await launch(config, store)
    let status = try await StoreStatus.gather(store: store, config: config)
    #expect(status.notifications.dead == 1)
    #expect(status.notifications.deadReasons.first?.hasPrefix("hook: ") == true)
    #expect(status.attention.contains { $0.contains("1 notification is dead") })
    // JSON for scripts: the same figures.
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    let json = try JSONValue.parse(Array(try encoder.encode(status)))
    #expect(json["notifications"]?["dead"] == .number(1))
  }

  @Test func test_errorGroups_splitURLFromCause_mostFrequentFirst() {
    let groups = StoreStatus.group([
      "https://a.example/1: HTTP 500", "https://a.example/2: timed out after 10 s", "https://a.example/3: HTTP 500",
    ])
    #expect(groups.map(\.cause) == ["HTTP 500", "timed out after 10 s"])
    #expect(groups[0].count == 2 && groups[0].firstURL == "https://a.example/1")
  }
}

@Suite struct LaunchProgressTests {
  @Test func test_progress_carriesTheTimeSoFar_andReachesATaskRunnersCaller() async throws {
    let shop = try ChangingShop()
    defer { shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var config = shop.config([])
    config.tasks = [TaskDefinition(id: "t", kind: .appRefresh, budget: .seconds(20), sources: ["shop"])]
    let seen = Locked<[RunSummary]>([])
    _ = try await Engine.simulate(
      config: config, store: store, profile: .commuter, days: 1, seed: 1, live: true,
      progress: { task, summary in
        #expect(task.id == "t")
        seen.withLock { $0.append(summary) }
      })
    let summaries = seen.withLock { $0 }
    #expect(!summaries.isEmpty)
    #expect(summaries.allSatisfy { $0.seconds > 0 && $0.outcome == .running })
    #expect(summaries.contains { $0.pagesFetched > 0 })
  }
}

@Suite struct StatusDownloadsTests {
  @Test func test_failedDownload_needsAttention_andIsListed() async throws {
    let server = try TestServer(routes: ["/ok.bin": Route { _ in .text("data") }])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    try FileManager.default.createDirectory(atPath: dir.file("files"), withIntermediateDirectories: true)
    let downloads = Downloads(store: store, transport: Engine.defaultTransport())
    try await downloads.enqueue(server.url("/ok.bin"), to: dir.file("files"))
    try await downloads.enqueue(server.url("/missing.bin"), to: dir.file("files"))
    _ = try await downloads.work(until: .now + .seconds(20))
    let status = try await StoreStatus.gather(store: store)
    #expect(status.downloads.done == 1 && status.downloads.failed == 1)
    #expect(status.downloads.failures.first?.hasPrefix(server.url("/missing.bin")) == true)
    #expect(status.attention.contains { $0.hasPrefix("1 download failed") })
    #expect(status.text().contains("0 queued, 0 running, 1 done, 1 failed"))
  }
}
