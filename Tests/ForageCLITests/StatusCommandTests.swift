import Foundation
import Testing
import ForageTestSupport

@Suite(.serialized) struct StatusCommandTests {
  private func config(_ dir: TemporaryDirectory, url: String) throws -> String {
    try dir.write(
      "forage.json",
      """
      {"store": "s.sqlite",
       "sources": [{"name": "shop", "url": "\(url)", "extract": {"title": "h1"},
                    "fetch": {"robotsTxt": false, "perHostDelay": "0s"}}]}
      """)
  }

  @Test func test_status_healthy_exit0_thenFailingSource_exit1_withJSON() throws {
    let dir = TemporaryDirectory()
    let server = try TestServer(routes: [
      "/ok": Route { _ in .html("<h1>Lamp</h1>") }, "/gone": Route { _ in .text("no", status: 404) },
    ])
    defer { server.stop() }
    let good = try config(dir, url: server.url("/ok"))
    #expect(try runForage(["run", "--config", good]).status == 0)
    let healthy = try runForage(["status", "--store", dir.file("s.sqlite"), "--config", good])
    #expect(healthy.status == 0)
    #expect(healthy.stdout.contains("shop: data") && healthy.stdout.contains("Healthy."))
    #expect(!healthy.stdout.contains("\u{1B}["))  // not a terminal: no escape codes

    let bad = try config(dir, url: server.url("/gone"))
    for _ in 0..<3 { _ = try runForage(["run", "--config", bad]) }
    let failing = try runForage(["status", "--store", dir.file("s.sqlite"), "--json"])
    #expect(failing.status == 1)
    let json = try JSONSerialization.jsonObject(with: Data(failing.stdout.utf8)) as? [String: Any]
    let attention = json?["attention"] as? [String] ?? []
    #expect(attention.first?.contains("every page failed in its last 3 launches: HTTP 404") == true)

    let missing = try runForage(["status", "--store", dir.file("nope.sqlite")])
    #expect(missing.status == 2)
    #expect(!FileManager.default.fileExists(atPath: dir.file("nope.sqlite")))
    #expect(try runForage(["status", "--store", dir.file("s.sqlite"), "--failing", "0"]).status == 2)
  }
}
