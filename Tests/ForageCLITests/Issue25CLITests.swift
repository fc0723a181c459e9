import Foundation
import ForageStore
import ForageTestSupport
import Testing

/// Issue 25's messages from the command line: sentences about the user's
/// input, the right exit status, JSON when asked for.
@Suite(.serialized) struct Issue25CLITests {
  @Test func test_issue25_demoServeOnABusyPortSaysSo_withoutAnErrno() throws {
    let busy = try TestServer()
    defer { busy.stop() }
    let port = busy.port
    let result = try runForage(["demo", "--serve", "--port", String(port)])
    #expect(result.status == 2)
    #expect(
      result.stderr
        == "forage demo: port \(port) on 127.0.0.1 is already in use; choose another with --port (0 picks a free one)\n",
      "\(result.stderr)")
    #expect(!result.stderr.contains("errno") && !result.stderr.contains("bind"))
  }

  @Test func test_issue25_notifyTestWithJSONPrintsJSON() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", """
      {"notify": [{"name": "log", "file": "out.jsonl"}, {"name": "folder", "file": "."}],
       "sources": [{"name": "a", "url": "https://x.org/"}]}
      """)
    let ok = try runForage(["notify", "--config", config, "--test", "log", "--json"])
    #expect(ok.status == 0, "\(ok.stderr)")
    let sent = try JSONSerialization.jsonObject(with: Data(ok.stdout.utf8)) as? [String: Any]
    #expect(sent?["test"] as? String == "log")
    #expect(sent?["delivered"] as? Bool == true)
    #expect(sent?["problem"] == nil)

    let failed = try runForage(["notify", "--config", config, "--test", "folder", "--json"])
    #expect(failed.status == 1)
    let answer = try JSONSerialization.jsonObject(with: Data(failed.stdout.utf8)) as? [String: Any]
    #expect(answer?["delivered"] as? Bool == false, "\(failed.stdout)")
    #expect((answer?["problem"] as? String)?.contains("folder") == true, "\(failed.stdout)")
  }

  @Test func test_issue25_aSIGKILLedRunIsListedWithWhatItCommitted() async throws {
    // The run may fetch only 30 of the 200 product pages until it is killed:
    // it cannot end first, however fast the machine.
    let gate = ProductPageGate()
    gate.begin(allowance: 30)
    let server = try gate.server(DemoSite(products: 200))
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", """
      {"fetch": {"concurrency": 2, "perHostConcurrency": 2, "perHostDelay": "20ms"},
       "sources": [{"name": "catalog", "url": "\(server.baseURL)/",
                    "crawl": {"follow": "a[href]", "maxDepth": 6, "revisitAfter": "0s"},
                    "match": "div.product", "key": ["sku"],
                    "extract": {"sku": {"css": "div.product", "attr": "data-sku"}}}]}
      """)
    let store = dir.file("s.sqlite")
    let p = Process()
    p.executableURL = URL(fileURLWithPath: forageBinary())
    p.arguments = ["run", "--config", config, "--store", store, "--budget", "120s"]
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    try p.run()
    // Wait (bounded) until the run's row says it committed pages, then kill it.
    let watcher = try SQLiteStore(path: store)
    var seen = 0
    let started = Date()
    while p.isRunning, seen < 10, Date().timeIntervalSince(started) < 60 {
      try await Task.sleep(for: .milliseconds(5))
      seen = (try? await watcher.runs(limit: 1).first?.progress?.pagesFetched) ?? 0
    }
    let killedMidRun = p.isRunning
    if killedMidRun { kill(p.processIdentifier, SIGKILL) }
    p.waitUntilExit()
    gate.begin(allowance: .max)
    try await watcher.close()
    #expect(killedMidRun, "the run's row should hold its progress before the run ends")
    #expect(seen >= 10)

    let status = try runForage(["status", "--store", store, "--json"])
    #expect(status.status == 0, "\(status.stderr)")
    let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
    let tasks = object?["tasks"] as? [[String: Any]] ?? []
    let launch = (tasks.first?["launches"] as? [[String: Any]])?.first
    #expect(launch?["outcome"] as? String == "unfinished", "\(status.stdout)")
    #expect((launch?["pagesFetched"] as? Int ?? 0) >= seen, "\(status.stdout)")
    let text = try runForage(["status", "--store", store])
    #expect(text.stdout.contains("unfinished") && !text.stdout.contains("unfinished, 0 pages"), "\(text.stdout)")
  }
}
