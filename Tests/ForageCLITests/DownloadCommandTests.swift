#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ForageStore
import ForageTestSupport
import Testing

/// A loopback server for one file, `block` repeated up to `size` bytes, that can drip
/// its first answer and counts every body byte it really sends (TestServer's routes
/// answer in one write, so they cannot show how much of a body a killed client
/// received). It honours `Range: bytes=N-` with `If-Range` against its ETag, and
/// sends resumed answers at full speed.
final class DrippingFileServer: Sendable {
  let block: [UInt8]
  let size: Int
  let etag = "\"drip-1\""
  let port: UInt16
  private let listener: Int32
  /// Body bytes sent (accepted by the kernel) over all answers.
  let sent = Guarded(0)
  let requests = Guarded<[String]>([])
  /// Bytes per send of a dripped answer; nil: no drip.
  private let chunk: Int?
  private let pause: useconds_t
  /// The first answer slows to a trickle after this many body bytes (2 KiB a second:
  /// just above the client's low-speed limit), until the client goes away: a
  /// download that cannot finish before it is killed, however slow the test is.
  private let stallAfter: Int?
  /// Called on the connection's thread before the last byte of an answer is sent.
  private let beforeLastByte: (@Sendable () -> Void)?

  init(
    block: [UInt8], size: Int? = nil, chunk: Int?, pauseMicroseconds: useconds_t = 0, stallAfter: Int? = nil,
    beforeLastByte: (@Sendable () -> Void)? = nil
  ) throws {
    self.block = block
    self.size = size ?? block.count
    self.chunk = chunk
    self.stallAfter = stallAfter
    self.beforeLastByte = beforeLastByte
    self.pause = pauseMicroseconds
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var yes: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, listen(fd, 16) == 0 else {
      close(fd)
      throw POSIXError(.EADDRINUSE)
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    listener = fd
    port = UInt16(bigEndian: address.sin_port)
    Thread.detachNewThread { [self] in acceptLoop() }
  }

  var url: String { "http://127.0.0.1:\(port)/episode.mp3" }

  func stop() {
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
  }

  private func acceptLoop() {
    while true {
      let client = accept(listener, nil, nil)
      if client < 0 { return }
      Thread.detachNewThread { [self] in serve(client) }
    }
  }

  private func serve(_ fd: Int32) {
    defer { close(fd) }
    var head: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while !head.ends(with: Array("\r\n\r\n".utf8)) {
      let n = recv(fd, &buffer, buffer.count, 0)
      if n <= 0 { return }
      head += buffer[0..<n]
      if head.count > 65536 { return }
    }
    let text = String(decoding: head, as: UTF8.self)
    requests.withLock { $0.append(text) }
    var range: Int?
    var ifRange: String?
    for line in text.split(separator: "\r\n") {
      let lower = line.lowercased()
      if lower.hasPrefix("range: bytes="), lower.hasSuffix("-") { range = Int(lower.dropFirst(13).dropLast()) }
      if lower.hasPrefix("if-range:") { ifRange = line.dropFirst(9).trimmingCharacters(in: .whitespaces) }
    }
    var start = 0
    var response = "HTTP/1.1 200 OK\r\n"
    if let range, ifRange == nil || ifRange == etag, range < size {
      start = range
      response = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes \(range)-\(size - 1)/\(size)\r\n"
    }
    response += "ETag: \(etag)\r\nContent-Type: audio/mpeg\r\nContent-Length: \(size - start)\r\nConnection: close\r\n\r\n"
    guard sendAll(fd, Array(response.utf8)[...]) else { return }
    var offset = start
    let drip = start == 0 ? chunk : nil
    while offset < size {
      let stalled = start == 0 && stallAfter.map { offset >= $0 } == true
      if stalled { sleep(1) }
      if offset == size - 1 { beforeLastByte?() }
      let inBlock = offset % block.count
      var end = min(size, offset + (drip ?? (1 << 20)), offset + block.count - inBlock)
      if beforeLastByte != nil, offset < size - 1 { end = min(end, size - 1) }
      if start == 0, let stallAfter { end = stalled ? min(end, offset + 2048) : min(end, stallAfter) }
      guard sendAll(fd, block[inBlock..<(inBlock + end - offset)]) else { return }
      sent.withLock { $0 += end - offset }
      offset = end
      if drip != nil, !stalled { usleep(pause) }
    }
  }

  private func sendAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
    var rest = bytes
    while !rest.isEmpty {
      let n = rest.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      if n <= 0 { return false }
      rest = rest.dropFirst(n)
    }
    return true
  }
}

