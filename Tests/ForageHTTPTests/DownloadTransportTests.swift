#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ForageHTTP
import ForageSupport
import ForageTestSupport
import ForageURL
import Testing

/// A file served with byte ranges (RFC 9110 §14): `Range: bytes=N-` is answered 206
/// unless `If-Range` names another validator; counts the body bytes it answers with.
final class RangedFile: Sendable {
  let content: Locked<[UInt8]>
  let etag: Locked<String>
  let served = Locked(0)

  init(_ content: [UInt8], etag: String = "\"v1\"") {
    self.content = Locked(content)
    self.etag = Locked(etag)
  }

  var route: Route {
    Route { request in self.answer(request) }
  }

  func answer(_ request: RecordedRequest) -> TestResponse {
    let body = content.withLock { $0 }
    let tag = etag.withLock { $0 }
    var headers = [("ETag", tag), ("Accept-Ranges", "bytes"), ("Content-Type", "application/octet-stream")]
    var status = 200
    var slice = body[...]
    if let range = request.header("Range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
      let start = Int(range.dropFirst(6).dropLast()), request.header("If-Range").map({ $0 == tag }) ?? true
    {
      if start >= body.count {
        return TestResponse(status: 416, headers: [("Content-Range", "bytes */\(body.count)")], body: [])
      }
      status = 206
      slice = body[start...]
      headers.append(("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)"))
    }
    served.withLock { $0 += slice.count }
    return TestResponse(status: status, headers: headers, body: Array(slice))
  }
}

/// Bytes that differ from position to position (a shifted copy would not match).
func patterned(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
  var state = seed
  return (0..<count).map { _ in
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return UInt8(truncatingIfNeeded: state >> 56)
  }
}

/// A temporary file, open for reading and writing, removed at the end.
final class ScratchFile {
  let path: String
  let fd: Int32

  init(_ initial: [UInt8] = []) {
    path = NSTemporaryDirectory() + "forage-download-\(UUID().uuidString)"
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
    _ = initial.withUnsafeBufferPointer { writeAll(fd, $0) }
  }

  var bytes: [UInt8] { (try? Array(Data(contentsOf: URL(fileURLWithPath: path)))) ?? [] }

  deinit {
    close(fd)
    unlink(path)
  }
}

@Suite struct DownloadTransportTests {
  func transport(_ kind: TransportKind) -> any DownloadTransport {
    kind.make() as! any DownloadTransport
  }

  @Test(arguments: TransportKind.allCases)
  func test_download_writesTheBodyToTheFile(_ kind: TransportKind) async throws {
    let body = patterned(300_000)
    let file = RangedFile(body)
    let server = try TestServer(routes: ["/file.bin": file.route])
    defer { server.stop() }
    let scratch = ScratchFile()
    let progress = DownloadProgress()
    let head = try await transport(kind).download(
      Request(url: server.webURL("/file.bin")), into: scratch.fd, resumingAt: 0, progress: progress)
    #expect(head.status == 200)
    #expect(head.bodyStart == 0)
    #expect(head.bodyBytesWritten == body.count)
    #expect(head.representationLength == body.count)
    #expect(head.headers["ETag"] == "\"v1\"")
    #expect(scratch.bytes == body)
    #expect(progress.snapshot.fileSize == body.count)
    #expect(progress.snapshot.head?.status == 200)
  }

  @Test(arguments: TransportKind.allCases)
  func test_206_continuesTheFileAtTheOffset(_ kind: TransportKind) async throws {
    let body = patterned(100_000)
    let server = try TestServer(routes: ["/file.bin": RangedFile(body).route])
    defer { server.stop() }
    let scratch = ScratchFile(Array(body[..<40_000]))
    var request = Request(url: server.webURL("/file.bin"))
    request.headers["Range"] = "bytes=40000-"
    request.headers["If-Range"] = "\"v1\""
    let head = try await transport(kind).download(request, into: scratch.fd, resumingAt: 40_000, progress: nil)
    #expect(head.status == 206)
    #expect(head.bodyStart == 40_000)
    #expect(head.bodyBytesWritten == 60_000)
    #expect(head.representationLength == 100_000)
    #expect(scratch.bytes == body)
  }

