import Foundation
import Testing
import ForageTestSupport

@Suite struct InitCommandTests {
  @Test func test_init_writesACommentedConfig_thatRunsAgainstTheDemoSite() throws {
    let site = try TestServer(site: DemoSite(products: 20))
    defer { site.stop() }
    let dir = TemporaryDirectory()
    let folder = dir.file("project")
    let result = try runForage(["init", folder, "--port", String(site.port)])
    #expect(result.status == 0)
    #expect(result.stdout.contains("forage run --config \(folder)/forage.json"))
    let text = try String(contentsOfFile: folder + "/forage.json", encoding: .utf8)
    #expect(text.contains("\"//\""))
    #expect(text.contains("http://127.0.0.1:\(site.port)/"))

    let run = try runForage(["run", "--config", folder + "/forage.json", "--budget", "30s", "--json"])
    #expect(run.status == 0)
    let summary = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    #expect((summary?["recordsNew"] as? Int ?? 0) >= 20)
    let status = try runForage(["status", "--store", folder + "/forage.sqlite", "--config", folder + "/forage.json"])
    #expect(status.stdout.contains("com.example.refresh"))
  }

  @Test func test_init_neverReplacesAFile() throws {
    let dir = TemporaryDirectory()
    let existing = try dir.write("forage.json", "{\"mine\": true}")
    let again = try runForage(["init", dir.path])
    #expect(again.status == 2)
    #expect(again.stderr.contains("exists"))
    #expect(try String(contentsOfFile: existing, encoding: .utf8) == "{\"mine\": true}")
    let onAFile = try runForage(["init", existing])
    #expect(onAFile.status == 2)
    #expect(onAFile.stderr.contains("is a file, not a folder"))
  }
}
