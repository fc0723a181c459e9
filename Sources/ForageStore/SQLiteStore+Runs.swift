import Foundation

extension SQLiteStore {
  // MARK: Task runs

  /// Records the start of a run of `task` over `sources`; returns its id.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func beginRun(task: String, sources: [String], startedAt: Date) async throws -> Int64 {
    let insert = try db.statement("INSERT INTO runs (task, sources, started_at) VALUES (?, ?, ?)")
    try insert.bind(task, at: 1)
    try insert.bind(String(decoding: try JSONEncoder().encode(sources), as: UTF8.self), at: 2)
    try insert.bind(Self.milliseconds(startedAt), at: 3)
    try insert.execute()
    return db.lastInsertRowID
  }

  /// Records the end of run `id` with its totals.
  ///
  /// - Throws: `StoreError` of kind `.notFound` for an unknown run.
  public func finishRun(_ id: Int64, summary: RunSummary) async throws {
    let update = try db.statement("UPDATE runs SET finished_at = ?, summary = ? WHERE id = ?")
    try update.bind(Self.milliseconds(summary.finishedAt), at: 1)
    try update.bind(try Self.encode(summary), at: 2)
    try update.bind(id, at: 3)
    try update.execute()
    if db.changes == 0 { throw StoreError.notFound("run with id \(id)") }
  }

  /// The `limit` most recent runs, newest first.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func runs(limit: Int) async throws -> [TaskRun] {
    let select = try db.statement(
      """
      SELECT id, task, sources, started_at, finished_at, summary
      FROM runs ORDER BY id DESC LIMIT ?
      """)
    try select.bind(limit, at: 1)
    return try select.rows { row in
      let sources = (try? JSONDecoder().decode([String].self, from: Data(row.string(2).utf8))) ?? []
      var summary: RunSummary?
      if let json = row.optionalString(5), let finished = row.optionalInt64(4) {
        summary = try? Self.decode(json)
        summary?.finishedAt = Self.date(finished)
      }
      return TaskRun(
        id: row.int64(0), task: row.string(1), sources: sources,
        startedAt: Self.date(row.int64(3)), summary: summary)
    }
  }

  private static func encode(_ summary: RunSummary) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    encoder.dateEncodingStrategy = .millisecondsSince1970
    return String(decoding: try encoder.encode(summary), as: UTF8.self)
  }

  private static func decode(_ json: String) throws -> RunSummary {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .millisecondsSince1970
    return try decoder.decode(RunSummary.self, from: Data(json.utf8))
  }
}
