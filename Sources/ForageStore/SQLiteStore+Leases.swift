import Foundation

extension SQLiteStore {
  // MARK: Renewing and releasing claims

  /// Where this store keeps the claims of `kind`; nil for a kind a store of
  /// one process keeps none of (launches and host tickets are the process's
  /// own; robots.txt fetches keep no owner).
  static func leaseTable(_ kind: LeaseKind) -> LeaseTable? {
    switch kind {
    case .frontier: .frontier
    case .notification: .outbox
    case .download: .downloads
    case .launch, .robotsFetch, .hostTicket: nil
    }
  }

  /// Extends the claims of `kind` that `lease.owner` holds to `lease.length`
  /// after `lease.at` (the caller's clock); returns how many it holds.
  ///
  /// - Throws: `StoreError` when a statement fails.
  @discardableResult
  public func renew(_ kind: LeaseKind, lease: Lease) async throws -> Int {
    guard let t = Self.leaseTable(kind) else { return 0 }
    let update = try db.statement(
      "UPDATE \(t.table) SET \(t.leaseUntil) = ?1 WHERE \(t.held) AND \(t.owner) = ?2")
    try update.bind(Self.milliseconds(lease.at) + lease.milliseconds, at: 1)
    try update.bind(lease.owner, at: 2)
    try update.execute()
    return db.changes
  }

  /// Gives claims of `kind` back: those of `owner` (only `ids` among them
  /// when given), the `ids` given, or every claim when both are nil (this
  /// process's claims are all there are; a crashed run left them).
  ///
  /// - Throws: `StoreError` when a statement fails.
  public func release(_ kind: LeaseKind, owner: String?, ids: [Int64]?) async throws {
    guard let t = Self.leaseTable(kind) else { return }
    var conditions = [t.held]
    if let ids {
      guard let id = t.id, !ids.isEmpty else { return }
      conditions.append("\(id) IN (" + ids.map(String.init).joined(separator: ",") + ")")
    }
    if owner != nil { conditions.append("\(t.owner) = ?1") }
    let filter = conditions.joined(separator: " AND ")
    let sql = t.released.map { "UPDATE \(t.table) SET \($0) WHERE \(filter)" } ?? "DELETE FROM \(t.table) WHERE \(filter)"
    // Ids make a statement of their own: not worth a place in the cache.
    let statement = ids == nil ? try db.statement(sql) : try db.uncachedStatement(sql)
    if let owner { try statement.bind(owner, at: 1) }
    try statement.execute()
  }
}
