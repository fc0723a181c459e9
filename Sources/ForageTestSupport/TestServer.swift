#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
import ForageSupport
import Foundation

/// A loopback HTTP/1.1 server (127.0.0.1, ephemeral port) for tests, demos and benchmarks.
///
/// It answers, in this order: your `routes`, the built-in `/fault/…` routes that
/// misbehave on purpose (see ``Fault``), the generated `site`, then files under
/// `directory`; anything else is 404.
///
///     let server = try TestServer(routes: ["/hello": Route { _ in .text("hello") }])
///     defer { server.stop() }
///     let url = server.url("/hello")          // "http://127.0.0.1:PORT/hello"
///     // … fetch it …
///     #expect(server.requests.last?.method == "GET")
///
/// It keeps connections alive, supports `HEAD`, `Content-Length` request bodies and
/// pipelining, answers 400 to garbage and 431 to header sections over 64 KiB. Each
/// connection gets its own thread; `stop()` (or dropping the server) closes the listener
/// and every connection and wakes every waiting fault.
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9112>
public final class TestServer: Sendable {
  let core: ServerCore

  /// Starts listening on 127.0.0.1.
  ///
  /// - Parameters:
  ///   - routes: handlers by path (without the query); a key ending in `*` is a prefix.
  ///   - directory: a folder to serve files from (index.html for folders, ETag and
  ///     Last-Modified with 304s, `..` refused).
  ///   - site: a generated site to serve from memory.
  ///   - port: 0 for an ephemeral port.
  /// - Throws: ``TestServerError`` when the socket cannot be set up (for example the port
  ///   is taken).
  public init(routes: [String: Route] = [:], directory: String? = nil, site: DemoSite? = nil,
              port: UInt16 = 0) throws {
    core = try ServerCore(routes: routes, directory: directory, site: site, port: port)
    core.start()
  }

  deinit { core.stop() }

  /// The port the server listens on.
  public var port: UInt16 { core.port }

  /// `http://127.0.0.1:PORT`, without a trailing slash.
  public var baseURL: String { core.baseURL }

  /// The absolute URL of a path on this server: `url("/a?b=1")` is
  /// `http://127.0.0.1:PORT/a?b=1`. A path without a leading slash gets one.
  public func url(_ path: String) -> String {
    path.hasPrefix("/") ? core.baseURL + path : core.baseURL + "/" + path
  }

  /// The requests received so far, oldest first (a copy; at most the last 100,000).
  public var requests: [RecordedRequest] { core.state.withLock { $0.requests } }

  /// How many requests were received (all of them, even past the log's cap).
  public var requestCount: Int { core.state.withLock { $0.requestCount } }

  /// How many requests were received for `path` (the target without its query).
  public func requestCount(path: String) -> Int {
    core.state.withLock { $0.requests.filter { $0.path == path }.count }
  }

  /// Forgets the recorded requests (the count and the most at once too).
  public func clearRequests() {
    core.state.withLock {
      $0.requests.removeAll()
      $0.requestCount = 0
      $0.maxInFlight = $0.inFlight
    }
  }

  /// The most requests the server was answering at once since it started (or
  /// since ``clearRequests()``): what a client's per-host concurrency limit bounds.
  public var maxConcurrentRequests: Int { core.state.withLock { $0.maxInFlight } }

  /// Makes every answer wait `latency` first, as a slow site would, so that a
  /// client's overlapping requests overlap on the server too.
  public func setLatency(_ latency: Duration) {
    core.state.withLock { $0.latency = latency }
  }

  /// Closes the listener and every open connection, and wakes every waiting fault.
  /// Idempotent; also done when the server is released. When it returns, new
  /// connections are refused.
  public func stop() { core.stop() }

  /// Returns once ``stop()`` was called (from another task or thread); for commands such
  /// as `forage demo` that serve until interrupted.
  ///
  ///     let server = try TestServer(site: DemoSite())
  ///     print("serving \(server.baseURL)")
  ///     await server.waitUntilStopped()
  public func waitUntilStopped() async {
    while !core.isStopped {
      try? await Task.sleep(nanoseconds: 100_000_000)
    }
  }
}

/// What to do with a connection after a response.
enum ConnectionFate {
  /// Read the next request.
  case keepAlive
  /// Close after what was sent (FIN).
  case close
  /// Close now, as the fault arranged (a reset, or nothing sent).
  case abort
}

