import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageTestSupport

@testable import Forage

/// Issue 27: a fleet worker whose request budget (the database's host
/// tickets) cannot be asked sends nothing to the server. The page is not
/// one of its attempts: it waits for a later launch with its attempts
/// unchanged, and the run says why.
struct BudgetUnavailablePageTests {
  struct UnreachableBudget: SharedHostBudget {
    struct Failure: Error, CustomStringConvertible {
      var description: String { "the fleet's store did not hand out request slots: the connection was lost" }
    }
    func take(host: String, concurrency: Int, delay: Duration, lease: Duration) async throws -> Int64? {
      throw Failure()
    }
    func give(host: String, ticket: Int64) async {}
  }

  @Test func test_issue27_aPageWhoseBudgetCannotBeAsked_isDeferred_notAFailedAttempt() async throws {
    let server = try TestServer(routes: ["/page": Route { _ in .html("<p>ok</p>") }])
    defer { server.stop() }
    var settings = FetchSettings()
    settings.robotsTxt = false
    let fetcher = Fetcher(transport: CurlTransport(), settings: settings, hostBudget: UnreachableBudget())
    let source = try CompiledSource(Source(name: "s", url: server.url("/page")), canonicalizer: .default)
    let context = PageContext(
      source: source, settings: settings, fetcher: fetcher, run: 1, deadline: ContinuousClock.now + .seconds(30))
    let item = FrontierItem(
      id: 1, crawl: 1, url: server.url("/page"), fingerprint: 7, depth: 0, attempts: 2)
    let processed = await context.process(item, previous: nil)
    #expect(processed.kind == .deferred)
    #expect(processed.commit.outcome == .deferred, "a third failed attempt would fail the page for good")
    #expect(processed.warnings.count == 1)
    #expect(processed.warnings.first?.contains("the connection was lost") == true, "\(processed.warnings)")
    #expect(processed.warnings.first?.contains(server.url("/page")) == true, "\(processed.warnings)")
    #expect(processed.warnings.first?.contains("left for the next launch") == true, "\(processed.warnings)")
    #expect(server.requestCount(path: "/page") == 0)
  }
}