  @Test(arguments: TransportKind.allCases)
  func test_200ToARangeRequest_restartsTheFileFromZero(_ kind: TransportKind) async throws {
    let body = patterned(50_000)
    // The validator changed: If-Range does not match, the whole new file comes.
    let server = try TestServer(routes: ["/file.bin": RangedFile(body, etag: "\"v2\"").route])
    defer { server.stop() }
    let scratch = ScratchFile(patterned(30_000, seed: 9))
    var request = Request(url: server.webURL("/file.bin"))
    request.headers["Range"] = "bytes=30000-"
    request.headers["If-Range"] = "\"v1\""
    let head = try await transport(kind).download(request, into: scratch.fd, resumingAt: 30_000, progress: nil)
    #expect(head.status == 200)
    #expect(head.bodyStart == 0)
    #expect(scratch.bytes == body)
  }

  @Test(arguments: TransportKind.allCases)
  func test_206ForAnotherRange_isRefusedAndTheFileKept(_ kind: TransportKind) async throws {
    let server = try TestServer(routes: [
      "/file.bin": Route { _ in
        TestResponse(status: 206, headers: [("Content-Range", "bytes 0-9/100")], body: Array(repeating: 0x41, count: 10))
      }
    ])
    defer { server.stop() }
    let kept = patterned(500)
    let scratch = ScratchFile(kept)
    var request = Request(url: server.webURL("/file.bin"))
    request.headers["Range"] = "bytes=500-"
    await #expect(throws: FetchError.self) {
      _ = try await transport(kind).download(request, into: scratch.fd, resumingAt: 500, progress: nil)
    }
    #expect(scratch.bytes == kept)
  }

