// As an app would write it: only Forage is imported (ForageSupport for the test's lock).
import Foundation
import Forage
import ForageSupport
import ForageTestSupport
import Testing

/// `Engine.changes(source:after:)`: the live stream of an engine's store,
/// fed by the engine's own runs; an unknown source is an error naming it.
@Suite struct EngineChangesTests {
  @Test func test_engineChanges_yieldsTheChangesOfItsOwnRun_andNamesAnUnknownSource() async throws {
    let price = Locked("19.90")
    let server = try TestServer(routes: [
      "/item/1": Route { _ in .html("<h1>Kettle</h1><span class=price>\(price.withLock { $0 })</span>") },
      "/robots.txt": Route { _ in .text("User-agent: *\nAllow: /\n") },
    ])
    defer { server.stop() }
    let folder = NSTemporaryDirectory() + "forage-engine-changes-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let prices = Source(
      name: "prices", url: server.url("/item/1"), extract: ["title": "h1", "price": .css(".price", as: .number)])
    let engine = Engine(
      config: ForageConfig(sources: [prices]), store: try Engine.openStore(folder + "/forage.sqlite"))

    let stream = engine.changes(source: "prices", after: .latest)
    let watcher = Task {
      var seen: [(kind: String, after: String?, cursor: String)] = []
      for try await change in stream {
        seen.append((change.kind.rawValue, change.afterJSON, change.cursor.description))
        if seen.count == 2 { break }
      }
      return seen
    }
    _ = try await engine.run(budget: .seconds(30))
    price.withLock { $0 = "17.50" }
    _ = try await engine.run(budget: .seconds(30))
    let seen = try await watcher.value
    #expect(seen.map(\.kind) == ["new", "changed"])
    #expect(seen.last?.after?.contains(#""price":17.5"#) == true)
    #expect(Int64(seen[1].cursor)! > Int64(seen[0].cursor)!)

    do {
      for try await _ in engine.changes(source: "prizes", after: .start) { Issue.record("a change of no source") }
      Issue.record("an unknown source did not fail")
    } catch let error as EngineError {
      #expect(error.kind == .unknownSource)
      #expect(error.message.contains(#"no source "prizes""#) && error.message.contains("prices"))
    }
    try await engine.close()
  }
}
