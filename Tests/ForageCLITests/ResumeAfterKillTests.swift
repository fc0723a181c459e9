import Foundation
import Testing
import ForageStore
import ForageTestSupport

/// Kills `forage run` with SIGKILL at several points of a crawl, restarts it,
/// and checks that the final records equal those of an uninterrupted run:
/// nothing committed is lost, duplicated, or fetched again.
@Suite(.serialized) struct ResumeAfterKillTests {
  /// Two sources on two sites, crawled interleaved in one launch.
  static func config(base: String, outlet: String) -> String {
    func source(_ name: String, _ base: String) -> String {
      """
      {
        "name": "\(name)", "url": "\(base)/",
        "crawl": {"follow": "a[href]", "sameHost": true, "maxDepth": 6, "maxPages": 100000, "revisitAfter": "0s"},
        "match": "div.product", "key": ["sku"],
        "extract": {"title": "h1.product-title", "price": {"css": "span.price", "type": "number"},
                    "sku": {"css": "div.product", "attr": "data-sku", "required": true}}
      }
      """
    }
    return """
      {
        "userAgent": "ForageKillTest/1.0",
        "fetch": {"concurrency": 3, "perHostConcurrency": 2, "perHostDelay": "8ms", "timeout": "10s"},
        "sources": [\(source("catalog", base)), \(source("outlet", outlet))]
      }
      """
  }

  /// (key, url, fields) of every record of the store at `path`, sorted:
  /// what must match between runs.
  static func contents(_ path: String) async throws -> [String] {
    try await storeContents(SQLiteStore(path: path))
  }

  @Test func test_sigkillAtSeveralPoints_resumesWithIdenticalRecords() async throws {
    let site = DemoSite(products: 150)
    let gate = ProductPageGate()
    let server = try gate.server(site)
    defer { server.stop() }
    let outlet = try gate.server(DemoSite(products: 60, seed: 2))
    defer { outlet.stop() }
    let dir = TemporaryDirectory()
    let config = try dir.write(
      "forage.json", ResumeAfterKillTests.config(base: server.baseURL, outlet: outlet.baseURL))

    // The reference: one uninterrupted run.
    let reference = dir.file("reference.sqlite")
    let full = try runForage(["run", "--config", config, "--store", reference, "--budget", "120s"])
    #expect(full.status == 0, "\(full.stderr)")
    let expected = try await ResumeAfterKillTests.contents(reference)
    #expect(expected.count == 210)

    // The same crawl, killed whenever the store passes a threshold. One
    // reading connection, opened once, watches the store: opening a store per
    // poll (or blocking a thread of the pool on it) could stall the watcher
    // long enough for the child to finish the crawl unkilled.
    let killed = dir.file("killed.sqlite")
    let watcher = try SQLiteStore(path: killed)
    func recordCount() async -> Int {
      (try? await watcher.records(source: nil, afterID: 0, limit: 1_000_000).count) ?? 0
    }
    var killsMidCrawl = 0
    let thresholds = [1, 20, 55, 90, 125]
    for threshold in thresholds {
      let committedBefore = Set(try await ResumeAfterKillTests.contents(killed).map { $0.split(separator: "\t")[1] })
      server.clearRequests()
      outlet.clearRequests()
      // Each product page this launch fetches was not committed before (checked
      // below), so it adds a record: enough of them reach the threshold, and
      // fewer than the crawl's remaining pages keep it from finishing.
      let allowance = max(1, threshold - committedBefore.count) + 5
      #expect(allowance < expected.count - committedBefore.count)
      gate.begin(allowance: allowance)
      let p = Process()
      p.executableURL = URL(fileURLWithPath: forageBinary())
      p.arguments = ["run", "--config", config, "--store", killed, "--budget", "120s"]
      p.standardOutput = FileHandle.nullDevice
      p.standardError = FileHandle.nullDevice
      try p.run()
      let started = Date()
      while p.isRunning, await recordCount() < threshold, Date().timeIntervalSince(started) < 60 {
        try await Task.sleep(for: .milliseconds(2))
      }
      let reached = await recordCount()
      if p.isRunning {
        kill(p.processIdentifier, SIGKILL)
        killsMidCrawl += 1
      }
      p.waitUntilExit()
      #expect(reached >= threshold, "killed with \(reached) records stored, before the threshold \(threshold)")
      // Pages whose records were committed before this launch were not
      // fetched again by it.
      let refetched = [server, outlet].flatMap { site in
        site.requests.map(\.target).filter { target in
          committedBefore.contains { $0.hasSuffix(site.baseURL + target) && target.hasPrefix("/product/") }
        }
      }
      #expect(refetched.isEmpty, "fetched again after being committed: \(refetched)")
    }
    #expect(killsMidCrawl == thresholds.count, "a launch finished its crawl, which the gate should have made impossible")

    // Finish, then compare.
    gate.begin(allowance: .max)
    let last = try runForage(["run", "--config", config, "--store", killed, "--budget", "120s"])
    #expect(last.status == 0, "\(last.stderr)")
    let resumed = try await ResumeAfterKillTests.contents(killed)
    #expect(resumed.count == expected.count)
    #expect(resumed == expected)
  }
}
