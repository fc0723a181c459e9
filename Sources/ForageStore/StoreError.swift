import CSQLite
import Foundation

/// An error of the store: a failed SQLite call, a store written by a newer
/// Forage or by another program, or a request for something the store does
/// not hold.
///
/// Its `description` is a sentence for the person running Forage: the store
/// path and what is wrong with it (its folder does not exist, permission
/// denied, not a SQLite database). Its `debugDescription` adds the detail
/// for a bug report: the C function that failed, the SQLite result code and
/// message, and the SQL text; never the values bound to a statement.
///
///     do { _ = try SQLiteStore(path: "notes.txt") } catch let error as StoreError {
///       print(error)        // cannot open the store notes.txt: it is not a SQLite database
///       debugPrint(error)   // … [sqlite3_exec, code 26: file is not a database]; SQL: …
///     }
///
/// - SeeAlso: <https://www.sqlite.org/rescode.html>
public struct StoreError: Error, CustomStringConvertible, CustomDebugStringConvertible, Sendable {
  /// What kind of failure this is; more kinds may be added.
  public struct Kind: Hashable, Sendable, CustomStringConvertible {
    fileprivate let name: String
    /// The store could not be opened or configured.
    public static let open = Kind(name: "open")
    /// The file exists but is not an SQLite database.
    public static let notADatabase = Kind(name: "notADatabase")
    /// The store holds migrations this build does not know.
    public static let newerStore = Kind(name: "newerStore")
    /// A statement failed to prepare, bind or run.
    public static let statement = Kind(name: "statement")
    /// The store holds no such crawl, run or row.
    public static let notFound = Kind(name: "notFound")
    /// The file is a SQLite database of another program (it has tables but
    /// no Forage migrations); Forage leaves it untouched.
    public static let foreignDatabase = Kind(name: "foreignDatabase")
    /// The store was closed (`Store.close()`) and cannot be used again.
    public static let closed = Kind(name: "closed")
    /// A command that only reads was given a path that holds no Forage store
    /// (no file, an empty file, an empty database); it creates none.
    public static let notAStore = Kind(name: "notAStore")
    /// A command that only reads was given a store an older Forage wrote,
    /// whose schema it does not change; a command that writes upgrades it.
    public static let olderStore = Kind(name: "olderStore")
    /// The database server could not be reached, or the connection to it was
    /// lost (a PostgreSQL store); trying again later may succeed.
    public static let connection = Kind(name: "connection")
    /// The kind's name, such as `notAStore`.
    public var description: String { name }
  }

  private enum Code: Sendable {
    /// `reason` says why, in words, found when the error was made.
    case open(path: String, reason: String)
    case statement(sql: String, path: String)
    case newerStore(path: String, unknown: [String])
    case foreignDatabase(path: String, tables: [String])
    case notFound(what: String)
    case closed(path: String)
    case notAStore(path: String, reason: String)
    case olderStore(path: String, missing: [String])
    /// A database server's failure (PostgreSQL): `store` is the redacted
    /// URL, `reason` a sentence, `detail` the server's own words (SQLSTATE,
    /// message) for `debugDescription`.
    case server(kind: Kind, store: String, reason: String, detail: String?, sql: String?)
  }

  private let code: Code
  /// The C function that failed, e.g. `sqlite3_step`.
  public let function: String?
  /// The SQLite (extended) result code, when SQLite reported the failure.
  public let sqliteCode: Int32?
  /// SQLite's message for the failure.
  public let sqliteMessage: String?

  private init(_ code: Code, function: String?, sqliteCode: Int32?, message: String?) {
    self.code = code
    self.function = function
    self.sqliteCode = sqliteCode
    self.sqliteMessage = message
  }

  /// The kind of failure.
  public var kind: Kind {
    switch code {
    case .open:
      return (sqliteCode.map { $0 & 0xff } == SQLITE_NOTADB) ? .notADatabase : .open
    case .statement: return .statement
    case .newerStore: return .newerStore
    case .foreignDatabase: return .foreignDatabase
    case .notFound: return .notFound
    case .closed: return .closed
    case .notAStore: return .notAStore
    case .olderStore: return .olderStore
    case .server(let kind, _, _, _, _): return kind
    }
  }

  /// The primary SQLite result code (the extended code's low byte).
  public var primarySQLiteCode: Int32? { sqliteCode.map { $0 & 0xff } }

  /// What went wrong, as a sentence about the store: no C function, result
  /// code or SQL (see `debugDescription`).
  public var description: String {
    switch code {
    case .open(let path, let reason):
      return "cannot open the store \(path): \(reason)"
    case .statement(_, let path):
      return "cannot use the store \(path): \(StoreError.reason(code: sqliteCode, message: sqliteMessage))"
    case .newerStore(let path, let unknown):
      return "the store \(path) was written by a newer Forage: it has migrations this build "
        + "does not know (\(unknown.joined(separator: ", "))); upgrade Forage or use another store"
    case .foreignDatabase(let path, let tables):
      let shown = tables.count > 5 ? tables.prefix(5).joined(separator: ", ") + " and \(tables.count - 5) more"
        : tables.joined(separator: ", ")
      let what = path.contains("://") ? "a database" : "a SQLite database"
      return "\(path) is \(what) of another program (tables: \(shown)); "
        + "Forage will not add its tables to it. Use a new path."
    case .notFound(let what):
      return "the store has no \(what)"
    case .closed(let path):
      return "the store \(path) was closed and cannot be used again"
    case .notAStore(let path, let reason):
      return "\(path) is not a Forage store: \(reason)"
    case .olderStore(let path, let missing):
      return "the store \(path) was written by an older Forage and lacks \(missing.count) schema "
        + "change\(missing.count == 1 ? "" : "s") (\(missing.joined(separator: ", "))); reading commands never "
        + "change a store: the next forage run, daemon or download with this version upgrades it"
    case .server(let kind, let store, let reason, _, _):
      switch kind {
      case .open, .connection: return "cannot reach the store \(store): \(reason)"
      default: return "cannot use the store \(store): \(reason)"
      }
    }
  }

