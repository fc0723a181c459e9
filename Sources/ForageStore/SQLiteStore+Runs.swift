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

  /// Records the end of run `id` with its totals (`finishedAt`, now when nil).
  ///
  /// - Throws: `StoreError` of kind `.notFound` for an unknown run.
  public func finishRun(_ id: Int64, summary: RunSummary) async throws {
    let update = try db.statement("UPDATE runs SET finished_at = ?, summary = ? WHERE id = ?")
    try update.bind(Self.milliseconds(summary.finishedAt ?? Date()), at: 1)
    try update.bind(try Self.encode(summary), at: 2)
    try update.bind(id, at: 3)
    try update.execute()
    if db.changes == 0 { throw StoreError.notFound("run with id \(id)") }
  }

  /// Records the running totals of unfinished run `id` (its `summary`
  /// column while `finished_at` is empty); a finished run is left alone.
  ///
  /// - Throws: `StoreError` when the statement fails.
  public func recordRunProgress(_ id: Int64, summary: RunSummary) async throws {
    let update = try db.statement("UPDATE runs SET summary = ? WHERE id = ? AND finished_at IS NULL")
    try update.bind(try Self.encode(summary), at: 1)
    try update.bind(id, at: 2)
    try update.execute()
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
      var progress: RunSummary?
      if let json = row.optionalString(5) {
        if let finished = row.optionalInt64(4) {
          summary = try? Self.decode(json)
          summary?.finishedAt = Self.date(finished)
        } else {
          progress = try? Self.decode(json)
        }
      }
      return TaskRun(
        id: row.int64(0), task: row.string(1), sources: sources,
        startedAt: Self.date(row.int64(3)), summary: summary, progress: progress)
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

extension SQLiteStore {
  // MARK: robots.txt

  /// The robots.txt answer kept for `origin`, expired or not.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func robotsFile(origin: String) async throws -> RobotsFile? {
    let select = try db.statement(
      "SELECT verdict, body, fetched_at, expires_at FROM robots WHERE origin = ?")
    try select.bind(origin, at: 1)
    // A verdict this build does not know reads as nothing kept: the fetcher
    // then asks the origin again.
    let file = try select.firstRow { row -> RobotsFile? in
      guard let verdict = RobotsFile.Verdict(rawValue: row.string(0)) else { return nil }
      return RobotsFile(
        origin: origin, verdict: verdict, body: row.blob(1), fetchedAt: Self.date(row.int64(2)),
        expiresAt: Self.date(row.int64(3)))
    }
    return file ?? nil
  }

  /// Keeps `file` in place of its origin's earlier answer.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func keepRobotsFile(_ file: RobotsFile) async throws {
    let upsert = try db.statement(
      """
      INSERT INTO robots (origin, verdict, body, fetched_at, expires_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (origin) DO UPDATE SET
        verdict = excluded.verdict, body = excluded.body,
        fetched_at = excluded.fetched_at, expires_at = excluded.expires_at
      """)
    try upsert.bind(file.origin, at: 1)
    try upsert.bind(file.verdict.rawValue, at: 2)
    try upsert.bind(blob: file.body, at: 3)
    try upsert.bind(Self.milliseconds(file.fetchedAt), at: 4)
    try upsert.bind(Self.milliseconds(file.expiresAt), at: 5)
    try upsert.execute()
  }
}
