import ForageHTTP
import ForageTestSupport
import ForageURL
import Testing

/// The shared suite: every test runs over both transports.
@Suite struct TransportTests {
  @Test(arguments: TransportKind.allCases)
  func test_get_returnsStatusHeadersAndBody(_ kind: TransportKind) async throws {
    let server = try TestServer(routes: [
      "/page": Route { _ in .html("<p>hello</p>", headers: [("X-Test", "yes")]) }
    ])
    defer { server.stop() }
    let response = try await kind.make().fetch(Request(url: server.webURL("/page")))
    #expect(response.status == 200)
    #expect(response.text == "<p>hello</p>")
    #expect(response.headers["x-test"] == "yes")
    #expect(response.headers["Content-Type"]?.hasPrefix("text/html") == true)
    #expect(response.url == server.webURL("/page"))
    #expect(response.bytesReceived >= response.body.count)
    #expect(response.timings.total > .zero)
  }

  @Test(arguments: TransportKind.allCases)
  func test_requestHeadersAndMethod_reachTheServer(_ kind: TransportKind) async throws {
    let server = try TestServer(routes: ["/echo": Route { _ in .text("ok") }])
    defer { server.stop() }
    var request = Request(url: server.webURL("/echo?q=1"), method: "HEAD")
    request.headers["User-Agent"] = "ForageTest/1"
    request.headers["X-Source"] = "prices"
    let response = try await kind.make().fetch(request)
    #expect(response.status == 200)
    #expect(response.body.isEmpty)
    let recorded = try #require(server.requests.last)
    #expect(recorded.method == "HEAD")
    #expect(recorded.target == "/echo?q=1")
    #expect(recorded.header("User-Agent") == "ForageTest/1")
    #expect(recorded.header("x-source") == "prices")
  }

  /// One transport, one request after another (libcurl reuses its handle
  /// and, while the fields stay the same, its header list): each request
  /// sends its own headers, no more and no fewer.
  @Test(arguments: TransportKind.allCases)
  func test_requestHeaders_ofEachRequestInTurn(_ kind: TransportKind) async throws {
    let server = try TestServer(routes: ["/echo": Route { _ in .text("ok") }])
    defer { server.stop() }
    let transport = kind.make()
    let sent: [[(String, String)]] = [
      [("X-A", "1")], [("X-A", "1")], [("X-A", "2"), ("X-B", "b")], [], [("X-A", "1")],
    ]
    for (i, fields) in sent.enumerated() {
      var request = Request(url: server.webURL("/echo?n=\(i)"))
      for (name, value) in fields { request.headers[name] = value }
      _ = try await transport.fetch(request)
      let recorded = try #require(server.requests.last)
      #expect(recorded.target == "/echo?n=\(i)")
      #expect(recorded.header("X-A") == fields.first { $0.0 == "X-A" }?.1, "request \(i)")
      #expect(recorded.header("X-B") == fields.first { $0.0 == "X-B" }?.1, "request \(i)")
    }
  }

  @Test(arguments: TransportKind.allCases)
  func test_gzipBody_isDecoded(_ kind: TransportKind) async throws {
    let text = String(repeating: "compressible text ", count: 500)
    let server = try TestServer(routes: ["/gz": Route { _ in TestResponse.text(text).gzipped() }])
    defer { server.stop() }
    let response = try await kind.make().fetch(Request(url: server.webURL("/gz")))
    #expect(response.status == 200)
    #expect(response.text == text)
  }

  @Test(arguments: TransportKind.allCases)
  func test_redirect_isReturnedNotFollowed(_ kind: TransportKind) async throws {
    let server = try TestServer(routes: [
      "/from": Route { _ in .redirect(to: "/to", status: 301) },
      "/to": Route { _ in .text("target") },
    ])
    defer { server.stop() }
    let response = try await kind.make().fetch(Request(url: server.webURL("/from")))
    #expect(response.status == 301)
    #expect(response.headers["Location"] == "/to")
    #expect(response.isRedirect)
    #expect(server.requestCount(path: "/to") == 0)
  }

