#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
import ForageSupport
import Foundation

extension ServerCore {
  /// Misbehaves as `fault` says, on the connection `fd`.
  func perform(_ fault: Fault, for request: RecordedRequest, on fd: Int32) -> ConnectionFate {
    let head = request.method == "HEAD"
    switch fault {
    case .slowHeaders(let seconds):
      guard pause(min(seconds, Fault.maxDuration), on: fd) else { return .abort }
      return send(.html(String(decoding: Fault.page("Slow headers", "finally"), as: UTF8.self)),
                  for: request, on: fd)

    case .dripBody(let rate, let total):
      return drip(rate: max(1, rate), total: max(0, total), for: request, on: fd)

    case .truncatedBody:
      let response = TestResponse(headers: [("Content-Type", "text/plain"), ("Content-Length", "10000")],
                                  body: filler(1000))
      _ = sendResponse(response, head: head, close: true, on: fd)
      return .close

    case .endlessChunked:
      return endlessChunked(head: head, total: nil, on: fd)

    case .chunkedFlood(let total):
      return endlessChunked(head: head, total: max(0, total), on: fd)

    case .brokenChunked:
      let response = TestResponse(headers: [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")],
                                  body: Array("5\r\nhello\r\nzz\r\nbroken\r\n0\r\n\r\n".utf8))
      _ = sendResponse(response, head: head, close: true, on: fd)
      return .close

    case .gzipBomb(let size):
      let response = TestResponse(
        headers: [("Content-Type", "text/html; charset=utf-8"), ("Content-Encoding", "gzip")],
        body: Gzip.cachedZeroBomb(decodedSize: max(0, size)))
      return send(response, for: request, on: fd)

    case .redirectLoop:
      let next = request.query("hop") == "b" ? request.path : request.path + "?hop=b"
      return send(.redirect(to: next), for: request, on: fd)

    case .redirectChain(let hops):
      let left = request.int("n") ?? hops
      if left <= 0 { return send(.html("<!DOCTYPE html><title>End</title><p>end of chain</p>\n"), for: request, on: fd) }
      return send(.redirect(to: "\(request.path)?n=\(left - 1)"), for: request, on: fd)

    case .tooManyRequests(let seconds):
      return send(.html(String(decoding: Fault.page("Too Many Requests"), as: UTF8.self), status: 429,
                        headers: [("Retry-After", "\(seconds)")]), for: request, on: fd)

    case .serviceUnavailable(let seconds):
      return send(.html(String(decoding: Fault.page("Service Unavailable"), as: UTF8.self), status: 503,
                        headers: [("Retry-After", "\(seconds)")]), for: request, on: fd)

    case .resetMidBody:
      let response = TestResponse(headers: [("Content-Type", "text/plain"), ("Content-Length", "100000")],
                                  body: filler(10_000))
      guard sendResponse(response, head: head, close: false, on: fd) else { return .abort }
      // Give the client a moment to read the partial body, then reset.
      _ = pause(0.1, on: fd)
      Socket.setResetOnClose(fd)
      return .abort

    case .invalidStatusLine:
      _ = Socket.sendAll(fd, Array("HTTP/1.1 2x0 Okay\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nbad status\n".utf8))
      return .close

    case .hugeHeaders(let bytes):
      var fields: [(String, String)] = [("Content-Type", "text/plain")]
      let value = String(repeating: "x", count: 1000)
      var size = 0
      var index = 0
      while size < bytes {
        let name = "X-Filler-\(index)"
        fields.append((name, value))
        size += name.utf8.count + value.utf8.count + 4
        index += 1
      }
      return send(TestResponse(headers: fields, body: Array("huge headers\n".utf8)), for: request, on: fd)

    case .wrongCharset:
      let html = """
        <!DOCTYPE html>
        <html><head><meta charset="utf-8"><title>Café</title></head>
        <body><h1 class="title">Café – naïve €</h1><p>UTF-8 bytes, labelled ISO-8859-1 by the server.</p></body></html>

        """
      return send(TestResponse(headers: [("Content-Type", "text/html; charset=ISO-8859-1")], body: Array(html.utf8)),
                  for: request, on: fd)

    case .emptyResponse:
      return .close

    case .etag(let value):
      let tag = value.hasPrefix("\"") || value.hasPrefix("W/") ? value : "\"\(value)\""
      let page = TestResponse.html(String(decoding: Fault.page("ETag", tag), as: UTF8.self),
                                   headers: [("ETag", tag), ("Cache-Control", "no-cache")])
      return send(Conditional.answer(request, page, etag: tag, lastModified: nil), for: request, on: fd)

    case .lastModified(let date):
      let seconds = Int(date.timeIntervalSince1970)
      let stamp = HTTPDate.format(seconds)
      let page = TestResponse.html(String(decoding: Fault.page("Last-Modified", stamp), as: UTF8.self),
                                   headers: [("Last-Modified", stamp), ("Cache-Control", "no-cache")])
      return send(Conditional.answer(request, page, etag: nil, lastModified: seconds), for: request, on: fd)
    }
  }

  /// Readable filler: the alphabet over and over.
  func filler(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(0x61 + $0 % 26) }
  }

