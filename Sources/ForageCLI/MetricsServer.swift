import Dispatch
import Foundation
import ForageSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `--metrics` listens: a numeric IPv4 or IPv6 address and a port.
/// `9464` alone and `localhost:9464` mean the loopback address; any other
/// address is used only because the user named it.
struct MetricsAddress: Sendable, Hashable, CustomStringConvertible {
  /// The numeric address (`127.0.0.1`, `::1`, `0.0.0.0`).
  var host: String
  var port: UInt16
  var isIPv6: Bool { host.contains(":") }

  /// Parses `[HOST:]PORT` (`[V6]:PORT` for IPv6).
  init(parsing text: String) throws(UsageError) {
    let usage = "--metrics expects an address and port such as 127.0.0.1:9464 (or [::1]:9464), not \"\(text)\""
    var host = "127.0.0.1", portText = text
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
        throw UsageError(usage)
      }
      host = String(text[text.index(after: text.startIndex)..<close])
      portText = String(text[text.index(close, offsetBy: 2)...])
    } else if let colon = text.lastIndex(of: ":") {
      host = String(text[..<colon])
      portText = String(text[text.index(after: colon)...])
      if host.isEmpty || host == "localhost" { host = "127.0.0.1" }
    }
    guard let port = UInt16(portText) else { throw UsageError(usage) }
    var v4 = in_addr(), v6 = in6_addr()
    let numeric = host.contains(":") ? inet_pton(AF_INET6, host, &v6) == 1 : inet_pton(AF_INET, host, &v4) == 1
    guard numeric else {
      throw UsageError("--metrics needs a numeric address (127.0.0.1, ::1, 0.0.0.0), not the name \"\(host)\"")
    }
    self.host = host
    self.port = port
  }

  var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A page the metrics server answers with.
struct MetricsResponse: Sendable {
  var status: Int
  var contentType = "text/plain; charset=utf-8"
  var body: String
}

/// Why the metrics server could not listen, for a person.
struct MetricsServerError: Error, CustomStringConvertible {
  var address: MetricsAddress
  var call: String
  var code: Int32

  var description: String {
    let why: String
    switch code {
    case EADDRINUSE: why = "another program listens on that port"
    case EADDRNOTAVAIL: why = "this machine has no such address"
    case EACCES, EPERM: why = "this user may not listen on that port"
    default: why = "the system refused (\(String(cString: strerror(code)).lowercased()))"
    }
    return "cannot serve metrics on \(address): \(why)"
  }
}

/// A small HTTP/1.1 server for `/metrics` and `/healthz`: one thread
/// accepts; each connection is answered on a dispatch thread, at most
/// ``MetricsServer/maxConnections`` at once (more are closed at once). A
/// client gets ``requestTimeout`` to send a request of at most
/// ``maxRequestBytes`` (its head; a body is never read) and is then closed:
/// slow or huge requests cost a bounded thread for a bounded time. Only
/// `GET` and `HEAD` are answered; every reply closes the connection.
final class MetricsServer: Sendable {
  static let maxConnections = 8
  static let maxRequestBytes = 8192
  static let requestTimeout: Duration = .seconds(5)

  /// The port it listens on (the one asked for, or the system's pick for 0).
  let port: UInt16
  let address: MetricsAddress
  private let fd: Int32
  private let handler: @Sendable (String) -> MetricsResponse
  private let active = Locked(0)
  private let stopped = Locked(false)

  #if os(Linux)
  private static let streamType = Int32(SOCK_STREAM.rawValue)
  private static let noSignal = Int32(MSG_NOSIGNAL)
  #else
  private static let streamType = SOCK_STREAM
  private static let noSignal: Int32 = 0
  #endif

