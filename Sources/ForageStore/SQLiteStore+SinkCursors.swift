import Foundation

extension SQLiteStore {
  // MARK: Record sinks' cursors

  /// The id of the last change the sink `name` applied; 0 when none.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func sinkCursor(_ name: String) async throws -> Int64 {
    let select = try db.statement("SELECT change FROM sink_cursors WHERE name = ?")
    try select.bind(name, at: 1)
    return try select.firstRow { $0.int64(0) } ?? 0
  }

  /// Sets the sink `name`'s cursor to `change`.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func setSinkCursor(_ name: String, to change: Int64, now: Date) async throws {
    let upsert = try db.statement(
      """
      INSERT INTO sink_cursors (name, change, updated_at) VALUES (?1, ?2, ?3)
      ON CONFLICT (name) DO UPDATE SET change = excluded.change, updated_at = excluded.updated_at
      """)
    try upsert.bind(name, at: 1)
    try upsert.bind(change, at: 2)
    try upsert.bind(Self.milliseconds(now), at: 3)
    try upsert.execute()
  }
}
