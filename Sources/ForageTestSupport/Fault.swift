import Foundation

/// A way for the test server to misbehave on purpose, one case per misbehaviour.
///
/// Mount one on a path of your own with ``Route/fault(_:)``, or use the built-in routes
/// every ``TestServer`` has under `/fault/` (query parameters override the defaults):
///
/// | Path | Fault |
/// |---|---|
/// | `/fault/slow-headers?seconds=30` | ``slowHeaders(seconds:)`` |
/// | `/fault/drip?rate=1&total=60` | ``dripBody(bytesPerSecond:total:)`` |
/// | `/fault/truncated` | ``truncatedBody`` |
/// | `/fault/endless-chunked` | ``endlessChunked`` |
/// | `/fault/endless-chunked?stop-after=67108864` | ``chunkedFlood(total:)`` |
/// | `/fault/broken-chunked` | ``brokenChunked`` |
/// | `/fault/gzip-bomb?size=1073741824` | ``gzipBomb(decodedSize:)`` |
/// | `/fault/redirect-loop` | ``redirectLoop`` |
/// | `/fault/redirect-chain?n=5` | ``redirectChain(hops:)`` |
/// | `/fault/429?retry-after=1` | ``tooManyRequests(retryAfter:)`` |
/// | `/fault/503?retry-after=1` | ``serviceUnavailable(retryAfter:)`` |
/// | `/fault/reset` | ``resetMidBody`` |
/// | `/fault/bad-status` | ``invalidStatusLine`` |
/// | `/fault/huge-headers?bytes=1048576` | ``hugeHeaders(bytes:)`` |
/// | `/fault/wrong-charset` | ``wrongCharset`` |
/// | `/fault/empty` | ``emptyResponse`` |
/// | `/fault/etag` | ``etag(_:)`` with `"v1"` |
/// | `/fault/last-modified` | ``lastModified(_:)`` with 2024-01-01 00:00:00 GMT |
///
/// `/fault/` itself lists them. Every slow fault stops when the client disconnects, when
/// the server stops, or after ``maxDuration`` seconds, whichever comes first: no server
/// thread waits forever.
///
///     let server = try TestServer(routes: ["/item": .fault(.dripBody(bytesPerSecond: 2, total: 10))])
public enum Fault: Sendable {
  /// Waits `seconds` before sending anything, then sends a small complete 200 response.
  /// Exercises connect / first-byte timeouts.
  case slowHeaders(seconds: Double)

  /// Sends the header section at once with `Content-Length: total`, then the body
  /// `bytesPerSecond` bytes each second. Exercises low-speed aborts against slow drips.
  case dripBody(bytesPerSecond: Int, total: Int)

  /// Declares `Content-Length: 10000`, sends 1,000 bytes of body, then closes
  /// (a clean FIN). The client must report a short body, not succeed.
  case truncatedBody

  /// `Transfer-Encoding: chunked` with 16 KiB chunks sent as fast as the client reads,
  /// never the last chunk. Exercises body size limits.
  case endlessChunked

  /// Like ``endlessChunked``, but the server stops (and closes, still without the last
  /// chunk) once `total` bytes of body were sent: a flood that ends by itself even when
  /// a client keeps reading after it gave up.
  case chunkedFlood(total: Int)

  /// A chunked body whose second chunk size is not hexadecimal (`zz`), then a close.
  /// https://www.rfc-editor.org/rfc/rfc9112#name-chunked-transfer-coding
  case brokenChunked

  /// A real gzip body (`Content-Encoding: gzip`) that decodes to `decodedSize` zero bytes
  /// in about `decodedSize / 1032` bytes on the wire (1 GiB → about 1 MB). Exercises limits
  /// on the decoded size. See ``Gzip/zeroBomb(decodedSize:)``.
  case gzipBomb(decodedSize: Int)

  /// A 302 to the same path with `?hop=b`, which redirects back to the path without a
  /// query: A → B → A → … forever.
  case redirectLoop

  /// A chain of 302s: the request's `n` query parameter (else `hops`) counts down,
  /// `?n=K` → `?n=K-1` … `?n=0`, which answers 200 `end of chain`.
  case redirectChain(hops: Int)

  /// 429 Too Many Requests with `Retry-After: retryAfter` (seconds).
  /// https://www.rfc-editor.org/rfc/rfc6585#section-4
  case tooManyRequests(retryAfter: Int)

  /// 503 Service Unavailable with `Retry-After: retryAfter` (seconds).
  /// https://www.rfc-editor.org/rfc/rfc9110#name-503-service-unavailable
  case serviceUnavailable(retryAfter: Int)

  /// Declares `Content-Length: 100000`, sends 10,000 bytes, then resets the connection
  /// (TCP RST through `SO_LINGER` 0) instead of closing it.
  case resetMidBody

  /// Answers `HTTP/1.1 2x0 Okay` (not a three-digit status), a few fields and a body,
  /// then closes. https://www.rfc-editor.org/rfc/rfc9112#name-status-line
  case invalidStatusLine