  /// Listens on `address`; `handler` answers a request's path (without its query).
  init(address: MetricsAddress, handler: @escaping @Sendable (String) -> MetricsResponse) throws(MetricsServerError) {
    self.address = address
    self.handler = handler
    let family = address.isIPv6 ? AF_INET6 : AF_INET
    let fd = socket(family, MetricsServer.streamType, 0)
    guard fd >= 0 else { throw MetricsServerError(address: address, call: "socket", code: errno) }
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    var yes: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var storage = sockaddr_storage()
    let length: Int
    if address.isIPv6 {
      var a = sockaddr_in6()
      a.sin6_family = sa_family_t(AF_INET6)
      a.sin6_port = address.port.bigEndian
      _ = inet_pton(AF_INET6, address.host, &a.sin6_addr)
      length = MemoryLayout<sockaddr_in6>.size
      withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
    } else {
      var a = sockaddr_in()
      a.sin_family = sa_family_t(AF_INET)
      a.sin_port = address.port.bigEndian
      _ = inet_pton(AF_INET, address.host, &a.sin_addr)
      length = MemoryLayout<sockaddr_in>.size
      withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
    }
    let bound = withUnsafePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) }
    }
    guard bound == 0, listen(fd, 16) == 0 else {
      let code = errno
      close(fd)
      throw MetricsServerError(address: address, call: bound == 0 ? "listen" : "bind", code: code)
    }
    var named = sockaddr_storage()
    var namedLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &named) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &namedLength) }
    }
    let port: UInt16 = withUnsafeBytes(of: named) { raw in
      address.isIPv6
        ? UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
        : UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
    }
    self.port = port
    self.fd = fd
  }

  /// Starts accepting on a thread of its own.
  func start() {
    let thread = Thread { [self] in acceptLoop() }
    thread.name = "forage-metrics"
    thread.start()
  }

  /// Stops accepting (within half a second) and closes the listener.
  func stop() {
    stopped.withLock { $0 = true }
  }

  private func acceptLoop() {
    var blocked = sigset_t()
    sigemptyset(&blocked)
    sigaddset(&blocked, SIGPIPE)
    pthread_sigmask(SIG_BLOCK, &blocked, nil)
    while !stopped.withLock({ $0 }) {
      var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&p, 1, 500) > 0 else { continue }
      let client = accept(fd, nil, nil)
      guard client >= 0 else { continue }
      _ = fcntl(client, F_SETFD, FD_CLOEXEC)
      let admitted = active.withLock { n -> Bool in
        guard n < MetricsServer.maxConnections else { return false }
        n += 1
        return true
      }
      guard admitted else {
        close(client)
        continue
      }
      DispatchQueue.global().async { [self] in
        serve(client)
        close(client)
        active.withLock { $0 -= 1 }
      }
    }
    close(fd)
  }

  /// Reads one request head (bounded in size and time) and answers it.
  private func serve(_ client: Int32) {
    var timeout = timeval(tv_sec: 1, tv_usec: 0)
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var sendTimeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
    #if canImport(Darwin)
    var yes: Int32 = 1
    setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
    #endif
    let deadline = ContinuousClock.now + MetricsServer.requestTimeout
    var head: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 2048)
    let end: [UInt8] = Array("\r\n\r\n".utf8)
    while true {
      if head.count >= 4, MetricsServer.contains(head, end) { break }
      if head.count > MetricsServer.maxRequestBytes {
        return reply(client, MetricsResponse(status: 431, body: "request head too large\n"), head: false)
      }
      if ContinuousClock.now >= deadline {
        return reply(client, MetricsResponse(status: 408, body: "request timed out\n"), head: false)
      }
      let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
      if n > 0 {
        head += buffer[0..<n]
      } else if n == 0 {
        return  // the client closed
      } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
        return
      }
    }
    guard let lineEnd = head.firstIndex(of: UInt8(ascii: "\r")) else { return }
    let parts = String(decoding: head[..<lineEnd], as: UTF8.self).split(separator: " ")
    guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
      return reply(client, MetricsResponse(status: 400, body: "not an HTTP/1 request\n"), head: false)
    }
    let method = parts[0]
    guard method == "GET" || method == "HEAD" else {
      return reply(client, MetricsResponse(status: 405, body: "only GET and HEAD are answered\n"), head: false)
    }
    let path = String(parts[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
    reply(client, handler(path), head: method == "HEAD")
  }

  private func reply(_ client: Int32, _ response: MetricsResponse, head: Bool) {
    let reasons = [
      200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
      431: "Request Header Fields Too Large", 500: "Internal Server Error", 503: "Service Unavailable",
    ]
    let body = Array(response.body.utf8)
    var text = "HTTP/1.1 \(response.status) \(reasons[response.status] ?? "Status")\r\n"
    text += "Content-Type: \(response.contentType)\r\nContent-Length: \(body.count)\r\n"
    if response.status == 405 { text += "Allow: GET, HEAD\r\n" }
    text += "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
    var bytes = Array(text.utf8)
    if !head { bytes += body }
    var sent = 0
    while sent < bytes.count {
      let n = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, MetricsServer.noSignal) }
      if n > 0 {
        sent += n
      } else if n < 0 && errno == EINTR {
        continue
      } else {
        return
      }
    }
  }

  static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
    guard bytes.count >= needle.count else { return false }
    for i in 0...(bytes.count - needle.count) where bytes[i] == needle[0] {
      if Array(bytes[i..<(i + needle.count)]) == needle { return true }
    }
    return false
  }
}
