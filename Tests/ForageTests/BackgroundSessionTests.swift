import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageSupport
@testable import Forage

/// What an iOS background session needs from Forage (issue 18): downloads
/// handed to a transfer outside Forage and taken in when it finishes, and
/// the system's completion handler kept until the session's events are done.
@Suite(.serialized) struct BackgroundSessionTests {
  /// A store and a destination folder, with `body` queued for it.
  struct Setup {
    let dir = TemporaryDirectory()
    let store: SQLiteStore
    let folder: String
    let downloads: Downloads

    init() throws {
      store = try SQLiteStore(path: dir.file("s.sqlite"))
      folder = dir.file("out")
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
      try FileManager.default.createDirectory(atPath: dir.file("tmp"), withIntermediateDirectories: true)
      downloads = Downloads(store: store, transport: Engine.defaultTransport())
    }

    /// A file the session would have written, somewhere else.
    func sessionFile(_ body: [UInt8]) throws -> URL {
      let url = URL(fileURLWithPath: dir.file("tmp/CFNetworkDownload_\(UUID().uuidString).tmp"))
      try Data(body).write(to: url)
      return url
    }
  }

  @Test func test_handOver_stageAndFinish_landsUnderAFreeName() async throws {
    let s = try Setup()
    let body = Array("the report".utf8)
    let entry = try await s.downloads.enqueue("https://example.com/files/report.pdf", to: s.folder, sha256: sha256Hex(body))
    try Data("someone else's".utf8).write(to: URL(fileURLWithPath: s.folder + "/report.pdf"))

    let handed = try await s.downloads.handOver(limit: 5, session: "com.example.downloads")
    #expect(handed.map(\.id) == [entry.id])
    let d = try #require(handed.first)
    #expect(d.url.absoluteString == "https://example.com/files/report.pdf")
    #expect(d.partPath.hasPrefix(s.folder + "/"))
    #expect(HandedOverDownload(taskDescription: d.taskDescription) == d)
    #expect(HandedOverDownload(taskDescription: "not ours") == nil)
    #expect(try await s.store.download(id: entry.id)?.state == .claimed)
    #expect(try await s.downloads.handOver(limit: 5, session: "com.example.downloads").isEmpty, "claimed once")

    let location = try s.sessionFile(body)
    try d.stage(location)
    #expect(!FileManager.default.fileExists(atPath: location.path), "moved before the delegate method returns")
    let result = await s.downloads.finishHandedOver(d, status: 200, headers: ["Content-Length": "\(body.count)"])
    #expect(result == .done)
    let done = try #require(try await s.store.download(id: entry.id))
    #expect(done.state == .done)
    #expect(done.path == s.folder + "/report-1.pdf")
    #expect(try Array(Data(contentsOf: URL(fileURLWithPath: s.folder + "/report-1.pdf"))) == body)
    #expect(try String(contentsOfFile: s.folder + "/report.pdf", encoding: .utf8) == "someone else's")
    #expect(!FileManager.default.fileExists(atPath: d.partPath))
  }

  @Test func test_finishHandedOver_badFile_isQueuedAgain_andErrorsAreSorted() async throws {
    let s = try Setup()
    let good = Array("good".utf8)
    let a = try await s.downloads.enqueue("https://example.com/a.bin", to: s.folder, sha256: sha256Hex(good))
    let b = try await s.downloads.enqueue("https://example.com/b.bin", to: s.folder)
    let c = try await s.downloads.enqueue("https://example.com/c.bin", to: s.folder)
    let handed = try await s.downloads.handOver(limit: 5, session: "x")
    #expect(handed.count == 3)

    // a: the wrong bytes fail verification: emptied, queued again, an attempt counted.
    try handed[0].stage(try s.sessionFile(Array("evil".utf8)))
    guard case .retryLater(let why) = await s.downloads.finishHandedOver(handed[0], status: 200, headers: [:]) else {
      Issue.record("expected the download to be queued again")
      return
    }
    #expect(why.contains("SHA-256"))
    let aEntry = try #require(try await s.store.download(id: a.id))
    #expect(aEntry.state == .queued && aEntry.attempts == 1)
    #expect(try FileManager.default.contentsOfDirectory(atPath: s.folder).filter { !$0.hasSuffix(".part") }.isEmpty)

    // b: a 404 fails it; c: a 503 is retried later.
    try handed[1].stage(try s.sessionFile(Array("not found".utf8)))
    guard case .failed(let error) = await s.downloads.finishHandedOver(handed[1], status: 404, headers: [:]) else {
      Issue.record("a 404 fails the download")
      return
    }
    #expect(error.kind == .http)
    #expect(try await s.store.download(id: b.id)?.state == .failed)
    try handed[2].stage(try s.sessionFile(Array("busy".utf8)))
    #expect(await s.downloads.finishHandedOver(handed[2], status: 503, headers: [:]) != .done)
    #expect(try await s.store.download(id: c.id)?.state == .queued)
  }

