import Foundation

extension SQLiteStore {
  // MARK: Downloads

  static let downloadColumns = """
    id, url, folder, name, expected_size, expected_sha256, source, state, bytes, total_size, etag, last_modified,
    attempts, last_error, path, sha256, created_at, updated_at, finished_at
    """

  /// A download from a row of `downloadColumns`.
  static func download(from row: SQLiteStatement) -> DownloadEntry {
    DownloadEntry(
      id: row.int64(0), url: row.string(1), folder: row.string(2), name: row.optionalString(3),
      expectedSize: row.optionalInt64(4).map(Int.init), expectedSHA256: row.optionalString(5),
      source: row.optionalString(6), state: DownloadState(rawValue: row.string(7)) ?? .queued,
      bytesWritten: row.int(8), totalSize: row.optionalInt64(9).map(Int.init), etag: row.optionalString(10),
      lastModified: row.optionalString(11), attempts: row.int(12), lastError: row.optionalString(13),
      path: row.optionalString(14), sha256: row.optionalString(15), createdAt: date(row.int64(16)),
      updatedAt: date(row.int64(17)), finishedAt: row.optionalInt64(18).map(date))
  }

  /// Queues a download, or returns (and per `repeat` requeues) the one kept for the
  /// same URL and folder, in one transaction.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func enqueueDownload(_ request: DownloadRequest, repeat: DownloadRequest.Repeat, now: Date) async throws
    -> DownloadEntry
  {
    let db = self.db
    let at = Self.milliseconds(now)
    return try db.transaction {
      let find = try db.statement("SELECT \(Self.downloadColumns) FROM downloads WHERE url = ? AND folder = ?")
      try find.bind(request.url, at: 1)
      try find.bind(request.folder, at: 2)
      guard var entry = try find.firstRow({ Self.download(from: $0) }) else {
        let insert = try db.statement(
          """
          INSERT INTO downloads (url, folder, expected_size, expected_sha256, source, created_at, updated_at)
          VALUES (?, ?, ?, ?, ?, ?, ?)
          """)
        try insert.bind(request.url, at: 1)
        try insert.bind(request.folder, at: 2)
        try insert.bind(request.expectedSize.map(Int64.init), at: 3)
        try insert.bind(request.expectedSHA256, at: 4)
        try insert.bind(request.source, at: 5)
        try insert.bind(at, at: 6)
        try insert.bind(at, at: 7)
        try insert.execute()
        return DownloadEntry(
          id: db.lastInsertRowID, url: request.url, folder: request.folder, expectedSize: request.expectedSize,
          expectedSHA256: request.expectedSHA256, source: request.source, createdAt: now, updatedAt: now)
      }
      let changed = entry.apply(request, repeat: `repeat`)
      guard changed else { return entry }
      entry.updatedAt = now
      let update = try db.statement(
        """
        UPDATE downloads SET state = ?, name = ?, path = ?, sha256 = ?, finished_at = ?, bytes = ?,
          total_size = ?, etag = ?, last_modified = ?, attempts = ?, last_error = ?, expected_size = ?,
          expected_sha256 = ?, updated_at = ?
        WHERE id = ?
        """)
      try update.bind(entry.state.rawValue, at: 1)
      try update.bind(entry.name, at: 2)
      try update.bind(entry.path, at: 3)
      try update.bind(entry.sha256, at: 4)
      try update.bind(entry.finishedAt.map(Self.milliseconds), at: 5)
      try update.bind(entry.bytesWritten, at: 6)
      try update.bind(entry.totalSize.map(Int64.init), at: 7)
      try update.bind(entry.etag, at: 8)
      try update.bind(entry.lastModified, at: 9)
      try update.bind(entry.attempts, at: 10)
      try update.bind(entry.lastError, at: 11)
      try update.bind(entry.expectedSize.map(Int64.init), at: 12)
      try update.bind(entry.expectedSHA256, at: 13)
      try update.bind(at, at: 14)
      try update.bind(entry.id, at: 15)
      try update.execute()
      return entry
    }
  }

