import Foundation
import Testing
@testable import ForageStore
@testable import ForageSupport
#if Postgres
@testable import ForagePostgres
#endif

/// `ChangeFeedStore` on every store: a `ChangeStream` replays the kept
/// changes after its cursor in order, then yields new ones as they are
/// committed (through this store object or another on the same store), ends
/// on cancellation or `break` releasing its connection, and refuses to skip
/// pruned history.
@Suite struct ChangeStreamConformanceTests {
  /// Commits `records` for the single seed `n` of a fresh crawl.
  @discardableResult
  private func commit(_ store: any Store, _ n: Int, _ records: [RecordInput]) async throws -> [RecordChange] {
    let crawl = try await store.openCrawl(source: "crawl-\(n)", seeds: [seed(n)], now: t0)
    let items = try await claimFrontier(store, crawl.id, limit: 1, at: t0)
    return try await commitPages(store, [pageCommit(items[0], records: records, at: t0)]).changes
  }

  /// `count` new records of source `source`, keys `prefix0`…
  private func records(_ count: Int, _ prefix: String, source: String = "s") -> [RecordInput] {
    (0..<count).map { record("\(prefix)\($0)", source: source, fields: #"{"n":\#($0)}"#, hash: UInt64($0)) }
  }

  // MARK: Replay and live changes

  @Test(arguments: StoreKind.all) func test_start_replaysEveryChangeOldestFirst_thenYieldsNewCommits(
    _ kind: StoreKind
  ) async throws {
    try await withStore(kind) { store in
      // More than a page (StoreDefaults.changeStreamPage), in two commits and two sources.
      var written = try await commit(store, 1, records(300, "a"))
      written += try await commit(store, 2, records(20, "b", source: "other"))
      let watcher = StreamWatcher(store.changes(source: nil, after: .start))
      try await watcher.waitFor(count: 320)
      #expect(watcher.changes == written)

      written += try await commit(store, 3, records(3, "c"))
      try await watcher.waitFor(count: 323)
      #expect(watcher.changes == written)
      await watcher.stop()
      #expect(watcher.failure == nil)
    }
  }

  @Test(arguments: StoreKind.all) func test_source_yieldsOnlyThatSourcesChanges(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let mine = try await commit(store, 1, records(2, "a"))
      try await commit(store, 2, records(2, "b", source: "other"))
      let watcher = StreamWatcher(store.changes(source: "s", after: .start))
      try await watcher.waitFor(count: 2)
      try await commit(store, 3, records(1, "c", source: "other"))
      let later = try await commit(store, 4, records(1, "d"))
      try await watcher.waitFor(count: 3)
      await watcher.stop()
      #expect(watcher.changes == mine + later)
    }
  }

  @Test(arguments: StoreKind.all) func test_latest_yieldsOnlyChangesCommittedAfterTheCallReturned(
    _ kind: StoreKind
  ) async throws {
    try await withStore(kind) { store in
      try await commit(store, 1, records(2, "a"))
      let stream = store.changes(source: "s", after: .latest)
      // Committed after the call, before the first `next()`: still yielded.
      let after = try await commit(store, 2, records(2, "b"))
      let watcher = StreamWatcher(stream)
      try await watcher.waitFor(count: 2)
      await watcher.stop()
      #expect(watcher.changes == after)
    }
  }

  @Test(arguments: StoreKind.all) func test_afterCursor_resumesAfterThatChange(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let written = try await commit(store, 1, records(4, "a"))
      // The cursor as an app keeps it: its text, read back.
      let kept = try #require(ChangeCursor(written[1].cursor.description))
      let watcher = StreamWatcher(store.changes(source: "s", after: .after(kept)))
      try await watcher.waitFor(count: 2)
      await watcher.stop()
      #expect(watcher.changes == Array(written[2...]))
    }
  }

