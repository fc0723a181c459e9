// Only what the README's first example imports: it must compile on every
// platform the package declares, so it names no Linux-only type.
import Foundation
import Forage
import ForageTestSupport
import Testing

/// The README's first Swift example, run against a loopback server.
@Suite struct ReadmeExampleTests {
  @Test func test_readmeExample_runsWithTheDefaultTransport() async throws {
    let server = try TestServer(routes: [
      "/item/1": Route { _ in .html("<h1>Kettle</h1><span class=price>19.90</span>") },
      "/robots.txt": Route { _ in .text("User-agent: *\nAllow: /\n") },
    ])
    defer { server.stop() }
    let folder = NSTemporaryDirectory() + "forage-readme-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }

    // As in the README, with the loopback URL and a temporary store.
    let prices = Source(name: "prices", url: server.url("/item/1"),
                        extract: ["title": "h1", "price": .css(".price", as: .number)])
    let engine = Engine(config: ForageConfig(sources: [prices]),
                        store: try Engine.openStore(folder + "/forage.sqlite"))
    let summary = try await engine.run(budget: .seconds(30))
    #expect(summary.pagesFetched == 1)
    #expect(summary.recordsNew == 1)
    #expect(summary.outcome == .completed)
    var exported = ""
    try await engine.export(format: .jsonl) { exported += $0 }
    #expect(exported.contains(#""title":"Kettle""#))
    #expect(exported.contains(#""price":19.9"#))
    try await engine.close()
  }
}
