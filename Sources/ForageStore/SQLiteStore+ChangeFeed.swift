import Foundation
import ForageSupport

extension SQLiteStore: ChangeFeedStore {
  /// The changes of `source` (every source when nil) after `cursor`, as a
  /// live ``ChangeStream``.
  ///
  ///     for try await change in store.changes(source: "catalog", after: .latest) { … }
  ///
  /// The stream reads on a read-only connection of its own, opened now, and
  /// polls its `PRAGMA data_version` every
  /// `StoreDefaults.changeStreamPoll` to see other processes' commits; this
  /// store's own commits wake it at once. A `:memory:` store's stream reads
  /// through the store (no other process can write it).
  ///
  /// - SeeAlso: <https://www.sqlite.org/pragma.html#pragma_data_version>
  public nonisolated func changes(source: String?, after cursor: ChangeCursor) -> ChangeStream {
    let (path, bell, count) = (self.path, changeBell, changeFeedCount)
    return ChangeStream(source: source, after: cursor) { [self] in
      if path == ":memory:" { return StoreChangeFeed(store: self, bell: bell) }
      return try SQLiteChangeFeed(path: path, bell: bell, count: count)
    }
  }

  /// The highest change id pruning dropped of `source` (any source when nil); 0 when none.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func historyPrunedThrough(source: String?) async throws -> Int64 {
    try Self.prunedThrough(db, source: source)
  }

  /// How many change streams of this store hold a reading connection now.
  package nonisolated var openChangeFeeds: Int { changeFeedCount.withLock { $0 } }

  /// A page of changes and the pruned mark after it, in one read transaction
  /// (the `:memory:` store's streams read this way).
  func changePage(source: String?, afterID: Int64, limit: Int) throws -> ChangePage {
    try Self.changePage(db, source: source, afterID: afterID, limit: limit)
  }

  static func changePage(_ db: SQLiteConnection, source: String?, afterID: Int64, limit: Int) throws -> ChangePage {
    try db.readTransaction {
      let filter = source == nil ? "" : "source = ?3 AND "
      let select = try db.statement(
        "SELECT \(changeColumns) FROM changes WHERE \(filter)id > ?1 ORDER BY id LIMIT ?2")
      try select.bind(afterID, at: 1)
      try select.bind(limit, at: 2)
      if let source { try select.bind(source, at: 3) }
      let changes = try select.rows { change(from: $0) }
      // Read after the changes: a pruning between the two makes the mark
      // higher, never lower, than what the changes read reflect.
      return ChangePage(changes: changes, prunedThrough: try prunedThrough(db, source: source))
    }
  }

  static func prunedThrough(_ db: SQLiteConnection, source: String?) throws -> Int64 {
    let select = try db.statement(
      "SELECT coalesce(max(through), 0) FROM history_pruned" + (source == nil ? "" : " WHERE source = ?"))
    if let source { try select.bind(source, at: 1) }
    return try select.firstRow { $0.int64(0) } ?? 0
  }
}

/// A SQLite stream's feed: a read-only connection of its own to the store's
/// file, whose `PRAGMA data_version` tells when another connection (another
/// process, or another store object of this one) committed.
final class SQLiteChangeFeed: ChangeFeed, @unchecked Sendable {
  // @unchecked: `db` and the two "seen" values are only touched under `lock`.
  private let lock = NSLock()
  private var db: SQLiteConnection?
  private var seenGeneration: UInt64 = 0
  private var seenVersion: Int64 = 0
  private let bell: ChangeBell
  private let count: Locked<Int>
  let latestAtOpen: Int64

  init(path: String, bell: ChangeBell, count: Locked<Int>) throws {
    // Read-write (with query_only) where this process may write the file:
    // the last connection to close then checkpoints and removes the WAL,
    // as a store's own close does.
    let db = try SQLiteConnection(path: path, mode: SQLiteStore.mayWrite(path) ? .readWrite : .readOnly)
    try db.exec("PRAGMA query_only = ON")
    latestAtOpen = try db.statement("SELECT coalesce(max(id), 0) FROM changes").firstRow { $0.int64(0) } ?? 0
    seenVersion = try Self.dataVersion(db)
    self.db = db
    self.bell = bell
    self.count = count
    count.withLock { $0 += 1 }
  }

