import Foundation
import Forage
import ForageHTTP
import ForageScheduler
import ForageStore
import ForageSupport
import ForageTestSupport
import ForageURL
import Testing

/// A file served with byte ranges: `Range: bytes=N-` is answered 206 unless
/// `If-Range` names another ETag (or ranges are turned off); counts the body bytes it
/// answers with, and can cut its next answers short (a truncated body).
final class ServedFile: Sendable {
  let content: Locked<[UInt8]>
  let etag: Locked<String>
  let served = Locked(0)
  /// Answers still to cut after this many body bytes (declaring the full length).
  let truncations = Locked<[Int]>([])
  let ranges: Bool
  let extraHeaders: [(String, String)]

  init(_ content: [UInt8], etag: String = "\"v1\"", ranges: Bool = true, headers: [(String, String)] = []) {
    self.content = Locked(content)
    self.etag = Locked(etag)
    self.ranges = ranges
    self.extraHeaders = headers
  }

  var route: Route { Route { request in self.answer(request) } }

  func answer(_ request: RecordedRequest) -> TestResponse {
    let body = content.withLock { $0 }
    let tag = etag.withLock { $0 }
    var headers = [("ETag", tag), ("Content-Type", "application/octet-stream")] + extraHeaders
    var status = 200
    var start = 0
    if ranges, let range = request.header("Range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
      let first = Int(range.dropFirst(6).dropLast()), request.header("If-Range").map({ $0 == tag }) ?? true
    {
      if first >= body.count {
        return TestResponse(status: 416, headers: [("Content-Range", "bytes */\(body.count)")], body: [])
      }
      status = 206
      start = first
      headers.append(("Content-Range", "bytes \(first)-\(body.count - 1)/\(body.count)"))
    }
    var slice = Array(body[start...])
    if let cut = truncations.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
      headers += [("Content-Length", "\(slice.count)"), ("Connection", "close")]
      slice = Array(slice.prefix(cut))
    }
    served.withLock { $0 += slice.count }
    return TestResponse(status: status, headers: headers, body: slice)
  }
}

func patternedBytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
  var state = seed
  return (0..<count).map { _ in
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return UInt8(truncatingIfNeeded: state >> 56)
  }
}

func sha256Hex(_ bytes: [UInt8]) -> String {
  SHA256.hash(bytes).map { String(format: "%02x", $0) }.joined()
}

/// Settings that keep failing cases short.
func quickDownloadSettings(maxAttempts: Int = 3, retries: Int = 2) -> DownloadSettings {
  var s = DownloadSettings()
  s.retryDelay = .milliseconds(10)
  s.maxAttempts = maxAttempts
  s.retries = retries
  return s
}

func noDelayFetch() -> FetchSettings {
  var f = FetchSettings()
  f.perHostDelay = .zero
  f.adaptiveDelay = false
  f.robotsTxt = false
  return f
}

/// Equal bytes, without printing both arrays when they differ.
func same(_ a: [UInt8], _ b: [UInt8]) -> Bool { a == b }

func folderListing(_ path: String) -> [String] {
  ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
}

func fileBytes(_ path: String) -> [UInt8] {
  (try? Array(Data(contentsOf: URL(fileURLWithPath: path)))) ?? []
}

/// A transport that fails to write after `bytes` bytes of each body, as a full disk
/// would: the bytes before stay in the file.
struct FullDiskTransport: DownloadTransport {
  let base = CurlTransport()
  let bytes: Int

  func fetch(_ request: Request) async throws -> Response { try await base.fetch(request) }

  func download(_ request: Request, into fd: Int32, resumingAt offset: Int, progress: DownloadProgress?)
    async throws -> ResponseHead
  {
    var cut = request
    cut.limits.maxBodySize = bytes
    cut.limits.truncateBody = true  // no early refusal from Content-Length: write `bytes`, then fail
    do {
      return try await base.download(cut, into: fd, resumingAt: offset, progress: progress)
    } catch let error as FetchError where error.kind == .bodyTooLarge {
      throw DownloadWriteError(code: ENOSPC)
    }
  }
}

/// A podcast feed of two enclosures (an MP3 and a PDF) served on loopback, and
/// a processing task "t.pod" whose source "pod" downloads the audio ones into
/// `episodes` beside the config: the set-up of the tests that a processing
/// launch downloads enclosures, from every front end.
struct PodcastSite {
  let audio = patternedBytes(40_000)
  let server: TestServer
  let feedServer: TestServer
  let dir = TemporaryDirectory()
  let store: SQLiteStore
  let config: ForageConfig

