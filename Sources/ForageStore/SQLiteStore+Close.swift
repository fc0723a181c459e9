import Foundation

extension SQLiteStore {
  /// The names of the sources with records or crawls in the store, sorted.
  public func sourceNames() throws -> [String] {
    let statement = try db.statement(
      "SELECT source FROM crawls UNION SELECT source FROM records ORDER BY 1")
    var names: [String] = []
    while try statement.step() { names.append(statement.string(0)) }
    return names
  }

  /// Checkpoints the WAL into the database file and closes the connection;
  /// every later call throws a `StoreError` of kind `.closed`.
  ///
  ///     try await store.close()   // forage.sqlite alone now holds everything
  ///
  /// - SeeAlso: <https://www.sqlite.org/wal.html#the_wal_file>
  public func close() throws {
    guard !db.isClosed else { return }
    // A store opened to read leaves the checkpoint to sqlite3_close, which
    // makes it only when this is the last connection and it may write.
    if path != ":memory:", !isReadOnly { try db.exec("PRAGMA wal_checkpoint(TRUNCATE)") }
    try db.close()
  }
}

extension SQLiteStore {
  /// Figures of each source, by name (see `SourceStatistics`).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func sourceStatistics(since: Date) async throws -> [SourceStatistics] {
    let db = self.db
    return try db.readTransaction {
      var stats: [String: SourceStatistics] = [:]
      for name in try sourceNames() { stats[name] = SourceStatistics(name: name) }
      let records = try db.statement(
        """
        SELECT source, count(*) FILTER (WHERE removed_at IS NULL), count(*) FILTER (WHERE removed_at IS NOT NULL),
          max(last_seen)
        FROM records GROUP BY source
        """)
      for (name, current, removed, lastSeen) in try records.rows({
        ($0.string(0), $0.int(1), $0.int(2), $0.optionalInt64(3))
      }) {
        stats[name, default: SourceStatistics(name: name)].records = current
        stats[name]!.removed = removed
        stats[name]!.lastSeen = lastSeen.map(Self.date)
      }
      let changes = try db.statement("SELECT source, count(*) FROM changes WHERE at >= ? GROUP BY source")
      try changes.bind(Self.milliseconds(since), at: 1)
      for (name, count) in try changes.rows({ ($0.string(0), $0.int(1)) }) {
        stats[name, default: SourceStatistics(name: name)].recentChanges = count
      }
      let crawls = try db.statement("SELECT source, max(completed_at) FROM crawls GROUP BY source")
      for (name, completed) in try crawls.rows({ ($0.string(0), $0.optionalInt64(1)) }) {
        stats[name, default: SourceStatistics(name: name)].lastCompletedCrawl = completed.map(Self.date)
      }
      return stats.values.sorted { $0.name < $1.name }
    }
  }
}

extension SQLiteStore {
  /// What `PRAGMA integrity_check` finds wrong with the file; empty when
  /// nothing (it answers "ok").
  ///
  /// - Throws: `StoreError` when the check cannot run.
  /// - SeeAlso: <https://www.sqlite.org/pragma.html#pragma_integrity_check>
  package func integrityProblems() throws -> [String] {
    let rows = try db.uncachedStatement("PRAGMA integrity_check").rows { $0.string(0) }
    return rows == ["ok"] ? [] : rows
  }
}
