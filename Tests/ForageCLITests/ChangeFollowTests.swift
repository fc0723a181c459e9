import Foundation
import Testing
import ForageStore
import ForageSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if Postgres
@testable import ForagePostgres
#endif

/// `forage changes --follow`: a change stream in another process than the
/// one committing (this test), on both stores: it sees the commits as they
/// land, and a follower killed with SIGKILL resumes from the last cursor it
/// printed without losing or repeating a change (issue 30).
@Suite(.serialized) struct ChangeFollowTests {
  /// Runs `body` with a new store of `kind` (opened here, as the committing
  /// process) and the location the child is given.
  func withStore(_ kind: ChildStoreKind, _ body: (any Store, String) async throws -> Void) async throws {
    try await withChildStore(kind, in: TemporaryDirectory(), body)
  }

  /// Commits `count` new records of source `s` (a crawl of one page `n`).
  @discardableResult
  func commit(_ store: any Store, _ n: Int, _ count: Int) async throws -> [RecordChange] {
    let seed = FrontierSeed(url: "https://example.com/\(n)", fingerprint: UInt64(n) &* 0x9E37_79B9_7F4A_7C15, depth: 0)
    let crawl = try await store.openCrawl(source: "crawl-\(n)", seeds: [seed], now: Date())
    let items = try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "test", for: .seconds(60), at: Date()))
    let records = (0..<count).map {
      RecordInput(
        source: "s", key: "k\(n)-\($0)", url: seed.url, fieldsJSON: #"{"n":\#($0)}"#, contentHash: UInt64(n * 1000 + $0))
    }
    let page = PageCommit(item: items[0], outcome: .done, page: nil, records: records, discovered: [], now: Date())
    return try await store.commit([page]).changes
  }

  @Test(arguments: ChildStoreKind.all) func test_follow_printsTheCommitsOfAnotherProcess_asTheyLand(_ kind: ChildStoreKind) async throws {
    try await withStore(kind) { store, location in
      let before = try await commit(store, 1, 2)
      let follower = try Follower(["changes", "--store", location, "--follow", "--json", "--after", "start"])
      try await follower.waitFor(lines: 2)
      let later = try await commit(store, 2, 3)
      try await follower.waitFor(lines: 5)
      let more = try await commit(store, 3, 1)
      try await follower.waitFor(lines: 6)
      #expect(follower.ids == (before + later + more).map(\.id))
      let status = follower.stop(SIGTERM)
      #expect(status == 0, "\(follower.stderr)")
    }
  }

  @Test(arguments: ChildStoreKind.all) func test_follow_killedFollower_resumesFromItsLastCursor(_ kind: ChildStoreKind) async throws {
    try await withStore(kind) { store, location in
      try await commit(store, 1, 1)
      let first = try Follower(["changes", "--store", location, "--source", "s", "--follow", "--json"])
      try await first.waitUntilStarted(store)
      let seen = try await commit(store, 2, 3)
      try await first.waitFor(lines: 3)
      _ = first.stop(SIGKILL)
      let kept = try #require(first.ids.last)
      #expect(first.ids == seen.map(\.id))

      // Committed while nothing follows.
      let missed = try await commit(store, 3, 2)
      let second = try Follower([
        "changes", "--store", location, "--source", "s", "--follow", "--json", "--after", String(kept), "--limit", "2",
      ])
      let status = try await second.waitForExit()
      #expect(status == 0, "\(second.stderr)")
      #expect(second.ids == missed.map(\.id))
    }
  }

  @Test func test_follow_usageMistakes_areBadInput() throws {
    let dir = TemporaryDirectory()
    let path = dir.file("forage.sqlite")
    for (arguments, message) in [
      (["--after", "12"], "--after applies to --follow only"),
      (["--follow", "--after", "soon"], "--after expects a change id"),
      (["--follow", "--since", "1h"], "--since does not apply to --follow"),
    ] {
      let result = try runForage(["changes", "--store", path] + arguments)
      #expect(result.status == 2)
      #expect(result.stderr.contains(message), "\(result.stderr)")
    }
  }
}

