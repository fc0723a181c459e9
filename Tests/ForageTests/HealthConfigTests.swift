import ForageStore
import Testing

@testable import Forage

/// A source's `health` object (issue 29): read, written back, and each bad
/// value or unknown key reported with its path.
@Suite struct HealthConfigTests {
  func config(_ health: String?) -> String {
    """
    {"sources": [{"name": "shop", "url": "https://example.com/p/1", "match": "div.product",
                  "extract": {"title": "h1"} \(health.map { #", "health": \#($0)"# } ?? "")}]}
    """
  }

  @Test func test_health_isReadWithItsDefaults_andWrittenBackWhenItDiffers() throws {
    let plain = try ForageConfig.parse(Array(config(nil).utf8))
    #expect(plain.sources[0].health == HealthPolicy())
    #expect(!plain.jsonText.contains("health"))
    let set = try ForageConfig.parse(
      Array(config(#"{"removedShare": 0.3, "minRemoved": 5, "collapsedCoverage": 0.2, "hold": false}"#).utf8))
    let h = set.sources[0].health
    #expect(h.removedShare == 0.3 && h.minRemoved == 5 && h.collapsedCoverage == 0.2 && !h.enabled)
    #expect(h.watchedCoverage == HealthPolicy().watchedCoverage && h.minRecords == HealthPolicy().minRecords)
    #expect(try ForageConfig.parse(Array(set.jsonText.utf8)) == set)
  }

  @Test func test_health_problems_nameTheirPath() {
    let cases: [(String, String, String)] = [
      (#""yes""#, "sources[0].health", "object"),
      (#"{"removedShare": 2}"#, "sources[0].health.removedShare", "out of range"),
      (#"{"minRemoved": 0}"#, "sources[0].health.minRemoved", "at least 1"),
      (#"{"hold": "no"}"#, "sources[0].health.hold", "true or false"),
      (#"{"watchedCoverage": 0.4, "collapsedCoverage": 0.6}"#, "sources[0].health.collapsedCoverage", "above watchedCoverage"),
      (#"{"removedShar": 0.2}"#, "sources[0].health.removedShar", "did you mean \"removedShare\""),
    ]
    for (health, path, words) in cases {
      let found = problems(config(health))
      #expect(found.contains { $0.path == path && $0.message.contains(words) }, "\(health): \(found)")
    }
  }
}
