import Foundation
import Testing
@testable import Forage
import ForageStore
import ForageTestSupport

/// `Engine.deliver(to:as:)`: every change once in order, in batches, the
/// sink's cursor kept in the store and moved only after `apply` returned.
@Suite struct RecordSinkTests {
  /// Keeps what it is given; throws on the batch numbers in `failing`.
  final class MemorySink: RecordSink, @unchecked Sendable {
    // @unchecked: `batches` and `failing` are only touched under `lock`.
    private let lock = NSLock()
    private var _batches: [[Int64]] = []
    private var failing: Set<Int>
    private var calls = 0

    init(failing: Set<Int> = []) { self.failing = failing }

    var batches: [[Int64]] { lock.withLock { _batches } }

    struct Refused: Error {}

    func apply(_ changes: [RecordChange]) async throws {
      try lock.withLock {
        calls += 1
        if failing.remove(calls) != nil { throw Refused() }
        _batches.append(changes.map(\.id))
      }
    }
  }

  /// A store with `count` new records of source "catalog" (one change each).
  func store(records count: Int, in dir: TemporaryDirectory) async throws -> (any Store, [Int64]) {
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let changes = try await RecordWriter(store: store, source: "catalog").crawl(
      (0..<count).map { ("k\($0)", #"{"n":\#($0)}"#) }, at: recordT0)
    return (store, changes.map(\.id))
  }

  @Test func test_everyChange_inOrder_inBatches_once() async throws {
    let dir = TemporaryDirectory()
    let (store, ids) = try await store(records: 7, in: dir)
    let engine = recordEngine(store, sources: ["catalog"])
    let sink = MemorySink()
    let report = try await engine.deliver(to: sink, as: "memory", batchSize: 3)
    #expect(sink.batches == [Array(ids[0..<3]), Array(ids[3..<6]), [ids[6]]])
    #expect(report == SinkDelivery(sink: "memory", delivered: 7, batches: 3, cursor: ids[6], caughtUp: true))
    #expect(try await store.sinkCursor("memory") == ids[6])

    // Nothing new: nothing delivered. New changes: only those.
    let again = try await engine.deliver(to: sink, as: "memory", batchSize: 3)
    #expect(again.delivered == 0 && again.caughtUp && sink.batches.count == 3)
    let more = try await RecordWriter(store: store, source: "catalog").crawl(
      (0..<8).map { ("k\($0)", #"{"n":\#($0)}"#) }, at: recordT0 + 60)
    try await engine.deliver(to: sink, as: "memory", batchSize: 3)
    #expect(sink.batches.dropFirst(3).flatMap { $0 } == more.map(\.id))
    // Another name starts from the oldest change kept.
    let other = MemorySink()
    try await engine.deliver(to: other, as: "other")
    #expect(other.batches == [ids + more.map(\.id)])
  }

  @Test func test_aFailedApply_leavesTheCursorBeforeItsBatch_whichComesAgain() async throws {
    let dir = TemporaryDirectory()
    let (store, ids) = try await store(records: 6, in: dir)
    let engine = recordEngine(store, sources: ["catalog"])
    let sink = MemorySink(failing: [2])
    await #expect(throws: MemorySink.Refused.self) {
      try await engine.deliver(to: sink, as: "memory", batchSize: 2)
    }
    #expect(sink.batches == [Array(ids[0..<2])])
    #expect(try await store.sinkCursor("memory") == ids[1])
    let report = try await engine.deliver(to: sink, as: "memory", batchSize: 2)
    #expect(sink.batches == [Array(ids[0..<2]), Array(ids[2..<4]), Array(ids[4..<6])])
    #expect(report.delivered == 4 && report.cursor == ids[5])
  }

  @Test func test_aPassedDeadlineOrAStop_startsNoBatch() async throws {
    let dir = TemporaryDirectory()
    let (store, _) = try await store(records: 3, in: dir)
    let engine = recordEngine(store, sources: ["catalog"])
    let sink = MemorySink()
    let late = try await engine.deliver(to: sink, as: "memory", until: .now - .seconds(1))
    #expect(late.delivered == 0 && !late.caughtUp && sink.batches.isEmpty)
    let stop = StopRequest()
    _ = stop.request()
    let stopped = try await engine.deliver(to: sink, as: "memory", stop: stop)
    #expect(stopped.delivered == 0 && !stopped.caughtUp && sink.batches.isEmpty)
    #expect(try await store.sinkCursor("memory") == 0)
  }

  @Test func test_oneSourceOnly_movesTheCursorPastTheOthers() async throws {
    let dir = TemporaryDirectory()
    let (store, ids) = try await store(records: 2, in: dir)
    let outlet = try await RecordWriter(store: store, source: "outlet").crawl([("x", #"{"n":1}"#)], at: recordT0)
    let engine = recordEngine(store, sources: ["catalog", "outlet"])
    let sink = MemorySink()
    try await engine.deliver(to: sink, as: "memory", source: "outlet")
    #expect(sink.batches == [outlet.map(\.id)])
    #expect(try await store.sinkCursor("memory") == outlet[0].id)
    #expect(outlet[0].id > ids[1])
  }

  /// Pruning keeps what a sink delivered to within the retention has not
  /// applied; a sink left longer is told (naming the oldest cursor kept)
  /// instead of silently missing changes, and can be moved on.
  @Test func test_issue30_pruningKeepsWhatASinkHasNotApplied_andALapsedSinkIsTold() async throws {
    let dir = TemporaryDirectory()
    let (store, ids) = try await store(records: 4, in: dir)
    let engine = recordEngine(store, sources: ["catalog"])
    let sink = MemorySink(failing: [2])
    await #expect(throws: MemorySink.Refused.self) {
      try await engine.deliver(to: sink, as: "memory", batchSize: 2)
    }
    #expect(try await store.sinkCursor("memory") == ids[1])
    // Every change is past maxAge; the sink was delivered to just now.
    let retention = ["catalog": HistoryRetention(maxAge: .seconds(86_400))]
    #expect(try await store.pruneHistory(retention, now: Date()) == 2)
    let report = try await engine.deliver(to: sink, as: "memory", batchSize: 2)
    #expect(report.delivered == 2 && report.caughtUp)
    #expect(sink.batches == [Array(ids[0..<2]), Array(ids[2..<4])])

    // Two days without a delivery: the sink no longer holds the history.
    let more = try await RecordWriter(store: store, source: "catalog").crawl(
      (0..<2).map { ("m\($0)", #"{"n":\#($0)}"#) }, at: recordT0 + 60)
    let newest = try #require(more.map(\.id).max())
    // The two the sink applied, the crawl's new records and its removals of
    // the others: all past maxAge, and nothing held.
    #expect(try await store.pruneHistory(retention, now: Date() + 2 * 86_400) == 2 + more.count)
    let error = try await #require(throws: ChangeHistoryPruned.self) {
      try await engine.deliver(to: sink, as: "memory")
    }
    #expect(error.sink == "memory")
    #expect(error.cursor == ChangeCursor(changeID: ids[3]))
    #expect(error.oldestKept == ChangeCursor(changeID: newest))
    #expect("\(error)".contains("sink \"memory\""))
    #expect("\(error)".contains("the oldest cursor kept is \(newest)"))
    #expect(sink.batches.count == 2)
    #expect(try await store.sinkCursor("memory") == ids[3])

    // Moved to the oldest cursor kept, it goes on with what comes next.
    try await engine.moveSink(named: "memory", to: error.oldestKept)
    #expect(try await engine.deliver(to: sink, as: "memory").delivered == 0)
    let later = try await RecordWriter(store: store, source: "catalog").crawl(
      [("z", #"{"n":1}"#)], at: recordT0 + 120)
    try await engine.deliver(to: sink, as: "memory")
    #expect(sink.batches.last == later.map(\.id))
    try await engine.moveSink(named: "memory", to: .start)
    #expect(try await store.sinkCursor("memory") == 0)
    try await engine.moveSink(named: "memory", to: .latest)
    #expect(try await store.sinkCursor("memory") == later.map(\.id).max())
  }

  /// A sink registered with the engine is fed by a task's launch after its
  /// crawl: the launch's new record arrives without the app asking.
  @Test func test_aRegisteredSink_isDeliveredToByATaskLaunch() async throws {
    let server = try TestServer(routes: [
      "/item/1": Route { _ in .html("<h1>Kettle</h1>") },
      "/robots.txt": Route { _ in .text("User-agent: *\nAllow: /\n") },
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let engine = Engine(
      config: ForageConfig(
        tasks: [TaskDefinition(id: "t.refresh", sources: ["prices"])],
        sources: [Source(name: "prices", url: server.url("/item/1"), extract: ["title": "h1"])]),
      store: store)
    let sink = MemorySink()
    let name = "launch-\(UUID().uuidString)"
    Engine.registerSink(sink, as: name)
    defer { Engine.unregisterSink(named: name) }
    let summary = try await engine.run(task: "t.refresh", budget: .seconds(30))
    #expect(summary.recordsNew == 1)
    let changes = try await store.changes(source: "prices", afterID: 0, limit: 10)
    #expect(changes.count == 1)
    #expect(sink.batches == [changes.map(\.id)])
    #expect(try await store.sinkCursor(name) == changes[0].id)
  }
}
