import CSQLite
import ForageSupport

/// A prepared SQLite statement; the only owner of its `sqlite3_stmt`.
///
/// Parameters are 1-based, columns 0-based, as in the C API. A statement
/// from `SQLiteConnection.statement(_:)` comes reset with its bindings
/// cleared; `execute()`, `rows(_:)` and `firstRow(_:)` reset it again when
/// done, so that no read transaction stays open between uses.
///
/// Not thread-safe: it belongs to its connection's owner (the store actor).
///
/// - SeeAlso: <https://www.sqlite.org/c3ref/stmt.html>
final class SQLiteStatement {
  let handle: OpaquePointer
  /// The SQL text, for error messages (bound values are never shown).
  let sql: String
  private let db: OpaquePointer
  /// The store's path, for error messages.
  private let path: String
  /// One buffer per parameter that text and blobs are copied into, bound
  /// with SQLITE_STATIC: SQLite reads them in place, and the buffer outlives
  /// every use of the statement. With SQLITE_TRANSIENT SQLite copied each
  /// value into memory of its own, which `clear()` (run each time the
  /// statement is handed out) freed again: a malloc and a free per bound
  /// string, a dozen per committed page.
  private var buffers: [(pointer: UnsafeMutableRawPointer, capacity: Int)?] = []

  init(db: OpaquePointer, sql: String, path: String) throws {
    var statement: OpaquePointer?
    let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
    guard rc == SQLITE_OK, let statement else {
      sqlite3_finalize(statement)
      throw StoreError.statement(
        sql: sql, path: path, function: "sqlite3_prepare_v3", code: sqlite3_extended_errcode(db),
        message: String(cString: sqlite3_errmsg(db)))
    }
    self.handle = statement
    self.sql = sql
    self.db = db
    self.path = path
  }

  deinit {
    sqlite3_finalize(handle)
    for case let buffer? in buffers { buffer.pointer.deallocate() }
  }

  /// The bytes at `source`, copied into parameter `index`'s buffer (grown
  /// as needed); the copy's address. The previous value of the parameter
  /// is overwritten: SQLite reads a bound value only while stepping, and the
  /// caller binds the parameter again right after this.
  private func stage(_ source: UnsafeRawBufferPointer, at index: Int32) -> UnsafeRawPointer {
    let i = Int(index)
    if buffers.count <= i { buffers += Array(repeating: nil, count: i + 1 - buffers.count) }
    let needed = max(source.count, 1)
    if let buffer = buffers[i], buffer.capacity >= needed {
      if let base = source.baseAddress, source.count > 0 { buffer.pointer.copyMemory(from: base, byteCount: source.count) }
      return UnsafeRawPointer(buffer.pointer)
    }
    buffers[i]?.pointer.deallocate()
    let capacity = max(needed, (buffers[i]?.capacity ?? 0) * 2, 64)
    let pointer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
    if let base = source.baseAddress, source.count > 0 { pointer.copyMemory(from: base, byteCount: source.count) }
    buffers[i] = (pointer, capacity)
    return UnsafeRawPointer(pointer)
  }

  private func check(_ rc: Int32, _ function: String) throws {
    if rc != SQLITE_OK { throw error(rc, function) }
  }

  private func error(_ rc: Int32, _ function: String) -> StoreError {
    // The connection's extended code is more precise (e.g. which constraint).
    let extended = sqlite3_extended_errcode(db)
    let code = (extended & 0xff) == (rc & 0xff) ? extended : rc
    return StoreError.statement(
      sql: sql, path: path, function: function, code: code, message: String(cString: sqlite3_errmsg(db)))
  }

  // MARK: Binding (https://www.sqlite.org/c3ref/bind_blob.html)

  func bind(_ value: Int64, at index: Int32) throws {
    try check(sqlite3_bind_int64(handle, index, value), "sqlite3_bind_int64")
  }

  func bind(_ value: Int, at index: Int32) throws {
    try bind(Int64(value), at: index)
  }

  /// Binds a 64-bit hash or fingerprint by its bit pattern.
  func bind(_ value: UInt64, at index: Int32) throws {
    try bind(Int64(bitPattern: value), at: index)
  }

  func bind(_ value: Double, at index: Int32) throws {
    try check(sqlite3_bind_double(handle, index, value), "sqlite3_bind_double")
  }

  func bind(_ value: String, at index: Int32) throws {
    guard index >= 1 else { return try check(SQLITE_RANGE, "sqlite3_bind_text") }
    var value = value
    let rc = value.withUTF8 { utf8 in
      let copy = stage(UnsafeRawBufferPointer(utf8), at: index)
      return sqlite3_bind_text(
        handle, index, copy.assumingMemoryBound(to: CChar.self), Int32(utf8.count), forage_sqlite_static())
    }
    try check(rc, "sqlite3_bind_text")
  }

