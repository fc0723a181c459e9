import Foundation

extension SQLiteStore {
  // MARK: Pending task requests

  /// The kept pending task requests, ordered by identifier.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func pendingTaskRequests() async throws -> [PendingTaskRequest] {
    let select = try db.statement(
      """
      SELECT identifier, kind, earliest_begin_at, requires_network, requires_external_power,
        title, subtitle, strategy
      FROM pending_requests ORDER BY identifier
      """)
    return try select.rows { row in
      var continued: PendingTaskRequest.Continued?
      if let title = row.optionalString(5), let subtitle = row.optionalString(6),
        let strategy = row.optionalString(7)
      {
        continued = PendingTaskRequest.Continued(title: title, subtitle: subtitle, strategy: strategy)
      }
      return PendingTaskRequest(
        identifier: row.string(0), kind: row.string(1), earliestBeginDate: row.optionalInt64(2).map(Self.date),
        requiresNetworkConnectivity: row.int64(3) != 0, requiresExternalPower: row.int64(4) != 0,
        continued: continued)
    }
  }

  /// Replaces the kept pending task requests with `requests`, in one
  /// transaction: when any of them cannot be written (a kind or strategy
  /// the store does not know, a repeated identifier) nothing changes.
  ///
  /// - Throws: `StoreError` when a statement fails (a constraint, for the
  ///   cases above).
  public func replacePendingTaskRequests(_ requests: [PendingTaskRequest]) async throws {
    try db.transaction {
      try db.statement("DELETE FROM pending_requests").execute()
      let insert = try db.statement(
        """
        INSERT INTO pending_requests (identifier, kind, earliest_begin_at, requires_network,
          requires_external_power, title, subtitle, strategy)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """)
      for r in requests {
        try insert.bind(r.identifier, at: 1)
        try insert.bind(r.kind, at: 2)
        try insert.bind(r.earliestBeginDate.map(Self.milliseconds), at: 3)
        try insert.bind(r.requiresNetworkConnectivity ? 1 : 0, at: 4)
        try insert.bind(r.requiresExternalPower ? 1 : 0, at: 5)
        try insert.bind(r.continued?.title, at: 6)
        try insert.bind(r.continued?.subtitle, at: 7)
        try insert.bind(r.continued?.strategy, at: 8)
        try insert.execute()
      }
    }
  }
}
