import CSQLite

/// An error of the store: a failed SQLite call, a store written by a newer
/// Forage, or a request for something the store does not hold.
///
/// Its `description` says what happened, the C function that failed, the
/// SQLite result code and message, and the SQL text or store path; never
/// the values bound to a statement.
///
///     do { _ = try SQLiteStore(path: "notes.txt") } catch let error as StoreError {
///       print(error)   // cannot open store 'notes.txt': file is not a database (…, code 26)
///     }
///
/// - SeeAlso: <https://www.sqlite.org/rescode.html>
public struct StoreError: Error, CustomStringConvertible, Sendable {
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
    public var description: String { name }
  }

  private enum Code: Sendable {
    case open(path: String)
    case statement(sql: String, path: String)
    case newerStore(path: String, unknown: [String])
    case notFound(what: String)
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
    case .notFound: return .notFound
    }
  }

  /// The primary SQLite result code (the extended code's low byte).
  public var primarySQLiteCode: Int32? { sqliteCode.map { $0 & 0xff } }

  public var description: String {
    let detail: String
    if let function, let sqliteCode {
      detail = "\(sqliteMessage ?? "unknown error") (\(function), code \(sqliteCode))"
    } else {
      detail = sqliteMessage ?? "unknown error"
    }
    switch code {
    case .open(let path):
      return "cannot open store '\(path)': \(detail)"
    case .statement(let sql, let path):
      return "statement failed on store '\(path)': \(detail); SQL: \(sql)"
    case .newerStore(let path, let unknown):
      return "store '\(path)' was written by a newer Forage: it has migrations this build "
        + "does not know (\(unknown.joined(separator: ", "))); upgrade Forage or use another store"
    case .notFound(let what):
      return "store has no \(what)"
    }
  }

  // MARK: Internal constructors

  static func open(path: String, function: String, code: Int32, message: String?) -> StoreError {
    StoreError(.open(path: path), function: function, sqliteCode: code, message: message)
  }

  static func statement(
    sql: String, path: String, function: String, code: Int32, message: String?
  ) -> StoreError {
    StoreError(
      .statement(sql: sql, path: path), function: function, sqliteCode: code, message: message)
  }

  static func newerStore(path: String, unknown: [String]) -> StoreError {
    StoreError(.newerStore(path: path, unknown: unknown), function: nil, sqliteCode: nil,
               message: nil)
  }

  static func notFound(_ what: String) -> StoreError {
    StoreError(.notFound(what: what), function: nil, sqliteCode: nil, message: nil)
  }
}
