import CSQLite
import ForageSupport

/// One SQLite database connection; the only owner of its `sqlite3*`.
///
/// Keeps the statements it prepared, keyed by SQL text, so each is compiled
/// once. Not thread-safe: it belongs to one owner (the `SQLiteStore` actor),
/// which never lets it cross an isolation boundary. That is why it opens
/// with `SQLITE_OPEN_NOMUTEX`: the actor already serializes every call, so
/// SQLite's per-connection mutex would only add cost.
///
/// - SeeAlso: <https://www.sqlite.org/c3ref/sqlite3.html>
final class SQLiteConnection {
  let handle: OpaquePointer
  /// The file path (or `:memory:`), for error messages.
  let path: String
  private var cache: [String: SQLiteStatement] = [:]
  private var cacheOrder: [String] = []
  /// True after `close()`: the handle is gone and every call throws.
  private(set) var isClosed = false

  /// How a connection opens its file.
  enum Mode {
    /// Read and write, creating the file when missing.
    case create
    /// Read and write an existing file (`SQLITE_OPEN_READWRITE` alone).
    case readWrite
    /// Read only (`SQLITE_OPEN_READONLY`): uses the `-wal` and `-shm` that
    /// are there, and may create them in a writable folder.
    case readOnly
    /// Read only, as a file nobody changes (the `immutable=1` URI
    /// parameter): no locks, no `-wal` or `-shm` is read or created.
    ///
    /// - SeeAlso: <https://www.sqlite.org/uri.html#uriimmutable>
    case immutable
  }

  /// Opens the database at `path`, creating it if needed unless `mode` says
  /// otherwise.
  ///
  /// - Throws: `StoreError` of kind `.open` naming `sqlite3_open_v2`.
  init(path: String, mode: Mode = .create, busyTimeout: Duration = StoreDefaults.busyTimeout) throws {
    var db: OpaquePointer?
    var flags = SQLITE_OPEN_NOMUTEX
    var name = path
    switch mode {
    case .create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
    case .readWrite: flags |= SQLITE_OPEN_READWRITE
    case .readOnly: flags |= SQLITE_OPEN_READONLY
    case .immutable:
      flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
      name = Self.fileURI(path) + "?immutable=1"
    }
    let rc = sqlite3_open_v2(name, &db, flags, nil)
    guard rc == SQLITE_OK, let db else {
      let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
      let code = db.map { sqlite3_extended_errcode($0) } ?? rc
      sqlite3_close_v2(db)
      throw StoreError.open(path: path, function: "sqlite3_open_v2", code: code, message: message)
    }
    self.handle = db
    self.path = path
    sqlite3_extended_result_codes(db, 1)
    sqlite3_busy_timeout(db, Int32(clamping: busyTimeout.milliseconds))
  }

  /// `path` as a `file:` URI: `%`, `?` and `#` escaped, an absolute path
  /// after an empty authority.
  ///
  /// - SeeAlso: <https://www.sqlite.org/uri.html>
  static func fileURI(_ path: String) -> String {
    var escaped = ""
    for c in path.unicodeScalars {
      switch c {
      case "%": escaped += "%25"
      case "?": escaped += "%3f"
      case "#": escaped += "%23"
      default: escaped.unicodeScalars.append(c)
      }
    }
    return path.hasPrefix("/") ? "file://" + escaped : "file:" + escaped
  }

  deinit {
    cache.removeAll()  // finalize statements before closing
    if !isClosed { sqlite3_close_v2(handle) }
  }

  /// Closes the connection now. The last connection to a WAL database
  /// checkpoints the WAL into the main file and removes it, so the file alone
  /// is then a complete copy.
  ///
  /// - Throws: `StoreError` naming `sqlite3_close` (the connection stays open).
  /// - SeeAlso: <https://www.sqlite.org/c3ref/close.html>
  func close() throws {
    guard !isClosed else { return }
    cache.removeAll()
    cacheOrder.removeAll()
    let rc = sqlite3_close(handle)
    guard rc == SQLITE_OK else {
      throw StoreError.statement(
        sql: "(close)", path: path, function: "sqlite3_close", code: rc, message: String(cString: sqlite3_errstr(rc)))
    }
    isClosed = true
  }

  private func checkOpen() throws {
    if isClosed { throw StoreError.closed(path: path) }
  }

  /// Runs one or more SQL statements without parameters.
  ///
  /// - Throws: `StoreError` naming `sqlite3_exec` and the SQL.
  func exec(_ sql: String) throws {
    try checkOpen()
    var message: UnsafeMutablePointer<CChar>?
    let rc = sqlite3_exec(handle, sql, nil, nil, &message)
    if rc != SQLITE_OK {
      let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
      sqlite3_free(message)
      throw StoreError.statement(
        sql: sql, path: path, function: "sqlite3_exec", code: sqlite3_extended_errcode(handle), message: text)
    }
  }

  /// The cached prepared statement for `sql`, reset with bindings cleared.
  ///
  /// - Throws: `StoreError` naming `sqlite3_prepare_v3` and the SQL.
  func statement(_ sql: String) throws -> SQLiteStatement {
    try checkOpen()
    if let statement = cache[sql] {
      statement.clear()
      return statement
    }
    let statement = try SQLiteStatement(db: handle, sql: sql, path: path)
    if cache.count >= StoreDefaults.statementCacheLimit {
      cache[cacheOrder.removeFirst()] = nil
    }
    cache[sql] = statement
    cacheOrder.append(sql)
    return statement
  }

  /// A fresh statement that is not cached (for one-off SQL).
  func uncachedStatement(_ sql: String) throws -> SQLiteStatement {
    try checkOpen()
    return try SQLiteStatement(db: handle, sql: sql, path: path)
  }

  /// Rows changed by the last INSERT, UPDATE or DELETE.
  var changes: Int { Int(sqlite3_changes(handle)) }

  /// The rowid of the last successful INSERT.
  var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

  /// True while a transaction is open.
  var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

  /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`), committing when
  /// it returns and rolling back when it throws.
  ///
  /// - SeeAlso: <https://www.sqlite.org/lang_transaction.html>
  func transaction<T>(_ body: () throws -> T) throws -> T {
    try transaction("BEGIN IMMEDIATE", body)
  }

  /// Runs the reads of `body` in one deferred transaction: one snapshot and
  /// one set of WAL read locks for all of them, instead of one per statement.
  func readTransaction<T>(_ body: () throws -> T) throws -> T {
    try transaction("BEGIN", body)
  }

  private func transaction<T>(_ begin: String, _ body: () throws -> T) throws -> T {
    try statement(begin).execute()
    let result: T
    do {
      result = try body()
      try statement("COMMIT").execute()
    } catch {
      if isInTransaction { try? statement("ROLLBACK").execute() }
      throw error
    }
    return result
  }
}
