#if Postgres
import Foundation
import ForageStore

extension PostgresStore {
  // MARK: Renewing and releasing claims

  /// The clock `kind`'s leases are counted on, as a statement parameter:
  /// host tickets always on the server's (its function reads it under the
  /// host's lock), the others per ``leaseClock``.
  nonisolated func leaseNow(_ kind: LeaseKind, _ now: Date) -> PostgresValue {
    kind == .hostTicket ? .null : leaseNow(now)
  }

  /// Extends the claims of `kind` that `lease.owner` holds to
  /// `lease.length` from now on the server's clock (the caller's
  /// `lease.at` for a `.caller` store); returns how many it holds. One
  /// statement, written from the kind's table (see `PostgresLease.table`);
  /// host tickets' on the second connection, where they are taken.
  ///
  /// - Throws: `StoreError` when a statement fails.
  @discardableResult
  public nonisolated func renew(_ kind: LeaseKind, lease: Lease) async throws -> Int {
    guard let t = PostgresLease.table(kind) else { return 0 }
    let sql = PostgresLease.renewal(t)
    let params: [PostgresValue] = [.text(lease.owner), PostgresLease.length(lease), leaseNow(kind, lease.at)]
    if kind == .hostTicket {
      return try await side.perform(transaction: false) { db in try db.query(sql, params).affected }
    }
    return try await run(transaction: false) { db in try db.query(sql, params).affected }
  }

  /// Gives claims of `kind` back: those of `owner` (only `ids` among them
  /// when given), the `ids` given, or, with neither, only the claims whose
  /// lease has passed: the others belong to live workers of the fleet.
  ///
  /// - Throws: `StoreError` when a statement fails.
  public nonisolated func release(_ kind: LeaseKind, owner: String?, ids: [Int64]?) async throws {
    guard let t = PostgresLease.table(kind),
      let statement = PostgresLease.release(t, owner: owner, ids: ids, callerNow: leaseNow(kind, Date()))
    else { return }
    let (sql, params) = statement
    if kind == .hostTicket {
      try await side.perform(transaction: false) { db in _ = try db.query(sql, params) }
      return
    }
    try await run(transaction: false) { db in _ = try db.query(sql, params) }
    // A commit checks its entry is still this store's claim.
    if kind == .frontier, let owner {
      let released = ids.map(Set.init)
      owners.withLock { owners in
        owners = owners.filter { id, holder in holder != owner || !(released?.contains(id) ?? true) }
      }
    }
  }
}
#endif
