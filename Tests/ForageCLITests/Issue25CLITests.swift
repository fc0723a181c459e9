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
}