/// The server's shared state and behaviour; connection threads hold it, so it outlives
/// the `TestServer` until they finish.
final class ServerCore: Sendable {
  struct State {
    var stopped = false
    var connections: Set<Int32> = []
    var requests: [RecordedRequest] = []
    var requestCount = 0
    /// Requests received and not yet being answered (during the latency), and
    /// the most there ever were at once.
    var inFlight = 0
    var maxInFlight = 0
    /// Added before every answer (a slow site), so that overlapping requests show.
    var latency: Duration = .zero
  }

  static let requestLogCap = 100_000

  let listenFD: Int32
  let port: UInt16
  let baseURL: String
  /// A pipe whose read end turns readable, for good, when the server stops.
  let wakeRead: Int32
  let wakeWrite: Int32
  let exactRoutes: [String: Route]
  /// Prefix routes, longest prefix first.
  let prefixRoutes: [(prefix: String, route: Route)]
  let directory: StaticDirectory?
  let site: DemoSite?
  let state = Locked(State())
  let acceptFinished = DispatchSemaphore(value: 0)

  init(routes: [String: Route], directory: String?, site: DemoSite?, port requestedPort: UInt16) throws {
    var exact: [String: Route] = [:]
    var prefixes: [(String, Route)] = []
    for (key, route) in routes {
      if key.hasSuffix("*") { prefixes.append((String(key.dropLast()), route)) } else { exact[key] = route }
    }
    exactRoutes = exact
    prefixRoutes = prefixes.sorted { $0.0.count > $1.0.count }
    self.directory = directory.map(StaticDirectory.init(root:))
    self.site = site
    var pipeFDs: [Int32] = [0, 0]
    guard pipe(&pipeFDs) == 0 else { throw TestServerError(.socket, call: "pipe", errno: errno) }
    wakeRead = pipeFDs[0]
    wakeWrite = pipeFDs[1]
    do {
      (listenFD, port) = try Socket.openListener(port: requestedPort)
    } catch {
      close(pipeFDs[0])
      close(pipeFDs[1])
      throw error
    }
    baseURL = "http://127.0.0.1:\(port)"
  }

  deinit {
    close(wakeRead)
    close(wakeWrite)
  }

  var isStopped: Bool { state.withLock { $0.stopped } }

  func start() {
    Thread.detachNewThread { [self] in acceptLoop() }
  }

  func stop() {
    let first = state.withLock { state -> Bool in
      guard !state.stopped else { return false }
      state.stopped = true
      // Shutting down (not closing) wakes threads blocked on these sockets without
      // letting the descriptor numbers be reused under them; each thread closes its own.
      for fd in state.connections { shutdown(fd, Int32(SHUT_RDWR)) }
      return true
    }
    guard first else { return }
    var byte: UInt8 = 1
    _ = write(wakeWrite, &byte, 1)
    acceptFinished.wait()
  }

  private func acceptLoop() {
    defer {
      close(listenFD)
      acceptFinished.signal()
    }
    while true {
      guard let events = Socket.pollInput([listenFD, wakeRead], timeoutMilliseconds: -1) else { continue }
      if events[1] != 0 { return }
      guard events[0] != 0 else { continue }
      guard let client = Socket.acceptConnection(listenFD) else {
        usleep(1000)  // out of descriptors or similar: do not spin
        continue
      }
      let admitted = state.withLock { state -> Bool in
        guard !state.stopped else { return false }
        state.connections.insert(client)
        return true
      }
      guard admitted else {
        close(client)
        return
      }
      Thread.detachNewThread { [self] in serve(client) }
    }
  }

