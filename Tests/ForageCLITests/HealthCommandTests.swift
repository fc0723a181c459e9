import Foundation
import Testing
import ForageTestSupport

/// `forage status` and `forage health` while a redesign holds a source's
/// changes (issue 29), through the built binary.
/// A flag the server's routes read while the test flips it.
final class Flag: @unchecked Sendable {
  // @unchecked: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value = false
  var isSet: Bool { lock.withLock { value } }
  func set() { lock.withLock { value = true } }
}

@Suite(.serialized) struct HealthCommandTests {
  @Test func test_issue29_statusExits1NamingTheSelector_healthLists_acceptApplies() throws {
    let dir = TemporaryDirectory()
    let redesigned = Flag()
    var routes: [String: Route] = [:]
    for n in 1...4 {
      routes["/p/\(n)"] = Route { _ in
        redesigned.isSet
          ? .html("<div class=card><h2>Lamp \(n)</h2></div>") : .html("<div class=product><h1>Lamp \(n)</h1></div>")
      }
    }
    let server = try TestServer(routes: routes)
    defer { server.stop() }
    let urls = (1...4).map { "\"\(server.url("/p/\($0)"))\"" }.joined(separator: ", ")
    let config = try dir.write(
      "forage.json",
      """
      {"store": "s.sqlite",
       "sources": [{"name": "shop", "urls": [\(urls)], "match": "div.product", "extract": {"title": "h1"},
                    "fetch": {"robotsTxt": false, "perHostDelay": "0s"}}]}
      """)
    #expect(try runForage(["run", "--config", config]).status == 0)
    redesigned.set()
    #expect(try runForage(["run", "--config", config]).status == 0)

    let status = try runForage(["status", "--store", dir.file("s.sqlite"), "--config", config])
    #expect(status.status == 1)
    #expect(status.stdout.contains("shop: changes held since") && status.stdout.contains("div.product"), "\(status.stdout)")
    let list = try runForage(["health", "--config", config])
    #expect(list.status == 1)
    #expect(list.stdout.contains("shop: HELD") && list.stdout.contains("4 changes held"), "\(list.stdout)")
    #expect(try runForage(["health", "accept", "nope", "--config", config]).status == 2)

    let accepted = try runForage(["health", "accept", "shop", "--config", config, "--json"])
    #expect(accepted.status == 0)
    let json = try JSONSerialization.jsonObject(with: Data(accepted.stdout.utf8)) as? [String: Any]
    #expect(json?["removed"] as? Int == 4, "\(accepted.stdout)")
    #expect(try runForage(["status", "--store", dir.file("s.sqlite"), "--config", config]).status == 0)
    let after = try runForage(["health", "--config", config])
    #expect(after.status == 0 && after.stdout.contains("shop: accepted"))
    #expect(try runForage(["health", "accept", "shop", "--config", config]).status == 2)
  }
}
