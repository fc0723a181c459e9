#if Postgres
import Foundation
import ForageStore

extension PostgresStore {
  // MARK: Downloads

  static let downloadColumns = """
    id, url, folder, name, expected_size, expected_sha256, source, state, bytes, total_size, etag, last_modified,
    attempts, last_error, path, sha256, created_at, updated_at, finished_at
    """

  static func download(_ r: PostgresResult, _ row: Int) -> DownloadEntry {
    DownloadEntry(
      id: r.int64(row, 0), url: r.string(row, 1), folder: r.string(row, 2), name: r.optionalString(row, 3),
      expectedSize: r.optionalInt64(row, 4).map(Int.init), expectedSHA256: r.optionalString(row, 5),
      source: r.optionalString(row, 6), state: DownloadState(rawValue: r.string(row, 7)) ?? .queued,
      bytesWritten: r.int(row, 8), totalSize: r.optionalInt64(row, 9).map(Int.init), etag: r.optionalString(row, 10),
      lastModified: r.optionalString(row, 11), attempts: r.int(row, 12), lastError: r.optionalString(row, 13),
      path: r.optionalString(row, 14), sha256: r.optionalString(row, 15), createdAt: r.date(row, 16),
      updatedAt: r.date(row, 17), finishedAt: r.optionalDate(row, 18))
  }

  /// Queues a download, or returns (and per `repeat` requeues) the one kept
  /// for the same URL and folder, in one transaction.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func enqueueDownload(_ request: DownloadRequest, repeat: DownloadRequest.Repeat, now: Date) async throws
    -> DownloadEntry
  {
    try await run { db in
      let inserted = try db.query(
        """
        INSERT INTO downloads (url, folder, expected_size, expected_sha256, source, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (url, folder) DO NOTHING RETURNING id
        """,
        [
          .text(request.url), .text(request.folder), .int(request.expectedSize), .string(request.expectedSHA256),
          .string(request.source), .date(now),
        ])
      if inserted.count > 0 {
        return DownloadEntry(
          id: inserted.int64(0, 0), url: request.url, folder: request.folder, expectedSize: request.expectedSize,
          expectedSHA256: request.expectedSHA256, source: request.source,
          createdAt: Self.date(Self.milliseconds(now)), updatedAt: Self.date(Self.milliseconds(now)))
      }
      let found = try db.query(
        "SELECT \(Self.downloadColumns) FROM downloads WHERE url = $1 AND folder = $2 FOR UPDATE",
        [.text(request.url), .text(request.folder)])
      var entry = Self.download(found, 0)
      let changed = entry.apply(request, repeat: `repeat`)
      guard changed else { return entry }
      entry.updatedAt = Self.date(Self.milliseconds(now))
      try db.query(
        """
        UPDATE downloads SET state = $1, name = $2, path = $3, sha256 = $4, finished_at = $5, bytes = $6,
          total_size = $7, etag = $8, last_modified = $9, attempts = $10, last_error = $11, expected_size = $12,
          expected_sha256 = $13, updated_at = $14
        WHERE id = $15
        """,
        [
          .text(entry.state.rawValue), .string(entry.name), .string(entry.path), .string(entry.sha256),
          .date(entry.finishedAt), .int(entry.bytesWritten), .int(entry.totalSize), .string(entry.etag),
          .string(entry.lastModified), .int(entry.attempts), .string(entry.lastError), .int(entry.expectedSize),
          .string(entry.expectedSHA256), .date(now), .int(entry.id),
        ])
      return entry
    }
  }

  /// Claims queued downloads (and expired claims) in id order after
  /// `afterID`, skipping rows another worker is claiming. The lease lasts
  /// `lease.length` on the server's clock (see `PostgresLease`).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func claimDownloads(
    ids: [Int64]?, afterID: Int64, limit: Int, maxRemaining: Int?, lease: Lease
  ) async throws -> [DownloadEntry] {
    guard limit > 0, ids?.isEmpty != true else { return [] }
    let now = lease.at
    let idList = ids.map { "{" + $0.map(String.init).joined(separator: ",") + "}" }
    return try await run { db in
      let r = try db.query(
        """
        WITH picked AS (
          SELECT id FROM downloads
          WHERE (state = 'queued' OR (state = 'claimed' AND lease_until <= \(PostgresLease.now("$8")))) AND id > $4
            AND ($5::bigint[] IS NULL OR id = ANY($5::bigint[]))
            AND ($3::bigint IS NULL OR (coalesce(expected_size, total_size) IS NOT NULL
              AND coalesce(expected_size, total_size) - bytes <= $3))
          ORDER BY id LIMIT $2
          FOR UPDATE SKIP LOCKED
        )
        UPDATE downloads SET state = 'claimed', owner = $6, lease_until = \(PostgresLease.now("$8")) + $7,
          updated_at = $1
        FROM picked WHERE downloads.id = picked.id
        RETURNING \(Self.downloadColumns.split(separator: ",").map { "downloads." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", "))
        """,
        [
          .date(now), .int(limit), .int(maxRemaining), .int(afterID), .string(idList), .text(lease.owner),
          PostgresLease.length(lease), leaseNow(now),
        ])
      return r.rows { Self.download(r, $0) }.sorted { $0.id < $1.id }
    }
  }

  /// Writes a claimed download's fields when `lease.owner` holds it,
  /// renewing the claim for `lease.length` on the server's clock or, when
  /// `releasing`, ending it.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func updateDownload(_ entry: DownloadEntry, lease: Lease, releasing: Bool) async throws -> Bool {
    let owner = lease.owner
    let now = lease.at
    let state: DownloadState = !releasing ? .claimed : entry.state == .claimed ? .queued : entry.state
    return try await run(transaction: false) { db in
      try db.query(
        """
        UPDATE downloads SET state = $1, owner = $2, lease_until = \(PostgresLease.now("$19")) + $3::BIGINT, name = $4, expected_size = $5,
          expected_sha256 = $6, bytes = $7, total_size = $8, etag = $9, last_modified = $10, attempts = $11,
          last_error = $12, path = $13, sha256 = $14, finished_at = $15, updated_at = $16
        WHERE id = $17 AND state = 'claimed' AND owner = $18
        """,
        [
          .text(state.rawValue), .string(releasing ? nil : owner), releasing ? .null : PostgresLease.length(lease),
          .string(entry.name),
          .int(entry.expectedSize), .string(entry.expectedSHA256), .int(entry.bytesWritten), .int(entry.totalSize),
          .string(entry.etag), .string(entry.lastModified), .int(entry.attempts), .string(entry.lastError),
          .string(entry.path), .string(entry.sha256), .date(entry.finishedAt), .date(now), .int(entry.id), .text(owner),
          leaseNow(now),
        ]
      ).affected == 1
    }
  }

  /// Downloads in a state (or all), oldest first.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func downloads(state: DownloadState?, limit: Int) async throws -> [DownloadEntry] {
    try await run(transaction: false) { db in
      let r = try db.query(
        "SELECT \(Self.downloadColumns) FROM downloads WHERE $1::text IS NULL OR state = $1 ORDER BY id LIMIT $2",
        [.string(state?.rawValue), .int(max(0, limit))])
      return r.rows { Self.download(r, $0) }
    }
  }

  /// One download by id.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func download(id: Int64) async throws -> DownloadEntry? {
    try await run(transaction: false) { db in
      let r = try db.query("SELECT \(Self.downloadColumns) FROM downloads WHERE id = $1", [.int(id)])
      return r.count > 0 ? Self.download(r, 0) : nil
    }
  }
}
#endif