/// A value behind a lock (this target does not see ForageSupport's `Locked`).
final class Guarded<Value>: @unchecked Sendable {
  private var value: Value
  private let lock = NSLock()
  init(_ value: Value) { self.value = value }
  func withLock<T>(_ body: (inout Value) -> T) -> T {
    lock.lock()
    defer { lock.unlock() }
    return body(&value)
  }
}

extension Array where Element == UInt8 {
  func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}

/// The peak resident size (`VmHWM`) of the running process `pid`, in bytes; 0 when
/// it cannot be read.
func peakResidentBytes(of pid: Int32) -> Int {
  guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
    let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
  else { return 0 }
  let kiB = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
  return kiB * 1024
}

/// The SHA-256 of `bytes` as hex, by `sha256sum` (coreutils).
func hexDigest(_ bytes: [UInt8]) throws -> String {
  let path = NSTemporaryDirectory() + "forage-digest-" + UUID().uuidString
  try Data(bytes).write(to: URL(fileURLWithPath: path))
  defer { unlink(path) }
  let p = Process()
  p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  p.arguments = ["sha256sum", path]
  let out = Pipe()
  p.standardOutput = out
  try p.run()
  let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  p.waitUntilExit()
  return String(text.prefix(64))
}

@Suite struct DownloadCommandTests {
  /// The check: kill `forage download` mid-file, run it again, and the file
  /// lands whole while the server sent little more than the file once.
  @Test func test_killedMidDownload_resumesAndSendsLittleMoreThanTheFile() async throws {
    var state: UInt64 = 7
    let content = (0..<(2 << 20)).map { _ -> UInt8 in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return UInt8(truncatingIfNeeded: state >> 56)
    }
    // The first answer drips (about 320 KB/s), then stalls halfway until the client
    // is gone; the resumed one comes at once.
    let server = try DrippingFileServer(
      block: content, chunk: 32 << 10, pauseMicroseconds: 100_000, stallAfter: content.count / 2)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let out = dir.file("out")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    let store = dir.file("s.sqlite")
    let arguments = ["download", server.url, "--to", out, "--store", store, "--sha256", try hexDigest(content)]

    let first = try startForage(arguments)
    // Wait until the store has recorded (fsynced) every byte sent before the stall,
    // then kill without warning.
    var recorded = 0
    while recorded < content.count / 2 && first.isRunning {
      try await Task.sleep(for: .milliseconds(100))
      if FileManager.default.fileExists(atPath: store), let opened = try? SQLiteStore(path: store) {
        recorded = (try? await opened.downloads(state: nil, limit: 1).first?.bytesWritten) ?? 0
        try? await opened.close()
      }
    }
    kill(first.processIdentifier, SIGKILL)
    first.waitUntilExit()
    #expect(recorded >= content.count / 2 && recorded < content.count, "killed after \(recorded) bytes were recorded")
    let parts = try FileManager.default.contentsOfDirectory(atPath: out)
    #expect(parts.count == 1 && parts[0].hasSuffix(".part"), "\(parts)")

    let second = try runForage(arguments)
    #expect(second.status == 0, "\(second.stderr)")
    #expect(second.stdout == out + "/episode.mp3\n" || second.stdout.hasSuffix("/out/episode.mp3\n"), "\(second.stdout)")
    let landed = try Array(Data(contentsOf: URL(fileURLWithPath: out + "/episode.mp3")))
    #expect(landed == content)
    #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["episode.mp3"])
    let requests = server.requests.withLock { $0 }
    #expect(requests.count == 2)
    #expect(requests.last?.contains("If-Range: \"drip-1\"") == true)
    let sent = server.sent.withLock { $0 }
    // Every byte about once: all but the trickle after the last checkpoint.
    #expect(sent <= content.count + (16 << 10), "sent \(sent) bytes for a file of \(content.count)")
  }

