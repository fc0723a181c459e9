#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif
import Foundation
import Testing

#if os(Linux)
  private let streamType = Int32(SOCK_STREAM.rawValue)
  private let noSignal = Int32(MSG_NOSIGNAL)
#else
  private let streamType = SOCK_STREAM
  private let noSignal: Int32 = 0
#endif

private func systemSend(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
  send(fd, bytes.baseAddress, bytes.count, noSignal)
}

/// A tiny blocking HTTP client over a raw socket, so tests see the exact bytes.
/// Reads time out after 20 s so a broken server fails a test instead of hanging it.
final class RawClient {
  let fd: Int32
  /// Bytes read but not yet consumed by `readResponse`.
  var pending: [UInt8] = []
  /// The errno of the last failed read, if any.
  var lastError: Int32?

  init(port: UInt16) throws {
    fd = socket(AF_INET, streamType, 0)
    guard fd >= 0 else { throw ClientError(message: "socket failed") }
    var timeout = timeval(tv_sec: 20, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let rc = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard rc == 0 else {
      let code = errno
      close(fd)
      throw ClientError(message: "connect failed, errno \(code)")
    }
  }

  deinit { close(fd) }

  struct ClientError: Error { var message: String }

  func send(_ text: String) { send(Array(text.utf8)) }

  func send(_ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let n = bytes[offset...].withUnsafeBytes { systemSend(fd, $0) }
      guard n > 0 else { return }
      offset += n
    }
  }

  /// A GET (or other method) request line with Host and extra header lines.
  func request(_ target: String, method: String = "GET", headers: [String] = []) {
    var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    for line in headers { text += line + "\r\n" }
    send(text + "\r\n")
  }

  /// One `recv`: the bytes, or empty at end of stream or on error (see `lastError`).
  func readSome(max: Int = 65_536) -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: max)
    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    if n < 0 { lastError = errno }
    return n > 0 ? Array(buffer[0..<n]) : []
  }

  /// Reads until the peer closes, an error, or `limit` bytes.
  func readToEnd(limit: Int = 64 << 20) -> [UInt8] {
    var all = pending
    pending = []
    while all.count < limit {
      let chunk = readSome()
      if chunk.isEmpty { break }
      all += chunk
    }
    return all
  }

  /// True when the server closed the connection (reads end of stream with no bytes).
  func isClosedByPeer() -> Bool {
    pending.isEmpty && readSome().isEmpty && lastError == nil
  }

  struct Response {
    var statusLine: String
    var headers: [(String, String)]
    var body: [UInt8]
    /// The raw header section, status line included.
    var headText: String

    var status: Int { Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? -1 }
    var bodyText: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? {
      headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
  }

  /// Reads the header section only; the rest stays in `pending`.
  func readHead() -> Response? {
    while true {
      if let end = findEmptyLine(pending) {
        let headText = String(decoding: pending[0..<end], as: UTF8.self)
        pending.removeFirst(end + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let headers = lines.map { line -> (String, String) in
          let parts = line.split(separator: ":", maxSplits: 1)
          return (String(parts[0]), parts.count > 1 ? String(parts[1]).trimmingCharacters(in: .whitespaces) : "")
        }
        return Response(statusLine: statusLine, headers: headers, body: [], headText: headText)
      }
      let chunk = readSome()
      if chunk.isEmpty { return nil }
      pending += chunk
    }
  }

  /// Reads one whole response, framed by Content-Length, chunked coding, or the close.
  func readResponse(head isHead: Bool = false) -> Response? {
    guard var response = readHead() else { return nil }
    if isHead || response.status == 304 || response.status == 204 { return response }
    if let length = response.header("content-length").flatMap({ Int($0) }) {
      while pending.count < length {
        let chunk = readSome()
        if chunk.isEmpty { break }
        pending += chunk
      }
      let take = min(length, pending.count)
      response.body = Array(pending[0..<take])
      pending.removeFirst(take)
    } else if response.header("transfer-encoding")?.lowercased() == "chunked" {
      response.body = readChunked() ?? []
    } else {
      response.body = readToEnd()
    }
    return response
  }

  private func readChunked() -> [UInt8]? {
    var body: [UInt8] = []
    while true {
      guard let line = readLine(), let size = Int(line, radix: 16) else { return nil }
      if size == 0 {
        _ = readLine()
        return body
      }
      while pending.count < size + 2 {
        let chunk = readSome()
        if chunk.isEmpty { return nil }
        pending += chunk
      }
      body += pending[0..<size]
      pending.removeFirst(size + 2)
    }
  }

  private func readLine() -> String? {
    while true {
      if let i = pending.firstIndex(of: 0x0A) {
        let line = String(decoding: pending[0..<i], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        pending.removeFirst(i + 1)
        return line
      }
      let chunk = readSome()
      if chunk.isEmpty { return nil }
      pending += chunk
    }
  }

  private func findEmptyLine(_ bytes: [UInt8]) -> Int? {
    guard bytes.count >= 4 else { return nil }
    for i in 0...(bytes.count - 4)
    where bytes[i] == 0x0D && bytes[i + 1] == 0x0A && bytes[i + 2] == 0x0D && bytes[i + 3] == 0x0A {
      return i
    }
    return nil
  }
}

/// Sends one request on a fresh connection and reads the response.
func fetch(_ port: UInt16, _ target: String, method: String = "GET", headers: [String] = []) throws -> RawClient.Response {
  let client = try RawClient(port: port)
  client.request(target, method: method, headers: headers)
  return try #require(client.readResponse(head: method == "HEAD"))
}

/// Runs a shell command; its standard output, or nil when the shell is missing.
func shell(_ command: String, input: [UInt8] = []) -> (output: String, status: Int32)? {
  guard FileManager.default.isExecutableFile(atPath: "/bin/sh") else { return nil }
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/bin/sh")
  process.arguments = ["-c", command]
  let stdin = Pipe()
  let stdout = Pipe()
  process.standardInput = stdin
  process.standardOutput = stdout
  do { try process.run() } catch { return nil }
  let writer = Thread {
    stdin.fileHandleForWriting.write(Data(input))
    try? stdin.fileHandleForWriting.close()
  }
  writer.start()
  let data = stdout.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (String(decoding: data, as: UTF8.self), process.terminationStatus)
}

let gzipAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/gzip")
  || FileManager.default.isExecutableFile(atPath: "/bin/gzip")

/// Waits (up to 20 s) until `condition` holds; returns whether it did.
func eventually(_ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(20)
  while Date() < deadline {
    if condition() { return true }
    usleep(20_000)
  }
  return condition()
}