  init() throws {
    server = try TestServer(routes: [
      "/ep1.mp3": ServedFile(audio).route,
      "/notes.pdf": ServedFile([1, 2, 3]).route,
    ])
    let rss = """
      <?xml version="1.0"?><rss version="2.0"><channel><title>Pod</title>
      <item><guid>1</guid><title>One</title><enclosure url="\(server.url("/ep1.mp3"))" type="audio/mpeg" length="1"/></item>
      <item><guid>2</guid><title>Notes</title><enclosure url="\(server.url("/notes.pdf"))" type="application/pdf" length="3"/></item>
      </channel></rss>
      """
    feedServer = try TestServer(routes: ["/rss": Route { _ in .text(rss) }])
    store = try SQLiteStore(path: dir.file("s.sqlite"))
    var source = Source(name: "pod", feed: feedServer.url("/rss"))
    // A relative folder is taken from the config file's folder.
    source.downloadEnclosures = EnclosureDownloads(folder: "episodes", types: ["audio/*"])
    var config = ForageConfig(
      fetch: noDelayFetch(),
      tasks: [TaskDefinition(id: "t.pod", kind: .processing, every: .seconds(3600), budget: .seconds(60),
                             requiresNetwork: false, sources: ["pod"])],
      sources: [source])
    config.directory = dir.path
    self.config = config
  }

  func stop() {
    server.stop()
    feedServer.stop()
  }
}

@Suite struct DownloadTests {
  func downloads(_ store: any Store, _ settings: DownloadSettings = quickDownloadSettings(), transport: any Transport = CurlTransport())
    -> Downloads
  {
    Downloads(store: store, transport: transport, fetch: noDelayFetch(), settings: settings)
  }

  @Test func test_download_landsVerifiedOnce_andIsNotFetchedAgain() async throws {
    let body = patternedBytes(700_000)
    let file = ServedFile(body)
    let server = try TestServer(routes: ["/files/data.bin": file.route])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let out = dir.file("out")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    let d = downloads(store)

    let entry = try await d.enqueue(server.url("/files/data.bin"), to: out, sha256: sha256Hex(body).uppercased())
    let ended = try await d.complete([entry.id])
    #expect(ended.count == 1 && ended[0].result == .done)
    let done = try #require(try await store.download(id: entry.id))
    #expect(done.state == .done)
    #expect(done.path == out + "/data.bin" || done.path?.hasSuffix("/out/data.bin") == true)
    #expect(done.sha256 == sha256Hex(body))
    #expect(done.bytesWritten == body.count)
    #expect(folderListing(out) == ["data.bin"], "the part file is gone")
    #expect(same(fileBytes(out + "/data.bin"), body))
    #expect(file.served.withLock { $0 } == body.count)

    // Asked again: the same entry, done, nothing fetched.
    let again = try await d.enqueue(server.url("/files/data.bin"), to: out)
    #expect(again.id == entry.id && again.state == .done)
    _ = try await d.complete([again.id])
    #expect(server.requestCount(path: "/files/data.bin") == 1)

    // Unless asked: a new file beside the old one.
    let forced = try await d.enqueue(server.url("/files/data.bin"), to: out, repeat: .again)
    #expect(forced.id == entry.id && forced.state == .queued)
    _ = try await d.complete([forced.id])
    #expect(folderListing(out) == ["data-1.bin", "data.bin"])
    #expect(same(fileBytes(out + "/data-1.bin"), body))
  }

  @Test func test_truncatedBody_resumesWithRangeAndIfRange() async throws {
    let body = patternedBytes(400_000)
    let file = ServedFile(body)
    file.truncations.withLock { $0 = [150_000] }
    let server = try TestServer(routes: ["/a.bin": file.route])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let d = downloads(store)
    let entry = try await d.enqueue(server.url("/a.bin"), to: dir.path)
    let ended = try await d.complete([entry.id])
    #expect(ended[0].result == .done)
    #expect(same(fileBytes(dir.file("a.bin")), body))
    let requests = server.requests.filter { $0.path == "/a.bin" }
    #expect(requests.count == 2)
    #expect(requests[1].header("Range") == "bytes=150000-")
    #expect(requests[1].header("If-Range") == "\"v1\"")
    #expect(requests[1].header("Accept-Encoding") == "identity")
    #expect(file.served.withLock { $0 } == body.count, "each byte was sent once")
  }

