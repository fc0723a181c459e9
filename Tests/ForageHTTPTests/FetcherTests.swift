import Foundation
import ForageSupport
import ForageTestSupport
import ForageURL
import Testing

@testable import ForageHTTP

/// A thread-safe counter for route handlers.
final class Counter: Sendable {
  private struct Counts {
    var value = 0
    var active = 0
    var maxActive = 0
  }

  private let counts = Locked(Counts())
  /// The most handlers that were inside `enter()`/`leave()` at once.
  var maxActive: Int { counts.withLock { $0.maxActive } }
  func next() -> Int {
    counts.withLock { c in
      c.value += 1
      return c.value
    }
  }
  func enter() {
    counts.withLock { c in
      c.active += 1
      c.maxActive = max(c.maxActive, c.active)
    }
  }
  func leave() {
    counts.withLock { $0.active -= 1 }
  }
}

extension FetchOutcome {
  var response: Response? {
    switch self {
    case .fetched(let r), .notModified(let r): r
    default: nil
    }
  }
  var error: FetchError? { if case .failed(let e) = self { e } else { nil } }
  var isDeferred: Bool { if case .deferred = self { true } else { false } }
}

@Suite struct FetcherTests {
  /// Fast settings for tests: no delays, no robots unless asked.
  static func settings(robots: Bool = false) -> FetchSettings {
    var s = FetchSettings()
    s.robotsTxt = robots
    s.perHostDelay = .zero
    s.adaptiveDelay = false
    s.retryBaseDelay = .milliseconds(10)
    s.timeout = .seconds(5)
    return s
  }

  func fetcher(_ settings: FetchSettings = FetcherTests.settings(), environment: [String: String] = [:]) -> Fetcher {
    Fetcher(
      transport: TransportKind.curl.make(), settings: settings, random: SplitMix64(seed: 7),
      environment: environment)
  }

