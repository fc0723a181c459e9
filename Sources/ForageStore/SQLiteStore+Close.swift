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
    if path != ":memory:" { try db.exec("PRAGMA wal_checkpoint(TRUNCATE)") }
    try db.close()
  }
}
