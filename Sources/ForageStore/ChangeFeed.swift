import Foundation
import ForageSupport

/// A store's change history as a live stream: the store piece behind
/// ``ChangeStream`` (and `Engine.changes(source:after:)`).
public protocol ChangeFeedStore: AnyObject, Sendable {
  /// The changes of `source` (every source when nil) after `cursor`, oldest
  /// first, then each new one as its commit lands (see ``ChangeStream``).
  ///
  ///     for try await change in store.changes(source: "catalog", after: .latest) { … }
  ///
  /// Made at once, without waiting: the stream's own reading connection is
  /// opened here (and `.latest` resolved on it), and a failure to open it is
  /// thrown by the stream's first `next()`.
  nonisolated func changes(source: String?, after cursor: ChangeCursor) -> ChangeStream

  /// The highest change id that ``RecordStore/pruneHistory(_:now:)`` dropped
  /// of `source` (of any source when nil); 0 when it dropped none. Every
  /// change above it is still kept, so ``ChangeCursor/after(_:)`` of it is
  /// the oldest cursor a stream can resume from without a gap.
  ///
  /// - Throws: `StoreError` when a statement fails.
  func historyPrunedThrough(source: String?) async throws -> Int64
}

/// One page of the history as a ``ChangeFeed`` reads it: the changes and, in
/// the same snapshot (read after them), the pruned mark of their source.
package struct ChangePage: Sendable {
  package var changes: [RecordChange]
  /// `ChangeFeedStore.historyPrunedThrough(source:)` of the page's source.
  package var prunedThrough: Int64

  package init(changes: [RecordChange], prunedThrough: Int64) {
    self.changes = changes
    self.prunedThrough = prunedThrough
  }
}

/// What a ``ChangeStream`` reads and waits on: one per stream, opened by its
/// store, used by one iterator at a time, and closed when the stream ends.
package protocol ChangeFeed: AnyObject, Sendable {
  /// The newest change id when the feed opened (0 for an empty history):
  /// where `.latest` starts.
  var latestAtOpen: Int64 { get }

  /// Up to `limit` changes after `afterID`, oldest first, with the pruned
  /// mark read after them.
  func read(source: String?, afterID: Int64, limit: Int) async throws -> ChangePage

  /// Returns when changes may have been committed since the last ``read``
  /// began: at once for a commit of this process through the same store,
  /// within a second for another process's; or when the calling task is
  /// cancelled. May return without a new change (the stream reads again).
  func waitForCommits() async throws

  /// Releases the feed's connection (and whatever else it holds); reads
  /// after it throw. Idempotent; a feed released without it closes itself.
  func close()
}

/// The wake-up of a store's change streams in this process: the store rings
/// it after a commit that wrote changes, every stream waiting on it wakes.
///
///     let seen = bell.generation
///     … read …
///     await bell.wait(after: seen)   // returns once rung since `seen`
///
/// Unlike `WakeSignal` (one waiter), any number of streams wait on it; a
/// cancelled wait returns at once and leaves nothing behind.
package final class ChangeBell: Sendable {
  private struct State {
    var generation: UInt64 = 0
    var latest: Int64 = 0
    var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    var nextWaiter = 0
  }

  private let state = Locked(State())

  /// A bell never rung.
  package init() {}

  /// How many times it was rung: a waiter remembers it before reading.
  package var generation: UInt64 { state.withLock { $0.generation } }

  /// The highest change id rung (0 before any): the newest change of a
  /// store only this process writes (`:memory:`).
  package var latest: Int64 { state.withLock { $0.latest } }

  /// How many waits are in progress (for tests: a stream is waiting).
  package var waiting: Int { state.withLock { $0.waiters.count } }

  /// Wakes every waiter; `latest` is the highest change id just committed.
  package func ring(latest: Int64?) {
    let waiters = state.withLock { s in
      s.generation &+= 1
      if let latest { s.latest = max(s.latest, latest) }
      defer { s.waiters.removeAll() }
      return Array(s.waiters.values)
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Returns once the bell was rung after `generation` was read, or at once
  /// when the calling task is cancelled.
  package func wait(after generation: UInt64) async {
    let id = state.withLock { s in
      defer { s.nextWaiter += 1 }
      return s.nextWaiter
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
        let now = state.withLock { s -> Bool in
          // Under the lock: the cancellation handler either ran already
          // (seen here) or runs later and finds the waiter to resume.
          if s.generation != generation || Task.isCancelled { return true }
          s.waiters[id] = c
          return false
        }
        if now { c.resume() }
      }
    } onCancel: {
      state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
  }

  /// ``wait(after:)`` for at most `timeout`.
  package func wait(after generation: UInt64, timeout: Duration) async {
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await self.wait(after: generation) }
      group.addTask { try? await Task.sleep(for: timeout) }
      await group.next()
      group.cancelAll()
    }
  }
}

/// A ``ChangeStream``, or a record sink's delivery, could not go on without
/// skipping changes: the ones after its cursor were pruned from the store's
/// history.
///
/// Resume from ``oldestKept`` (every change after it is kept) or from
/// `.start` (everything kept), knowing that some changes were lost.
public struct ChangeHistoryPruned: Error, Sendable, Hashable, CustomStringConvertible {
  /// The stream's source; nil for every source.
  public var source: String?
  /// Where the stream was: the changes after it are no longer all kept.
  public var cursor: ChangeCursor
  /// The oldest cursor from which the history is complete.
  public var oldestKept: ChangeCursor
  /// The record sink whose delivery stopped; nil for a stream.
  public var sink: String?

  /// The error for a stream (or the sink `sink`) of `source` at `cursor`;
  /// `oldestKept` is where the kept history is complete.
  public init(source: String?, cursor: ChangeCursor, oldestKept: ChangeCursor, sink: String? = nil) {
    self.source = source
    self.cursor = cursor
    self.oldestKept = oldestKept
    self.sink = sink
  }

  /// A sentence for the user.
  public var description: String {
    let whose = source.map { "of source \"\($0)\"" } ?? "of the store"
    guard let sink else {
      return
        "Some changes \(whose) after cursor \(cursor) were pruned from the history, so the stream cannot go on "
        + "without skipping them; the oldest cursor kept is \(oldestKept) (resume after it, or from the start)."
    }
    return
      "Some changes \(whose) after the cursor \(cursor) of sink \"\(sink)\" were pruned from the history (it was "
      + "not delivered to for longer than their retention), so its delivery cannot go on without skipping them; "
      + "the oldest cursor kept is \(oldestKept) (move the sink there, or to the start, knowing that some were lost)."
  }
}