  private func serve(_ fd: Int32) {
    var fate = ConnectionFate.close
    defer {
      state.withLock { _ = $0.connections.remove(fd) }
      if fate == .close { shutdown(fd, Int32(SHUT_WR)) }
      close(fd)
    }
    var parser = HTTPRequestParser()
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      switch parser.next() {
      case .request(let parsed):
        let request = parsed.recorded
        record(request)
        let latency = state.withLock { state in
          state.inFlight += 1
          state.maxInFlight = max(state.maxInFlight, state.inFlight)
          return state.latency
        }
        if latency > .zero { Thread.sleep(forTimeInterval: Double(latency.components.seconds) + Double(latency.components.attoseconds) / 1e18) }
        // Counted out before the answer goes: a client that has its answer can
        // never see its next request counted beside this one.
        state.withLock { $0.inFlight -= 1 }
        fate = respond(to: request, on: fd)
        guard fate == .keepAlive else { return }
      case .needMore:
        let n = Socket.receive(fd, into: &buffer)
        guard n > 0 else {
          fate = .abort
          return
        }
        parser.append(buffer[0..<n])
      case .failure(let status, let reason):
        let response = TestResponse.text("\(reason)\n", status: status)
        _ = sendResponse(response, head: false, close: true, on: fd)
        drainBeforeClose(fd)
        fate = .close
        return
      }
    }
  }

  private func record(_ request: RecordedRequest) {
    state.withLock { state in
      state.requestCount += 1
      if state.requests.count >= ServerCore.requestLogCap { state.requests.removeFirst(state.requests.count / 10) }
      state.requests.append(request)
    }
  }

  /// Picks the handler for a request and runs it.
  func respond(to request: RecordedRequest, on fd: Int32) -> ConnectionFate {
    let path = request.path
    if let route = exactRoutes[path] ?? prefixRoutes.first(where: { path.hasPrefix($0.prefix) })?.route {
      switch route.action {
      case .respond(let handler): return send(handler(request), for: request, on: fd)
      case .fault(let fault): return perform(fault, for: request, on: fd)
      case .choose(let choose):
        switch choose(request) {
        case .response(let response): return send(response, for: request, on: fd)
        case .fault(let fault): return perform(fault, for: request, on: fd)
        }
      }
    }
    if path == "/fault" || path == "/fault/" { return send(Fault.indexPage, for: request, on: fd) }
    if let builtIn = Fault.builtIns.first(where: { $0.path == path }) {
      return perform(builtIn.make(request), for: request, on: fd)
    }
    if let site, let response = site.response(for: request.target, origin: baseURL) {
      return send(response, for: request, on: fd)
    }
    if let directory {
      return send(directory.response(for: request), for: request, on: fd)
    }
    return send(.notFound(path), for: request, on: fd)
  }

  /// Sends a response, keeping the connection unless the client or response asks to close.
  func send(_ response: TestResponse, for request: RecordedRequest, on fd: Int32) -> ConnectionFate {
    let close = request.wantsClose || response.header("connection")?.lowercased() == "close"
    guard sendResponse(response, head: request.method == "HEAD", close: close, on: fd) else { return .close }
    return close ? .close : .keepAlive
  }

  /// Serialises and sends a response in one write. False if the client is gone.
  func sendResponse(_ response: TestResponse, head: Bool, close: Bool, on fd: Int32) -> Bool {
    let status = response.status
    let bodyless = head || status == 204 || status == 304 || (100..<200).contains(status)
    var text = "HTTP/1.1 \(status) \(TestResponse.reasonPhrase(for: status))\r\n"
    for field in response.fields { text += "\(field.name): \(field.value)\r\n" }
    let framed = response.header("content-length") != nil || response.header("transfer-encoding") != nil
    if !framed && status != 204 && status != 304 && !(100..<200).contains(status) {
      text += "Content-Length: \(response.body.count)\r\n"
    }
    if close && response.header("connection") == nil { text += "Connection: close\r\n" }
    text += "\r\n"
    var bytes = Array(text.utf8)
    if !bodyless { bytes += response.body }
    return Socket.sendAll(fd, bytes)
  }

  /// After an error answer, reads what the client still sends (up to 16 MiB or 2 s) so
  /// closing does not reset the connection before the client reads the answer.
  private func drainBeforeClose(_ fd: Int32) {
    shutdown(fd, Int32(SHUT_WR))
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    var total = 0
    let deadline = ContinuousClock.now + .seconds(2)
    while total < 16 << 20 && ContinuousClock.now < deadline {
      guard let events = Socket.pollInput([fd, wakeRead], timeoutMilliseconds: 100) else { continue }
      if events[1] != 0 { return }
      let n = Socket.receive(fd, into: &buffer)
      if n <= 0 { return }
      total += n
    }
  }

  /// Waits up to `seconds`; false as soon as the server stops or the client disconnects.
  func pause(_ seconds: Double, on fd: Int32) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(max(0, seconds) * 1000))
    var watchPeer = true
    while true {
      let now = ContinuousClock.now
      guard now < deadline else { return true }
      let left = deadline - now
      let milliseconds = max(1, min(1000, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
      let fds = watchPeer ? [wakeRead, fd] : [wakeRead]
      guard let events = Socket.pollInput(fds, timeoutMilliseconds: milliseconds) else { continue }
      if events[0] != 0 { return false }
      if watchPeer && events[1] != 0 {
        if events[1] & Int16(POLLHUP | POLLERR) != 0 || Socket.peerClosed(fd) { return false }
        watchPeer = false  // the client sent more (pipelining): stop watching, keep waiting
      }
    }
  }
}
