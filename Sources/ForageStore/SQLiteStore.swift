#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ForageSupport

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
  /// True for a store opened by ``init(readingAt:busyTimeout:)``: every
  /// write fails.
  public nonisolated let isReadOnly: Bool
  /// Rung after each commit that wrote changes: wakes this store's change streams.
  nonisolated let changeBell = ChangeBell()
  /// The change streams' open reading connections, counted (tests check none is left).
  nonisolated let changeFeedCount = Locked(0)

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
    guard !path.isEmpty else { throw StoreError.emptyPath }
    let db = try SQLiteConnection(path: path, busyTimeout: busyTimeout)
    try Self.configure(db)
    try Migrator.forage.migrate(db, now: Self.milliseconds(Date()))
    self.db = db
    self.path = path
    isReadOnly = false
  }

  /// Opens the existing store at `path` to read it, changing nothing: no
  /// file is created, no migration applied, and every write fails
  /// (`PRAGMA query_only`). What a command that only reads opens.
  ///
  ///     let store = try SQLiteStore(readingAt: "forage.sqlite")
  ///
  /// A store this process may write (the file and its folder writable) is
  /// opened as usual, so that closing it leaves no `-wal` or `-shm` behind.
  /// One it may not (a read-only file, as its mode says even to root, or a
  /// read-only folder) is opened with `SQLITE_OPEN_READONLY`; when no `-wal`
  /// is beside it (no writer has changes outside the file), as immutable,
  /// which creates no `-wal` or `-shm` either (a read-only connection to a
  /// WAL database would create both in a writable folder and leave them).
  ///
  /// - Throws: `StoreError` of kind `.notAStore` for a missing or empty
  ///   file or a database without Forage's tables, `.olderStore` when an
  ///   older Forage wrote it (a command that writes upgrades it),
  ///   `.newerStore`, `.notADatabase`, `.foreignDatabase`, `.open`.
  ///
  /// - SeeAlso: <https://www.sqlite.org/wal.html#readonly>
  public init(readingAt path: String, busyTimeout: Duration = StoreDefaults.busyTimeout) throws {
    guard !path.isEmpty else { throw StoreError.emptyPath }
    var info = stat()
    if path != ":memory:" {
      guard stat(path, &info) == 0 else {
        throw StoreError.notAStore(path: path, "there is no such file (a command that only reads creates none)")
      }
      if (info.st_mode & S_IFMT) == S_IFDIR {
        throw StoreError.notAStore(path: path, "it is a folder; name the store's file")
      }
      if (info.st_mode & S_IFMT) == S_IFREG, info.st_size == 0 {
        throw StoreError.notAStore(path: path, "the file is empty (a command that only reads never turns a file into a store)")
      }
    }
    let mode: SQLiteConnection.Mode
    if path == ":memory:" || Self.mayWrite(path) {
      mode = .readWrite
    } else {
      mode = access(path + "-wal", F_OK) == 0 ? .readOnly : .immutable
    }
    let db = try SQLiteConnection(path: path, mode: mode, busyTimeout: busyTimeout)
    do {
      try db.exec("PRAGMA query_only = ON")
      try db.exec("SELECT count(*) FROM sqlite_schema")
      try Migrator.refuseForeignDatabase(db)
      try Migrator.forage.checkCurrent(db)
      try db.exec("PRAGMA cache_size = -\(StoreDefaults.cacheSizeKiB)")
      try db.exec("PRAGMA mmap_size = \(StoreDefaults.mmapSize)")
    } catch let error as StoreError {
      throw error.asOpenError(path: db.path) ?? error
    }
    self.db = db
    self.path = path
    isReadOnly = true
  }

  /// Whether this process may change the file at `path` and create files
  /// beside it: access(2) says so, and the modes of the file and its folder
  /// have a write bit (root may write a file whose mode says it is
  /// read-only; such a file is still opened read-only).
  static func mayWrite(_ path: String) -> Bool {
    let slash = path.lastIndex(of: "/")
    let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    for p in [path, folder] {
      var info = stat()
      guard stat(p, &info) == 0, info.st_mode & 0o222 != 0, access(p, W_OK) == 0 else { return false }
    }
    return true
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
