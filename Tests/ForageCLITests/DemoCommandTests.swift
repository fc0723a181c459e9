import Foundation
import Testing

/// Runs `forage demo` with its scratch folder (the store it points to
/// without `--store`, the notifications log) inside `dir`, which the test
/// removes: a demo's folder is the user's to look at, so the demo keeps it.
func runDemo(_ arguments: [String], in dir: TemporaryDirectory) throws -> CommandResult {
  try runForage(["demo"] + arguments, environment: ["TMPDIR": dir.path + "/"])
}

@Suite struct DemoCommandTests {
  @Test func test_demo_simulatesDays_reportsChanges_writesTheReport() throws {
    let dir = TemporaryDirectory()
    let report = dir.file("r.html")
    let result = try runDemo(["--days", "3", "--store", dir.file("d.sqlite"), "--report", report, "--json"], in: dir)
    #expect(result.status == 0, "\(result.stderr)")
    let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    #expect((json?["launches"] as? Int ?? 0) > 0)
    #expect((json?["pagesFetched"] as? Int ?? 0) > 60)
    let changes = json?["changes"] as? [String: Int] ?? [:]
    #expect((changes["new"] ?? 0) > 60)
    #expect((changes["changed"] ?? 0) > 0)
    #expect((json?["notifications"] as? Int ?? 0) > 0)
    let html = try String(contentsOfFile: report, encoding: .utf8)
    #expect(html.contains("Forage demo: 3 simulated days"))
    #expect(html.contains("catalog") && html.contains("news"))
    // Simulated launches record the device's state: the report shows it.
    #expect(html.contains("class=\"c-charging\"") || html.contains("class=\"c-battery\""))
    #expect(html.contains("wifi") || html.contains("cellular"))
    // The store holds the simulated days: forage changes reads them.
    let listed = try runForage(["changes", "--store", dir.file("d.sqlite"), "--kind", "changed", "--json"])
    #expect(listed.stdout.contains("\"at\":\"2026-01-0"))
  }

  @Test func test_demo_refusesAFolderAsTheReport() throws {
    let dir = TemporaryDirectory()
    let result = try runDemo(["--days", "1", "--store", dir.file("d.sqlite"), "--report", dir.path], in: dir)
    #expect(result.status == 2)
    #expect(!FileManager.default.fileExists(atPath: dir.file("d.sqlite")))
  }
}

@Suite struct DemoHealthTests {
  /// Issue 29's "see it": the demo shop is redesigned on the morning of day
  /// 2 and changes back at noon; the story holds the removals (no mass removal), alerts
  /// once and recovers once.
  @Test func test_issue29_demo_redesignDay_holdsAlertsOnce_andRecovers() throws {
    let dir = TemporaryDirectory()
    let report = dir.file("r.html")
    let result = try runDemo(["--days", "3", "--store", dir.file("d.sqlite"), "--report", report, "--json"], in: dir)
    #expect(result.status == 0, "\(result.stderr)")
    let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    let events = json?["healthEvents"] as? [String: Int] ?? [:]
    #expect(events["source.unhealthy"] == 1)
    #expect(events["source.recovered"] == 1)
    #expect(json?["episodes"] as? Int == 1)
    // The notification file holds the same two events.
    let file = try #require(json?["notificationFile"] as? String)
    #expect(file.hasPrefix(dir.path + "/forage-demo-"), "the demo's folder is not under TMPDIR: \(file)")
    let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
    #expect(lines.filter { $0.contains(#""type":"source.unhealthy""#) }.count == 1)
    #expect(lines.filter { $0.contains(#""type":"source.recovered""#) }.count == 1)
    // No mass removal: only discontinued products (their pages answer 404)
    // are removed, a few of the 60, never the redesigned catalog.
    let changes = json?["changes"] as? [String: Int] ?? [:]
    #expect((changes["removed"] ?? 0) < 15)
    // The episode ended as recovered, and the report marks it.
    let health = try runForage(["health", "--store", dir.file("d.sqlite")])
    #expect(health.stdout.contains("catalog"))
    let html = try String(contentsOfFile: report, encoding: .utf8)
    #expect(html.contains("<g class=\"episode\" data-episode=") && html.contains("class=\"ep-end\""))
    // The text tells it.
    let text = try runDemo(["--days", "3", "--store", dir.file("e.sqlite"), "--report", dir.file("s.html")], in: dir)
    #expect(text.stdout.contains("on day 2 the shop was redesigned until noon"))
    #expect(text.stdout.contains("source.unhealthy sent") && text.stdout.contains("source.recovered sent"))
  }
}
