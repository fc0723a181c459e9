import Foundation
import ForageSupport

/// The live history of a store's changes: an `AsyncSequence` of
/// ``RecordChange`` that first replays the changes kept after its cursor,
/// oldest first (read in pages), then waits for new ones and yields each as
/// its commit lands.
///
///     for try await change in engine.changes(source: "catalog", after: .latest) {
///       print(change.kind, change.key, change.cursor)
///     }
///
/// Commits of this process through the same store wake it at once; commits
/// of another process on the same store (`forage run`, the daemon) within a
/// second: SQLite's `PRAGMA data_version` is polled on the stream's own
/// reading connection, and a PostgreSQL stream listens on a connection of its
/// own for the `forage_changes` notification that every commit writing
/// changes sends.
///
/// Breaking out of the loop, or cancelling its task, ends it at once (a
/// cancelled stream ends as if finished, returning nil) and releases its
/// connection. A stream that would skip changes because they were pruned
/// from the history (`Store.pruneHistory`) throws ``ChangeHistoryPruned``
/// naming the oldest cursor kept.
///
/// Iterate a stream once: each iterator reads on a connection of its own
/// (the first one takes the connection opened when the stream was made).
///
/// - SeeAlso: <https://www.sqlite.org/pragma.html#pragma_data_version>,
///   <https://www.postgresql.org/docs/15/sql-notify.html>
public struct ChangeStream: AsyncSequence, Sendable {
  public typealias Element = RecordChange
  public typealias Failure = any Error

  /// The first feed, opened when the stream was made, until an iterator
  /// takes it; closed with the stream when none did.
  final class Handoff: Sendable {
    let feed: Locked<Result<any ChangeFeed, any Error>?>
    init(_ feed: Result<any ChangeFeed, any Error>) { self.feed = Locked(feed) }
    func take() -> Result<any ChangeFeed, any Error>? {
      feed.withLock { f in
        defer { f = nil }
        return f
      }
    }
    deinit { if case .success(let feed)? = take() { feed.close() } }
  }

  let source: String?
  let open: @Sendable () throws -> any ChangeFeed
  let handoff: Handoff
  /// Where iteration starts, `.latest` already resolved (or nil when the
  /// feed failed to open: the iterator throws that error).
  let start: ChangeCursor.Position?
  let pageSize: Int

  /// A stream over feeds that `open` makes; the first is opened now (where
  /// `.latest` is resolved).
  package init(
    source: String?, after cursor: ChangeCursor, pageSize: Int = StoreDefaults.changeStreamPage,
    open: @escaping @Sendable () throws -> any ChangeFeed
  ) {
    self.source = source
    self.open = open
    self.pageSize = Swift.max(1, pageSize)
    let first = Result { try open() }
    handoff = Handoff(first)
    switch (cursor.position, first) {
    case (.latest, .success(let feed)): start = .after(feed.latestAtOpen)
    case (.latest, .failure): start = nil
    default: start = cursor.position
    }
  }

  /// An iterator over the stream (see the type's note: iterate once).
  public func makeAsyncIterator() -> Iterator {
    let feed = handoff.take() ?? Result { try open() }
    return Iterator(stream: self, feed: feed)
  }

  /// Reads a stream's changes; see ``ChangeStream``.
  public struct Iterator: AsyncIteratorProtocol {
    public typealias Element = RecordChange
    public typealias Failure = any Error

    /// Owns the iterator's feed: closes it when the iterator goes (a loop
    /// left by `break`) or ends.
    final class Owner {
      var feed: (any ChangeFeed)?
      var failure: (any Error)?
      init(_ feed: Result<any ChangeFeed, any Error>) {
        switch feed {
        case .success(let f): self.feed = f
        case .failure(let e): failure = e
        }
      }
      func release() {
        feed?.close()
        feed = nil
      }
      deinit { feed?.close() }
    }

    let source: String?
    let pageSize: Int
    let owner: Owner
    /// The id of the last change yielded (or the cursor's).
    var lastID: Int64 = 0
    /// For `.start`: the pruned mark when the stream began (changes pruned
    /// before it are not missed, they were not kept); nil for a cursor after
    /// a change, which any pruning past it cuts.
    var acceptedMark: Int64?
    var buffer: [RecordChange] = []
    var index = 0

    init(stream: ChangeStream, feed: Result<any ChangeFeed, any Error>) {
      source = stream.source
      pageSize = stream.pageSize
      owner = Owner(feed)
      switch stream.start {
      case .start?: acceptedMark = nil
      case .after(let id)?:
        lastID = id
        acceptedMark = .min
      case .latest?, nil: acceptedMark = .min
      }
    }

    /// The next change, waiting for a commit when the history has no more;
    /// nil once the task is cancelled.
    ///
    /// - Throws: ``ChangeHistoryPruned`` when changes after the stream's
    ///   place were pruned; `StoreError` when the store fails.
    public mutating func next() async throws -> RecordChange? {
      if let failure = owner.failure {
        owner.failure = nil
        owner.release()
        throw failure
      }
      while true {
        if index < buffer.count {
          let change = buffer[index]
          index += 1
          lastID = change.id
          return change
        }
        guard let feed = owner.feed, !Task.isCancelled else {
          owner.release()
          return nil
        }
        let page: ChangePage
        do {
          page = try await feed.read(source: source, afterID: lastID, limit: pageSize)
        } catch {
          owner.release()
          throw error
        }
        if acceptedMark == nil { acceptedMark = page.prunedThrough }
        if page.prunedThrough > Swift.max(lastID, acceptedMark ?? .min) {
          owner.release()
          throw ChangeHistoryPruned(
            source: source, cursor: ChangeCursor(changeID: lastID),
            oldestKept: ChangeCursor(changeID: page.prunedThrough))
        }
        buffer = page.changes
        index = 0
        if buffer.isEmpty {
          do {
            try await feed.waitForCommits()
          } catch {
            owner.release()
            throw error
          }
        }
      }
    }
  }
}