  @Test func test_serverWithoutRanges_restartsFromZero() async throws {
    let body = patternedBytes(300_000)
    let file = ServedFile(body, ranges: false)
    file.truncations.withLock { $0 = [100_000] }
    let server = try TestServer(routes: ["/b.bin": file.route])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let d = downloads(store)
    let entry = try await d.enqueue(server.url("/b.bin"), to: dir.path)
    #expect(try await d.complete([entry.id])[0].result == .done)
    #expect(same(fileBytes(dir.file("b.bin")), body))
    #expect(server.requests.filter { $0.path == "/b.bin" }[1].header("Range") == "bytes=100000-")
    #expect(file.served.withLock { $0 } == 100_000 + body.count)
  }

  @Test func test_fileChangedBetweenAttempts_restartsWithTheNewFile() async throws {
    let old = patternedBytes(300_000, seed: 1)
    let new = patternedBytes(280_000, seed: 2)
    let file = ServedFile(old)
    file.truncations.withLock { $0 = [120_000] }
    let server = try TestServer(routes: [
      "/c.bin": Route.choosing { request in
        // The first answer is cut; by the second request the file has changed.
        let response = file.answer(request)
        file.content.withLock { $0 = new }
        file.etag.withLock { $0 = "\"v2\"" }
        return .response(response)
      }
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let d = downloads(store)
    let entry = try await d.enqueue(server.url("/c.bin"), to: dir.path)
    #expect(try await d.complete([entry.id])[0].result == .done)
    #expect(same(fileBytes(dir.file("c.bin")), new))
    let requests = server.requests.filter { $0.path == "/c.bin" }
    #expect(requests[1].header("If-Range") == "\"v1\"")
    let done = try #require(try await store.download(id: entry.id))
    #expect(done.etag == "\"v2\"")
  }

  @Test func test_404_failsClearly_and500IsRetriedThenFails() async throws {
    let server = try TestServer(routes: [
      "/err": Route { _ in .text("broken", status: 500) }
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let d = downloads(store, quickDownloadSettings(maxAttempts: 1, retries: 2))
    let missing = try await d.enqueue(server.url("/missing.zip"), to: dir.path)
    let broken = try await d.enqueue(server.url("/err"), to: dir.path)
    let ended = try await d.complete([missing.id, broken.id])
    guard case .failed(let notFound)? = ended[0].result, case .failed(let serverError)? = ended[1].result else {
      Issue.record("expected two failures, got \(ended.map(\.result))")
      return
    }
    #expect(notFound.kind == .http && notFound.message.contains("404"))
    #expect(serverError.message.contains("500"))
    #expect(ended.allSatisfy { $0.entry.state == .failed })
    #expect(server.requestCount(path: "/missing.zip") == 1)
    #expect(server.requestCount(path: "/err") == 3, "one attempt and two retries")
    #expect(folderListing(dir.path).allSatisfy { !$0.hasSuffix(".zip") && $0 != "err" })
  }

  @Test func test_hostileContentDisposition_staysInTheFolder() async throws {
    let body = Array("payload".utf8)
    let names = [
      #"attachment; filename="../../../etc/passwd""#,
      #"attachment; filename*=UTF-8''..%2F..%2F.bashrc"#,
      "attachment; filename=\"\u{202E}fdp.exe\"",
      "attachment; filename=\"...\"",
      "attachment; filename=\"" + String(repeating: "é", count: 300) + ".txt\"",
      "attachment; filename=\"a\u{1}b\u{7F}c.txt\"",
    ]
    var routes: [String: Route] = [:]
    for (i, value) in names.enumerated() {
      routes["/h\(i)"] = ServedFile(body, headers: [("Content-Disposition", value)]).route
    }
    let server = try TestServer(routes: routes)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let out = dir.file("out")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    let d = downloads(store)
    var ids: [Int64] = []
    for i in names.indices { ids.append(try await d.enqueue(server.url("/h\(i)"), to: out).id) }
    let ended = try await d.complete(ids)
    #expect(ended.allSatisfy { $0.result == .done })
    let listed = folderListing(out)
    #expect(listed.count == names.count, "\(listed)")
    for name in listed {
      #expect(!name.hasPrefix("."), "\(name)")
      #expect(!name.contains("/") && !name.contains("\\"))
      #expect(!name.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format })
      #expect(name.utf8.count <= DownloadDefaults.maxNameLength)
      #expect(same(fileBytes(out + "/" + name), body))
    }
    #expect(listed.contains("passwd") && listed.contains("bashrc") && listed.contains("fdp.exe"))
    #expect(listed.contains("h3"), "a name of dots only falls back to the URL's")
    #expect(folderListing(dir.path).sorted() == ["out", "s.sqlite", "s.sqlite-shm", "s.sqlite-wal"].filter {
      FileManager.default.fileExists(atPath: dir.file($0))
    })
  }

  /// Issue 25: a file named as a side file of the store beside it (a feed's
  /// enclosure with "to": ".", where the config's store is) was played back
  /// into the store or deleted by its next open.
  @Test func test_issue25_namesSQLiteReadsAsSideFiles_landWithDotDownload_andTheStoreStaysWhole() async throws {
    let names = ["forage.sqlite-journal", "forage.sqlite-wal", "forage.sqlite-shm", "other.db-journal"]
    var routes: [String: Route] = [:]
    for (i, name) in names.enumerated() {
      routes["/f\(i)"] = ServedFile(Array("file \(i)".utf8), headers: [("Content-Disposition", "attachment; filename=\"\(name)\"")]).route
    }
    routes["/episodes/x.db-shm"] = ServedFile(Array("from the URL".utf8)).route
    let server = try TestServer(routes: routes)
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("forage.sqlite"))
    let d = downloads(store)
    var ids: [Int64] = []
    for i in names.indices { ids.append(try await d.enqueue(server.url("/f\(i)"), to: dir.path).id) }
    ids.append(try await d.enqueue(server.url("/episodes/x.db-shm"), to: dir.path).id)
    let ended = try await d.complete(ids)
    #expect(ended.allSatisfy { $0.result == .done }, "\(ended.map(\.result))")
    let landed = ended.compactMap { $0.entry.path.map { ($0 as NSString).lastPathComponent } }
    #expect(landed == names.map { $0 + ".download" } + ["x.db-shm.download"], "\(landed)")
    #expect(ended.map(\.entry.name) == names + ["x.db-shm"], "the server's names are kept")
    for (i, entry) in ended.prefix(names.count).enumerated() {
      #expect(fileBytes(try #require(entry.entry.path)) == Array("file \(i)".utf8))
    }
    try await store.close()
    let reopened = try SQLiteStore(path: dir.file("forage.sqlite"))
    #expect(try await reopened.integrityProblems() == [])
    #expect(try await reopened.downloads(state: .done, limit: 10).count == names.count + 1)
    #expect(folderListing(dir.path).filter { SQLiteSideFiles.isReserved(name: $0) }.allSatisfy {
      $0 == "forage.sqlite-wal" || $0 == "forage.sqlite-shm"
    })
  }

  /// Issue 25: a failed download (a 404, a redirect to file:, a server error
  /// on every attempt) left a 0-byte `.part` file.
  @Test func test_issue25_failedDownloads_leaveNoPartFile() async throws {
    let server = try TestServer(routes: [
      "/local": Route { _ in .redirect(to: "file:///etc/passwd") },
      "/err": Route { _ in .text("broken", status: 503) },
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let out = dir.file("out")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    let d = downloads(store, quickDownloadSettings(maxAttempts: 1, retries: 0))
    var ids: [Int64] = []
    for path in ["/missing.zip", "/local", "/err"] { ids.append(try await d.enqueue(server.url(path), to: out).id) }
    let ended = try await d.complete(ids)
    #expect(ended.allSatisfy { $0.entry.state == .failed }, "\(ended.map(\.result))")
    #expect(folderListing(out) == [], "\(folderListing(out))")
  }

  @Test func test_twoDownloadsOfOneURL_toOneFolder_landOnce() async throws {
    let body = patternedBytes(2_000_000)
    let file = ServedFile(body)
    let server = try TestServer(routes: ["/same.bin": file.route])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let first = downloads(store)
    let second = downloads(store)
    let url = server.url("/same.bin")
    async let a = first.complete([try await first.enqueue(url, to: dir.path).id])
    async let b = second.complete([try await second.enqueue(url, to: dir.path).id])
    let (ra, rb) = try await (a, b)
    #expect(ra[0].entry.id == rb[0].entry.id)
    #expect(ra[0].entry.state == .done && rb[0].entry.state == .done)
    #expect(folderListing(dir.path).filter { $0.hasPrefix("same") } == ["same.bin"])
    #expect(same(fileBytes(dir.file("same.bin")), body))
    #expect(file.served.withLock { $0 } == body.count)
  }

  @Test func test_sha256Mismatch_isRetriedThenFailsAndDeletesThePart() async throws {
    let body = patternedBytes(50_000)
    let server = try TestServer(routes: ["/bad.bin": ServedFile(body).route])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let d = downloads(store, quickDownloadSettings(maxAttempts: 2))
    let wrong = String(repeating: "ab", count: 32)
    let entry = try await d.enqueue(server.url("/bad.bin"), to: dir.path, sha256: wrong)
    let ended = try await d.complete([entry.id])
    guard case .failed(let error)? = ended[0].result else {
      Issue.record("expected a failure, got \(String(describing: ended[0].result))")
      return
    }
    #expect(error.kind == .verification)
    #expect(error.message.contains(sha256Hex(body)) && error.message.contains(wrong))
    #expect(server.requestCount(path: "/bad.bin") == 2)
    #expect(!folderListing(dir.path).contains { $0.hasPrefix("bad") }, "neither the file nor its part")
  }

  @Test func test_endlessBody_isBoundedByTheExpectedSize() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let d = downloads(store, quickDownloadSettings(maxAttempts: 1))
    let entry = try await d.enqueue(server.url("/fault/endless-chunked"), to: dir.path, expectedSize: 100_000)
    let ended = try await d.complete([entry.id])
    guard case .failed(let error)? = ended[0].result else {
      Issue.record("expected a failure, got \(String(describing: ended[0].result))")
      return
    }
    #expect(error.kind == .verification)
  }

  @Test func test_collisions_getASuffix_andNothingIsReplaced() async throws {
    let body = patternedBytes(1000)
    let server = try TestServer(routes: ["/report.pdf": ServedFile(body).route])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let out = dir.file("out")
    try FileManager.default.createDirectory(atPath: out + "/report-1.pdf", withIntermediateDirectories: true)
    try Data("mine".utf8).write(to: URL(fileURLWithPath: out + "/report.pdf"))
    try FileManager.default.createSymbolicLink(atPath: out + "/report-2.pdf", withDestinationPath: "/nowhere")
    let d = downloads(store)
    let entry = try await d.enqueue(server.url("/report.pdf"), to: out)
    #expect(try await d.complete([entry.id])[0].result == .done)
    #expect(same(fileBytes(out + "/report.pdf"), Array("mine".utf8)))
    #expect(same(fileBytes(out + "/report-3.pdf"), body))
    #expect(try await store.download(id: entry.id)?.path?.hasSuffix("/report-3.pdf") == true)
  }

  @Test func test_partPathTakenByAFolder_failsWithoutWriting() async throws {
    let server = try TestServer(routes: ["/x.bin": ServedFile([1, 2, 3]).route])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let d = downloads(store)
    let entry = try await d.enqueue(server.url("/x.bin"), to: dir.path)
    try FileManager.default.createDirectory(atPath: dir.file("x.bin.forage-\(entry.id).part"), withIntermediateDirectories: false)
    let ended = try await d.complete([entry.id])
    guard case .failed(let error)? = ended[0].result else {
      Issue.record("expected a failure, got \(String(describing: ended[0].result))")
      return
    }
    #expect(error.kind == .partFile)
    #expect(server.requestCount(path: "/x.bin") == 0)
  }

  @Test func test_fullDisk_failsClearly_keepsThePart_andTheNextRunResumes() async throws {
    let body = patternedBytes(500_000)
    let file = ServedFile(body)
    let server = try TestServer(routes: ["/big.iso": file.route])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let full = downloads(store, transport: FullDiskTransport(bytes: 200_000))
    let entry = try await full.enqueue(server.url("/big.iso"), to: dir.path)
    let first = try await full.complete([entry.id])
    guard case .failed(let error)? = first[0].result else {
      Issue.record("expected a failure, got \(String(describing: first[0].result))")
      return
    }
    #expect(error.kind == .diskFull)
    #expect(error.message.contains("disk is full") && error.message.contains(".part"))
    let part = dir.file("big.iso.forage-\(entry.id).part")
    // Pieces are written whole or not at all: the part ends at the last whole one.
    let kept = try #require(try await store.download(id: entry.id)?.bytesWritten)
    #expect(kept > 100_000 && kept <= 200_000)
    #expect(same(fileBytes(part), Array(body[..<kept])))

    let second = try await downloads(store).complete([entry.id])
    #expect(second[0].result == .done)
    #expect(same(fileBytes(dir.file("big.iso")), body))
    #expect(server.requests.last?.header("Range") == "bytes=\(kept)-")
    // The route counts whole answers: the first one was cut by the "disk", not by it.
    #expect(file.served.withLock { $0 } == body.count + (body.count - kept))
  }

  @Test func test_deadline_interrupts_andKeepsWhatWasRecorded() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let d = downloads(store)
    // 100 bytes every 100 ms: it cannot finish before the deadline.
    let entry = try await d.enqueue(server.url("/fault/drip?rate=1000&total=50000"), to: dir.path)
    let results = try await d.work(until: .now + .seconds(2))
    guard case .interrupted? = results[entry.id] else {
      Issue.record("expected an interruption, got \(results)")
      return
    }
    let kept = try #require(try await store.download(id: entry.id))
    #expect(kept.state == .queued)
    #expect(fileBytes(dir.file("drip.forage-\(entry.id).part")).count == kept.bytesWritten, "the part holds what was recorded")
  }

  @Test func test_cancellation_stopsTheTransfer_andTheNextSessionResumes() async throws {
    let body = patternedBytes(60_000)
    let file = ServedFile(body)
    let calls = Locked(0)
    let server = try TestServer(routes: [
      // The first answer drips (and cannot end before the cancellation); later ones
      // are this file, whole or in part.
      "/slow.bin": Route.choosing { request in
        calls.withLock { $0 += 1; return $0 } == 1
          ? .fault(.dripBody(bytesPerSecond: 2000, total: body.count)) : .response(file.answer(request))
      }
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let d = downloads(store, quickDownloadSettings())
    let entry = try await d.enqueue(server.url("/slow.bin"), to: dir.path, sha256: sha256Hex(body))
    let work = Task { try await d.work() }
    while try await store.download(id: entry.id)?.bytesWritten ?? 0 == 0 {
      try await Task.sleep(for: .milliseconds(100))
    }
    work.cancel()
    #expect(try await work.value[entry.id] == .interrupted("cancelled"))
    let kept = try #require(try await store.download(id: entry.id))
    #expect(kept.state == .queued && kept.bytesWritten > 0)
    // The drip is the test server's alphabet filler, the resumed part this file's:
    // the SHA-256 catches the mix, and the download starts again from zero.
    #expect(try await d.complete([entry.id])[0].result == .done)
    #expect(same(fileBytes(dir.file("slow.bin")), body))
  }

  @Test func test_crashAfterTheLastByte_isFinishedWithoutRefetching() async throws {
    // A worker died after recording the path, after linking the file into place.
    let body = patternedBytes(1000)
    let server = try TestServer(routes: ["/late.bin": ServedFile(body).route])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let d = downloads(store)
    var entry = try await d.enqueue(server.url("/late.bin"), to: dir.path)
    let part = dir.file("late.bin.forage-\(entry.id).part")
    try Data(body).write(to: URL(fileURLWithPath: part))
    #expect(link(part, dir.file("late.bin")) == 0)
    let claimed = try await store.claimDownloads(
      ids: [entry.id], afterID: 0, limit: 1, maxRemaining: nil, lease: Lease(owner: "dead", for: .seconds(60), at: .now))
    entry = claimed[0]
    entry.bytesWritten = body.count
    entry.totalSize = body.count
    entry.name = "late.bin"
    entry.path = dir.file("late.bin")
    #expect(try await store.updateDownload(entry, lease: Lease(owner: "dead", for: .zero, at: .now), releasing: true))
    #expect(try await d.complete([entry.id])[0].result == .done)
    #expect(server.requestCount(path: "/late.bin") == 0)
    #expect(folderListing(dir.path).filter { $0.hasPrefix("late") } == ["late.bin"])
  }

  @Test func test_names_areSanitised() {
    #expect(DownloadName.sanitize("../../etc/passwd") == "passwd")
    #expect(DownloadName.sanitize("..\\..\\win.ini") == "win.ini")
    #expect(DownloadName.sanitize(".hidden") == "hidden")
    #expect(DownloadName.sanitize("..") == nil)
    #expect(DownloadName.sanitize(" . ") == nil)
    #expect(DownloadName.sanitize("a\u{0}b\u{7}c\n.txt") == "abc.txt")
    #expect(DownloadName.sanitize("evil\u{202E}txt.exe") == "eviltxt.exe")
    #expect(DownloadName.sanitize("what?<x>.txt") == "what__x_.txt")
    let long = DownloadName.sanitize(String(repeating: "ü", count: 400) + ".tar.gz")!
    #expect(long.utf8.count <= 200 && long.hasSuffix(".gz"))
    #expect(Array(DownloadName.candidates("a.tar.gz").prefix(3)) == ["a.tar.gz", "a.tar-1.gz", "a.tar-2.gz"])
    #expect(Array(DownloadName.candidates("README").prefix(2)) == ["README", "README-1"])
    #expect(DownloadName.fromURL(WebURL("https://e.com/p/%E2%82%AC%20x.csv?q=1")!) == "€ x.csv")
    #expect(DownloadName.fromURL(WebURL("https://e.com/")!) == nil)
  }

  @Test func test_invalidInput_isRefusedBeforeQueueing() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let d = downloads(store)
    await #expect(throws: DownloadError(.invalidURL, "ftp://e.com/x is not an absolute http or https URL")) {
      try await d.enqueue("ftp://e.com/x", to: dir.path)
    }
    await #expect(throws: DownloadError.self) { try await d.enqueue("https://e.com/x", to: dir.file("missing")) }
    await #expect(throws: DownloadError.self) { try await d.enqueue("https://e.com/x", to: dir.path, sha256: "abc") }
    #expect(try await store.downloads(state: nil, limit: 10).isEmpty)
  }

  // MARK: Feed enclosures and launches

  @Test func test_config_downloadEnclosures_readsAndWritesBack() throws {
    let text = #"{"sources": [{"name": "pod", "feed": "https://e.com/rss", "downloadEnclosures": {"to": "/srv/pod", "types": ["audio/*"]}}]}"#
    let config = try ForageConfig.parse(Array(text.utf8))
    #expect(config.sources[0].downloadEnclosures == EnclosureDownloads(folder: "/srv/pod", types: ["audio/*"]))
    #expect(config.jsonText.contains(#""downloadEnclosures""#))
    let again = try ForageConfig.parse(Array(config.jsonText.utf8))
    #expect(again.sources[0].downloadEnclosures == config.sources[0].downloadEnclosures)
    #expect(problems(#"{"sources": [{"name": "p", "url": "https://e.com/", "downloadEnclosures": {"to": "d"}}]}"#).map(\.description)
      == [#"sources[0].downloadEnclosures: "downloadEnclosures" applies to feed sources only (their entries have enclosures)"#])
    #expect(problems(#"{"sources": [{"name": "p", "feed": "https://e.com/rss", "downloadEnclosures": {"types": ["audio"]}}]}"#).count == 2)
    let rule = EnclosureDownloads(folder: "x", types: ["audio/*", "video/mp4"])
    #expect(rule.accepts(type: "audio/mpeg") && rule.accepts(type: "Video/MP4; codecs=x"))
    #expect(!rule.accepts(type: "video/webm") && !rule.accepts(type: nil))
  }

  @Test func test_processingLaunch_queuesEnclosures_andDownloadsThem() async throws {
    let pod = try PodcastSite()
    defer { pod.stop() }
    let (audio, server, dir, store, config) = (pod.audio, pod.server, pod.dir, pod.store, pod.config)
    let scheduler = SimulatedScheduler(device: .server, seed: 3, log: .silent)
    let lines = Locked<[String]>([])
    let runner = TaskRunner(
      config: config, store: store, transport: CurlTransport(), log: SchedulerLog { line in lines.withLock { $0.append(line) } })
    runner.register(on: scheduler, now: { scheduler.now })
    scheduler.finishLaunching()
    try await runner.submitAll(to: scheduler, now: scheduler.now)
    await scheduler.advance(by: .seconds(2 * 3600))
    #expect(scheduler.trace.count(.launched, identifier: "t.pod") >= 1)
    #expect(folderListing(dir.file("episodes")) == ["ep1.mp3"], "\(lines.withLock { $0 })")
    #expect(same(fileBytes(dir.file("episodes/ep1.mp3")), audio))
    let kept = try await store.downloads(state: nil, limit: 10)
    #expect(kept.map(\.source) == ["pod"])
    #expect(server.requestCount(path: "/notes.pdf") == 0)
  }
}