  @Test func test_handOverFailed_countsAttempts_thenFails() async throws {
    let s = try Setup()
    let entry = try await s.downloads.enqueue("https://example.com/x.bin", to: s.folder)
    for attempt in 1...DownloadDefaults.maxAttempts {
      let d = try #require(try await s.downloads.handOver(limit: 1, session: "x").first)
      let result = await s.downloads.handOverFailed(d, message: "the connection was lost")
      let stored = try #require(try await s.store.download(id: entry.id))
      #expect(stored.attempts == attempt)
      if attempt < DownloadDefaults.maxAttempts {
        #expect(result == .retryLater("the connection was lost"))
        #expect(stored.state == .queued)
      } else {
        #expect(stored.state == .failed)
        #expect(stored.lastError?.contains("the connection was lost") == true)
      }
    }
  }

  @Test func test_events_handlerWaitsForTheEventsAndTheirWork() async throws {
    let events = BackgroundSessionEvents()
    let calls = Locked(0)
    let (started, start) = AsyncStream<Void>.makeStream()
    let (released, release) = AsyncStream<Void>.makeStream()
    events.keep({ calls.withLock { $0 += 1 } }, forSession: "s")
    #expect(events.isWaiting(forSession: "s"))
    events.track(forSession: "s") {
      start.yield()
      for await _ in released { break }
    }
    // The work runs and waits: the handler could only come from the
    // session's end, which has not come.
    for await _ in started { break }
    #expect(calls.withLock { $0 } == 0, "the session has not finished its events")
    // The session's end, run on an executor the test can drain: once it has
    // run every job it was given, finishedEvents did all it does before the
    // work ends (a handler called then would have been called by now).
    let executor = QueueTaskExecutor()
    let finishing = Task(executorPreference: executor) { await events.finishedEvents(forSession: "s") }
    await executor.drain()
    #expect(calls.withLock { $0 } == 0, "the work of an event is still running")
    release.yield()
    release.finish()
    await finishing.value
    #expect(calls.withLock { $0 } == 1)
    await events.finishedEvents(forSession: "s")
    #expect(calls.withLock { $0 } == 1, "called once")
    #expect(!events.isWaiting(forSession: "s"))
  }

  @Test func test_events_finishedBeforeTheHandlerCame_callsItWhenKept() async {
    let events = BackgroundSessionEvents()
    let calls = Locked(0)
    await events.finishedEvents(forSession: "s")
    events.keep({ calls.withLock { $0 += 1 } }, forSession: "other")
    #expect(calls.withLock { $0 } == 0, "another session's handler waits for its own events")
    events.keep({ calls.withLock { $0 += 1 } }, forSession: "s")
    #expect(calls.withLock { $0 } == 1)
  }
}

/// A task executor on one serial queue. A task that prefers it runs there,
/// and `drain()` tells when every job handed to it so far has run: the task
/// then went as far as it can before it waits for something (it gives the
/// test the moment after which a thing it would do has been done).
final class QueueTaskExecutor: TaskExecutor {
  private let queue = DispatchQueue(label: "forage.tests.task-executor")

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
  }

  /// Returns once every job enqueued before the call has run.
  func drain() async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in queue.async { done.resume() } }
  }
}
