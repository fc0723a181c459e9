import Foundation

/// The embedded store: one SQLite file in WAL mode, owned by an actor.
///
///     let store = try SQLiteStore(path: "forage.sqlite")
///     let crawl = try await store.openCrawl(source: "news", seeds: seeds, now: .now)
///
/// Opening applies any pending schema migrations (see `Migrator.forage` for
/// the tables). The connection runs with `journal_mode=WAL`,
/// `synchronous=NORMAL` (a committed transaction survives a process crash;
/// a power loss may lose the last few), foreign keys on and a busy timeout,
/// so other processes may read while this one writes. Statements are
/// prepared once and reused; `commit(_:)` writes a whole batch of pages in
/// one transaction.
///
/// - SeeAlso: <https://www.sqlite.org/wal.html>,
///   <https://www.sqlite.org/pragma.html#pragma_synchronous>
public actor SQLiteStore: Store {
  let db: SQLiteConnection
  /// Fingerprints committed to frontiers, to skip lookups of repeated links.
  var known = KnownFingerprints(capacity: StoreDefaults.knownFingerprintsPerCrawl)
  /// Whether the last link a commit met that `known` did not hold was new
  /// (see `insertLinks`).
  var insertsLinksFirst = true
  /// The path given at opening.
  public nonisolated let path: String

  /// Opens the store at `path`, creating the file if needed (its folder
  /// must exist). `":memory:"` opens a private in-memory store.
  ///
  ///     let store = try SQLiteStore(path: "/var/lib/forage/forage.sqlite")
  ///
  /// - Parameters:
  ///   - path: The database file, or `":memory:"`.
  ///   - busyTimeout: How long a write waits for another process's write.
  ///
  /// - Throws: `StoreError` of kind `.open` when the file cannot be opened,
  ///   `.notADatabase` when it is not an SQLite database, `.foreignDatabase`
  ///   when it is the database of another program (both are left
  ///   untouched), `.newerStore` when a newer Forage wrote it.
  public init(path: String, busyTimeout: Duration = StoreDefaults.busyTimeout) throws {
    let db = try SQLiteConnection(path: path, busyTimeout: busyTimeout)
    try Self.configure(db)
    try Migrator.forage.migrate(db, now: Self.milliseconds(Date()))
    self.db = db
    self.path = path
  }

  /// Sets the connection's pragmas; the first read of the file happens
  /// here, so a file that is not a database, or the database of another
  /// program, fails here, before any write (`journal_mode = WAL` writes).
  private static func configure(_ db: SQLiteConnection) throws {
    do {
      // Reading the schema first detects a non-database without writing.
      try db.exec("SELECT count(*) FROM sqlite_schema")
      try Migrator.refuseForeignDatabase(db)
      try db.exec("PRAGMA journal_mode = WAL")
      try db.exec("PRAGMA synchronous = NORMAL")
      try db.exec("PRAGMA foreign_keys = ON")
      try db.exec("PRAGMA cache_size = -\(StoreDefaults.cacheSizeKiB)")
      try db.exec("PRAGMA mmap_size = \(StoreDefaults.mmapSize)")
      try db.exec("PRAGMA wal_autocheckpoint = \(StoreDefaults.walAutocheckpointPages)")
      try db.exec("PRAGMA journal_size_limit = \(StoreDefaults.journalSizeLimit)")
      // Some builds (Debian's) default to zeroing every deleted cell and freed
      // page; the frontier's state updates delete and insert index entries all
      // the time. SQLite's own default is off.
      try db.exec("PRAGMA secure_delete = OFF")
    } catch let error as StoreError {
      throw error.asOpenError(path: db.path) ?? error
    }
  }

  // MARK: Dates

  /// Milliseconds since 1970, the store's date representation.
  static func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded())
  }

  static func date(_ milliseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(milliseconds) / 1000)
  }
}

extension StoreError {
  /// A configuration failure re-described as failing to open the store.
  func asOpenError(path: String) -> StoreError? {
    guard let function, let sqliteCode else { return nil }
    return .open(path: path, function: function, code: sqliteCode, message: sqliteMessage)
  }
}
