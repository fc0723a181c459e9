import Foundation
import Testing
import Forage
import ForageScheduler
import ForageStore

@Suite struct StorePendingRequestsTests {
  /// Whole seconds since 1970: the store keeps dates to the millisecond.
  static let due = Date(timeIntervalSince1970: 1_900_000_000)

  func scheduler(_ persistence: any PendingRequestPersistence) -> SystemScheduler {
    let s = SystemScheduler(persistence: persistence, log: .silent)
    for id in ["p", "r", "x"] { s.register(id) { _ in } }
    s.finishLaunching()
    return s
  }

  @Test func test_systemScheduler_restartedOnTheStore_keepsItsSchedule() async throws {
    let dir = TemporaryDirectory()
    let path = dir.file("s.sqlite")
    do {
      let store = try SQLiteStore(path: path)
      let pending = try await StorePendingRequests(store: store)
      let first = scheduler(pending)
      try first.submit(AppRefreshTaskRequest(identifier: "r", earliestBeginDate: Self.due))
      try first.submit(ProcessingTaskRequest(identifier: "p", requiresExternalPower: true))
      first.cancel(taskRequestWithIdentifier: "p")
      try first.submit(ProcessingTaskRequest(identifier: "p", requiresNetworkConnectivity: true))
      var export = ContinuedProcessingTaskRequest(identifier: "x", title: "Export", subtitle: "0 of 4", strategy: .fail)
      export.earliestBeginDate = Self.due + 0.25
      try first.submit(export)
      try await pending.flush()
      try await store.close()
    }
    let store = try SQLiteStore(path: path)
    let second = scheduler(try await StorePendingRequests(store: store))
    var export = ContinuedProcessingTaskRequest(identifier: "x", title: "Export", subtitle: "0 of 4", strategy: .fail)
    export.earliestBeginDate = Self.due + 0.25
    #expect(await second.pendingTaskRequests().map(AnyTaskRequest.init) == [
      .processing(ProcessingTaskRequest(identifier: "p", requiresNetworkConnectivity: true)),
      .appRefresh(AppRefreshTaskRequest(identifier: "r", earliestBeginDate: Self.due)),
      .continuedProcessing(export),
    ])
    #expect(try await store.pendingTaskRequests().map(\.kind) == ["processing", "appRefresh", "continuedProcessing"])
  }

  @Test func test_savesWrittenBehind_inOrder_theLastSetWins() async throws {
    let store = try SQLiteStore(path: ":memory:")
    let pending = try await StorePendingRequests(store: store)
    var sets: [[AnyTaskRequest]] = []
    for n in 0..<200 {
      sets.append((0...(n % 7)).map {
        .appRefresh(AppRefreshTaskRequest(identifier: "t\($0)", earliestBeginDate: Self.due + Double(n)))
      })
    }
    for set in sets { try pending.savePendingRequests(set) }
    #expect(try pending.loadPendingRequests() == sets.last)
    try await pending.flush()
    let stored = try await store.pendingTaskRequests()
    #expect(stored.map(\.identifier) == (0...(199 % 7)).map { "t\($0)" })
    #expect(Set(stored.map(\.earliestBeginDate)) == [Self.due + 199])
  }

  @Test func test_aFailedWrite_isReportedByTheNextSave_andByFlush() async throws {
    let store = try SQLiteStore(path: ":memory:")
    let pending = try await StorePendingRequests(store: store)
    try await store.close()
    try pending.savePendingRequests([.appRefresh(AppRefreshTaskRequest(identifier: "r"))])  // the write fails behind
    await #expect(throws: StoreError.self) { try await pending.flush() }
    try await pending.flush()  // each failure is reported once
    try pending.savePendingRequests([])
    var reported = false
    for _ in 0..<500 where !reported {
      try await Task.sleep(for: .milliseconds(10))
      do { try pending.savePendingRequests([]) } catch { reported = error is StoreError }
    }
    #expect(reported, "the next save reports the failed write")
  }

  @Test func test_importJSONFile_onlyIntoAnEmptyStore_andTheFileIsKept() async throws {
    let dir = TemporaryDirectory()
    let file = dir.file("s.sqlite.pending.json")
    let old: [AnyTaskRequest] = [
      .appRefresh(AppRefreshTaskRequest(identifier: "r", earliestBeginDate: Self.due)),
      .processing(ProcessingTaskRequest(identifier: "p", requiresExternalPower: true)),
    ]
    // As the daemon wrote it before the store kept pending requests.
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    let bytes = try encoder.encode(old)
    try bytes.write(to: URL(fileURLWithPath: file))

    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    #expect(try await StorePendingRequests(store: store).importJSONFile(at: dir.file("missing.json")) == nil)
    let pending = try await StorePendingRequests(store: store)
    #expect(try await pending.importJSONFile(at: file) == 2)
    #expect(try pending.loadPendingRequests() == old)
    #expect(try await store.pendingTaskRequests().map(\.identifier) == ["p", "r"])
    #expect(FileManager.default.contents(atPath: file) == bytes, "the user's file is never changed")
    // Once the store holds requests, the file is not read again.
    let restarted = try await StorePendingRequests(store: store)
    #expect(try await restarted.importJSONFile(at: file) == nil)
    // A folder or a FIFO in its place is refused, not read.
    let empty = try SQLiteStore(path: ":memory:")
    await #expect(throws: (any Error).self) { try await StorePendingRequests(store: empty).importJSONFile(at: dir.path) }
    #expect(try await empty.pendingTaskRequests().isEmpty)
  }
}
