#if Postgres
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ForageStore
import ForageSupport

extension PostgresStore: ChangeFeedStore {
  /// The changes of `source` (every source when nil) after `cursor`, as a
  /// live ``ChangeStream``.
  ///
  ///     for try await change in store.changes(source: "catalog", after: .latest) { … }
  ///
  /// The stream keeps a connection of its own that `LISTEN`s on
  /// `forage_changes` (every transaction that writes changes notifies it at
  /// its commit, by a trigger), opened now, on the calling thread, where
  /// `.latest` is resolved; it reads through this store. This store's own
  /// commits wake it at once, other processes' as their notification
  /// arrives. The connection is listed as `forage-changes` in
  /// `pg_stat_activity` and closed when the stream ends.
  ///
  /// - SeeAlso: <https://www.postgresql.org/docs/15/sql-listen.html>
  public nonisolated func changes(source: String?, after cursor: ChangeCursor) -> ChangeStream {
    let (url, bell) = (self.url, changeBell)
    return ChangeStream(source: source, after: cursor) { [self] in
      let listener = try PostgresChangeListener(url: url)
      return StoreChangeFeed(
        latest: listener.latest, bell: bell,
        read: { source, afterID, limit in try await self.changePage(source: source, afterID: afterID, limit: limit) },
        wake: { try await listener.waitForNotification() },
        onClose: { listener.close() })
    }
  }

  /// The highest change id pruning dropped of `source` (any source when nil); 0 when none.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func historyPrunedThrough(source: String?) async throws -> Int64 {
    try await run(transaction: false) { db in try Self.prunedThrough(db, source: source) }
  }

  private static func prunedThrough(_ db: PostgresConnection, source: String?) throws -> Int64 {
    let result = try db.query(
      "SELECT coalesce(max(through), 0) FROM history_pruned WHERE $1::text IS NULL OR source = $1", [.string(source)])
    return result.int64(0, 0)
  }

  /// A page of changes and, read after them in the same transaction, the pruned mark.
  func changePage(source: String?, afterID: Int64, limit: Int) async throws -> ChangePage {
    try await run { db in
      let result = try db.query(
        """
        SELECT \(Self.changeColumns) FROM changes
        WHERE ($1::text IS NULL OR source = $1) AND id > $2 ORDER BY id LIMIT $3
        """, [.string(source), .int(afterID), .int(max(0, limit))])
      let changes = result.rows { Self.change(result, $0) }
      return ChangePage(changes: changes, prunedThrough: try Self.prunedThrough(db, source: source))
    }
  }
}

/// The connection a PostgreSQL change stream listens on, with a thread of its
/// own for the blocking wait (`poll` on libpq's socket) and a pipe that ends
/// a wait at once when the stream's task is cancelled.
actor PostgresChangeListener {
  private let connection: PostgresConnection
  /// The newest change id when the listener was opened (after `LISTEN`, so
  /// no later commit goes unnotified).
  nonisolated let latest: Int64
  /// A pipe: `interrupt()` writes to `wakeWrite`, a wait polls `wakeRead`.
  private nonisolated let wakeRead: Int32
  private nonisolated let wakeWrite: Int32
  private let executor = ThreadExecutor(name: "forage-listen")
  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

  /// Connects (as `forage-changes`), listens and reads the newest change id.
  ///
  /// - Throws: `StoreError` when the server cannot be reached or a statement fails.
  init(url: PostgresURL) throws {
    let connection = try PostgresConnection(url: url, applicationName: "forage-changes")
    try connection.exec("LISTEN forage_changes")
    latest = try connection.query("SELECT coalesce(max(id), 0) FROM changes").int64(0, 0)
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else {
      connection.close()
      throw StoreError.server(
        .connection, store: url.redacted, reason: "the system refused a pipe for a change stream's wake-up",
        function: "pipe", detail: String(cString: strerror(errno)), sql: nil)
    }
    for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    (wakeRead, wakeWrite) = (fds[0], fds[1])
    self.connection = connection
  }

  // The connection closes itself when released (PostgresConnection's deinit).
  deinit {
    closeDescriptor(wakeRead)
    closeDescriptor(wakeWrite)
  }

  /// Returns when a notification arrives, or at once when the calling task
  /// is cancelled. After a lost connection it connects and listens again
  /// and returns (the stream reads again: nothing committed meanwhile is
  /// missed).
  ///
  /// - Throws: `StoreError` when it cannot connect again.
  func waitForNotification() async throws {
    try await withTaskCancellationHandler {
      try waitHere()
    } onCancel: {
      interrupt()
    }
  }

  private func waitHere() throws {
    while !Task.isCancelled {
      do {
        switch try connection.waitForNotification(timeout: .seconds(1), interrupt: wakeRead) {
        case .notified, .interrupted: return
        case .timedOut: continue
        }
      } catch let error as StoreError where error.kind == .connection {
        try connection.reconnect()
        try connection.exec("LISTEN forage_changes")
        return
      }
    }
  }

  /// Ends a wait in progress (or the next one) at once.
  nonisolated func interrupt() {
    var byte: UInt8 = 1
    _ = write(wakeWrite, &byte, 1)
  }

  /// Closes the connection now (a wait in progress is interrupted first).
  nonisolated func close() {
    interrupt()
    Task { await self.finish() }
  }

  private func finish() { connection.close() }
}

/// close(2), outside the listener, whose own `close()` hides it.
private func closeDescriptor(_ fd: Int32) { _ = close(fd) }
#endif