/// A `forage` child whose standard output is read line by line as it comes.
final class Follower: Sendable {
  private let process: Process
  private let output = Locked((out: Data(), err: Data(), outEnded: false))

  init(_ arguments: [String]) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: forageBinary())
    p.arguments = arguments
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    let output = self.output
    out.fileHandleForReading.readabilityHandler = { handle in
      let data = handle.availableData
      output.withLock {
        $0.out.append(data)
        if data.isEmpty { $0.outEnded = true }
      }
      if data.isEmpty { handle.readabilityHandler = nil }
    }
    err.fileHandleForReading.readabilityHandler = { handle in
      let data = handle.availableData
      output.withLock { $0.err.append(data) }
      if data.isEmpty { handle.readabilityHandler = nil }
    }
    try p.run()
    process = p
  }

  /// The complete lines printed so far.
  var lines: [String] {
    let text = String(decoding: output.withLock { $0.out }, as: UTF8.self)
    return text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
  }

  /// The `id` of each JSON line printed so far.
  var ids: [Int64] {
    lines.compactMap { line in
      guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
      return (object["id"] as? NSNumber)?.int64Value
    }
  }

  var stderr: String { String(decoding: output.withLock { $0.err }, as: UTF8.self) }

  /// Waits until `lines` lines were printed; a guard of 60 s keeps a broken
  /// follower from hanging the suite.
  func waitFor(lines count: Int) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while lines.count < count && ContinuousClock.now < deadline && process.isRunning {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(lines.count >= count, "the follower printed \(lines.count) of \(count) lines; stderr: \(stderr)")
  }

  /// Waits until the follower has its stream open: its reading connection
  /// shows (a SQLite follower has the store's file open twice).
  func waitUntilStarted(_ store: any Store) async throws {
    #if Postgres
    if let postgres = store as? PostgresStore {
      let deadline = ContinuousClock.now + .seconds(60)
      while ContinuousClock.now < deadline {
        let count = try await postgres.run(transaction: false) { db in
          try db.query(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'forage-changes' AND datname = current_database()"
          ).int(0, 0)
        }
        if count > 0 { return }
        try await Task.sleep(for: .milliseconds(10))
      }
      Issue.record("the follower never opened its stream")
      return
    }
    #endif
    try await waitForSQLiteReader()
  }

  /// Waits until the child has the store's file open twice: the store it
  /// opened and its stream's own reading connection (then open, and
  /// `.latest` resolved).
  private func waitForSQLiteReader() async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    let fdFolder = "/proc/\(process.processIdentifier)/fd"
    while ContinuousClock.now < deadline && process.isRunning {
      let links = (try? FileManager.default.contentsOfDirectory(atPath: fdFolder)) ?? []
      let opened = links.filter { name in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: fdFolder + "/" + name))?.hasSuffix(".sqlite") ?? false
      }
      if opened.count >= 2 { return }
      try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("the follower never opened its stream; stderr: \(stderr)")
  }

  /// Sends `signal` and waits for the exit; returns the exit status.
  func stop(_ signal: Int32) -> Int32 {
    kill(process.processIdentifier, signal)
    process.waitUntilExit()
    return process.terminationStatus
  }

  /// Waits for the follower to exit by itself (60 s guard, then SIGKILL).
  func waitForExit() async throws -> Int32 {
    let deadline = ContinuousClock.now + .seconds(60)
    while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
    if process.isRunning {
      Issue.record("the follower did not end by itself")
      kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
    // What it printed last may still be in the pipe: read to its end.
    let end = ContinuousClock.now + .seconds(60)
    while !output.withLock({ $0.outEnded }) && ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(10)) }
    return process.terminationStatus
  }
}
