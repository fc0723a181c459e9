#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ForageScheduler
import ForageStore
import ForageSupport

/// The store as a ``SystemScheduler``'s ``PendingRequestPersistence``: pending
/// task requests are kept in the store they schedule work for, so a restarted
/// daemon keeps its schedule and a crash cannot leave the two disagreeing.
///
///     let pending = try await StorePendingRequests(store: store)
///     let scheduler = SystemScheduler(persistence: pending)
///     …
///     try await pending.flush()      // before closing the store
///     try await store.close()
///
/// The scheduler calls its persistence synchronously (from `submit(_:)`,
/// which cannot wait), while the store is asynchronous. So the set is read
/// once, here, and every saved set is written behind, in order, by one
/// writer; a set saved while an earlier one is being written replaces any
/// set still waiting, since each is whole. Each write changes, in one
/// transaction, only the requests that differ from what this persistence
/// last read or wrote (`Store.updatePendingTaskRequests`), so the requests
/// other daemons of a fleet keep in a shared store are never erased. A write
/// that fails is reported by the next ``savePendingRequests(_:)`` or
/// ``flush()``.
public final class StorePendingRequests: PendingRequestPersistence, Sendable {
  /// The set and its writer; the store is called only after unlocking.
  private struct State {
    /// The latest set: what the store holds once the writes are done.
    var requests: [AnyTaskRequest]
    /// A set not yet handed to the writer.
    var waiting: [PendingTaskRequest]?
    /// The writer, while it runs.
    var writer: Task<Void, Never>?
    /// A failed write not yet reported.
    var failure: (any Error)?
    /// What the store holds of this persistence's identifiers, as last read
    /// or written: each write sends only the difference.
    var written: [String: PendingTaskRequest]
  }

  private let store: any Store
  private let state: Locked<State>

