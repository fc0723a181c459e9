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

  private static let prunedThroughSQL =
    "SELECT coalesce(max(through), 0) FROM history_pruned WHERE $1::text IS NULL OR source = $1"

  private static func prunedThrough(_ db: PostgresConnection, source: String?) throws -> Int64 {
    try db.query(prunedThroughSQL, [.string(source)]).int64(0, 0)
  }

  /// A page of changes and, read after them in the same transaction, the
  /// pruned mark; one round trip, after every transaction writing changes
  /// has ended (see `waitForChangeWriters`).
  func changePage(source: String?, afterID: Int64, limit: Int) async throws -> ChangePage {
    try await run { db in
      let results = try db.pipelineCommitting { p in
        Self.waitForChangeWriters(p)
        p.send(Self.changesAfterSQL, [.string(source), .int(afterID), .int(max(0, limit))])
        p.send(Self.prunedThroughSQL, [.string(source)])
      }
      let changes = results[1].rows { Self.change(results[1], $0) }
      return ChangePage(changes: changes, prunedThrough: results[2].int64(0, 0))
    }
  }

  /// Up to `$3` changes with an id above `$2`, oldest first, of source `$1` (every source when NULL).
  static let changesAfterSQL = """
    SELECT \(changeColumns) FROM changes
    WHERE ($1::text IS NULL OR source = $1) AND id > $2 ORDER BY id LIMIT $3
    """

  /// Makes the statements sent after it in its transaction see change ids
  /// in order: it takes the change-order lock exclusively (migration pg11),
  /// which waits until every transaction writing changes has ended (they
  /// hold it shared to their COMMIT) and keeps new ones from drawing ids
  /// until this transaction ends. A statement after it (each takes a new
  /// snapshot) sees every change whose id is below the newest it sees,
  /// except those rolled back or pruned, so a cursor that moves past an id
  /// never finds a lower one committed later.
  ///
  /// Readers of changes by id send it first in their transaction, with the
  /// rest of it in the same pipeline, so they hold it for a few statements.
  /// Writers wait for each other only around a reader: one that starts
  /// while a reader waits queues behind it, and so behind the commits the
  /// reader waits for. Readers take turns (one exclusive holder at a time).
  static func waitForChangeWriters(_ p: PostgresPipeline) {
    p.send("SELECT pg_advisory_xact_lock($1)", [.int(PostgresMigrations.changeOrderLockKey)])
  }

  /// The statement a transaction that may write changes runs first, before
  /// it locks any row: the change-order lock, shared (the trigger of pg11
  /// takes it again, at no cost, when the changes go in). Taken only in the
  /// trigger, after the transaction's row locks, it could close a cycle
  /// with a reader's exclusive request: a writer holding the lock shared
  /// waits for this transaction's rows, the reader waits for that writer,
  /// and this transaction's shared request queues behind the reader's.
  /// PostgreSQL breaks such a cycle only after `deadlock_timeout` (1 s).
  static let holdChangeOrderSQL = "SELECT pg_advisory_xact_lock_shared(\(PostgresMigrations.changeOrderLockKey))"

  /// Runs ``holdChangeOrderSQL`` (see there) in `db`'s transaction.
  static func holdChangeOrder(_ db: PostgresConnection) throws {
    try db.query(holdChangeOrderSQL)
  }

  /// The highest change id such that every id up to it is settled (its
  /// transaction committed or rolled back), read in a transaction of its
  /// own after `waitForChangeWriters`: ids drawn later are all above it.
  /// Pruning drops no change above it, so its pruned mark never passes a
  /// change still being written.
  static func settledChangeID(_ db: PostgresConnection) throws -> Int64 {
    try db.transaction {
      try db.pipelineCommitting { p in
        waitForChangeWriters(p)
        p.send("SELECT coalesce(max(id), 0) FROM changes")
      }[1].int64(0, 0)
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
    // After every transaction that drew change ids has ended: an id below
    // `latest` committed later would be skipped by the stream.
    latest = try PostgresStore.settledChangeID(connection)
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