  @Test func test_followsRedirectChain_recordingHops() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let outcome = await fetcher().fetch(server.webURL("/fault/redirect-chain?n=3"))
    let response = try #require(outcome.response)
    #expect(response.status == 200)
    #expect(response.redirectChain.count == 3)
    #expect(response.url.query == "n=0")
    #expect(response.text.contains("end of chain"))
  }

  @Test func test_redirectLoop_isDetected() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let outcome = await fetcher().fetch(server.webURL("/fault/redirect-loop"))
    #expect(outcome.error?.kind == .redirectLoop)
  }

  @Test func test_tooManyRedirects_namesTheLimit() async throws {
    let server = try TestServer()
    defer { server.stop() }
    var settings = Self.settings()
    settings.maxRedirects = 2
    let outcome = await fetcher(settings).fetch(server.webURL("/fault/redirect-chain?n=5"))
    #expect(outcome.error?.kind == .tooManyRedirects)
    #expect(outcome.error?.message.contains("maxRedirects") == true)
  }

  @Test func test_robots_disallowsAndIsFetchedOnce() async throws {
    let server = try TestServer(routes: [
      "/robots.txt": Route { _ in .text("User-agent: *\nDisallow: /private\nCrawl-delay: 0\n") },
      "/public": Route { _ in .text("ok") },
      "/go": Route { _ in .redirect(to: "/private/page") },
    ])
    defer { server.stop() }
    let fetcher = fetcher(Self.settings(robots: true))
    let blocked = await fetcher.fetch(server.webURL("/private/x"))
    guard case .disallowed(let url) = blocked else {
      Issue.record("expected disallowed, got \(blocked)")
      return
    }
    #expect(url.path == "/private/x")
    #expect(await fetcher.fetch(server.webURL("/public")).response?.status == 200)
    // A redirect hop is checked too.
    let hop = await fetcher.fetch(server.webURL("/go"))
    guard case .disallowed(let target) = hop else {
      Issue.record("expected disallowed hop, got \(hop)")
      return
    }
    #expect(target.path == "/private/page")
    #expect(server.requestCount(path: "/robots.txt") == 1)
    #expect(server.requestCount(path: "/private/x") == 0)
    #expect(await fetcher.robots(for: server.webURL("/")) != nil)
  }

  /// An archive in memory, as a store would keep answers between processes.
  actor MemoryArchive: RobotsArchive {
    var answers: [String: RobotsAnswer] = [:]
    func robotsAnswer(origin: String) async -> RobotsAnswer? { answers[origin] }
    func keepRobotsAnswer(_ answer: RobotsAnswer) async { answers[answer.origin] = answer }
    func set(_ answer: RobotsAnswer) { answers[answer.origin] = answer }
  }

  @Test func test_robotsArchive_isAskedFirst_andKeepsWhatWasFetched() async throws {
    let server = try TestServer(routes: [
      "/robots.txt": Route { _ in .text("User-agent: *\nDisallow: /private\n") },
      "/public": Route { _ in .text("ok") },
    ])
    defer { server.stop() }
    let archive = MemoryArchive()
    let origin = server.webURL("/").origin
    let first = Fetcher(transport: TransportKind.curl.make(), settings: Self.settings(robots: true), robotsArchive: archive)
    #expect(await first.fetch(server.webURL("/public")).response?.status == 200)
    let kept = try #require(await archive.robotsAnswer(origin: origin))
    #expect(kept.verdict == .rules)
    #expect(String(decoding: kept.body, as: UTF8.self).contains("Disallow: /private"))
    #expect(abs(kept.expiresAt.timeIntervalSince(kept.fetchedAt) - FetchDefaults.robotsCacheLifetime.seconds) < 1)
    // A new fetcher (a new process) with the same archive does not ask again.
    let second = Fetcher(transport: TransportKind.curl.make(), settings: Self.settings(robots: true), robotsArchive: archive)
    guard case .disallowed = await second.fetch(server.webURL("/private/x")) else {
      Issue.record("the archived rules should disallow /private/x")
      return
    }
    #expect(server.requestCount(path: "/robots.txt") == 1)
    // An expired answer is asked again and replaced.
    await archive.set(
      RobotsAnswer(origin: origin, verdict: .disallowAll, fetchedAt: .now - 90_000, expiresAt: .now - 10))
    let third = Fetcher(transport: TransportKind.curl.make(), settings: Self.settings(robots: true), robotsArchive: archive)
    #expect(await third.fetch(server.webURL("/public")).response?.status == 200)
    #expect(server.requestCount(path: "/robots.txt") == 2)
    #expect(await archive.robotsAnswer(origin: origin)?.verdict == .rules)
  }

  /// A fleet's budget that cannot be asked: its error, in words.
  struct UnreachableBudget: SharedHostBudget {
    struct Failure: Error, CustomStringConvertible, CustomDebugStringConvertible {
      var description: String { "the fleet's store did not hand out request slots: the server refused a statement" }
      var debugDescription: String { "SQLSTATE XX000: internal detail" }
    }
    func take(host: String, concurrency: Int, delay: Duration, lease: Duration) async throws -> Int64? {
      throw Failure()
    }
    func give(host: String, ticket: Int64) async {}
  }

  /// A request whose fleet budget cannot be asked fails at once with the
  /// budget's reason (its detail behind --verbose), sending nothing, and
  /// gives its local slot back: the next request is admitted too.
  @Test func test_issue27_aFleetBudgetThatCannotBeAsked_failsTheRequestWithItsReason() async throws {
    let server = try TestServer(routes: ["/page": Route { _ in .text("ok") }])
    defer { server.stop() }
    var settings = Self.settings()
    settings.perHostConcurrency = 1
    let fetcher = Fetcher(transport: TransportKind.curl.make(), settings: settings, hostBudget: UnreachableBudget())
    for _ in 0..<3 {
      let error = try #require(await fetcher.fetch(server.webURL("/page")).error)
      #expect(error.kind == .budgetUnavailable, "a page's attempt is not spent on the store's failure")
      #expect(error.description.contains("the server refused a statement"), "\(error)")
      #expect(String(reflecting: error).contains("SQLSTATE XX000"), "\(String(reflecting: error))")
    }
    #expect(server.requestCount(path: "/page") == 0)
  }

  @Test func test_robotsArchive_keepsAFailureBriefly() async throws {
    let server = try TestServer(routes: [
      "/robots.txt": Route { _ in TestResponse(status: 503, body: Array("busy".utf8)) },
      "/page": Route { _ in .text("ok") },
    ])
    defer { server.stop() }
    let archive = MemoryArchive()
    var settings = Self.settings(robots: true)
    settings.retries = 0
    let fetcher = Fetcher(transport: TransportKind.curl.make(), settings: settings, robotsArchive: archive)
    guard case .robotsUnreachable(_, let reason) = await fetcher.fetch(server.webURL("/page")) else {
      Issue.record("a 503 robots.txt disallows everything, as unreachable")
      return
    }
    #expect(reason == "HTTP 503")
    let kept = try #require(await archive.robotsAnswer(origin: server.webURL("/").origin))
    #expect(kept.verdict == .disallowAll)
    #expect(kept.body.isEmpty)
    #expect(kept.failure == "HTTP 503")
    #expect(abs(kept.expiresAt.timeIntervalSince(kept.fetchedAt) - FetchDefaults.robotsFailureLifetime.seconds) < 1)
  }

  @Test(arguments: [(404, true), (500, false), (503, false)])
  func test_robotsStatus_4xxAllows_5xxDisallows(_ status: Int, _ allowed: Bool) async throws {
    let server = try TestServer(routes: [
      "/robots.txt": Route { _ in TestResponse(status: status, body: Array("x".utf8)) },
      "/page": Route { _ in .text("ok") },
    ])
    defer { server.stop() }
    var settings = Self.settings(robots: true)
    settings.retries = 0
    let outcome = await fetcher(settings).fetch(server.webURL("/page"))
    if allowed {
      #expect(outcome.response?.status == 200)
    } else {
      guard case .robotsUnreachable(_, let reason) = outcome else {
        Issue.record("expected robotsUnreachable, got \(outcome)")
        return
      }
      #expect(reason == "HTTP \(status)")
    }
  }

  @Test func test_robots_followsRedirects() async throws {
    let server = try TestServer(routes: [
      "/robots.txt": Route { _ in .redirect(to: "/real-robots.txt", status: 301) },
      "/real-robots.txt": Route { _ in .text("User-agent: forage\nDisallow: /no\n\nUser-agent: *\nDisallow: /\n") },
    ])
    defer { server.stop() }
    let fetcher = fetcher(Self.settings(robots: true))
    let rules = try #require(await fetcher.robots(for: server.webURL("/")))
    // The Forage group applies (product token of the default user agent), not "*".
    #expect(rules.isAllowed(path: "/yes"))
    #expect(!rules.isAllowed(path: "/no"))
  }

  @Test func test_slowRobots_defersAtTheDeadline() async throws {
    let server = try TestServer(routes: [
      "/robots.txt": Route { _ in
        usleep(1_500_000)
        return .text("User-agent: *\nAllow: /\n")
      },
      "/page": Route { _ in .text("ok") },
    ])
    defer { server.stop() }
    let fetcher = fetcher(Self.settings(robots: true))
    let outcome = await fetcher.fetch(server.webURL("/page"), deadline: .now + .milliseconds(100))
    #expect(outcome.isDeferred)
    #expect(server.requestCount(path: "/page") == 0)
  }

  @Test func test_etag_sendsIfNoneMatch_and304IsNotModified() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = fetcher()
    let first = try #require(await fetcher.fetch(server.webURL("/fault/etag")).response)
    #expect(first.status == 200)
    let validators = try #require(Validators(first))
    let second = await fetcher.fetch(server.webURL("/fault/etag"), validators: validators)
    guard case .notModified(let response) = second else {
      Issue.record("expected notModified, got \(second)")
      return
    }
    #expect(response.status == 304)
    #expect(response.body.isEmpty)
    #expect(server.requests.last?.header("If-None-Match") == validators.etag)
  }

  @Test func test_lastModified_sendsIfModifiedSince() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = fetcher()
    let first = try #require(await fetcher.fetch(server.webURL("/fault/last-modified")).response)
    let validators = Validators(etag: nil, lastModified: first.headers["Last-Modified"])
    #expect(validators.lastModified != nil)
    let second = await fetcher.fetch(server.webURL("/fault/last-modified"), validators: validators)
    #expect(second.response?.status == 304)
    #expect(server.requests.last?.header("If-Modified-Since") == validators.lastModified)
  }

  @Test func test_503_isRetried_andSucceeds() async throws {
    let counter = Counter()
    let server = try TestServer(routes: [
      "/flaky": Route { _ in
        counter.next() == 1
          ? TestResponse(status: 503, headers: [("Retry-After", "0")], body: Array("busy".utf8))
          : .text("ok")
      }
    ])
    defer { server.stop() }
    let outcome = await fetcher().fetch(server.webURL("/flaky"))
    #expect(outcome.response?.status == 200)
    #expect(server.requestCount(path: "/flaky") == 2)
  }

  @Test func test_404_isNotRetried() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let outcome = await fetcher().fetch(server.webURL("/nothing"))
    #expect(outcome.response?.status == 404)
    #expect(server.requestCount(path: "/nothing") == 1)
  }

  @Test func test_retriesExhausted_returnTheLastResponse() async throws {
    let server = try TestServer(routes: [
      "/down": Route { _ in TestResponse(status: 502, body: Array("down".utf8)) }
    ])
    defer { server.stop() }
    var settings = Self.settings()
    settings.retries = 2
    let outcome = await fetcher(settings).fetch(server.webURL("/down"))
    #expect(outcome.response?.status == 502)
    #expect(server.requestCount(path: "/down") == 3)
  }

  @Test func test_deadline_defersWhatCannotFinish() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = fetcher()
    // A past deadline defers at once.
    #expect(await fetcher.fetch(server.webURL("/a"), deadline: .now - .seconds(1)).isDeferred)
    // Teach the fetcher that this host takes at least 300 ms ...
    let slow = server.webURL("/fault/slow-headers?seconds=0.3")
    #expect(await fetcher.fetch(slow).response?.status == 200)
    // ... then a fetch with 10 ms left is deferred without a request.
    let before = server.requestCount
    let outcome = await fetcher.fetch(slow, deadline: .now + .milliseconds(10))
    #expect(outcome.isDeferred)
    #expect(server.requestCount == before)
  }

  @Test func test_deadlineDuringTransfer_defers() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let outcome = await fetcher().fetch(
      server.webURL("/fault/slow-headers?seconds=30"), deadline: .now + .milliseconds(300))
    #expect(outcome.isDeferred)
  }

  @Test func test_redirectOutOfScope_isReported() async throws {
    let server = try TestServer(routes: [
      "/from": Route { _ in .redirect(to: "/elsewhere") },
      "/elsewhere": Route { _ in .text("no") },
    ])
    defer { server.stop() }
    let outcome = await fetcher().fetch(server.webURL("/from"), scope: { $0.path.hasPrefix("/from") })
    guard case .outOfScope(let url) = outcome else {
      Issue.record("expected outOfScope, got \(outcome)")
      return
    }
    #expect(url.path == "/elsewhere")
    #expect(server.requestCount(path: "/elsewhere") == 0)
  }

  @Test func test_credentials_goOnlyToTheFirstOrigin() async throws {
    let other = try TestServer(routes: ["/landing": Route { _ in .text("other") }])
    defer { other.stop() }
    let landing = other.url("/landing")
    let server = try TestServer(routes: ["/login": Route { _ in .redirect(to: landing) }])
    defer { server.stop() }
    var settings = Self.settings()
    settings.credentials = [.bearer(tokenEnv: "FORAGE_TEST_TOKEN")]
    let fetcher = fetcher(settings, environment: ["FORAGE_TEST_TOKEN": "s3cret"])
    let outcome = await fetcher.fetch(server.webURL("/login"))
    #expect(outcome.response?.text == "other")
    #expect(server.requests.last?.header("Authorization") == "Bearer s3cret")
    #expect(other.requests.last?.header("Authorization") == nil)
  }

  @Test func test_issue8_credentials_goOnlyToNamedOrigins_acrossRedirects() async throws {
    let third = try TestServer(routes: ["/end": Route { _ in .text("end") }])
    defer { third.stop() }
    let end = third.url("/end")
    let api = try TestServer(routes: ["/hop": Route { _ in .redirect(to: end) }])
    defer { api.stop() }
    let hop = api.url("/hop")
    let server = try TestServer(routes: ["/start": Route { _ in .redirect(to: hop) }])
    defer { server.stop() }
    var settings = Self.settings()
    settings.credentials = [.header("X-Api-Key", valueEnv: "KEY"), .bearer(tokenEnv: "TOKEN")]
    settings.credentialOrigins = [server.webURL("/").origin, api.webURL("/").origin]
    let fetcher = fetcher(settings, environment: ["KEY": "k", "TOKEN": "t"])
    #expect(await fetcher.fetch(server.webURL("/start")).response?.text == "end")
    #expect(server.requests.last?.header("X-Api-Key") == "k")
    #expect(server.requests.last?.header("Authorization") == "Bearer t")
    #expect(api.requests.last?.header("X-Api-Key") == "k")
    #expect(third.requests.last?.header("X-Api-Key") == nil)
    #expect(third.requests.last?.header("Authorization") == nil)
  }

  @Test func test_issue8_credentials_neverFollowADowngradeToHTTP() throws {
    var settings = Self.settings()
    settings.credentials = [.bearer(tokenEnv: "TOKEN")]
    let https = try #require(WebURL("https://shop.example.com/a"))
    let http = try #require(WebURL("http://shop.example.com/b"))
    // The starting origin only: the http URL is another origin.
    #expect(Fetcher.mayReceiveCredentials(https, original: https, settings: settings))
    #expect(!Fetcher.mayReceiveCredentials(http, original: https, settings: settings))
    // Even when the config names the http origin, not after starting on https.
    settings.credentialOrigins = [https.origin, http.origin]
    #expect(!Fetcher.mayReceiveCredentials(http, original: https, settings: settings))
    #expect(Fetcher.mayReceiveCredentials(http, original: http, settings: settings))
    // No credentials, nothing to send.
    settings.credentials = []
    #expect(!Fetcher.mayReceiveCredentials(https, original: https, settings: settings))
  }

  @Test func test_issue8_fetchError_readsAsASentence() {
    var error = FetchError(.truncated, host: "127.0.0.1", "the connection to 127.0.0.1 ended early")
    error.detail = "libcurl code 18: transfer closed"
    #expect("\(error)" == "the connection to 127.0.0.1 ended early")
    #expect(!"\(error)".contains("FetchError"))
    #expect(String(reflecting: error).contains("truncated"))
    #expect(String(reflecting: error).contains("libcurl code 18"))
  }

  @Test func test_cookies_keptWhenAsked() async throws {
    let server = try TestServer(routes: [
      "/set": Route { _ in .text("set", headers: [("Set-Cookie", "session=abc; Path=/")]) },
      "/check": Route { _ in .text("check") },
    ])
    defer { server.stop() }
    var settings = Self.settings()
    settings.cookies = true
    let fetcher = fetcher(settings)
    _ = await fetcher.fetch(server.webURL("/set"))
    _ = await fetcher.fetch(server.webURL("/check"))
    #expect(server.requests.last?.header("Cookie") == "session=abc")
    // Without the setting no cookie is sent.
    let plain = self.fetcher()
    _ = await plain.fetch(server.webURL("/set"))
    _ = await plain.fetch(server.webURL("/check"))
    #expect(server.requests.last?.header("Cookie") == nil)
  }

  @Test(arguments: [1, 2])
  func test_perHostConcurrency_isRespected(_ limit: Int) async throws {
    let counter = Counter()
    let server = try TestServer(routes: [
      "/slow": Route { _ in
        counter.enter()
        usleep(50_000)
        counter.leave()
        return .text("ok")
      }
    ])
    defer { server.stop() }
    var settings = Self.settings()
    settings.perHostConcurrency = limit
    let fetcher = fetcher(settings)
    let statuses = await withTaskGroup(of: Int.self) { group in
      for i in 0..<6 {
        group.addTask { await fetcher.fetch(server.webURL("/slow?i=\(i)")).response?.status ?? 0 }
      }
      return await group.reduce(into: [Int]()) { $0.append($1) }
    }
    #expect(statuses == Array(repeating: 200, count: 6))
    #expect(counter.maxActive <= limit)
  }

  @Test func test_userAgent_isHonestDefault_andSourceHeadersAdded() async throws {
    let server = try TestServer(routes: ["/ua": Route { _ in .text("ok") }])
    defer { server.stop() }
    var settings = Self.settings()
    settings.headers = ["Accept-Language": "fr"]
    _ = await fetcher(settings).fetch(server.webURL("/ua"))
    let request = try #require(server.requests.last)
    #expect(request.header("User-Agent") == FetchDefaults.userAgent)
    #expect(request.header("User-Agent")?.hasPrefix("Forage/") == true)
    #expect(request.header("Accept-Language") == "fr")
  }

  @Test func test_hostileFault_throughTheFetcher_endsTyped() async throws {
    let server = try TestServer()
    defer { server.stop() }
    var settings = Self.settings()
    settings.maxBodySize = 1 << 20
    settings.retries = 0
    let outcome = await fetcher(settings).fetch(server.webURL("/fault/endless-chunked"))
    #expect(outcome.error?.kind == .bodyTooLarge)
  }
}

@Suite struct TruncatedBodyTests {
  /// Settings that cut a long body keep the response (a sitemap over 50 MB
  /// is read up to the limit); without them the fetch fails.
  @Test func test_truncatesBody_cutsALongBodyAtTheLimit() async throws {
    let server = try TestServer(routes: ["/big": Route { _ in .text(String(repeating: "x", count: 10_000)) }])
    defer { server.stop() }
    var settings = FetcherTests.settings()
    settings.maxBodySize = 4096
    let url = WebURL(server.url("/big"))!
    let failed = await Fetcher(transport: TransportKind.curl.make(), settings: settings).fetch(url)
    #expect(failed.error?.kind == .bodyTooLarge)
    settings.truncatesBody = true
    let cut = await Fetcher(transport: TransportKind.curl.make(), settings: settings).fetch(url)
    #expect(cut.response?.body.count == 4096)
  }
}