  @Test(arguments: StoreKind.all) func test_commitsThroughAnotherStoreObject_reachTheStream(
    _ kind: StoreKind
  ) async throws {
    // Two store objects on one store: no bell is shared, so what wakes the
    // stream is the store's own signal (SQLite's data_version, PostgreSQL's
    // NOTIFY), as for another process.
    try await withTwoStores(kind) { (a: any Store, b: any Store) async throws in
      let watcher = StreamWatcher(a.changes(source: "s", after: .latest))
      try await watcher.waitUntilWaiting(a)
      let written = try await commit(b, 1, records(3, "a"))
      try await watcher.waitFor(count: 3)
      let more = try await commit(b, 2, records(1, "b"))
      try await watcher.waitFor(count: 4)
      await watcher.stop()
      #expect(watcher.changes == written + more)
    }
  }

  // MARK: Ending and releasing

  @Test(arguments: StoreKind.all) func test_cancellingTheStreamsTask_endsIt_andClosesItsConnection(
    _ kind: StoreKind
  ) async throws {
    try await withStore(kind) { store in
      try await commit(store, 1, records(1, "a"))
      let watcher = StreamWatcher(store.changes(source: nil, after: .start))
      try await watcher.waitFor(count: 1)
      #expect(try await openStreamConnections(store) == 1)
      try await watcher.waitUntilWaiting(store)
      await watcher.stop()  // cancels and waits for the loop to end
      #expect(watcher.failure == nil)
      #expect(try await eventually { try await openStreamConnections(store) == 0 })
    }
  }

  @Test(arguments: StoreKind.all) func test_breakingOutOfTheLoop_closesTheStreamsConnection(
    _ kind: StoreKind
  ) async throws {
    try await withStore(kind) { store in
      try await commit(store, 1, records(3, "a"))
      var seen = 0
      for try await _ in store.changes(source: nil, after: .start) {
        seen += 1
        if seen == 2 { break }
      }
      #expect(seen == 2)
      #expect(try await eventually { try await openStreamConnections(store) == 0 })
      // A stream made and never read releases its connection with it.
      do { _ = store.changes(source: nil, after: .latest) }
      #expect(try await eventually { try await openStreamConnections(store) == 0 })
    }
  }

  // MARK: Pruned history

