import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageTestSupport
@testable import Forage

/// `headersFromEnv` values go only to the origins of the source's start URLs
/// and to `secretOrigins` (issue 8): never to a redirect target or a linked
/// page elsewhere.
@Suite(.serialized) struct SecretHeadersTests {
  static let variable = "FORAGE_ISSUE8_SECRET"

  /// Server B (another origin) and server A, whose start page redirects to B
  /// and whose second page links to B.
  func servers() throws -> (a: TestServer, b: TestServer) {
    let b = try TestServer(routes: [
      "/landing": Route { _ in .html("<h1>landing</h1>") },
      "/linked": Route { _ in .html("<h1>linked</h1>") },
    ])
    let landing = b.url("/landing"), linked = b.url("/linked")
    let a = try TestServer(routes: [
      "/start": Route { _ in .redirect(to: landing) },
      "/page": Route { _ in .html("<h1>page</h1><a href=\"\(linked)\">elsewhere</a>") },
    ])
    return (a, b)
  }

  func config(_ a: TestServer, secretOrigins: [String]? = nil) throws -> ForageConfig {
    let origins = secretOrigins.map { ", \"secretOrigins\": [" + $0.map { "\"\($0)\"" }.joined(separator: ",") + "]" } ?? ""
    let json = """
      {"userAgent": "ForageTests/1.0",
       "fetch": {"robotsTxt": false, "perHostDelay": "0s", "headersFromEnv": {"X-Api-Key": "\(Self.variable)"}\(origins)},
       "sources": [{"name": "s", "urls": ["\(a.url("/start"))", "\(a.url("/page"))"],
                    "crawl": {"sameHost": false, "maxDepth": 1},
                    "extract": {"title": "h1"}}]}
      """
    return try ForageConfig.parse(Array(json.utf8))
  }

  @Test func test_issue8_secretHeader_staysWithTheStartOrigin() async throws {
    setenv(Self.variable, "s3cret-value", 1)
    defer { unsetenv(Self.variable) }
    let (a, b) = try servers()
    defer { a.stop(); b.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let summary = try await Job(config: try config(a), store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(summary.pagesFailed == 0)
    #expect(b.requestCount(path: "/landing") == 1)
    #expect(b.requestCount(path: "/linked") == 1)
    for r in a.requests { #expect(r.header("X-Api-Key") == "s3cret-value", "\(r.target)") }
    for r in b.requests { #expect(r.header("X-Api-Key") == nil, "\(r.target) got the secret") }
    // Never stored: not in any record or page row.
    let records = try await allRecords(store)
    #expect(!records.contains { $0.fieldsJSON.contains("s3cret") })
  }

  @Test func test_issue8_secretOrigins_nameMoreOrigins() async throws {
    setenv(Self.variable, "s3cret-value", 1)
    defer { unsetenv(Self.variable) }
    let (a, b) = try servers()
    defer { a.stop(); b.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = try config(a, secretOrigins: [b.url("/")])
    _ = try await Job(config: config, store: store, transport: Engine.defaultTransport()).run(budget: .seconds(30))
    #expect(b.requests.count == 2)
    for r in b.requests { #expect(r.header("X-Api-Key") == "s3cret-value", "\(r.target)") }
  }

  @Test func test_secretOrigins_mustBeHTTPOrigins() throws {
    let json = """
      {"sources": [{"name": "s", "url": "https://example.com/", "extract": {"t": "h1"},
                    "fetch": {"secretOrigins": ["ftp://example.com", "https://api.example.com/v1"]}}]}
      """
    #expect {
      _ = try ForageConfig.parse(Array(json.utf8))
    } throws: { error in
      "\(error)".contains("secretOrigins[0]") && !"\(error)".contains("secretOrigins[1]")
    }
  }

  @Test func test_secrets_roundTripThroughTheWrittenConfig_asVariableNamesOnly() throws {
    let json = """
      {"fetch": {"headersFromEnv": {"Authorization": "SHOP_TOKEN"}},
       "sources": [{"name": "a", "url": "https://shop.example.com/", "extract": {"t": "h1"}},
                   {"name": "b", "url": "https://b.example.com/", "extract": {"t": "h1"},
                    "fetch": {"secretOrigins": ["https://cdn.example.com"], "robotsTxt": false}},
                   {"name": "c", "url": "https://c.example.com/", "extract": {"t": "h1"}, "fetch": {}}]}
      """
    let config = try ForageConfig.parse(Array(json.utf8))
    let written = config.jsonText
    #expect(written.contains("SHOP_TOKEN"))
    let again = try ForageConfig.parse(Array(written.utf8))
    #expect(again == config)
    let b = config.fetchSettings(for: try #require(config.source(named: "b")))
    #expect(b.credentialOrigins == ["https://cdn.example.com", "https://b.example.com"])
    #expect(!b.robotsTxt)
    let a = config.fetchSettings(for: try #require(config.source(named: "a")))
    #expect(a.credentialOrigins == ["https://shop.example.com"])
    #expect(a.credentials.count == 1)
  }
}
