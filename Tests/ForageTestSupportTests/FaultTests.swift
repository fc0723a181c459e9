#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif
import Foundation
import Testing

@testable import ForageTestSupport

/// One test (or more) per built-in fault route, each asserting the misbehaviour on the wire.
@Suite struct FaultTests {
  func openConnections(_ server: TestServer) -> Int { server.core.state.withLock { $0.connections.count } }

  /// True when nothing arrives within `milliseconds` (the server holds back).
  func silent(_ client: RawClient, milliseconds: Int32) -> Bool {
    var entry = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, milliseconds) == 0
  }

  @Test func test_slowHeaders_sendNothingUntilTheDelay_thenAnswer() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.request("/fault/slow-headers?seconds=0.3")
    let response = try #require(client.readResponse())
    #expect(response.status == 200)
    #expect(response.bodyText.contains("Slow headers"))
  }

  @Test func test_slowHeaders_stopWhenTheServerStops() throws {
    let server = try TestServer()
    let client = try RawClient(port: server.port)
    client.request("/fault/slow-headers")  // 30 s by default
    #expect(silent(client, milliseconds: 200))
    server.stop()
    #expect(client.isClosedByPeer())
    #expect(eventually { openConnections(server) == 0 })
  }

  @Test func test_slowHeaders_stopWhenTheClientLeaves() throws {
    let server = try TestServer()
    defer { server.stop() }
    do {
      let client = try RawClient(port: server.port)
      client.request("/fault/slow-headers?seconds=50")
      #expect(eventually { openConnections(server) == 1 })
    }
    #expect(eventually { openConnections(server) == 0 })
  }

  @Test func test_drip_deliversTheWholeBodyEventually() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.request("/fault/drip?rate=20&total=12")
    let head = try #require(client.readHead())
    #expect(head.header("content-length") == "12")
    var body = client.pending
    while body.count < 12 {
      let chunk = client.readSome()
      if chunk.isEmpty { break }
      body += chunk
    }
    #expect(body == Array("abcdefghijkl".utf8))
    // The connection stays usable afterwards.
    client.request("/fault/429")
    #expect(client.readResponse()?.status == 429)
  }

  @Test func test_drip_firstReadHoldsFewerBytesThanTheTotal_andStopsWhenTheClientLeaves() throws {
    let server = try TestServer()
    defer { server.stop() }
    do {
      let client = try RawClient(port: server.port)
      client.request("/fault/drip?rate=1&total=1000")
      _ = try #require(client.readHead())
      let first = client.pending.isEmpty ? client.readSome() : client.pending
      #expect(!first.isEmpty && first.count < 1000)
    }
    #expect(eventually { openConnections(server) == 0 })
  }

  @Test func test_truncated_closesBeforeContentLengthBytes() throws {
    let server = try TestServer()
    defer { server.stop() }
    let response = try fetch(server.port, "/fault/truncated")
    #expect(response.header("content-length") == "10000")
    #expect(response.body.count == 1000)
  }

  @Test func test_endlessChunked_neverEnds_andStopsWhenTheClientLeaves() throws {
    let server = try TestServer()
    defer { server.stop() }
    do {
      let client = try RawClient(port: server.port)
      client.request("/fault/endless-chunked")
      let head = try #require(client.readHead())
      #expect(head.header("transfer-encoding") == "chunked")
      var received = client.pending
      while received.count < 2 << 20 {
        let chunk = client.readSome()
        #expect(!chunk.isEmpty)
        if chunk.isEmpty { break }
        received += chunk
      }
      #expect(received.starts(with: Array("4000\r\n".utf8)))
      #expect(!String(decoding: received, as: UTF8.self).contains("\r\n0\r\n"))
    }
    #expect(eventually { openConnections(server) == 0 })
  }

  @Test func test_endlessChunked_withStopAfter_closesAfterThatMuchBody_withoutTheLastChunk() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.request("/fault/endless-chunked?stop-after=100000")
    let head = try #require(client.readHead())
    #expect(head.header("transfer-encoding") == "chunked")
    let body = client.readToEnd()
    // 16 KiB chunks until at least 100,000 body bytes: seven chunks, each framed.
    let chunk = Array("4000\r\n".utf8).count + 16_384 + 2
    #expect(body.count == 7 * chunk)
    #expect(!String(decoding: body, as: UTF8.self).contains("\r\n0\r\n"))
  }

  @Test func test_brokenChunked_hasAnInvalidChunkSize() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.request("/fault/broken-chunked")
    let head = try #require(client.readHead())
    #expect(head.header("transfer-encoding") == "chunked")
    #expect(String(decoding: client.readToEnd(), as: UTF8.self).hasPrefix("5\r\nhello\r\nzz\r\n"))
  }

  @Test func test_gzipBomb_isSmallOnTheWire_andDecodesToItsSize() throws {
    let server = try TestServer()
    defer { server.stop() }
    let response = try fetch(server.port, "/fault/gzip-bomb?size=10485760")
    #expect(response.header("content-encoding") == "gzip")
    #expect(response.body.count < 20_000)
    #expect(response.body.count == Int(response.header("content-length") ?? "") ?? -1)
    if gzipAvailable {
      let decoded = try #require(shell("gzip -dc | wc -c", input: response.body))
      #expect(decoded.output.trimmingCharacters(in: .whitespacesAndNewlines) == "10485760")
    }
    let defaultSize = try fetch(server.port, "/fault/gzip-bomb", method: "HEAD")
    let length = try #require(Int(defaultSize.header("content-length") ?? ""))
    #expect(length > 1_000_000 && length < 1_100_000)  // 1 GiB decoded
  }

  @Test func test_redirectLoop_goesBackAndForth() throws {
    let server = try TestServer()
    defer { server.stop() }
    let a = try fetch(server.port, "/fault/redirect-loop")
    #expect(a.status == 302)
    #expect(a.header("location") == "/fault/redirect-loop?hop=b")
    let b = try fetch(server.port, "/fault/redirect-loop?hop=b")
    #expect(b.header("location") == "/fault/redirect-loop")
  }

  @Test func test_redirectChain_countsDownToAPage() throws {
    let server = try TestServer()
    defer { server.stop() }
    var target = "/fault/redirect-chain?n=3"
    var hops = 0
    while true {
      let response = try fetch(server.port, target)
      guard response.status == 302, let next = response.header("location") else {
        #expect(response.status == 200)
        #expect(response.bodyText.contains("end of chain"))
        break
      }
      target = next
      hops += 1
      try #require(hops < 10)
    }
    #expect(hops == 3)
  }

  @Test func test_429_and503_carryRetryAfter() throws {
    let server = try TestServer()
    defer { server.stop() }
    let tooMany = try fetch(server.port, "/fault/429")
    #expect(tooMany.statusLine == "HTTP/1.1 429 Too Many Requests")
    #expect(tooMany.header("retry-after") == "1")
    let unavailable = try fetch(server.port, "/fault/503?retry-after=7")
    #expect(unavailable.status == 503)
    #expect(unavailable.header("retry-after") == "7")
  }

  @Test func test_reset_abortsMidBodyWithARST() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.request("/fault/reset")
    let head = try #require(client.readHead())
    #expect(head.header("content-length") == "100000")
    let body = client.readToEnd()
    #expect(body.count < 100_000)
    #expect(client.lastError == ECONNRESET)
  }

  @Test func test_badStatus_sendsAnInvalidStatusLine() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.request("/fault/bad-status")
    let text = String(decoding: client.readToEnd(), as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 2x0 Okay\r\n"))
  }

  @Test func test_hugeHeaders_sendAMegabyteOfHeaders() throws {
    let server = try TestServer()
    defer { server.stop() }
    let response = try fetch(server.port, "/fault/huge-headers")
    #expect(response.headText.utf8.count >= 1 << 20)
    #expect(response.bodyText == "huge headers\n")
    let small = try fetch(server.port, "/fault/huge-headers?bytes=5000")
    #expect(small.headText.utf8.count < 10_000)
  }

  @Test func test_wrongCharset_labelsUTF8AsLatin1() throws {
    let server = try TestServer()
    defer { server.stop() }
    let response = try fetch(server.port, "/fault/wrong-charset")
    #expect(response.header("content-type") == "text/html; charset=ISO-8859-1")
    #expect(response.bodyText.contains("<meta charset=\"utf-8\">"))
    #expect(response.body.starts(with: Array("<!DOCTYPE".utf8)))
    #expect(response.bodyText.contains("Café – naïve €"))  // valid UTF-8 bytes
  }

  @Test func test_empty_closesWithoutAByte() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.request("/fault/empty")
    #expect(client.isClosedByPeer())
  }

  @Test func test_etag_answers304ToAMatchingIfNoneMatch() throws {
    let server = try TestServer()
    defer { server.stop() }
    let full = try fetch(server.port, "/fault/etag")
    #expect(full.status == 200)
    #expect(full.header("etag") == "\"v1\"")
    let client = try RawClient(port: server.port)
    client.request("/fault/etag", headers: ["If-None-Match: \"v0\", W/\"v1\""])
    let notModified = try #require(client.readResponse())
    #expect(notModified.status == 304)
    #expect(notModified.header("etag") == "\"v1\"")
    // No body was sent: the connection is ready for the next response.
    client.request("/fault/etag", headers: ["If-None-Match: \"v2\""])
    #expect(client.readResponse()?.status == 200)
  }

  @Test func test_lastModified_answers304ToALaterIfModifiedSince() throws {
    let server = try TestServer()
    defer { server.stop() }
    let full = try fetch(server.port, "/fault/last-modified")
    #expect(full.header("last-modified") == "Mon, 01 Jan 2024 00:00:00 GMT")
    let same = try fetch(server.port, "/fault/last-modified", headers: ["If-Modified-Since: Mon, 01 Jan 2024 00:00:00 GMT"])
    #expect(same.status == 304)
    let older = try fetch(server.port, "/fault/last-modified", headers: ["If-Modified-Since: Sun, 31 Dec 2023 23:59:59 GMT"])
    #expect(older.status == 200)
  }

  @Test func test_faultMountedOnAUserRoute_misbehavesThere() throws {
    let server = try TestServer(routes: [
      "/busy": .fault(.tooManyRequests(retryAfter: 30)),
      "/loop": .fault(.redirectLoop),
    ])
    defer { server.stop() }
    let busy = try fetch(server.port, "/busy")
    #expect(busy.status == 429)
    #expect(busy.header("retry-after") == "30")
    #expect(try fetch(server.port, "/loop").header("location") == "/loop?hop=b")
  }

  @Test func test_normalRequests_areServedWhileFaultsMisbehave() throws {
    let server = try TestServer(routes: ["/ok": Route { _ in .text("ok") }])
    defer { server.stop() }
    let slow = try RawClient(port: server.port)
    slow.request("/fault/slow-headers")
    let endless = try RawClient(port: server.port)
    endless.request("/fault/endless-chunked")
    for _ in 0..<20 { #expect(try fetch(server.port, "/ok").bodyText == "ok") }
  }
}
