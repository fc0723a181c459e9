#if Postgres
import Foundation
import ForageStore

extension PostgresStore {
  // MARK: Record sinks' cursors

  /// The id of the last change the sink `name` applied; 0 when none.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func sinkCursor(_ name: String) async throws -> Int64 {
    try await run(transaction: false) { db in
      let result = try db.query("SELECT change FROM sink_cursors WHERE name = $1", [.text(name)])
      return result.count == 0 ? 0 : result.int64(0, 0)
    }
  }

  /// Sets the sink `name`'s cursor to `change`.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func setSinkCursor(_ name: String, to change: Int64, now: Date) async throws {
    try await run(transaction: false) { db in
      try db.query(
        """
        INSERT INTO sink_cursors (name, change, updated_at) VALUES ($1, $2, $3)
        ON CONFLICT (name) DO UPDATE SET change = excluded.change, updated_at = excluded.updated_at
        """, [.text(name), .int(change), .date(now)])
    }
  }
}
#endif