  @Test(arguments: TransportKind.allCases)
  func test_errorStatus_returnsItsHeadAndWritesNothing(_ kind: TransportKind) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let kept = patterned(10)
    let scratch = ScratchFile(kept)
    let head = try await transport(kind).download(
      Request(url: server.webURL("/missing")), into: scratch.fd, resumingAt: 10, progress: nil)
    #expect(head.status == 404)
    #expect(head.bodyBytesWritten == 0)
    #expect(scratch.bytes == kept)
  }

  @Test func test_endlessBody_stopsAtTheBodyLimit() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let scratch = ScratchFile()
    let request = Request(url: server.webURL("/fault/endless-chunked"), limits: quickLimits(maxBodySize: 1 << 20))
    let error = await #expect(throws: FetchError.self) {
      _ = try await CurlTransport().download(request, into: scratch.fd, resumingAt: 0, progress: nil)
    }
    #expect(error?.kind == .bodyTooLarge)
    #expect(scratch.bytes.count <= 1 << 20)
  }

  @Test func test_slowDrip_endsAtTheLowSpeedLimit() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let scratch = ScratchFile()
    let request = Request(
      url: server.webURL("/fault/drip?rate=10&total=100000"),
      limits: quickLimits(timeout: .seconds(30), lowSpeedLimit: 1000, lowSpeedTime: .seconds(1)))
    let error = await #expect(throws: FetchError.self) {
      _ = try await CurlTransport().download(request, into: scratch.fd, resumingAt: 0, progress: nil)
    }
    #expect(error?.kind == .tooSlow)
  }

  @Test func test_fullDisk_endsWithAWriteError() async throws {
    let body = patterned(200_000)
    let server = try TestServer(routes: ["/file.bin": RangedFile(body).route])
    defer { server.stop() }
    let full = open("/dev/full", O_WRONLY)
    try #require(full >= 0)
    defer { close(full) }
    let error = await #expect(throws: DownloadWriteError.self) {
      _ = try await CurlTransport().download(Request(url: server.webURL("/file.bin")), into: full, resumingAt: 0, progress: nil)
    }
    #expect(error?.isDiskFull == true)
    #expect(error?.description.contains("disk is full") == true)
  }

  /// The body is never held in memory: 1 GiB passes through with the process's peak
  /// resident size growing by far less (a buffering transport would grow by all of
  /// it). The bound is generous because other tests run in this process at the same
  /// time; `DownloadCommandTests` measures a `forage download` process on its own.
  @Test func test_largeBody_memoryStaysFlat() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let sink = open("/dev/null", O_WRONLY)
    try #require(sink >= 0)
    defer { close(sink) }
    let size = 1 << 30
    let before = peakResidentBytes()
    let progress = DownloadProgress()
    let request = Request(
      url: server.webURL("/fault/endless-chunked?stop-after=\(size + (64 << 20))"),
      limits: TransferLimits(timeout: .seconds(120), maxBodySize: size))
    let error = await #expect(throws: FetchError.self) {
      _ = try await CurlTransport().download(request, into: sink, resumingAt: 0, progress: progress)
    }
    #expect(error?.kind == .bodyTooLarge)
    #expect(progress.snapshot.written >= size - (1 << 20))
    let growth = peakResidentBytes() - before
    #expect(growth < 384 << 20, "peak resident size grew by \(growth >> 20) MiB for a \(size >> 20) MiB body")
  }

  @Test func test_fetcherDownload_followsRedirectsAndSendsItsHeaders() async throws {
    let body = patterned(20_000)
    let server = try TestServer(routes: [
      "/go": Route { _ in .redirect(to: "/files/real.bin") },
      "/files/real.bin": RangedFile(body).route,
    ])
    defer { server.stop() }
    var settings = FetchSettings()
    settings.perHostDelay = .zero
    let fetcher = Fetcher(transport: CurlTransport(), settings: settings)
    let scratch = ScratchFile()
    let outcome = await fetcher.download(
      server.webURL("/go"), into: scratch.fd, resumingAt: 0, headers: ["X-Test": "1"], limits: TransferLimits())
    guard case .answered(let head) = outcome else {
      Issue.record("expected an answer, got \(outcome)")
      return
    }
    #expect(head.status == 200)
    #expect(head.url == server.webURL("/files/real.bin"))
    #expect(scratch.bytes == body)
    let last = try #require(server.requests.last)
    #expect(last.header("User-Agent") == FetchDefaults.userAgent)
    #expect(last.header("X-Test") == "1")
  }

  @Test func test_fetcherDownload_pastTheDeadline_isDeferred() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = Fetcher(transport: CurlTransport())
    let scratch = ScratchFile()
    let outcome = await fetcher.download(
      server.webURL("/fault/drip?rate=2000&total=1000000"), into: scratch.fd, resumingAt: 0,
      limits: TransferLimits(timeout: .seconds(60), lowSpeedLimit: 0), deadline: .now + .milliseconds(300))
    guard case .deferred = outcome else {
      Issue.record("expected deferred, got \(outcome)")
      return
    }
  }

  @Test func test_contentDisposition_prefersTheExtendedName() {
    #expect(ContentDisposition("attachment; filename=\"a.txt\"")?.filename == "a.txt")
    #expect(ContentDisposition("attachment; filename=plain.txt")?.filename == "plain.txt")
    #expect(ContentDisposition("attachment; filename=\"a.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt")?.filename == "€ rates.txt")
    #expect(ContentDisposition("attachment; filename*=iso-8859-1'en'%A3%20rates.txt")?.filename == "£ rates.txt")
    #expect(ContentDisposition("INLINE; FILENAME=\"x;y.pdf\"")?.type == "inline")
    #expect(ContentDisposition("inline; filename=\"x;y.pdf\"")?.filename == "x;y.pdf")
    #expect(ContentDisposition("attachment; filename=\"quo\\\"te.txt\"")?.filename == "quo\"te.txt")
    // Invalid UTF-8 or an unknown charset: the plain name stands.
    #expect(ContentDisposition("attachment; filename=\"ok.txt\"; filename*=UTF-8''%FF%FE")?.filename == "ok.txt")
    #expect(ContentDisposition("attachment; filename=\"ok.txt\"; filename*=koi8-r''%C1")?.filename == "ok.txt")
    #expect(ContentDisposition("attachment")?.filename == nil)
    #expect(ContentDisposition("") == nil)
    #expect(ContentDisposition("filename=x") == nil)
  }

  @Test func test_contentRange_parses() {
    #expect(ContentRange("bytes 100-199/1000")?.range == 100...199)
    #expect(ContentRange("bytes 100-199/1000")?.completeLength == 1000)
    #expect(ContentRange("bytes 0-0/*")?.completeLength == nil)
    #expect(ContentRange("bytes */1000")?.range == nil)
    #expect(ContentRange("bytes */1000")?.completeLength == 1000)
    #expect(ContentRange("bytes 5-4/10") == nil)
    #expect(ContentRange("bytes 0-10/10") == nil)
    #expect(ContentRange("items 0-1/2") == nil)
    #expect(ContentRange("bytes */*") == nil)
  }
}

/// The process's peak resident set size in bytes (`getrusage`; Linux reports KiB).
func peakResidentBytes() -> Int {
  var usage = rusage()
  #if os(Linux)
  getrusage(RUSAGE_SELF.rawValue, &usage)
  #else
  getrusage(RUSAGE_SELF, &usage)
  #endif
  #if os(Linux)
  return Int(usage.ru_maxrss) * 1024
  #else
  return Int(usage.ru_maxrss)
  #endif
}
