#if Postgres
import CLibPQ
import Foundation
import ForageStore

/// A value bound to a statement parameter: text (PostgreSQL converts it to
/// the column's type), raw bytes for `bytea`, or NULL.
enum PostgresValue {
  case text(String)
  case bytes([UInt8])
  case null

  static func int(_ value: Int64?) -> PostgresValue { value.map { .text(String($0)) } ?? .null }
  static func int(_ value: Int?) -> PostgresValue { value.map { .text(String($0)) } ?? .null }
  /// A 64-bit fingerprint or hash, stored by bit pattern as a signed BIGINT (as SQLite does).
  static func bits(_ value: UInt64?) -> PostgresValue { value.map { .text(String(Int64(bitPattern: $0))) } ?? .null }
  static func string(_ value: String?) -> PostgresValue { value.map { .text($0) } ?? .null }
  static func bool(_ value: Bool) -> PostgresValue { .text(value ? "true" : "false") }
  /// Milliseconds since 1970, the store's date representation.
  static func date(_ value: Date?) -> PostgresValue { value.map { .text(String(PostgresStore.milliseconds($0))) } ?? .null }
}

/// The rows of one statement's result, in text format; frees its `PGresult`.
///
/// Reading a NULL with a non-optional accessor is a bug in the query and
/// traps; optional accessors return nil for it.
final class PostgresResult {
  let handle: OpaquePointer
  let count: Int

  init(_ handle: OpaquePointer) {
    self.handle = handle
    self.count = Int(PQntuples(handle))
  }

  deinit { PQclear(handle) }

  /// Rows changed by an INSERT, UPDATE or DELETE (`PQcmdTuples`).
  var affected: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

  func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(handle, Int32(row), Int32(column)) != 0 }

  func optionalString(_ row: Int, _ column: Int) -> String? {
    isNull(row, column) ? nil : String(cString: PQgetvalue(handle, Int32(row), Int32(column)))
  }
  func string(_ row: Int, _ column: Int) -> String { optionalString(row, column)! }
  func optionalInt64(_ row: Int, _ column: Int) -> Int64? { optionalString(row, column).flatMap { Int64($0) } }
  func int64(_ row: Int, _ column: Int) -> Int64 { optionalInt64(row, column)! }
  func int(_ row: Int, _ column: Int) -> Int { Int(int64(row, column)) }
  func optionalUInt64(_ row: Int, _ column: Int) -> UInt64? { optionalInt64(row, column).map { UInt64(bitPattern: $0) } }
  func uint64(_ row: Int, _ column: Int) -> UInt64 { optionalUInt64(row, column)! }
  func bool(_ row: Int, _ column: Int) -> Bool { string(row, column) == "t" }
  func optionalDate(_ row: Int, _ column: Int) -> Date? { optionalInt64(row, column).map(PostgresStore.date) }
  func date(_ row: Int, _ column: Int) -> Date { optionalDate(row, column)! }

  /// A `bytea` column, which the text format sends as `\x` and hex digits.
  func bytes(_ row: Int, _ column: Int) -> [UInt8] {
    let text = Array(string(row, column).utf8)
    guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x") else { return text }
    func nibble(_ c: UInt8) -> UInt8 {
      switch c {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
      default: return c - UInt8(ascii: "A") + 10
      }
    }
    var out: [UInt8] = []
    out.reserveCapacity((text.count - 2) / 2)
    var i = 2
    while i + 1 < text.count {
      out.append(nibble(text[i]) << 4 | nibble(text[i + 1]))
      i += 2
    }
    return out
  }

  /// Maps every row.
  func rows<T>(_ read: (Int) throws -> T) rethrows -> [T] {
    var out: [T] = []
    out.reserveCapacity(count)
    for row in 0..<count { out.append(try read(row)) }
    return out
  }
}

/// One libpq connection; the only owner of its `PGconn*`.
///
/// Not thread-safe: it belongs to one `PostgresStore` actor, which never
/// lets it cross an isolation boundary. Statements with parameters are
/// prepared once per connection (named `s1`, `s2`…) and reused; the cache is
/// dropped when the connection is reset.
///
/// - SeeAlso: <https://www.postgresql.org/docs/15/libpq-exec.html>
final class PostgresConnection {
  private(set) var handle: OpaquePointer?
  let url: PostgresURL
  private var prepared: [String: String] = [:]

