import Foundation
import Testing

@Suite struct DemoCommandTests {
  @Test func test_demo_simulatesDays_reportsChanges_writesTheReport() throws {
    let dir = TemporaryDirectory()
    let report = dir.file("r.html")
    let result = try runForage([
      "demo", "--days", "3", "--store", dir.file("d.sqlite"), "--report", report, "--json",
    ])
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
    let result = try runForage(["demo", "--days", "1", "--store", dir.file("d.sqlite"), "--report", dir.path])
    #expect(result.status == 2)
    #expect(!FileManager.default.fileExists(atPath: dir.file("d.sqlite")))
  }
}