  /// Binds `utf8` as text; the bytes must be valid UTF-8 (SQLite does not
  /// check).
  func bind(utf8Text utf8: [UInt8], at index: Int32) throws {
    guard index >= 1 else { return try check(SQLITE_RANGE, "sqlite3_bind_text") }
    let rc = utf8.withUnsafeBytes { bytes in
      let copy = stage(bytes, at: index)
      return sqlite3_bind_text(
        handle, index, copy.assumingMemoryBound(to: CChar.self), Int32(bytes.count), forage_sqlite_static())
    }
    try check(rc, "sqlite3_bind_text")
  }

  func bind(blob: [UInt8], at index: Int32) throws {
    guard index >= 1 else { return try check(SQLITE_RANGE, "sqlite3_bind_blob") }
    let rc = blob.withUnsafeBytes { bytes in
      sqlite3_bind_blob(handle, index, stage(bytes, at: index), Int32(bytes.count), forage_sqlite_static())
    }
    try check(rc, "sqlite3_bind_blob")
  }

  /// Binds `values` as one JSON array, for a statement that reads it with
  /// `json_each(?)`: a whole batch of keys in one execution.
  func bind(jsonArray values: some Sequence<Int64>, at index: Int32) throws {
    var text = "["
    for (i, value) in values.enumerated() {
      if i > 0 { text += "," }
      text += String(value)
    }
    text += "]"
    try bind(text, at: index)
  }

  /// Binds `strings` as one JSON array of strings (see `bind(jsonArray:at:)`).
  func bind(jsonArray strings: [String], at index: Int32) throws {
    var text = "["
    for (i, string) in strings.enumerated() {
      if i > 0 { text += "," }
      JSONText.writeString(string, to: &text)
    }
    text += "]"
    try bind(text, at: index)
  }

  func bindNull(at index: Int32) throws {
    try check(sqlite3_bind_null(handle, index), "sqlite3_bind_null")
  }

  func bind(_ value: String?, at index: Int32) throws {
    if let value { try bind(value, at: index) } else { try bindNull(at: index) }
  }

  func bind(_ value: Int64?, at index: Int32) throws {
    if let value { try bind(value, at: index) } else { try bindNull(at: index) }
  }

  func bind(_ value: UInt64?, at index: Int32) throws {
    if let value { try bind(value, at: index) } else { try bindNull(at: index) }
  }

  // MARK: Stepping (https://www.sqlite.org/c3ref/step.html)

  /// Steps once: true when a row is ready, false when the statement is done.
  ///
  /// - Throws: `StoreError` naming `sqlite3_step` and the SQL.
  func step() throws -> Bool {
    let rc = sqlite3_step(handle)
    if rc == SQLITE_ROW { return true }
    if rc == SQLITE_DONE { return false }
    let error = error(rc, "sqlite3_step")
    sqlite3_reset(handle)
    throw error
  }

  /// Rewinds the statement (keeping its bindings), ending its read.
  func reset() {
    sqlite3_reset(handle)
  }

  /// Resets the statement and clears its bindings.
  func clear() {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
  }

  /// Runs the statement to completion, ignoring any rows, then resets it.
  func execute() throws {
    defer { sqlite3_reset(handle) }
    while try step() {}
  }

  /// Every row, mapped by `body`; the statement is reset afterwards.
  func rows<T>(_ body: (SQLiteStatement) throws -> T) throws -> [T] {
    defer { sqlite3_reset(handle) }
    var result: [T] = []
    while try step() { result.append(try body(self)) }
    return result
  }

  /// The first row mapped by `body`, or nil; the statement is reset afterwards.
  func firstRow<T>(_ body: (SQLiteStatement) throws -> T) throws -> T? {
    defer { sqlite3_reset(handle) }
    return try step() ? body(self) : nil
  }

  // MARK: Columns (https://www.sqlite.org/c3ref/column_blob.html)

  func isNull(_ column: Int32) -> Bool {
    sqlite3_column_type(handle, column) == SQLITE_NULL
  }

  func int64(_ column: Int32) -> Int64 {
    sqlite3_column_int64(handle, column)
  }

  func int(_ column: Int32) -> Int {
    Int(sqlite3_column_int64(handle, column))
  }

  func uint64(_ column: Int32) -> UInt64 {
    UInt64(bitPattern: sqlite3_column_int64(handle, column))
  }

  func double(_ column: Int32) -> Double {
    sqlite3_column_double(handle, column)
  }

  func string(_ column: Int32) -> String {
    guard let text = sqlite3_column_text(handle, column) else { return "" }
    let count = Int(sqlite3_column_bytes(handle, column))
    return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
  }

  func optionalString(_ column: Int32) -> String? {
    isNull(column) ? nil : string(column)
  }

  func optionalInt64(_ column: Int32) -> Int64? {
    isNull(column) ? nil : int64(column)
  }

  func optionalUInt64(_ column: Int32) -> UInt64? {
    isNull(column) ? nil : uint64(column)
  }

  func blob(_ column: Int32) -> [UInt8] {
    guard let bytes = sqlite3_column_blob(handle, column) else { return [] }
    let count = Int(sqlite3_column_bytes(handle, column))
    return Array(UnsafeRawBufferPointer(start: bytes, count: count))
  }
}
