import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageTestSupport
@testable import Forage

/// Stopping early (a signal's `StopRequest`) and robots.txt failures, as a
/// user sees them (issue 8).
@Suite(.serialized) struct JobStopTests {
  @Test func test_issue8_stopRequest_stopsLikeTheBudget_andTheNextRunContinues() async throws {
    let site = DemoSite(products: 60)
    let server = try TestServer(site: site)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    // One request at a time, 100 ms apart: the crawl takes several seconds.
    let config = shopConfig(server.baseURL, concurrency: 1, delay: .milliseconds(100))
    let stop = StopRequest()
    // Asked to stop once pages are being fetched (5 of the 60-odd served),
    // not after a time: on a slow machine a second may pass before the first page.
    let stopper = Task {
      for _ in 0..<3000 where server.requestCount < 5 { try await Task.sleep(for: .milliseconds(20)) }
      stop.request()
    }
    let first = try await Job(config: config, store: store, transport: Engine.defaultTransport())
      .run(budget: .seconds(120), stop: stop)
    _ = try? await stopper.value
    #expect(first.stoppedOnRequest)
    #expect(!first.stoppedByBudget)
    #expect(first.completedSources.isEmpty)
    #expect(first.pagesFetched > 0)
    #expect(first.seconds < 60, "the stop request did not stop the job")
    #expect(first.description.contains("stopped on request"))
    #expect(!stop.request(), "a second request reports that it was asked already")

    let runs = try await store.runs(limit: 1)
    #expect(runs.first?.summary?.outcome == .interrupted)

    // The next run continues: every product ends up stored, none fetched twice.
    var fast = config
    fast.fetch.perHostDelay = .zero
    fast.fetch.concurrency = 8
    fast.fetch.perHostConcurrency = 8
    let second = try await Job(config: fast, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(120))
    #expect(second.completedSources == ["catalog"])
    #expect(try await allRecords(store).count == 60)
    for n in 1...60 { #expect(server.requestCount(path: site.productPath(n)) == 1, "product \(n)") }
  }

  /// A stop that arrives while the last page is in flight lets that page
  /// finish and be committed; the crawl is then complete, so the launch
  /// says so (the next launch must not start the crawl over).
  @Test func test_stopDuringTheLastFetch_completesTheLaunch() async throws {
    let stop = StopRequest()
    let server = try TestServer(routes: [
      "/only": Route { _ in
        _ = stop.request()
        return .html("<h1>Only</h1>")
      }
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    let config = ForageConfig(fetch: fetch, sources: [Source(name: "s", url: server.url("/only"), extract: ["t": "h1"])])
    let summary = try await Job(config: config, store: store, transport: Engine.defaultTransport())
      .run(budget: .seconds(30), stop: stop)
    #expect(summary.completedSources == ["s"])
    #expect(summary.recordsNew == 1)
    #expect(summary.outcome == .completed, "\(summary.outcome)")
    #expect(!summary.stoppedOnRequest && !summary.stoppedByBudget)
  }

  @Test func test_issue8_unreachableRobots_isReportedAsSuch_andRetriedLater() async throws {
    let server = try TestServer(routes: [
      "/robots.txt": Route { _ in TestResponse(status: 503, body: Array("busy".utf8)) },
      "/page": Route { _ in .html("<h1>t</h1>") },
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = true
    fetch.retries = 0
    let config = ForageConfig(
      userAgent: "ForageTests/1.0", fetch: fetch,
      sources: [Source(name: "s", url: server.url("/page"), extract: ["title": "h1"])])
    let summary = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(summary.pagesFailed == 1)
    let warning = try #require(summary.warnings.first)
    #expect(warning.contains("robots.txt unreachable (HTTP 503)"), "\(warning)")
    #expect(warning.contains("RFC 9309"))
    #expect(!warning.contains("disallowed by robots.txt"))
    #expect(server.requestCount(path: "/page") == 0)
    // Not a permanent failure: the page waits in the queue for a later launch.
    let crawl = try await store.openCrawl(source: "s", seeds: [], now: Date())
    let counts = try await store.frontierCounts(crawl: crawl.id)
    #expect(counts.queued == 1 && counts.failed == 0, "\(counts)")
    // A later process reads the kept failure with its reason.
    let again = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(again.warnings.first?.contains("robots.txt unreachable (HTTP 503)") == true, "\(again.warnings)")
  }

  @Test func test_issue8_tooShortBudget_isSaidInTheSummary() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = ForageConfig(sources: [Source(name: "s", url: "http://127.0.0.1:9/", extract: ["t": "h1"])])
    let summary = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .milliseconds(400))
    #expect(summary.warnings.contains { $0.contains("no request could start") }, "\(summary.warnings)")
  }

  @Test(.timeLimit(.minutes(2)))
  func test_cancellingTheJob_stopsItAsTheDeadline_andTheNextRunContinues() async throws {
    let site = DemoSite(products: 80)
    let server = try TestServer(site: site)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shopConfig(server.baseURL, concurrency: 2, delay: .milliseconds(50))
    let job = Task {
      try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(120))
    }
    // Cancel while pages are in flight and others wait to be committed.
    while server.requestCount < 10 { try await Task.sleep(for: .milliseconds(20)) }
    job.cancel()
    let first = try await job.value
    #expect(first.stoppedByBudget && first.completedSources.isEmpty)
    let second = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(120))
    #expect(second.completedSources == ["catalog"])
    #expect(try await allRecords(store).count == 80)
    // A cancellation aborts the fetches in flight (an expired task has no
    // grace): those pages, at most one per request slot, are asked again.
    // Every page read before the cancellation was committed and never is.
    let counts = (1...80).map { server.requestCount(path: site.productPath($0)) }
    #expect(counts.allSatisfy { $0 == 1 || $0 == 2 }, "\(counts)")
    #expect(counts.filter { $0 == 2 }.count <= config.fetch.concurrency, "\(counts)")
  }
}