  /// Connects to `url`.
  ///
  /// - Throws: `StoreError` of kind `.connection` (server not reachable) or
  ///   `.open` (refused: user, password, database), naming `PQconnectdbParams`.
  init(url: PostgresURL, connectTimeout: Int = 10) throws {
    self.url = url
    handle = nil
    try connect(connectTimeout: connectTimeout)
  }

  deinit { if let handle { PQfinish(handle) } }

  private func connect(connectTimeout: Int) throws {
    if let handle { PQfinish(handle) }
    handle = nil
    prepared.removeAll()
    // The URL's own parameters come after (and so override) these defaults.
    let keys = ["connect_timeout", "application_name", "dbname"]
    let values = [String(connectTimeout), "forage", url.text]
    let conn = withCStrings(keys) { k in
      withCStrings(values) { v in PQconnectdbParams(k, v, 1) }
    }
    guard let conn else {
      throw StoreError.server(
        .connection, store: url.redacted, reason: "libpq could not allocate a connection",
        function: "PQconnectdbParams", detail: nil, sql: nil)
    }
    guard PQstatus(conn) == CONNECTION_OK else {
      let message = String(cString: PQerrorMessage(conn)).trimmingCharacters(in: .whitespacesAndNewlines)
      PQfinish(conn)
      let (kind, reason) = Self.connectReason(message)
      throw StoreError.server(
        kind, store: url.redacted, reason: reason, function: "PQconnectdbParams", detail: message, sql: nil)
    }
    handle = conn
    // Notices (such as "relation already exists, skipping") are not for users.
    _ = try? exec("SET client_min_messages = warning")
  }

  /// True while the connection is usable.
  var isOpen: Bool { handle.map { PQstatus($0) == CONNECTION_OK } ?? false }

  /// Connects again after a loss (the server restarted, the network broke).
  ///
  /// - Throws: `StoreError` of kind `.connection` while the server is away.
  func reconnect() throws { try connect(connectTimeout: 5) }

  /// Closes the connection; later calls throw `.connection`.
  func close() {
    if let handle { PQfinish(handle) }
    handle = nil
    prepared.removeAll()
  }

  /// Runs SQL without parameters (several statements are allowed).
  ///
  /// - Throws: `StoreError` naming `PQexec` and the SQL.
  @discardableResult
  func exec(_ sql: String) throws -> PostgresResult {
    let conn = try live(sql)
    return try check(PQexec(conn, sql), function: "PQexec", sql: sql)
  }

  /// Runs one statement with `$1`… parameters, prepared on first use.
  ///
  /// - Throws: `StoreError` naming `PQexecPrepared` (or `PQprepare`) and the
  ///   SQL, never the values.
  @discardableResult
  func query(_ sql: String, _ params: [PostgresValue] = []) throws -> PostgresResult {
    let conn = try live(sql)
    let name: String
    if let known = prepared[sql] {
      name = known
    } else {
      name = "s\(prepared.count + 1)"
      _ = try check(PQprepare(conn, name, sql, Int32(params.count), nil), function: "PQprepare", sql: sql)
      prepared[sql] = name
    }
    var formats: [Int32] = []
    var lengths: [Int32] = []
    var buffers: [[CChar]?] = []
    for param in params {
      switch param {
      case .text(let text):
        // Sent as a C string, a NUL would end the value early (and stored
        // text cannot hold one): refused, never cut.
        if text.utf8.contains(0) {
          throw StoreError.server(
            .statement, store: url.redacted,
            reason: "a text value holds a NUL character (U+0000), which PostgreSQL cannot store",
            function: "PQexecPrepared", detail: nil, sql: sql)
        }
        buffers.append(Array(text.utf8CString))
        formats.append(0)
        lengths.append(0)
      case .bytes(let bytes):
        buffers.append(bytes.map { CChar(bitPattern: $0) } + [0])
        formats.append(1)
        lengths.append(Int32(bytes.count))
      case .null:
        buffers.append(nil)
        formats.append(0)
        lengths.append(0)
      }
    }
    let result = withPointers(buffers) { values in
      PQexecPrepared(conn, name, Int32(params.count), values, lengths, formats, 0)
    }
    return try check(result, function: "PQexecPrepared", sql: sql)
  }

