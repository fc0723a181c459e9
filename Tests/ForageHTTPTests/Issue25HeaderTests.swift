import Foundation
import ForageSupport
import ForageTestSupport
import ForageURL
import Testing

@testable import ForageHTTP

/// Issue 25: a header value with a line break must not add a header; a
/// stalled transfer's message is a sentence without setting names.
@Suite struct Issue25HeaderTests {
  @Test func test_issue25_headerNamesAndValuesAreChecked() {
    #expect(HTTPHeaders.nameProblem("X-Api-Key") == nil)
    #expect(HTTPHeaders.nameProblem("!#$%&'*+-.^_`|~09az") == nil)
    for bad in ["", "X Foo", "X-Foo:", "X\r\nY", "Ünicode", "(x)"] {
      #expect(HTTPHeaders.nameProblem(bad) != nil, "\(bad)")
    }
    #expect(HTTPHeaders.valueProblem("Mozilla/5.0 (X11; Linux)\tok, é") == nil)
    for bad in ["A\r\nX-Injected: 1", "A\nB", "A\rB", "A\u{0}B", "A\u{1B}[2J", "A\u{7F}"] {
      let why = HTTPHeaders.valueProblem(bad)
      #expect(why != nil, "\(bad.debugDescription)")
      #expect(why?.contains("A") == false, "the message must not quote the value")
    }
  }

  @Test func test_issue25_aCredentialWithALineBreakFromTheEnvironmentIsRefused_notSent() async throws {
    let server = try TestServer(routes: ["/api": Route { _ in .text("ok") }])
    defer { server.stop() }
    var settings = FetcherTests.settings()
    settings.credentials = [.header("X-Api-Key", valueEnv: "SHOP_KEY")]
    let secret = "s3cret\r\nX-Injected: 1"
    let fetcher = Fetcher(
      transport: TransportKind.curl.make(), settings: settings, random: SplitMix64(seed: 7),
      environment: ["SHOP_KEY": secret])
    let outcome = await fetcher.fetch(server.webURL("/api"))
    let error = try #require(outcome.error)
    #expect(error.kind == .invalidHeader)
    #expect(error.message.contains("SHOP_KEY") && error.message.contains("X-Api-Key"), "\(error.message)")
    #expect(!error.message.contains("s3cret") && !error.debugDescription.contains("s3cret"))
    #expect(server.requestCount == 0, "nothing may be sent")

    // The same for a download, and for a bearer token.
    settings.credentials = [.bearer(tokenEnv: "TOKEN")]
    let bearer = Fetcher(
      transport: TransportKind.curl.make(), settings: settings, random: SplitMix64(seed: 7),
      environment: ["TOKEN": "t\nX-Injected: 1"])
    let fd = open("/dev/null", O_WRONLY)
    defer { close(fd) }
    if case .failed(let e) = await bearer.download(server.webURL("/api"), into: fd, resumingAt: 0, limits: TransferLimits()),
      let e = e as? FetchError
    {
      #expect(e.kind == .invalidHeader)
      #expect(e.message.contains("TOKEN") && e.message.contains("Authorization"), "\(e.message)")
    } else {
      Issue.record("the download should have failed")
    }
    #expect(server.requestCount == 0)
  }

  @Test func test_issue25_aStalledTransferIsASentenceWithoutSettingNames() {
    let error = FetchError.tooSlow(host: "shop.example.com", bytesPerSecond: 1024, window: .seconds(10))
    #expect(error.message == "shop.example.com sent less than 1 KiB/s for 10 s, so the transfer was stopped as stalled")
    #expect(!error.message.contains("lowSpeed"))
    // Nor do the headers' limit, which no config sets.
    let headers = FetchError.headersTooLarge(host: "shop.example.com", limit: 64 << 10)
    #expect(headers.message == "the response headers from shop.example.com passed 64 KiB, the most Forage reads of them")
  }
}
