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

  /// A `text[]` parameter (`$1::text[]`) in PostgreSQL's array literal syntax, every element
  /// quoted and escaped (`{"a","b \"c\"",NULL}`; nil is NULL), by the store's one element
  /// quoting (`PostgresStore.quoted`): for `unnest($1::text[], …)` batches.
  static func textArray(_ elements: [String?]) -> PostgresValue {
    .text(PostgresStore.arrayLiteral(elements.map { $0.map(PostgresStore.quoted) ?? "NULL" }))
  }

  /// A `bigint[]` parameter (`$1::bigint[]`): `{1,-2,NULL}`.
  static func bigintArray(_ elements: [Int64?]) -> PostgresValue {
    .text(PostgresStore.arrayLiteral(elements.map { $0.map { String($0) } ?? "NULL" }))
  }
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
  var affected: Int {
    guard let text = PQcmdTuples(handle) else { return 0 }
    return Int(Self.parseInt64(UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text)) ?? 0)
  }

  func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(handle, Int32(row), Int32(column)) != 0 }

  /// The bytes of a cell as libpq holds them (valid while this result lives); nil for NULL.
  /// Read in place: no C string is measured or copied to parse a number or a flag.
  private func cell(_ row: Int, _ column: Int) -> UnsafeBufferPointer<UInt8>? {
    let (r, c) = (Int32(row), Int32(column))
    guard PQgetisnull(handle, r, c) == 0, let value = PQgetvalue(handle, r, c) else { return nil }
    return UnsafeBufferPointer(
      start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: Int(PQgetlength(handle, r, c)))
  }

  func optionalString(_ row: Int, _ column: Int) -> String? {
    cell(row, column).map { String(decoding: $0, as: UTF8.self) }
  }
  func string(_ row: Int, _ column: Int) -> String { optionalString(row, column)! }
  func optionalInt64(_ row: Int, _ column: Int) -> Int64? {
    cell(row, column).flatMap { Self.parseInt64($0.baseAddress, count: $0.count) }
  }
  func int64(_ row: Int, _ column: Int) -> Int64 { optionalInt64(row, column)! }
  func int(_ row: Int, _ column: Int) -> Int { Int(int64(row, column)) }
  func optionalUInt64(_ row: Int, _ column: Int) -> UInt64? { optionalInt64(row, column).map { UInt64(bitPattern: $0) } }
  func uint64(_ row: Int, _ column: Int) -> UInt64 { optionalUInt64(row, column)! }
  func bool(_ row: Int, _ column: Int) -> Bool {
    let value = cell(row, column)!
    return value.count == 1 && value[0] == UInt8(ascii: "t")
  }
  func optionalDate(_ row: Int, _ column: Int) -> Date? { optionalInt64(row, column).map(PostgresStore.date) }
  func date(_ row: Int, _ column: Int) -> Date { optionalDate(row, column)! }

  /// A `bytea` column, which the text format sends as `\x` and hex digits.
  func bytes(_ row: Int, _ column: Int) -> [UInt8] {
    let text = cell(row, column)!
    guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x") else { return Array(text) }
    func nibble(_ c: UInt8) -> UInt8 {
      switch c {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
      default: return c &- UInt8(ascii: "A") &+ 10
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

  /// A decimal integer as PostgreSQL writes one (an optional sign, then digits), read from
  /// bytes; nil when they are not one or it does not fit in 64 bits (as `Int64(String)`).
  static func parseInt64(_ start: UnsafePointer<UInt8>?, count: Int) -> Int64? {
    guard let start, count > 0 else { return nil }
    var i = 0
    var negative = false
    if start[0] == UInt8(ascii: "-") || start[0] == UInt8(ascii: "+") {
      negative = start[0] == UInt8(ascii: "-")
      i = 1
      guard count > 1 else { return nil }
    }
    // Accumulated negatively, so Int64.min (whose magnitude Int64.max cannot hold) parses too.
    var value: Int64 = 0
    while i < count {
      let digit = start[i] &- UInt8(ascii: "0")
      guard digit < 10 else { return nil }
      let (times10, o1) = value.multipliedReportingOverflow(by: 10)
      let (next, o2) = times10.subtractingReportingOverflow(Int64(digit))
      guard !o1, !o2 else { return nil }
      value = next
      i += 1
    }
    if negative { return value }
    return value == .min ? nil : -value
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
  /// How `PostgresTrace` names this connection: `store` or `side`.
  var label = "store"
  private var prepared: [String: String] = [:]
  private var preparedCount = 0
  /// Inside `transaction`, before its first statement: BEGIN is still to be sent.
  private var beginPending = false
  /// Inside `transaction`.
  private var inTransaction = false
  /// Inside `transaction`: `pipelineCommitting` sent its COMMIT, and it landed.
  private var committed = false
  // Reused for every statement's parameters (`withParameters`).
  private var paramBytes: [UInt8] = []
  private var paramStarts: [Int] = []
  private var paramLengths: [Int32] = []
  private var paramFormats: [Int32] = []

  /// Connects to `url`; with `readOnly`, every transaction of the session
  /// (after a reconnection too) is read-only, so that every write fails.
  ///
  /// - Throws: `StoreError` of kind `.connection` (server not reachable) or
  ///   `.open` (refused: user, password, database), naming `PQconnectdbParams`.
  init(url: PostgresURL, connectTimeout: Int = 10, applicationName: String = "forage", readOnly: Bool = false) throws {
    self.url = url
    self.applicationName = applicationName
    self.readOnly = readOnly
    handle = nil
    try connect(connectTimeout: connectTimeout)
  }

  /// How the server lists the connection (`pg_stat_activity.application_name`).
  let applicationName: String
  /// Every transaction is read-only (`default_transaction_read_only`).
  let readOnly: Bool

  deinit { if let handle { PQfinish(handle) } }

  private func connect(connectTimeout: Int) throws {
    if let handle { PQfinish(handle) }
    handle = nil
    prepared.removeAll()
    beginPending = false
    // The URL's own parameters come after (and so override) these defaults.
    let keys = ["connect_timeout", "application_name", "dbname"]
    let values = [String(connectTimeout), applicationName, url.text]
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
    if readOnly { try exec("SET default_transaction_read_only = on") }
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
    let began = ContinuousClock.now
    defer { PostgresTrace.sink?.record(connection: label, began: began, count: 1, sql: sql) }
    if beginPending {
      beginPending = false
      return try check(PQexec(conn, "BEGIN; " + sql), function: "PQexec", sql: sql)
    }
    return try check(PQexec(conn, sql), function: "PQexec", sql: sql)
  }

  /// Runs one statement with `$1`… parameters, prepared on first use.
  ///
  /// - Throws: `StoreError` naming `PQexecPrepared` (or `PQprepare`) and the
  ///   SQL, never the values.
  @discardableResult
  func query(_ sql: String, _ params: [PostgresValue] = []) throws -> PostgresResult {
    guard !beginPending, let name = prepared[sql] else {
      // The prepare (and a transaction's deferred BEGIN) go in the same round trip.
      return try run([(sql, params)], functions: ("PQprepare", "PQexecPrepared"))[0]
    }
    let conn = try live(sql)
    try refuseNUL(in: params, function: "PQexecPrepared", sql: sql)
    let began = ContinuousClock.now
    defer { PostgresTrace.sink?.record(connection: label, began: began, count: 1, sql: sql) }
    let result = withParameters(params) { count, values, lengths, formats in
      PQexecPrepared(conn, name, count, values, lengths, formats, 0)
    }
    return try check(result, function: "PQexecPrepared", sql: sql)
  }

  /// Runs the statements `body` queues in one pipeline (libpq's pipeline mode): all of them
  /// are sent, then one sync, then their results are read in order, so N statements cost
  /// one round trip to the server instead of N. Each is prepared on first use, as `query` does.
  ///
  ///     let results = try db.pipeline { p in
  ///       p.send("UPDATE crawls SET frontier_size = $1 WHERE id = $2", [.int(size), .int(crawl)])
  ///       p.send("SELECT count(*) FROM frontier WHERE crawl = $1", [.int(crawl)])
  ///     }
  ///     let queued = results[1].int(0, 0)
  ///
  /// Outside ``transaction(_:)`` the server runs a pipeline's statements in one implicit
  /// transaction, committed at the sync: when one fails, the ones before it are rolled back
  /// and the ones after it are not run. Inside ``transaction(_:)`` a failure aborts that
  /// transaction (which then rolls back). Nothing is sent when `body` throws or a text value
  /// holds a NUL.
  ///
  /// - Returns: one result per `send`, in the order sent.
  /// - Throws: `StoreError` of the first statement that failed, mapped as `query` maps it
  ///   (naming `PQsendQueryPrepared` or `PQsendPrepare` and its SQL, never the values);
  ///   `.connection` when the connection broke.
  func pipeline(_ body: (PostgresPipeline) throws -> Void) throws -> [PostgresResult] {
    let queue = PostgresPipeline()
    try body(queue)
    return try run(queue.statements, functions: ("PQsendPrepare", "PQsendQueryPrepared"))
  }

  /// Inside ``transaction(_:)``: runs the statements `body` queues and the
  /// transaction's COMMIT in one pipeline, so the last statements of a
  /// transaction and its end cost one round trip. The transaction is over
  /// when this returns (``transaction(_:)`` sends no COMMIT of its own);
  /// when a statement or the COMMIT fails, it throws and the transaction
  /// rolls back.
  ///
  /// - Returns: one result per `send`, in the order sent (the COMMIT's is not among them).
  /// - Throws: as ``pipeline(_:)``.
  func pipelineCommitting(_ body: (PostgresPipeline) throws -> Void) throws -> [PostgresResult] {
    precondition(inTransaction, "pipelineCommitting outside a transaction")
    let queue = PostgresPipeline()
    try body(queue)
    queue.send("COMMIT")
    let results = try run(queue.statements, functions: ("PQsendPrepare", "PQsendQueryPrepared"))
    committed = true
    return Array(results.dropLast())
  }

  /// Sends `queued` in one pipeline (after the deferred BEGIN of a transaction, if one is
  /// pending) and returns their results; errors name `functions` (prepare, execute).
  private func run(_ queued: [(sql: String, params: [PostgresValue])], functions: (prepare: String, execute: String))
    throws -> [PostgresResult]
  {
    guard let first = queued.first else { return [] }
    let conn = try live(first.sql)
    for statement in queued {
      try refuseNUL(in: statement.params, function: functions.execute, sql: statement.sql)
    }
    let skipped = beginPending ? 1 : 0
    let statements = beginPending ? [("BEGIN", [])] + queued : queued
    let began = ContinuousClock.now
    defer {
      PostgresTrace.sink?.record(connection: label, began: began, count: statements.count, sql: first.sql)
    }
    beginPending = false
    guard PQenterPipelineMode(conn) == 1 else { throw lost("PQenterPipelineMode", sql: first.sql) }

    // What each result read back answers, in the order sent.
    enum Slot {
      case prepare(sql: String, name: String)
      case statement(index: Int)
    }
    var slots: [Slot] = []
    slots.reserveCapacity(statements.count)
    var preparedHere: [String: String] = [:]
    // Non-blocking while sending: a long pipeline whose results fill the server's socket
    // buffer would otherwise block both sides (libpq reads what arrives while it flushes).
    _ = PQsetnonblocking(conn, 1)
    do {
      for (index, statement) in statements.enumerated() {
        let name: String
        if let known = prepared[statement.sql] ?? preparedHere[statement.sql] {
          name = known
        } else {
          name = nextName()
          guard PQsendPrepare(conn, name, statement.sql, Int32(statement.params.count), nil) == 1 else {
            throw lost(functions.prepare, sql: statement.sql)
          }
          preparedHere[statement.sql] = name
          slots.append(.prepare(sql: statement.sql, name: name))
        }
        let sent = withParameters(statement.params) { count, values, lengths, formats in
          PQsendQueryPrepared(conn, name, count, values, lengths, formats, 0)
        }
        guard sent == 1 else { throw lost(functions.execute, sql: statement.sql) }
        slots.append(.statement(index: index))
      }
      guard PQpipelineSync(conn) == 1 else { throw lost("PQpipelineSync", sql: first.sql) }
      try flush(conn, sql: first.sql)
    } catch {
      // Some statements may be queued without their sync: the connection cannot be trusted
      // to be in step any more, and closing it rolls them back on the server.
      close()
      throw error
    }
    _ = PQsetnonblocking(conn, 0)

    var results: [PostgresResult?] = Array(repeating: nil, count: statements.count)
    var firstFailure: StoreError?
    for slot in slots {
      let sql: String
      let function: String
      switch slot {
      case .prepare(let text, _): (sql, function) = (text, functions.prepare)
      case .statement(let index): (sql, function) = (statements[index].sql, functions.execute)
      }
      guard let result = PQgetResult(conn) else {
        close()
        throw lost(function, sql: sql)
      }
      let status = PQresultStatus(result)
      if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
        switch slot {
        case .prepare(let text, let name):
          prepared[text] = name
          PQclear(result)
        case .statement(let index):
          results[index] = PostgresResult(result)
        }
      } else if status == PGRES_PIPELINE_ABORTED {
        PQclear(result)
      } else {
        let error = failure(result, function: function, sql: sql)
        if !isOpen {
          close()
          throw error
        }
        firstFailure = firstFailure ?? error
      }
      // Each statement's results end with a NULL.
      if let extra = PQgetResult(conn) {
        PQclear(extra)
        close()
        throw lost(function, sql: sql)
      }
    }
    guard let sync = PQgetResult(conn) else {
      close()
      throw lost("PQpipelineSync", sql: first.sql)
    }
    let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
    PQclear(sync)
    guard synced, PQexitPipelineMode(conn) == 1 else {
      close()
      throw lost("PQexitPipelineMode", sql: first.sql)
    }
    if let firstFailure { throw firstFailure }
    return results.dropFirst(skipped).map { $0! }
  }

  /// The name of the next statement prepared on this connection: never one used before,
  /// so a prepare left on the server by a pipeline that failed cannot collide with it.
  private func nextName() -> String {
    preparedCount += 1
    return "s\(preparedCount)"
  }

  /// Sends what libpq holds for the server, reading what arrives meanwhile.
  private func flush(_ conn: OpaquePointer, sql: String) throws {
    while true {
      let pending = PQflush(conn)
      if pending == 0 { return }
      guard pending > 0 else { throw lost("PQflush", sql: sql) }
      var socket = pollfd(fd: PQsocket(conn), events: Int16(POLLIN | POLLOUT), revents: 0)
      if poll(&socket, 1, -1) < 0 {
        if errno == EINTR { continue }
        throw lost("poll", sql: sql)
      }
      if socket.revents & Int16(POLLIN) != 0, PQconsumeInput(conn) != 1 { throw lost("PQconsumeInput", sql: sql) }
    }
  }

  /// Sent as C strings, a NUL would end a text value early (and stored text cannot hold
  /// one): refused, never cut.
  private func refuseNUL(in params: [PostgresValue], function: String, sql: String) throws {
    for case .text(let text) in params {
      let holdsNUL = text.utf8.withContiguousStorageIfAvailable { bytes in
        bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false
      } ?? text.utf8.contains(0)
      if holdsNUL {
        throw StoreError.server(
          .statement, store: url.redacted,
          reason: "a text value holds a NUL character (U+0000), which PostgreSQL cannot store",
          function: function, detail: nil, sql: sql)
      }
    }
  }

  /// Calls `body` with libpq's parameter arrays for `params` (count, values, lengths,
  /// formats): every value's bytes packed into one buffer this connection reuses, text
  /// NUL-terminated, bytes in binary format; valid during the call.
  private func withParameters<R>(
    _ params: [PostgresValue],
    _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R
  ) -> R {
    guard !params.isEmpty else { return body(0, nil, nil, nil) }
    paramBytes.removeAll(keepingCapacity: true)
    paramStarts.removeAll(keepingCapacity: true)
    paramLengths.removeAll(keepingCapacity: true)
    paramFormats.removeAll(keepingCapacity: true)
    for param in params {
      switch param {
      case .text(let text):
        paramStarts.append(paramBytes.count)
        paramBytes.append(contentsOf: text.utf8)
        paramBytes.append(0)
        paramLengths.append(0)
        paramFormats.append(0)
      case .bytes(let bytes):
        paramStarts.append(paramBytes.count)
        paramBytes.append(contentsOf: bytes)
        paramBytes.append(0)  // so even an empty value points into the buffer (NULL is SQL NULL)
        paramLengths.append(Int32(bytes.count))
        paramFormats.append(1)
      case .null:
        paramStarts.append(-1)
        paramLengths.append(0)
        paramFormats.append(0)
      }
    }
    if paramBytes.isEmpty { paramBytes.append(0) }
    let count = params.count
    return paramBytes.withUnsafeBufferPointer { bytes in
      let base = UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self)
      return withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: count) { values in
        for i in 0..<count { values[i] = paramStarts[i] < 0 ? nil : base + paramStarts[i] }
        return paramLengths.withUnsafeBufferPointer { lengths in
          paramFormats.withUnsafeBufferPointer { formats in
            body(Int32(count), UnsafePointer(values.baseAddress), lengths.baseAddress, formats.baseAddress)
          }
        }
      }
    }
  }

  /// Runs `body` in a transaction: committed when it returns, rolled back
  /// when it throws.
  ///
  /// The BEGIN is not a round trip of its own: it goes with the transaction's first
  /// statement (in one pipeline), and a body that runs no statement sends nothing.
  func transaction<T>(_ body: () throws -> T) throws -> T {
    beginPending = true
    inTransaction = true
    committed = false
    defer { inTransaction = false }
    do {
      let value = try body()
      if beginPending {
        beginPending = false
        return value
      }
      if committed { return value }
      try exec("COMMIT")
      return value
    } catch {
      let began = !beginPending
      beginPending = false
      if began, !committed, isOpen { _ = try? exec("ROLLBACK") }
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
    guard let result else { throw lost(function, sql: sql) }
    let status = PQresultStatus(result)
    if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
      return PostgresResult(result)
    }
    throw failure(result, function: function, sql: sql)
  }

  /// The error a failed `result` stands for (which it frees): its SQLSTATE in words, or
  /// `.connection` when the connection is gone.
  private func failure(_ result: OpaquePointer, function: String, sql: String) -> StoreError {
    let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
    let message = String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
    PQclear(result)
    let lost = !isOpen || state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03"
    let (kind, reason) = lost ? (StoreError.Kind.connection, "the connection to the server was lost") : Self.reason(state: state, message: message)
    return StoreError.server(
      kind, store: url.redacted, reason: reason, function: function, detail: "SQLSTATE \(state): \(message)", sql: sql)
  }

  /// The error for a connection that broke while libpq talked to the server.
  private func lost(_ function: String, sql: String) -> StoreError {
    let message = handle.map { String(cString: PQerrorMessage($0)) } ?? ""
    return StoreError.server(
      .connection, store: url.redacted, reason: "the connection to the server was lost", function: function,
      detail: message.trimmingCharacters(in: .whitespacesAndNewlines), sql: sql)
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

/// Statements queued for one ``PostgresConnection/pipeline(_:)``: nothing is sent until the
/// pipeline's body returns.
final class PostgresPipeline {
  fileprivate private(set) var statements: [(sql: String, params: [PostgresValue])] = []

  /// Queues `sql` with its `$1`… parameters.
  ///
  /// - Returns: the index of its result in what ``PostgresConnection/pipeline(_:)`` returns.
  @discardableResult
  func send(_ sql: String, _ params: [PostgresValue] = []) -> Int {
    statements.append((sql, params))
    return statements.count - 1
  }

  /// The statements queued so far.
  var count: Int { statements.count }
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