  deinit { close() }

  private static func dataVersion(_ db: SQLiteConnection) throws -> Int64 {
    try db.statement("PRAGMA data_version").firstRow { $0.int64(0) } ?? 0
  }

  private func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
    lock.lock()
    defer { lock.unlock() }
    guard let db else { throw StoreError.closed(path: "the change stream's connection") }
    return try body(db)
  }

  func read(source: String?, afterID: Int64, limit: Int) async throws -> ChangePage {
    try withConnection { db in
      seenGeneration = bell.generation
      seenVersion = try Self.dataVersion(db)
      return try SQLiteStore.changePage(db, source: source, afterID: afterID, limit: limit)
    }
  }

  func waitForCommits() async throws {
    while !Task.isCancelled {
      let (generation, committed) = try withConnection { db in
        (seenGeneration, try Self.dataVersion(db) != seenVersion)
      }
      if committed || bell.generation != generation { return }
      await bell.wait(after: generation, timeout: StoreDefaults.changeStreamPoll)
    }
  }

  func close() {
    lock.lock()
    let db = self.db
    self.db = nil
    lock.unlock()
    guard let db else { return }
    try? db.close()
    count.withLock { $0 -= 1 }
  }
}

/// A feed that reads through a store (a `:memory:` SQLite store, a
/// PostgreSQL store) and wakes on its bell and, when given, `wake` (another
/// process's commits).
package final class StoreChangeFeed: ChangeFeed, @unchecked Sendable {
  // @unchecked: `seenGeneration` and `closed` are only touched under `lock`.
  private let lock = NSLock()
  private var seenGeneration: UInt64 = 0
  private var closed = false
  private let readPage: @Sendable (String?, Int64, Int) async throws -> ChangePage
  private let bell: ChangeBell
  private let wake: (@Sendable () async throws -> Void)?
  private let onClose: (@Sendable () -> Void)?
  package let latestAtOpen: Int64

  /// A feed over `readPage`, starting `.latest` at `latest`; `wake`
  /// returns when another process may have committed (or the task is
  /// cancelled); `onClose` releases what it holds.
  package init(
    latest: Int64, bell: ChangeBell, read readPage: @escaping @Sendable (String?, Int64, Int) async throws -> ChangePage,
    wake: (@Sendable () async throws -> Void)? = nil, onClose: (@Sendable () -> Void)? = nil
  ) {
    latestAtOpen = latest
    self.bell = bell
    self.readPage = readPage
    self.wake = wake
    self.onClose = onClose
  }

  convenience init(store: SQLiteStore, bell: ChangeBell) {
    self.init(latest: bell.latest, bell: bell) { source, afterID, limit in
      try await store.changePage(source: source, afterID: afterID, limit: limit)
    }
  }

  deinit { close() }

  package func read(source: String?, afterID: Int64, limit: Int) async throws -> ChangePage {
    let open = lock.withLock { () -> Bool in
      seenGeneration = bell.generation
      return !closed
    }
    guard open else { throw StoreError.closed(path: "the change stream") }
    return try await readPage(source, afterID, limit)
  }

  package func waitForCommits() async throws {
    let generation = lock.withLock { seenGeneration }
    guard let wake else {
      await bell.wait(after: generation)
      return
    }
    // Whichever comes first; the other is cancelled (both end promptly).
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { await self.bell.wait(after: generation) }
      group.addTask { try await wake() }
      try await group.next()
      group.cancelAll()
    }
  }

  package func close() {
    let first = lock.withLock { () -> Bool in
      defer { closed = true }
      return !closed
    }
    if first { onClose?() }
  }
}