  /// Memory stays flat whatever the file's size: a `forage download` of 256 MiB has
  /// peaked far below that when all but its last byte are written (its own peak,
  /// `VmHWM`, read while the server holds the last byte back; no other test counts).
  @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status")))
  func test_largeFile_memoryStaysFlat() async throws {
    var state: UInt64 = 3
    let block = (0..<(1 << 20)).map { _ -> UInt8 in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return UInt8(truncatingIfNeeded: state >> 56)
    }
    let size = 256 << 20
    let dir = TemporaryDirectory()
    let child = Guarded<Int32>(0)
    let reading = Guarded<(written: Int, peak: Int)>((0, 0))
    // On the server's thread (no test task can starve it): once the part file holds
    // all but the last byte, read the child's peak, then send the last byte.
    let server = try DrippingFileServer(block: block, size: size, chunk: nil) {
      var written = 0
      for _ in 0..<6000 where written < size - 1 {
        usleep(10_000)
        let parts = (try? FileManager.default.contentsOfDirectory(atPath: dir.path))?.filter { $0.hasSuffix(".part") } ?? []
        if let part = parts.first, let attributes = try? FileManager.default.attributesOfItem(atPath: dir.file(part)) {
          written = (attributes[.size] as? NSNumber)?.intValue ?? 0
        }
      }
      let peak = peakResidentBytes(of: child.withLock { $0 })
      reading.withLock { $0 = (written, peak) }
    }
    defer { server.stop() }
    let process = try startForage(["download", server.url, "--to", dir.path, "--store", dir.file("s.sqlite"), "--quiet"])
    child.withLock { $0 = process.processIdentifier }
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    let (written, peak) = reading.withLock { $0 }
    #expect(written == size - 1)
    let attributes = try FileManager.default.attributesOfItem(atPath: dir.file("episode.mp3"))
    #expect((attributes[.size] as? NSNumber)?.intValue == size)
    #expect(peak > 0 && peak < 96 << 20, "forage download peaked at \(peak >> 20) MiB for a \(size >> 20) MiB file")
  }

  @Test func test_list_alreadyDone_andErrors() async throws {
    let body = Array(repeating: UInt8(ascii: "x"), count: 5000)
    let server = try TestServer(routes: [
      "/a.txt": Route { _ in TestResponse(headers: [("ETag", "\"a\"")], body: body) },
      "/broken": Route { _ in .text("gone", status: 410) },
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = dir.file("s.sqlite")

    let done = try runForage(["download", server.url("/a.txt"), "--to", dir.path, "--store", store])
    #expect(done.status == 0, "\(done.stderr)")
    #expect(done.stdout.hasSuffix("/a.txt\n"))
    let again = try runForage(["download", server.url("/a.txt"), "--to", dir.path, "--store", store])
    #expect(again.status == 0)
    #expect(again.stderr.contains("already downloaded"))
    #expect(server.requestCount(path: "/a.txt") == 1)

    let failed = try runForage(["download", server.url("/broken"), "--to", dir.path, "--store", store])
    #expect(failed.status == 1)
    #expect(failed.stderr.contains("410"), "\(failed.stderr)")

    let list = try runForage(["download", "--list", "--store", store])
    #expect(list.status == 0)
    let lines = list.stdout.split(separator: "\n")
    #expect(lines.count == 2)
    #expect(lines[0].contains("done") && lines[0].contains(server.url("/a.txt")))
    #expect(lines[1].contains("failed") && lines[1].contains("410"))
  }

  @Test func test_badInput_exits2AndWritesNothing() throws {
    let dir = TemporaryDirectory()
    let store = dir.file("s.sqlite")
    let cases: [[String]] = [
      ["download", "https://e.com/a", "--store", store],
      ["download", "--to", dir.path, "--store", store],
      ["download", "https://e.com/a", "https://e.com/b", "--to", dir.path, "--sha256", String(repeating: "0", count: 64), "--store", store],
      ["download", "https://e.com/a", "--to", dir.path, "--sha256", "xyz", "--store", store],
      ["download", "ftp://e.com/a", "--to", dir.path, "--store", store],
      ["download", "https://e.com/a", "--to", dir.file("missing"), "--store", store],
      ["download", "https://e.com/a", "--to", dir.path, "--list", "--store", store],
      ["download", "--list", "--store", dir.file("none.sqlite")],
    ]
    for arguments in cases {
      let result = try runForage(arguments)
      #expect(result.status == 2, "\(arguments): \(result.stderr)")
      #expect(!result.stderr.isEmpty)
    }
    #expect(!FileManager.default.fileExists(atPath: store))
  }
}
