#if Postgres
import ForageStore

extension PostgresStore {
  /// Connects to the existing store at `url` to read it, changing nothing:
  /// no table is created, no migration applied, and every write fails (the
  /// session's transactions are read-only). What a command that only reads
  /// opens, as ``ForageStore/SQLiteStore/init(readingAt:busyTimeout:)`` is
  /// on SQLite.
  ///
  ///     let store = try PostgresStore(readingAt: "postgres://forage@db.example/forage")
  ///
  /// - Throws: `PostgresURL.Invalid` for a location that is not a
  ///   `postgres://` URL; `StoreError` of kind `.notAStore` for a database
  ///   without Forage's tables, `.olderStore` when an older Forage migrated
  ///   it (a command that writes upgrades it), `.newerStore` when a newer one
  ///   did, `.foreignDatabase` for another program's database, `.connection`
  ///   or `.open` as ``init(url:reconnectTimeout:leaseClock:)``.
  public init(readingAt url: String, reconnectTimeout: Duration = .seconds(60)) throws {
    let parsed = try PostgresURL(url)
    let db = try PostgresConnection(url: parsed, readOnly: true)
    try PostgresMigrations.checkCurrent(db)
    self.init(connection: db, url: parsed, reconnectTimeout: reconnectTimeout, leaseClock: .server, readOnly: true)
  }
}

extension PostgresMigrations {
  /// Refuses a database another program made: one with tables but no
  /// `forage_migrations`. An empty database, or one Forage migrated,
  /// passes. It only reads the catalog.
  ///
  /// - Throws: `StoreError` of kind `.foreignDatabase` naming the tables.
  static func refuseForeignDatabase(_ db: PostgresConnection) throws {
    let names = try db.query(
      "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1")
    let tableNames = names.rows { names.string($0, 0) }
    if !tableNames.isEmpty && !tableNames.contains("forage_migrations") {
      throw StoreError.foreignDatabase(path: db.url.redacted, tables: tableNames)
    }
  }

  /// Checks, reading only, that the database holds a Forage store this
  /// build reads as it is: every migration applied, none it does not know.
  ///
  /// - Throws: `StoreError` of kind `.foreignDatabase`, `.notAStore` (no
  ///   Forage tables), `.newerStore` or `.olderStore` (naming the
  ///   migrations it lacks).
  static func checkCurrent(_ db: PostgresConnection) throws {
    try refuseForeignDatabase(db)
    let table = try db.query(
      """
      SELECT count(*) FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_name = 'forage_migrations'
      """)
    guard table.int(0, 0) > 0 else {
      throw StoreError.notAStore(
        path: db.url.redacted, "it is an empty database (a command that only reads never adds tables)")
    }
    let appliedResult = try db.query("SELECT name FROM forage_migrations ORDER BY seq")
    let applied = appliedResult.rows { appliedResult.string($0, 0) }
    let known = Set(all.map(\.name))
    let unknown = applied.filter { !known.contains($0) }
    if !unknown.isEmpty { throw StoreError.newerStore(path: db.url.redacted, unknown: unknown) }
    let appliedSet = Set(applied)
    let missing = all.map(\.name).filter { !appliedSet.contains($0) }
    if !missing.isEmpty { throw StoreError.olderStore(path: db.url.redacted, missing: missing) }
  }
}
#endif