  /// The description followed by the detail for a bug report: the C
  /// function, the SQLite result code and message, and the SQL text.
  public var debugDescription: String {
    var text = description
    if let function, let sqliteCode {
      text += " [\(function), code \(sqliteCode): \(sqliteMessage ?? "no message")]"
    }
    if case .statement(let sql, _) = code { text += "; SQL: \(sql)" }
    if case .server(_, _, _, let detail, let sql) = code {
      if let function { text += " [\(function)\(detail.map { ": " + $0 } ?? "")]" }
      if let sql { text += "; SQL: \(sql)" }
    }
    return text
  }

  /// Why a call failed, in words, from its result code; SQLite's own message
  /// for the rarer codes.
  static func reason(code: Int32?, message: String?) -> String {
    switch code.map({ $0 & 0xff }) {
    case SQLITE_FULL: return "the disk is full"
    case SQLITE_READONLY: return "it cannot be written (a read-only file, folder or disk)"
    case SQLITE_PERM, SQLITE_AUTH: return "permission denied"
    case SQLITE_BUSY, SQLITE_LOCKED: return "another process kept it locked for too long"
    case SQLITE_CORRUPT: return "the file is damaged"
    case SQLITE_NOTADB: return "it is not a SQLite database"
    case SQLITE_IOERR: return "reading or writing the disk failed"
    case SQLITE_CANTOPEN: return "the file cannot be opened"
    default: return message ?? "an unknown error"
    }
  }

  /// Why `path` could not be opened, in words: what the file system says
  /// about the path first (a missing folder, a folder, permissions), then
  /// the result code.
  static func openReason(path: String, code: Int32, message: String?) -> String {
    let primary = code & 0xff
    if primary == SQLITE_NOTADB { return "it is not a SQLite database" }
    guard path != ":memory:", !path.hasPrefix("file:") else { return reason(code: code, message: message) }
    let files = FileManager.default
    var isFolder: ObjCBool = false
    if files.fileExists(atPath: path, isDirectory: &isFolder) {
      if isFolder.boolValue { return "it is a folder" }
      if !files.isReadableFile(atPath: path) || !files.isWritableFile(atPath: path) { return "permission denied" }
    } else {
      let parent = (path as NSString).deletingLastPathComponent
      let folder = parent.isEmpty ? "." : parent
      if !files.fileExists(atPath: folder, isDirectory: &isFolder) { return "its folder \(folder) does not exist" }
      if !isFolder.boolValue { return "\(folder) is not a folder" }
      if !files.isWritableFile(atPath: folder) { return "permission denied (cannot create a file in \(folder))" }
    }
    if primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN {
      // The WAL and its index are files beside the store: the folder must be writable.
      let parent = (path as NSString).deletingLastPathComponent
      if !files.isWritableFile(atPath: parent.isEmpty ? "." : parent) { return "permission denied on its folder" }
    }
    return reason(code: code, message: message)
  }

  // MARK: Internal constructors

  static func open(path: String, function: String, code: Int32, message: String?) -> StoreError {
    StoreError(
      .open(path: path, reason: openReason(path: path, code: code, message: message)),
      function: function, sqliteCode: code, message: message)
  }

  /// A database server's failure, for stores outside this module (PostgreSQL).
  ///
  /// - Parameters:
  ///   - kind: `.open`, `.connection`, `.statement`, `.newerStore`…
  ///   - store: how messages name the store; never holds a password.
  ///   - reason: why, as words for the person running Forage.
  ///   - function: the C function that failed, for `debugDescription`.
  ///   - detail: the server's SQLSTATE and message, for `debugDescription`.
  ///   - sql: the statement, for `debugDescription` (never its bound values).
  package static func server(
    _ kind: Kind, store: String, reason: String, function: String?, detail: String?, sql: String?
  ) -> StoreError {
    StoreError(
      .server(kind: kind, store: store, reason: reason, detail: detail, sql: sql), function: function,
      sqliteCode: nil, message: nil)
  }

  package static func foreignDatabase(path: String, tables: [String]) -> StoreError {
    StoreError(.foreignDatabase(path: path, tables: tables), function: nil, sqliteCode: nil, message: nil)
  }

  static func statement(
    sql: String, path: String, function: String, code: Int32, message: String?
  ) -> StoreError {
    StoreError(
      .statement(sql: sql, path: path), function: function, sqliteCode: code, message: message)
  }

  package static func newerStore(path: String, unknown: [String]) -> StoreError {
    StoreError(.newerStore(path: path, unknown: unknown), function: nil, sqliteCode: nil,
               message: nil)
  }

  /// An empty store path: SQLite would open a temporary database and keep nothing.
  static let emptyPath = StoreError.notAStore(
    path: "\"\"", "the path is empty (SQLite would use a temporary database that keeps nothing); name a file")

  package static func notAStore(path: String, _ reason: String) -> StoreError {
    StoreError(.notAStore(path: path, reason: reason), function: nil, sqliteCode: nil, message: nil)
  }

  package static func olderStore(path: String, missing: [String]) -> StoreError {
    StoreError(.olderStore(path: path, missing: missing), function: nil, sqliteCode: nil, message: nil)
  }

  package static func closed(path: String) -> StoreError {
    StoreError(.closed(path: path), function: nil, sqliteCode: nil, message: nil)
  }

  package static func notFound(_ what: String) -> StoreError {
    StoreError(.notFound(what: what), function: nil, sqliteCode: nil, message: nil)
  }
}
