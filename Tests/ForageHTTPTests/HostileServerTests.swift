import Foundation
import ForageHTTP
import ForageTestSupport
import ForageURL
import Testing

/// Every fault of the misbehaving server against both transports, one at a time (so
/// that the memory test measures only itself): each fetch ends
/// with the typed error of the limit it crossed (never a hang: the server's faults
/// last up to a minute, the limits here a few seconds), while a normal fetch running
/// at the same time completes.
@Suite(.serialized) struct HostileServerTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var path: String
    var limits: TransferLimits
    var expected: FetchError.Kind
    var testDescription: String { "\(path) → \(expected)" }
  }

  static let cases: [Case] = [
    // No byte for 30 s: the total timeout ends it.
    Case(path: "/fault/slow-headers?seconds=30", limits: quickLimits(timeout: .seconds(1)), expected: .timeout),
    // One byte a second: the low-speed window ends it long before the timeout.
    Case(
      path: "/fault/drip?rate=1&total=60",
      limits: quickLimits(timeout: .seconds(20), lowSpeedLimit: 100, lowSpeedTime: .seconds(1)),
      expected: .tooSlow),
    Case(path: "/fault/truncated", limits: quickLimits(), expected: .truncated),
    Case(path: "/fault/endless-chunked", limits: quickLimits(timeout: .seconds(20)), expected: .bodyTooLarge),
    // 1 GiB of zeros in about 1 MB of gzip: stops at the 1 MiB decoded limit.
    Case(path: "/fault/gzip-bomb", limits: quickLimits(timeout: .seconds(20)), expected: .bodyTooLarge),
    Case(path: "/fault/reset", limits: quickLimits(), expected: .truncated),
    Case(path: "/fault/bad-status", limits: quickLimits(), expected: .invalidResponse),
    Case(path: "/fault/huge-headers", limits: quickLimits(maxHeaderSize: 64 << 10), expected: .headersTooLarge),
  ]

  @Test(arguments: TransportKind.allCases, cases)
  func test_fault_endsWithTypedError_whileOthersComplete(_ kind: TransportKind, _ fault: Case) async throws {
    let server = try TestServer(routes: ["/ok": Route { _ in .text("fine") }])
    defer { server.stop() }
    let transport = kind.make()
    var path = fault.path
    // Known gap (documented on URLSessionTransport): on Linux, FoundationNetworking
    // reads and decodes ahead of the delegate, and once the delegate cancels a flood it
    // keeps draining the connection until the server stops sending (measured: a minute,
    // the server's limit, on a loaded machine). So for URLSession the flood ends by
    // itself, still far beyond the 1 MiB limit: a 64 MiB bomb, a 64 MiB "endless" body.
    let flood = path.hasPrefix("/fault/endless-chunked") || path.hasPrefix("/fault/gzip-bomb")
    if kind == .urlSession && path == "/fault/gzip-bomb" { path += "?size=67108864" }
    if kind == .urlSession && path == "/fault/endless-chunked" { path += "?stop-after=67108864" }
    let hostile = Request(url: server.webURL(path), limits: fault.limits)
    let started = ContinuousClock.now
    // Other requests on the same URLSession wait while that drain lasts, so there the
    // normal traffic runs after the hostile fetch, which checks that the transport
    // recovers; CurlTransport serves it alongside.
    let sequential = kind == .urlSession && flood
    async let concurrentError = sequential ? nil : fetchError(transport, hostile)
    let sequentialError = sequential ? await fetchError(transport, hostile) : nil
    let normalTimeout: Duration = sequential ? .seconds(30) : .seconds(10)
    var normal = 0
    for _ in 0..<5 {
      let response = try await transport.fetch(Request(url: server.webURL("/ok"), limits: quickLimits(timeout: normalTimeout)))
      if response.status == 200 && response.text == "fine" { normal += 1 }
    }
    let result = sequential ? sequentialError : await concurrentError
    print("hostile: \(kind) \(fault.path) → \(result.map { "\($0.kind)" } ?? "no error") after \(ContinuousClock.now - started)")
    #expect(result?.kind == fault.expected, "\(kind) \(fault.path): \(String(describing: result))")
    #expect(normal == 5)
    if let result {
      #expect(result.host == "127.0.0.1")
      #expect(!result.message.contains("?"), "messages never carry query strings")
    }
  }

  /// A 1 GiB gzip bomb must not grow the process by anything near its size (libcurl
  /// only: FoundationNetworking buffers decoded data ahead of the delegate, a
  /// documented gap). The resident size is sampled while the fetch runs.
  @Test(arguments: [TransportKind.curl])
  func test_gzipBomb_memoryStaysBounded(_ kind: TransportKind) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let before = residentBytes()
    let sampler = Task {
      var peak = 0
      while !Task.isCancelled {
        peak = max(peak, residentBytes())
        try? await Task.sleep(for: .milliseconds(10))
      }
      return peak
    }
    let error = await fetchError(
      kind.make(), Request(url: server.webURL("/fault/gzip-bomb"), limits: quickLimits(timeout: .seconds(20))))
    sampler.cancel()
    let peak = max(await sampler.value, residentBytes())
    #expect(error?.kind == .bodyTooLarge)
    #expect(peak - before < 256 << 20, "resident size grew by \(peak - before) bytes")
  }

  @Test(arguments: TransportKind.allCases)
  func test_wrongCharset_bodyIsDeliveredAsBytes(_ kind: TransportKind) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let response = try await kind.make().fetch(Request(url: server.webURL("/fault/wrong-charset")))
    #expect(response.status == 200)
    #expect(response.text.contains("Café"))
    #expect(response.headers["Content-Type"]?.contains("ISO-8859-1") == true)
  }

}

/// The current resident set size, from /proc/self/statm (0 where unavailable).
func residentBytes() -> Int {
  guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
  let fields = text.split(separator: " ")
  guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
  return pages * 4096
}