  /// Runs `body` in a transaction: committed when it returns, rolled back
  /// when it throws.
  func transaction<T>(_ body: () throws -> T) throws -> T {
    try exec("BEGIN")
    do {
      let value = try body()
      try exec("COMMIT")
      return value
    } catch {
      if isOpen { _ = try? exec("ROLLBACK") }
      throw error
    }
  }

  // MARK: Errors

  private func live(_ sql: String) throws -> OpaquePointer {
    guard let handle, PQstatus(handle) == CONNECTION_OK else {
      throw StoreError.server(
        .connection, store: url.redacted, reason: "the connection to the server was lost", function: nil,
        detail: nil, sql: sql)
    }
    return handle
  }

  private func check(_ result: OpaquePointer?, function: String, sql: String) throws -> PostgresResult {
    guard let result else {
      let message = handle.map { String(cString: PQerrorMessage($0)) } ?? ""
      throw StoreError.server(
        .connection, store: url.redacted, reason: "the connection to the server was lost", function: function,
        detail: message.trimmingCharacters(in: .whitespacesAndNewlines), sql: sql)
    }
    let status = PQresultStatus(result)
    if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
      return PostgresResult(result)
    }
    let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
    let message = String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
    PQclear(result)
    let lost = !isOpen || state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03"
    let (kind, reason) = lost ? (StoreError.Kind.connection, "the connection to the server was lost") : Self.reason(state: state, message: message)
    throw StoreError.server(
      kind, store: url.redacted, reason: reason, function: function, detail: "SQLSTATE \(state): \(message)", sql: sql)
  }

  /// Why a statement failed, in words, from its SQLSTATE.
  ///
  /// - SeeAlso: <https://www.postgresql.org/docs/15/errcodes-appendix.html>
  static func reason(state: String, message: String) -> (StoreError.Kind, String) {
    switch state {
    case "40001", "40P01": return (.statement, "another worker changed the same rows at the same time")
    case "53100": return (.statement, "the server's disk is full")
    case "42501": return (.statement, "permission denied")
    case "23505": return (.statement, "a row with the same key already exists")
    case "23514": return (.statement, "a value is not one the store accepts")
    case "57014": return (.statement, "the statement was cancelled (a timeout)")
    default:
      if state.hasPrefix("53") { return (.statement, "the server ran out of resources") }
      return (.statement, "the server refused a statement")
    }
  }

  /// Why a connection failed, in words, from libpq's message.
  static func connectReason(_ message: String) -> (StoreError.Kind, String) {
    let lower = message.lowercased()
    if lower.contains("password authentication failed") || lower.contains("no password supplied") {
      return (.open, "the server refused the user name or password")
    }
    if lower.contains("database") && lower.contains("does not exist") {
      return (.open, "the database does not exist on the server (create it first)")
    }
    if lower.contains("role") && lower.contains("does not exist") {
      return (.open, "the server has no such user")
    }
    if lower.contains("no pg_hba.conf entry") { return (.open, "the server does not accept connections from here") }
    if lower.contains("connection refused") || lower.contains("no such file or directory") {
      return (.connection, "no server is running there, or it refuses connections")
    }
    if lower.contains("could not translate host name") { return (.connection, "the host name is not known") }
    if lower.contains("timeout") { return (.connection, "the server did not answer in time") }
    if lower.contains("starting up") || lower.contains("shutting down") {
      return (.connection, "the server is starting up or shutting down")
    }
    if lower.contains("invalid") || lower.contains("missing") {
      return (.open, "the URL is not a valid PostgreSQL connection URL")
    }
    return (.connection, "the server could not be reached")
  }
}

/// Calls `body` with a C array of C strings made from `strings`, ending with NULL.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
  withPointers(strings.map { Array($0.utf8CString) } + [nil]) { body($0) }
}

/// Calls `body` with pointers to each buffer (NULL for nil), valid during the call.
private func withPointers<R>(_ buffers: [[CChar]?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
  let copies: [UnsafeMutablePointer<CChar>?] = buffers.map { buffer in
    guard let buffer else { return nil }
    let copy = UnsafeMutablePointer<CChar>.allocate(capacity: buffer.count)
    copy.initialize(from: buffer, count: buffer.count)
    return copy
  }
  defer { for copy in copies { copy?.deallocate() } }
  let pointers = copies.map { UnsafePointer($0) }
  return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
#endif