  /// Claims queued downloads (and expired claims) in id order after `afterID`.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func claimDownloads(
    ids: [Int64]?, afterID: Int64, limit: Int, maxRemaining: Int?, lease: Lease
  ) async throws -> [DownloadEntry] {
    guard limit > 0, ids?.isEmpty != true else { return [] }
    let db = self.db
    let now = lease.at
    let at = Self.milliseconds(now)
    return try db.transaction {
      var conditions = ["(state = 'queued' OR (state = 'claimed' AND lease_until <= ?1))", "id > ?4"]
      if let ids { conditions.append("id IN (" + ids.map(String.init).joined(separator: ",") + ")") }
      if maxRemaining != nil {
        conditions.append(
          "coalesce(expected_size, total_size) IS NOT NULL AND coalesce(expected_size, total_size) - bytes <= ?3")
      }
      let select = try db.uncachedStatement(
        "SELECT \(Self.downloadColumns) FROM downloads WHERE \(conditions.joined(separator: " AND ")) ORDER BY id LIMIT ?2")
      try select.bind(at, at: 1)
      try select.bind(limit, at: 2)
      try select.bind(maxRemaining ?? 0, at: 3)
      try select.bind(afterID, at: 4)
      var claimed = try select.rows { Self.download(from: $0) }
      let update = try db.statement(
        "UPDATE downloads SET state = 'claimed', owner = ?, lease_until = ?, updated_at = ? WHERE id = ?")
      for i in claimed.indices {
        try update.bind(lease.owner, at: 1)
        try update.bind(at + lease.milliseconds, at: 2)
        try update.bind(at, at: 3)
        try update.bind(claimed[i].id, at: 4)
        try update.execute()
        claimed[i].state = .claimed
        claimed[i].updatedAt = now
      }
      return claimed
    }
  }

  /// Writes a claimed download's fields when `lease.owner` holds it,
  /// renewing the claim or, when `releasing`, ending it.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func updateDownload(_ entry: DownloadEntry, lease: Lease, releasing: Bool) async throws -> Bool {
    let owner = lease.owner
    let now = Self.milliseconds(lease.at)
    let state: DownloadState = !releasing ? .claimed : entry.state == .claimed ? .queued : entry.state
    let update = try db.statement(
      """
      UPDATE downloads SET state = ?, owner = ?, lease_until = ?, name = ?, expected_size = ?, expected_sha256 = ?,
        bytes = ?, total_size = ?, etag = ?, last_modified = ?, attempts = ?, last_error = ?, path = ?, sha256 = ?,
        finished_at = ?, updated_at = ?
      WHERE id = ? AND state = 'claimed' AND owner = ?
      """)
    try update.bind(state.rawValue, at: 1)
    try update.bind(releasing ? nil : owner, at: 2)
    try update.bind(releasing ? nil : now + lease.milliseconds, at: 3)
    try update.bind(entry.name, at: 4)
    try update.bind(entry.expectedSize.map(Int64.init), at: 5)
    try update.bind(entry.expectedSHA256, at: 6)
    try update.bind(entry.bytesWritten, at: 7)
    try update.bind(entry.totalSize.map(Int64.init), at: 8)
    try update.bind(entry.etag, at: 9)
    try update.bind(entry.lastModified, at: 10)
    try update.bind(entry.attempts, at: 11)
    try update.bind(entry.lastError, at: 12)
    try update.bind(entry.path, at: 13)
    try update.bind(entry.sha256, at: 14)
    try update.bind(entry.finishedAt.map(Self.milliseconds), at: 15)
    try update.bind(now, at: 16)
    try update.bind(entry.id, at: 17)
    try update.bind(owner, at: 18)
    try update.execute()
    return db.changes == 1
  }

  /// Downloads in a state (or all), oldest first.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func downloads(state: DownloadState?, limit: Int) async throws -> [DownloadEntry] {
    let select = try db.statement(
      "SELECT \(Self.downloadColumns) FROM downloads WHERE ?1 IS NULL OR state = ?1 ORDER BY id LIMIT ?2")
    try select.bind(state?.rawValue, at: 1)
    try select.bind(max(0, limit), at: 2)
    return try select.rows { Self.download(from: $0) }
  }

  /// One download by id.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func download(id: Int64) async throws -> DownloadEntry? {
    let select = try db.statement("SELECT \(Self.downloadColumns) FROM downloads WHERE id = ?")
    try select.bind(id, at: 1)
    return try select.firstRow { Self.download(from: $0) }
  }
}