  @Test(arguments: StoreKind.all) func test_cursorInPrunedHistory_throwsNamingTheOldestCursorKept(
    _ kind: StoreKind
  ) async throws {
    try await withStore(kind) { store in
      let first = try await commit(store, 1, [record("a", fields: #"{"p":1}"#, hash: 1)])
      let second = try await commit(store, 2, [record("a", fields: #"{"p":2}"#, hash: 2)])
      let third = try await commit(
        store, 3, [record("a", fields: #"{"p":3}"#, hash: 3), record("b", fields: #"{"p":1}"#, hash: 4)])
      #expect(try await store.historyPrunedThrough(source: "s") == 0)
      // Keeps the newest change of each record: a's first two go.
      #expect(try await store.pruneHistory(["s": HistoryRetention(keep: 1)], now: t0) == 2)
      #expect(try await store.historyPrunedThrough(source: "s") == second[0].id)
      #expect(try await store.historyPrunedThrough(source: nil) == second[0].id)
      #expect(try await store.historyPrunedThrough(source: "other") == 0)

      let stale = StreamWatcher(store.changes(source: "s", after: first[0].cursor))
      try await stale.waitForEnd()
      let error = try #require(stale.failure as? ChangeHistoryPruned)
      #expect(error.oldestKept == second[0].cursor)
      #expect(error.cursor == first[0].cursor)
      #expect("\(error)".contains("the oldest cursor kept is \(second[0].id)"))
      #expect(stale.changes.isEmpty)

      // From the oldest cursor kept, and from the start, nothing is missing.
      let resumed = StreamWatcher(store.changes(source: "s", after: .after(error.oldestKept)))
      try await resumed.waitFor(count: 2)
      await resumed.stop()
      #expect(resumed.changes == third)
      let everything = StreamWatcher(store.changes(source: "s", after: .start))
      try await everything.waitFor(count: 2)
      await everything.stop()
      #expect(everything.changes == third)
    }
  }
}

// MARK: Cursors

@Suite struct ChangeCursorTests {
  @Test func test_cursor_textAndCodableForms_roundTrip() throws {
    let cursors: [ChangeCursor] = [.start, .latest, ChangeCursor(changeID: 0), ChangeCursor(changeID: 1234)]
    for cursor in cursors {
      #expect(ChangeCursor(cursor.description) == cursor)
      let data = try JSONEncoder().encode([cursor])
      #expect(try JSONDecoder().decode([ChangeCursor].self, from: data) == [cursor])
    }
    #expect(String(decoding: try JSONEncoder().encode([ChangeCursor(changeID: 42)]), as: UTF8.self) == "[42]")
    #expect(String(decoding: try JSONEncoder().encode([ChangeCursor.latest]), as: UTF8.self) == #"["latest"]"#)
    #expect(ChangeCursor(changeID: 42).changeID == 42 && ChangeCursor.start.changeID == nil)
    #expect(ChangeCursor.after(ChangeCursor(changeID: 7)) == ChangeCursor(changeID: 7))
    #expect(ChangeCursor("-1") == nil && ChangeCursor("soon") == nil)
    #expect(throws: DecodingError.self) { try JSONDecoder().decode([ChangeCursor].self, from: Data(#"["soon"]"#.utf8)) }
  }
}

// MARK: Helpers

/// Iterates a stream in a task of its own, keeping what it yields (and how
/// it ended) for the test to wait on.
final class StreamWatcher: Sendable {
  private struct State {
    var changes: [RecordChange] = []
    var failure: (any Error)?
    var ended = false
  }
  private let state = Locked(State())
  private let task: Task<Void, Never>

  init(_ stream: ChangeStream) {
    let state = self.state
    task = Task {
      do {
        for try await change in stream { state.withLock { $0.changes.append(change) } }
      } catch {
        state.withLock { $0.failure = error }
      }
      state.withLock { $0.ended = true }
    }
  }

  var changes: [RecordChange] { state.withLock { $0.changes } }
  var failure: (any Error)? { state.withLock { $0.failure } }

  /// Waits until the stream yielded `count` changes (or ended); a guard of
  /// 60 s only keeps a broken stream from hanging the suite.
  func waitFor(count: Int) async throws {
    let reached = try await eventually { [state] in
      state.withLock { $0.changes.count >= count || $0.ended }
    }
    #expect(reached, "the stream yielded \(changes.count) of \(count) changes")
    if let failure { throw failure }
  }

  /// Waits until the stream ended by itself.
  func waitForEnd() async throws {
    let ended = try await eventually { [state] in state.withLock { $0.ended } }
    #expect(ended, "the stream did not end")
  }

  /// Waits until the stream's task waits for a commit (this store's bell has a waiter).
  func waitUntilWaiting(_ store: any Store) async throws {
    let bell: ChangeBell? = {
      if let sqlite = store as? SQLiteStore { return sqlite.changeBell }
      #if Postgres
      if let postgres = store as? PostgresStore { return postgres.changeBell }
      #endif
      return nil
    }()
    let waiting = try await eventually { bell.map { $0.waiting > 0 } ?? true }
    #expect(waiting, "the stream never waited for a commit")
  }

  /// Cancels the iterating task and waits for it to end.
  func stop() async {
    task.cancel()
    await task.value
  }
}

/// Polls `condition` every 10 ms until it holds (true) or 60 s passed
/// (false): a guard against hanging, never a timing expectation.
func eventually(_ condition: @Sendable () async throws -> Bool) async throws -> Bool {
  let deadline = ContinuousClock.now + .seconds(60)
  while ContinuousClock.now < deadline {
    if try await condition() { return true }
    try await Task.sleep(for: .milliseconds(10))
  }
  return try await condition()
}

/// How many change streams of `store` hold a connection: the SQLite store's
/// count of open reading connections, or PostgreSQL's sessions named
/// `forage-changes` on the store's database.
func openStreamConnections(_ store: any Store) async throws -> Int {
  if let sqlite = store as? SQLiteStore { return sqlite.openChangeFeeds }
  #if Postgres
  if let postgres = store as? PostgresStore {
    return try await postgres.run(transaction: false) { db in
      try db.query(
        """
        SELECT count(*) FROM pg_stat_activity
        WHERE application_name = 'forage-changes' AND datname = current_database()
        """
      ).int(0, 0)
    }
  }
  #endif
  Issue.record("no connection count for \(type(of: store))")
  return -1
}