  private func drip(rate: Int, total: Int, for request: RecordedRequest, on fd: Int32) -> ConnectionFate {
    let keep: ConnectionFate = request.wantsClose ? .close : .keepAlive
    let response = TestResponse(headers: [("Content-Type", "text/plain"), ("Content-Length", "\(total)")], body: [])
    guard sendResponse(response, head: true, close: request.wantsClose, on: fd) else { return .abort }
    if request.method == "HEAD" { return keep }
    // Up to 10 sends a second; each carries rate/10 bytes (at least one).
    let perSend = max(1, rate / 10)
    let interval = Double(perSend) / Double(rate)
    let body = filler(total)
    var sent = 0
    let deadline = ContinuousClock.now + .seconds(Fault.maxDuration)
    while sent < total {
      guard ContinuousClock.now < deadline else { return .close }
      let n = min(perSend, total - sent)
      let ok = body[sent..<(sent + n)].withUnsafeBytes { Socket.sendAll(fd, $0) }
      guard ok else { return .abort }
      sent += n
      if sent < total { guard pause(interval, on: fd) else { return .abort } }
    }
    return keep
  }

  /// 16 KiB chunks until the client leaves, the server stops, ``Fault/maxDuration``
  /// passes or (when given) `total` body bytes were sent; never the last chunk.
  private func endlessChunked(head: Bool, total: Int?, on fd: Int32) -> ConnectionFate {
    let response = TestResponse(headers: [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")], body: [])
    guard sendResponse(response, head: true, close: true, on: fd) else { return .abort }
    if head { return .close }
    let chunk = Array("4000\r\n".utf8) + filler(16_384) + Array("\r\n".utf8)
    let deadline = ContinuousClock.now + .seconds(Fault.maxDuration)
    var sent = 0
    while ContinuousClock.now < deadline && !isStopped && sent < total ?? .max {
      guard Socket.sendAll(fd, chunk) else { return .abort }
      sent += 16_384
    }
    return .close
  }
}

/// Conditional GET: decides between the full response and 304 Not Modified.
/// https://www.rfc-editor.org/rfc/rfc9110#name-conditional-requests
enum Conditional {
  /// `page` itself, or a 304 carrying its validators when the request's preconditions
  /// say the client's copy is current. `If-None-Match` takes precedence over
  /// `If-Modified-Since` (RFC 9110 §13.2.2).
  static func answer(_ request: RecordedRequest, _ page: TestResponse, etag: String?, lastModified: Int?) -> TestResponse {
    guard request.method == "GET" || request.method == "HEAD", isNotModified(request, etag: etag, lastModified: lastModified)
    else { return page }
    var headers: [(String, String)] = []
    for field in page.fields where ["etag", "last-modified", "cache-control"].contains(field.name.lowercased()) {
      headers.append((field.name, field.value))
    }
    return TestResponse(status: 304, headers: headers, body: [])
  }

  static func isNotModified(_ request: RecordedRequest, etag: String?, lastModified: Int?) -> Bool {
    if let header = request.header("if-none-match") {
      guard let etag else { return false }
      // Weak comparison: https://www.rfc-editor.org/rfc/rfc9110#name-comparison-2
      func opaque(_ tag: String) -> String { tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag }
      let listed = header.split(separator: ",").map { $0.trimmingSpaces() }
      return listed.contains("*") || listed.contains { opaque($0) == opaque(etag) }
    }
    if let header = request.header("if-modified-since"), let lastModified, let since = HTTPDate.parse(header) {
      return lastModified <= since
    }
    return false
  }
}
