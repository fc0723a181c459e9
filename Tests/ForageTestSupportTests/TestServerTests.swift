import Foundation
import Testing

@testable import ForageTestSupport

@Suite struct TestServerTests {
  @Test func test_route_answersWithItsResponse_andRecordsTheRequest() throws {
    let server = try TestServer(routes: ["/hello": Route { request in .text("hi \(request.query("name") ?? "")") }])
    defer { server.stop() }
    #expect(server.baseURL == "http://127.0.0.1:\(server.port)")
    #expect(server.url("/x") == server.baseURL + "/x")
    let response = try fetch(server.port, "/hello?name=ann", headers: ["User-Agent: forage-test"])
    #expect(response.statusLine == "HTTP/1.1 200 OK")
    #expect(response.header("content-type") == "text/plain; charset=utf-8")
    #expect(response.header("content-length") == "6")
    #expect(response.bodyText == "hi ann")
    #expect(server.requestCount == 1)
    #expect(server.requests.first?.header("USER-AGENT") == "forage-test")
    #expect(server.requests.first?.target == "/hello?name=ann")
  }

  @Test func test_keepAlive_servesSeveralRequestsOnOneConnection() throws {
    let server = try TestServer(routes: ["/n": Route { r in .text(r.query("i") ?? "") }])
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    for i in 0..<5 {
      client.request("/n?i=\(i)")
      let response = try #require(client.readResponse())
      #expect(response.bodyText == "\(i)")
      #expect(response.header("connection") == nil)
    }
    client.request("/n?i=last", headers: ["Connection: close"])
    let last = try #require(client.readResponse())
    #expect(last.header("connection") == "close")
    #expect(client.isClosedByPeer())
  }

  @Test func test_pipelinedRequests_areAnsweredInOrder() throws {
    let server = try TestServer(routes: ["/n": Route { r in .text(r.query("i") ?? "") }])
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send((0..<10).map { "GET /n?i=\($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined())
    for i in 0..<10 { #expect(client.readResponse()?.bodyText == "\(i)") }
  }

  @Test func test_head_sendsHeadersWithoutBody() throws {
    let server = try TestServer(routes: ["/page": Route { _ in .html("<p>twelve ch</p>") }])
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.request("/page", method: "HEAD")
    let head = try #require(client.readResponse(head: true))
    #expect(head.header("content-length") == "16")
    // The next response on the same connection starts right away: no body was sent.
    client.request("/page")
    #expect(client.readResponse()?.bodyText == "<p>twelve ch</p>")
  }

  @Test func test_postBody_isRecorded() throws {
    let server = try TestServer(routes: ["/echo": Route { r in TestResponse(body: r.body) }])
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\npayload")
    #expect(client.readResponse()?.bodyText == "payload")
    #expect(server.requests.first?.method == "POST")
  }

  @Test func test_garbage_is400_andCloses() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("\u{1}\u{2}garbage\r\n\r\n")
    let response = try #require(client.readResponse())
    #expect(response.status == 400)
    #expect(response.header("connection") == "close")
  }

  @Test func test_oversizedHeaders_are431() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    client.send("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 100_000) + "\r\n\r\n")
    #expect(client.readResponse()?.status == 431)
  }

  @Test func test_unknownPath_is404() throws {
    let server = try TestServer()
    defer { server.stop() }
    #expect(try fetch(server.port, "/nothing").status == 404)
  }

  @Test func test_prefixRoute_matchesLongestPrefix_afterExactRoutes() throws {
    let server = try TestServer(routes: [
      "/api/*": Route { _ in .text("api") },
      "/api/v2/*": Route { _ in .text("v2") },
      "/api/exact": Route { _ in .text("exact") },
    ])
    defer { server.stop() }
    #expect(try fetch(server.port, "/api/x").bodyText == "api")
    #expect(try fetch(server.port, "/api/v2/y?z=1").bodyText == "v2")
    #expect(try fetch(server.port, "/api/exact").bodyText == "exact")
  }

  @Test func test_userRoutes_takePrecedenceOverBuiltInFaults() throws {
    let server = try TestServer(routes: ["/fault/429": Route { _ in .text("mine") }])
    defer { server.stop() }
    #expect(try fetch(server.port, "/fault/429").bodyText == "mine")
  }

  @Test func test_stop_refusesNewConnections_andIsIdempotent() throws {
    let server = try TestServer()
    let port = server.port
    server.stop()
    server.stop()
    #expect(throws: RawClient.ClientError.self) { try RawClient(port: port) }
  }

  @Test func test_stop_closesOpenConnections() throws {
    let server = try TestServer()
    let client = try RawClient(port: server.port)
    client.request("/")
    _ = client.readResponse()
    server.stop()
    #expect(client.isClosedByPeer())
  }

  @Test func test_releasingTheServer_stopsIt() throws {
    var server: TestServer? = try TestServer()
    let port = try #require(server?.port)
    server = nil
    #expect(throws: RawClient.ClientError.self) { try RawClient(port: port) }
  }

  @Test func test_sixtyFourConcurrentConnections_areServed() throws {
    let server = try TestServer(routes: ["/n": Route { r in .text(r.query("i") ?? "") }])
    defer { server.stop() }
    let clients = try (0..<64).map { _ in try RawClient(port: server.port) }
    for round in 0..<10 {
      for (i, client) in clients.enumerated() { client.request("/n?i=\(i)-\(round)") }
      for (i, client) in clients.enumerated() { #expect(client.readResponse()?.bodyText == "\(i)-\(round)") }
    }
    #expect(server.requestCount == 640)
    #expect(server.core.state.withLock { $0.connections.count } == 64)
  }

  @Test func test_portInUse_throwsSocketError() throws {
    let first = try TestServer()
    defer { first.stop() }
    #expect {
      _ = try TestServer(port: first.port)
    } throws: { error in
      (error as? TestServerError)?.isSocketError == true && "\(error)".contains("bind")
    }
  }

  @Test func test_faultIndex_listsEveryBuiltInRoute() throws {
    let server = try TestServer()
    defer { server.stop() }
    let page = try fetch(server.port, "/fault/").bodyText
    for path in Fault.builtInPaths { #expect(page.contains("href=\"\(path)\""), "\(path)") }
  }
}

@Suite struct TestServerLifecycleTests {
  @Test func test_waitUntilStopped_returnsAfterStop() async throws {
    let server = try TestServer()
    let waiter = Task { await server.waitUntilStopped() }
    server.stop()
    await waiter.value
    #expect(server.core.isStopped)
  }
}