  /// Reads the pending requests kept in `store`: all of them, or only those
  /// of `identifiers` (a daemon of a fleet reads its own config's tasks, and
  /// leaves the requests of tasks that other daemons run alone).
  ///
  /// - Throws: the store's error, or ``StorePendingRequestsError`` for a
  ///   request the scheduler does not know.
  public init(store: any Store, identifiers: Set<String>? = nil) async throws {
    self.store = store
    let rows = try await store.pendingTaskRequests().filter { identifiers?.contains($0.identifier) ?? true }
    state = Locked(
      State(
        requests: try rows.map(AnyTaskRequest.init(stored:)),
        written: Dictionary(rows.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })))
  }

  /// The requests read from the store, or the latest saved.
  public func loadPendingRequests() throws -> [AnyTaskRequest] {
    state.withLock { $0.requests }
  }

  /// Takes `requests` as the pending set and writes it to the store behind
  /// the caller (see ``flush()``).
  ///
  /// - Throws: the error of an earlier write that failed (this set is still
  ///   taken and written).
  public func savePendingRequests(_ requests: [AnyTaskRequest]) throws {
    let rows = requests.map(PendingTaskRequest.init)
    let failure: (any Error)? = state.withLock { s in
      s.requests = requests
      s.waiting = rows
      if s.writer == nil { s.writer = Task { await self.write() } }
      defer { s.failure = nil }
      return s.failure
    }
    if let failure { throw failure }
  }

  /// Returns when every saved set is in the store.
  ///
  /// - Throws: the error of a write that failed and was not reported yet.
  public func flush() async throws {
    while let writer = state.withLock({ $0.writer }) { await writer.value }
    let failure: (any Error)? = state.withLock { s in
      defer { s.failure = nil }
      return s.failure
    }
    if let failure { throw failure }
  }

  /// Imports the pending requests an earlier Forage kept in a JSON file beside
  /// the store (`forage.sqlite.pending.json`), when the store holds none. The
  /// file is only read, never changed or removed.
  ///
  /// Call it before handing this persistence to a scheduler.
  ///
  /// - Returns: how many requests were imported, or nil when nothing was
  ///   (the store holds requests, or there is no file at `path`).
  /// - Throws: when the file is not a regular file or cannot be read or
  ///   decoded, or the store cannot be written.
  public func importJSONFile(at path: String) async throws -> Int? {
    guard state.withLock({ $0.requests.isEmpty && $0.waiting == nil && $0.writer == nil }) else { return nil }
    var info = stat()
    guard stat(path, &info) == 0 else {
      let err = errno
      if err == ENOENT { return nil }
      throw StorePendingRequestsError("\(path) cannot be read (\(String(cString: strerror(err))))")
    }
    // Reading a FIFO or a device could wait forever.
    guard (info.st_mode & S_IFMT) == S_IFREG else {
      throw StorePendingRequestsError("\(path) is not a regular file")
    }
    let requests = try JSONDecoder().decode([AnyTaskRequest].self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    try savePendingRequests(requests)
    try await flush()
    return requests.count
  }

  /// The writer: writes the waiting set until none is left, then ends.
  /// Only what changed since the last write goes to the store.
  private func write() async {
    while true {
      let next: (rows: [PendingTaskRequest], written: [String: PendingTaskRequest])? = state.withLock { s in
        defer { s.waiting = nil }
        if s.waiting == nil { s.writer = nil }
        return s.waiting.map { ($0, s.written) }
      }
      guard let (rows, written) = next else { return }
      let changed = rows.filter { written[$0.identifier] != $0 }
      let kept = Set(rows.map(\.identifier))
      let removed = written.keys.filter { !kept.contains($0) }.sorted()
      do {
        try await store.updatePendingTaskRequests(changed, removing: removed)
        let now = Dictionary(rows.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        state.withLock { $0.written = now }
      } catch {
        state.withLock { $0.failure = error }
      }
    }
  }
}

/// A pending request in the store that the scheduler cannot read.
public struct StorePendingRequestsError: Error, CustomStringConvertible {
  /// What is wrong, as a sentence.
  public let description: String
  init(_ description: String) { self.description = description }
}

// The store's names for kinds and strategies are a storage format (the
// migration's checks name them too), spelled out here rather than taken from
// the Swift cases, so renaming a case cannot change what the store holds.

extension PendingTaskRequest {
  /// The store's form of `request`.
  init(_ request: AnyTaskRequest) {
    switch request {
    case .appRefresh(let r):
      self.init(identifier: r.identifier, kind: "appRefresh", earliestBeginDate: r.earliestBeginDate)
    case .processing(let r):
      self.init(
        identifier: r.identifier, kind: "processing", earliestBeginDate: r.earliestBeginDate,
        requiresNetworkConnectivity: r.requiresNetworkConnectivity, requiresExternalPower: r.requiresExternalPower)
    case .continuedProcessing(let r):
      let strategy = switch r.strategy {
      case .fail: "fail"
      case .queue: "queue"
      }
      self.init(
        identifier: r.identifier, kind: "continuedProcessing", earliestBeginDate: r.earliestBeginDate,
        continued: Continued(title: r.title, subtitle: r.subtitle, strategy: strategy))
    }
  }
}

extension AnyTaskRequest {
  /// The request `stored` holds.
  ///
  /// - Throws: ``StorePendingRequestsError`` for an unknown kind or strategy.
  init(stored: PendingTaskRequest) throws {
    let id = stored.identifier, date = stored.earliestBeginDate
    switch (stored.kind, stored.continued) {
    case ("appRefresh", nil):
      self = .appRefresh(AppRefreshTaskRequest(identifier: id, earliestBeginDate: date))
    case ("processing", nil):
      self = .processing(
        ProcessingTaskRequest(
          identifier: id, earliestBeginDate: date, requiresNetworkConnectivity: stored.requiresNetworkConnectivity,
          requiresExternalPower: stored.requiresExternalPower))
    case ("continuedProcessing", let c?) where c.strategy == "fail" || c.strategy == "queue":
      var r = ContinuedProcessingTaskRequest(
        identifier: id, title: c.title, subtitle: c.subtitle, strategy: c.strategy == "fail" ? .fail : .queue)
      r.earliestBeginDate = date
      self = .continuedProcessing(r)
    default:
      throw StorePendingRequestsError(
        "the store's pending request \(id) cannot be read: kind \"\(stored.kind)\"\(stored.continued.map { ", strategy \"\($0.strategy)\"" } ?? "")")
    }
  }
}