  /// A 200 whose header section is about `bytes` long (fields `X-Filler-N` of 1,000
  /// characters each), then a short body. Exercises header size limits.
  case hugeHeaders(bytes: Int)

  /// `Content-Type: text/html; charset=ISO-8859-1` on a body that is UTF-8 and declares
  /// `<meta charset="utf-8">`. Per the HTML spec the HTTP header wins; the page reads
  /// correctly only as UTF-8 ("Café – naïve €").
  /// https://html.spec.whatwg.org/#determining-the-character-encoding
  case wrongCharset

  /// Closes the connection without sending a byte.
  case emptyResponse

  /// A page with `ETag: <value>` (value sent quoted) that answers 304 Not Modified,
  /// without a body, when `If-None-Match` lists it or is `*`.
  /// https://www.rfc-editor.org/rfc/rfc9110#name-if-none-match
  case etag(String)

  /// A page with `Last-Modified` that answers 304 when `If-Modified-Since` is at or after
  /// it. https://www.rfc-editor.org/rfc/rfc9110#name-if-modified-since
  case lastModified(Date)

  /// The longest any single fault keeps a connection busy, in seconds.
  public static let maxDuration: Double = 60

  /// The built-in fault routes, by path (see the table above).
  public static let builtInPaths: [String] = builtIns.map(\.path)

  /// The body every fault page uses when it sends one: small, recognisable HTML.
  static func page(_ title: String, _ text: String = "") -> [UInt8] {
    Array("<!DOCTYPE html><html><head><title>\(title)</title></head><body><h1>\(title)</h1><p>\(text)</p></body></html>\n".utf8)
  }

  /// Built-in routes: path, what it does, and the fault for a request (query overrides).
  static let builtIns: [(path: String, summary: String, make: @Sendable (RecordedRequest) -> Fault)] = [
    ("/fault/slow-headers", "waits ?seconds= (30) before answering",
     { .slowHeaders(seconds: $0.double("seconds") ?? 30) }),
    ("/fault/drip", "drips ?total= (60) bytes at ?rate= (1) bytes/s",
     { .dripBody(bytesPerSecond: $0.int("rate") ?? 1, total: $0.int("total") ?? 60) }),
    ("/fault/truncated", "Content-Length 10000, sends 1000 bytes, closes", { _ in .truncatedBody }),
    ("/fault/endless-chunked", "chunked body that never ends (or stops after ?stop-after= bytes)",
     { $0.int("stop-after").map { .chunkedFlood(total: $0) } ?? .endlessChunked }),
    ("/fault/broken-chunked", "chunked body with an invalid chunk size", { _ in .brokenChunked }),
    ("/fault/gzip-bomb", "gzip of ?size= (1 GiB) zero bytes, about size/1032 on the wire",
     { .gzipBomb(decodedSize: $0.int("size") ?? (1 << 30)) }),
    ("/fault/redirect-loop", "302 A → B → A …", { _ in .redirectLoop }),
    ("/fault/redirect-chain", "?n= (5) redirects, then 200", { .redirectChain(hops: $0.int("n") ?? 5) }),
    ("/fault/429", "429 with Retry-After ?retry-after= (1)",
     { .tooManyRequests(retryAfter: $0.int("retry-after") ?? 1) }),
    ("/fault/503", "503 with Retry-After ?retry-after= (1)",
     { .serviceUnavailable(retryAfter: $0.int("retry-after") ?? 1) }),
    ("/fault/reset", "TCP reset after 10000 of 100000 bytes", { _ in .resetMidBody }),
    ("/fault/bad-status", "invalid status line", { _ in .invalidStatusLine }),
    ("/fault/huge-headers", "header section of ?bytes= (1 MiB)",
     { .hugeHeaders(bytes: $0.int("bytes") ?? (1 << 20)) }),
    ("/fault/wrong-charset", "says ISO-8859-1, sends UTF-8", { _ in .wrongCharset }),
    ("/fault/empty", "closes without a response", { _ in .emptyResponse }),
    ("/fault/etag", "ETag \"v1\", 304 on If-None-Match", { _ in .etag("v1") }),
    ("/fault/last-modified", "Last-Modified 2024-01-01, 304 on If-Modified-Since",
     { _ in .lastModified(Date(timeIntervalSince1970: 1_704_067_200)) }),
  ]

  /// The `/fault/` index page.
  static var indexPage: TestResponse {
    var html = "<!DOCTYPE html><html><head><title>Faults</title></head><body><h1>Faults</h1><ul>\n"
    for route in builtIns {
      html += "<li><a href=\"\(route.path)\">\(route.path)</a>: \(escapeHTML(route.summary))</li>\n"
    }
    html += "</ul></body></html>\n"
    return .html(html)
  }
}

extension RecordedRequest {
  func int(_ name: String) -> Int? { query(name).flatMap { Int($0) } }
  func double(_ name: String) -> Double? { query(name).flatMap { Double($0) } }
}