  @Test(arguments: TransportKind.allCases)
  func test_errorStatus_isAResponseNotAnError(_ kind: TransportKind) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let response = try await kind.make().fetch(Request(url: server.webURL("/missing")))
    #expect(response.status == 404)
  }

  @Test(arguments: TransportKind.allCases)
  func test_connectionRefused_isConnectFailed(_ kind: TransportKind) async throws {
    let server = try TestServer()
    let url = server.webURL("/gone")
    server.stop()
    let error = await fetchError(kind.make(), Request(url: url, limits: quickLimits()))
    #expect(error?.kind == .connectFailed)
  }

  @Test(arguments: TransportKind.allCases)
  func test_nonHTTPScheme_isInvalidURL(_ kind: TransportKind) async throws {
    let url = WebURL("file:///etc/passwd")
    #expect(url != nil)
    guard let url else { return }
    let error = await fetchError(kind.make(), Request(url: url))
    #expect(error?.kind == .invalidURL)
  }

  @Test(arguments: TransportKind.allCases)
  func test_cancellation_abortsTheTransfer(_ kind: TransportKind) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let transport = kind.make()
    let request = Request(url: server.webURL("/fault/slow-headers?seconds=30"), limits: quickLimits(timeout: .seconds(30)))
    let task = Task { await fetchError(transport, request) }
    // Cancel once the server has seen the request, so the transfer is running.
    while server.requestCount(path: "/fault/slow-headers") == 0 { try await Task.sleep(for: .milliseconds(10)) }
    task.cancel()
    let error = await task.value
    #expect(error?.kind == .cancelled)
  }

  @Test(arguments: TransportKind.allCases)
  func test_manyConcurrentRequests_allComplete(_ kind: TransportKind) async throws {
    let server = try TestServer(routes: [
      "/n": Route { request in .text("n=\(request.query("i") ?? "")") }
    ])
    defer { server.stop() }
    let transport = kind.make()
    let bodies = try await withThrowingTaskGroup(of: String.self) { group in
      for i in 0..<40 {
        group.addTask { try await transport.fetch(Request(url: server.webURL("/n?i=\(i)"))).text }
      }
      return try await group.reduce(into: Set<String>()) { $0.insert($1) }
    }
    #expect(bodies == Set((0..<40).map { "n=\($0)" }))
  }

  @Test(arguments: TransportKind.allCases)
  func test_bodyLimit_truncateModeKeepsThePrefix(_ kind: TransportKind) async throws {
    let server = try TestServer(routes: ["/big": Route { _ in .text(String(repeating: "x", count: 5000)) }])
    defer { server.stop() }
    var limits = quickLimits(maxBodySize: 1000)
    limits.truncateBody = true
    let response = try await kind.make().fetch(Request(url: server.webURL("/big"), limits: limits))
    #expect(response.body.count == 1000)
  }

  /// With `markupBodiesOnly`, a success that is not markup comes back with
  /// its head and no body, and the transfer stops there; markup, a body with
  /// no Content-Type, and a failure's body are read as usual.
  @Test(arguments: TransportKind.allCases)
  func test_markupBodiesOnly_skipsTheBodyOfAnArchive(_ kind: TransportKind) async throws {
    let archive = [UInt8](repeating: 0x50, count: 8 << 20)
    let server = try TestServer(routes: [
      "/file": Route { _ in TestResponse(headers: [("Content-Type", "application/zip")], body: archive) },
      "/missing": Route { _ in TestResponse(status: 404, headers: [("Content-Type", "image/png")], body: Array("gone".utf8)) },
      "/page": Route { _ in .html("<p>page</p>") },
      "/untyped": Route { _ in TestResponse(body: Array("<p>sniff me</p>".utf8)) },
    ])
    defer { server.stop() }
    var limits = quickLimits(maxBodySize: 16 << 20)
    limits.markupBodiesOnly = true
    let transport = kind.make()
    let file = try await transport.fetch(Request(url: server.webURL("/file"), limits: limits))
    #expect(file.status == 200 && file.body.isEmpty && file.bodySkipped)
    #expect(file.headers["Content-Type"] == "application/zip")
    #expect(file.bytesReceived < 1 << 20, "\(file.bytesReceived) bytes received")
    let missing = try await transport.fetch(Request(url: server.webURL("/missing"), limits: limits))
    #expect(missing.status == 404 && missing.text == "gone" && !missing.bodySkipped)
    let page = try await transport.fetch(Request(url: server.webURL("/page"), limits: limits))
    #expect(page.text == "<p>page</p>" && !page.bodySkipped)
    let untyped = try await transport.fetch(Request(url: server.webURL("/untyped"), limits: limits))
    #expect(untyped.text == "<p>sniff me</p>")
    // Without the setting the archive is read whole.
    let whole = try await transport.fetch(Request(url: server.webURL("/file"), limits: quickLimits(maxBodySize: 16 << 20)))
    #expect(whole.body.count == archive.count && !whole.bodySkipped)
  }

  @Test func test_contentType_isMarkup_withoutRegardToCase() {
    for markup in ["text/html", "Text/HTML; charset=UTF-8", "application/xhtml+xml", "text/xml", "application/RSS+XML"] {
      #expect(ContentType.isMarkup(markup), "\(markup)")
    }
    for other in ["image/png", "application/json", "application/pdf", "text/plai", "htm", "", "application/zip"] {
      #expect(!ContentType.isMarkup(other), "\(other)")
    }
  }
}

#if canImport(CCurl)
@Suite struct CurlTransportTests {
  @Test func test_repeatedHeaderFields_keptInOrder() async throws {
    let server = try TestServer(routes: [
      "/c": Route { _ in .text("c", headers: [("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")]) }
    ])
    defer { server.stop() }
    let response = try await CurlTransport().fetch(Request(url: server.webURL("/c")))
    #expect(response.headers.values(for: "set-cookie") == ["a=1", "b=2"])
    #expect(response.httpVersion == "1.1")
  }

  @Test func test_tasksPreferringTheLoopExecutor_fetchAndCancel() async throws {
    let server = try TestServer(routes: ["/n": Route { request in .text(request.query("i") ?? "") }])
    defer { server.stop() }
    let transport = CurlTransport(threads: 2)
    let bodies = await withTaskGroup(of: String.self) { group in
      for i in 0..<20 {
        group.addTask(executorPreference: transport.taskExecutors[i % 2]) {
          var last = ""
          for j in 0..<5 {
            last = (try? await transport.fetch(Request(url: server.webURL("/n?i=\(i)-\(j)"))).text) ?? "failed"
          }
          return last
        }
      }
      return await group.reduce(into: Set<String>()) { $0.insert($1) }
    }
    #expect(bodies == Set((0..<20).map { "\($0)-4" }))
    // Cancellation works the same on the loop thread.
    let slow = Request(url: server.webURL("/fault/slow-headers?seconds=30"), limits: quickLimits(timeout: .seconds(30)))
    let task = Task(executorPreference: transport.taskExecutor) { await fetchError(transport, slow) }
    while server.requestCount(path: "/fault/slow-headers") == 0 { try await Task.sleep(for: .milliseconds(10)) }
    task.cancel()
    #expect(await task.value?.kind == .cancelled)
  }
}
#endif
