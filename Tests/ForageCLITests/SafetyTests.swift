import Foundation
import Testing
import ForageStore
import ForageTestSupport

/// What a careless or hostile command line must not do (issue 8): destroy a
/// folder or the store, fail silently, or die on a signal without saving.
@Suite(.serialized) struct SafetyTests {
  /// A store at `dir/name` with two records of source "s", closed (one
  /// complete file).
  static func storeWithRecords(_ dir: TemporaryDirectory, _ name: String = "s.sqlite") async throws -> String {
    let path = dir.file(name)
    let store = try SQLiteStore(path: path)
    let crawl = try await store.openCrawl(
      source: "s", seeds: [FrontierSeed(url: "http://127.0.0.1/a", fingerprint: 1, depth: 0)], now: Date())
    let item = try #require(
      try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "t", for: .seconds(60), at: Date())).first)
    _ = try await store.commit([
      PageCommit(
        item: item, outcome: .done,
        records: [
          RecordInput(source: "s", key: "k1", url: "http://127.0.0.1/a", fieldsJSON: #"{"t":"one"}"#, contentHash: 1),
          RecordInput(source: "s", key: "k2", url: "http://127.0.0.1/a", fieldsJSON: #"{"t":"two"}"#, contentHash: 2),
        ], now: Date())
    ])
    try await store.close()
    return path
  }

  static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

  @Test func test_issue8_exportToAFolder_isRefused_andTheFolderKept() async throws {
    let dir = TemporaryDirectory()
    let store = try await Self.storeWithRecords(dir)
    let folder = dir.file("outdir")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    _ = try dir.write("outdir/keep.txt", "precious")
    let result = try runForage(["export", "--store", store, "--out", folder])
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("folder"), "\(result.stderr)")
    #expect(try String(contentsOfFile: folder + "/keep.txt", encoding: .utf8) == "precious")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["keep.txt"])
    // A link to the folder, and a device, are refused too.
    let link = dir.file("link")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: folder)
    #expect(try runForage(["export", "--store", store, "--out", link]).status == 2)
    #expect(try runForage(["export", "--store", store, "--out", "/dev/null"]).status == 2)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["keep.txt"])
  }

  @Test func test_issue8_exportOverTheStore_isRefused_underAnySpelling() async throws {
    let dir = TemporaryDirectory()
    let store = try await Self.storeWithRecords(dir)
    let before = try #require(Self.bytes(store))
    let hardLink = dir.file("hard.sqlite")
    try FileManager.default.linkItem(atPath: store, toPath: hardLink)
    for out in [store, "./s.sqlite", dir.path + "/../" + (dir.path as NSString).lastPathComponent + "/s.sqlite", hardLink] {
      let result = try runForage(["export", "--store", "s.sqlite", "--out", out], in: dir.path)
      #expect(result.status == 2, "\(out): \(result.stderr)")
      #expect(result.stderr.contains("store"), "\(result.stderr)")
    }
    #expect(Self.bytes(store) == before)
    // The store still reads.
    let ok = try runForage(["export", "--store", store])
    #expect(ok.status == 0)
    #expect(ok.stdout.split(separator: "\n").count == 2)
  }

  @Test func test_issue8_exportOverARegularFile_replacesIt() async throws {
    let dir = TemporaryDirectory()
    let store = try await Self.storeWithRecords(dir)
    let out = try dir.write("out.jsonl", "old contents\n")
    let result = try runForage(["export", "--store", store, "--out", out, "--format", "csv"])
    #expect(result.status == 0, "\(result.stderr)")
    let text = try String(contentsOfFile: out, encoding: .utf8)
    #expect(text.hasPrefix("source,key,url"))
    #expect(!text.contains("old contents"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["out.jsonl", "s.sqlite"])
  }

  @Test func test_issue8_exportOfAnUnknownSource_isAnError() async throws {
    let dir = TemporaryDirectory()
    let store = try await Self.storeWithRecords(dir)
    let result = try runForage(["export", "--store", store, "--source", "nosuch"])
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("no source \"nosuch\""), "\(result.stderr)")
    let typo = try runForage(["export", "--store", store, "--source", "S"])
    #expect(typo.stderr.contains("did you mean \"s\"?"), "\(typo.stderr)")
  }

  @Test func test_issue8_tooShortBudget_isABadArgument() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", #"{"sources": [{"name": "s", "url": "http://127.0.0.1:9/", "extract": {"t": "h1"}}]}"#)
    let result = try runForage(["run", "--config", config, "--budget", "500ms"])
    #expect(result.status == 2)
    #expect(result.stderr.contains("too short"), "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.file("forage.sqlite")))
  }

  /// Starts `forage` with `arguments`, its output in files of `dir`.
  static func start(_ arguments: [String], in dir: TemporaryDirectory) throws -> Process {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: forageBinary())
    p.arguments = arguments
    _ = FileManager.default.createFile(atPath: dir.file("stdout"), contents: nil)
    _ = FileManager.default.createFile(atPath: dir.file("stderr"), contents: nil)
    p.standardOutput = FileHandle(forWritingAtPath: dir.file("stdout"))
    p.standardError = FileHandle(forWritingAtPath: dir.file("stderr"))
    try p.run()
    return p
  }

  /// A slow crawl: one request at a time, 100 ms apart, 300 products.
  static func slowConfig(_ base: String) -> String {
    """
    {"userAgent": "ForageSignalTest/1.0",
     "fetch": {"concurrency": 1, "perHostConcurrency": 1, "perHostDelay": "100ms", "adaptiveDelay": false},
     "sources": [{"name": "catalog", "url": "\(base)/",
                  "crawl": {"maxDepth": 6, "maxPages": 100000},
                  "match": "div.product", "key": ["sku"],
                  "extract": {"sku": {"css": "div.product", "attr": "data-sku", "required": true}}}]}
    """
  }

  @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
  func test_issue8_signal_stopsRunLikeTheBudget(_ signal: Int32, _ status: Int32) async throws {
    let server = try TestServer(site: DemoSite(products: 300))
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", Self.slowConfig(server.baseURL))
    let store = dir.file("s.sqlite")
    let p = try Self.start(["run", "--config", config, "--store", store, "--budget", "120s"], in: dir)
    // Wait until pages are being fetched, then signal once.
    let started = Date()
    while server.requestCount < 5 && Date().timeIntervalSince(started) < 60 {
      try await Task.sleep(for: .milliseconds(50))
    }
    kill(p.processIdentifier, signal)
    p.waitUntilExit()
    let stdout = try String(contentsOfFile: dir.file("stdout"), encoding: .utf8)
    let stderr = try String(contentsOfFile: dir.file("stderr"), encoding: .utf8)
    #expect(p.terminationReason == .exit)
    #expect(p.terminationStatus == status, "\(stderr)")
    #expect(stdout.contains("stopped on request"), "\(stdout)")
    #expect(stdout.contains("pages:"))
    // Closed cleanly: the file alone is complete, and a later run continues.
    let wal = (try? FileManager.default.attributesOfItem(atPath: store + "-wal")[.size] as? Int) ?? 0
    #expect(wal == 0)
    let opened = try SQLiteStore(path: store)
    let runs = try await opened.runs(limit: 1)
    #expect(runs.first?.summary?.outcome == .interrupted)
  }

  @Test func test_issue8_daemon_cleanExit_leavesNoDataInTheWAL() async throws {
    let server = try TestServer(site: DemoSite(products: 20))
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let config = try dir.write(
      "forage.json",
      """
      {"userAgent": "ForageDaemonTest/1.0", "fetch": {"perHostDelay": "0s"},
       "tasks": [{"id": "t", "kind": "processing", "every": "1h", "budget": "60s", "sources": ["catalog"]}],
       "sources": [{"name": "catalog", "url": "\(server.baseURL)/", "crawl": {"maxDepth": 6},
                    "match": "div.product", "key": ["sku"],
                    "extract": {"sku": {"css": "div.product", "attr": "data-sku", "required": true}}}]}
      """)
    let store = dir.file("d.sqlite")
    let p = try Self.start(["daemon", "--config", config, "--store", store], in: dir)
    let watcher = try SQLiteStore(path: store)
    let started = Date()
    while (try? await watcher.records(source: nil, afterID: 0, limit: 100).count) ?? 0 < 20,
      Date().timeIntervalSince(started) < 60
    {
      try await Task.sleep(for: .milliseconds(100))
    }
    try await watcher.close()
    kill(p.processIdentifier, SIGTERM)
    p.waitUntilExit()
    let stderr = try String(contentsOfFile: dir.file("stderr"), encoding: .utf8)
    #expect(p.terminationStatus == 0, "\(stderr)")
    let wal = (try? FileManager.default.attributesOfItem(atPath: store + "-wal")[.size] as? Int) ?? 0
    #expect(wal == 0, "the daemon left \(wal) bytes in the WAL")
    // The main file alone holds the records.
    let copy = dir.file("copy.sqlite")
    try FileManager.default.copyItem(atPath: store, toPath: copy)
    let records = try await SQLiteStore(path: copy).records(source: nil, afterID: 0, limit: 100)
    #expect(records.count == 20)
  }
}
