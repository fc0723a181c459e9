#if Postgres
import Foundation
import ForageStore

/// One lease shape for every claim of a PostgreSQL store (frontier entries,
/// notifications, downloads, launches, host tickets, robots.txt fetches): a
/// lease ends at the server's clock plus its length, and it has passed when
/// the server's clock says so. The workers of a fleet run on machines whose
/// clocks differ; the server's is the one they share.
///
/// One boundary for every kind, as on SQLite: a lease is held while
/// `now < lease_until`, and from `lease_until` on it has passed (another
/// owner may take the row: `lease_until <= now`). The host tickets' server
/// function (migration pg5) drops a ticket a millisecond later, once
/// `lease_until < now`; it reads the server's clock itself, under the host's
/// lock, so host tickets are on the server's clock even for a store on the
/// callers' (``PostgresStore/LeaseClock/caller``).
///
/// A ``Lease`` gives its length and the caller's clock reading (`at`); on
/// the server's clock only the length counts.
enum PostgresLease {
  /// The server's clock in SQL, milliseconds since 1970 (the store's date representation).
  static let serverNow = "(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT"

  /// The clock a lease's end is counted on, as SQL: the caller's date in
  /// `parameter` when a store runs on its callers' clock
  /// (``PostgresStore/LeaseClock/caller``), the server's when it is NULL.
  static func now(_ parameter: String) -> String { "coalesce(\(parameter)::BIGINT, \(serverNow))" }

  /// A lease's length in milliseconds as a statement parameter.
  static func length(_ lease: Lease) -> PostgresValue { .int(lease.milliseconds) }

  /// Where a PostgreSQL store keeps the claims of `kind`; nil for robots.txt
  /// fetches, which keep no owner (`robots_fetches` has an origin and an end).
  static func table(_ kind: LeaseKind) -> LeaseTable? {
    switch kind {
    case .frontier: .frontier
    case .notification: .outbox
    case .download: .downloads
    case .launch: .taskLaunches
    case .hostTicket: .hostTickets
    case .robotsFetch: nil
    }
  }

  /// The one renewal statement of `t`: `$1` the owner, `$2` the length,
  /// `$3` the caller's clock or NULL.
  static func renewal(_ t: LeaseTable) -> String {
    "UPDATE \(t.table) SET \(t.leaseUntil) = \(now("$3")) + $2 WHERE \(t.held) AND \(t.owner) = $1"
  }

  /// The one release statement of `t` and its parameters: the claims of
  /// `owner` (only `ids` among them when given), the `ids` given, or, with
  /// neither, the lapsed claims (on `callerNow`, or the server's clock when
  /// it is NULL); nil when `ids` can name none.
  static func release(_ t: LeaseTable, owner: String?, ids: [Int64]?, callerNow: PostgresValue)
    -> (sql: String, params: [PostgresValue])?
  {
    var conditions = [t.held]
    var params: [PostgresValue] = []
    if let ids {
      guard let id = t.id, !ids.isEmpty else { return nil }
      params.append(.bigintArray(ids))
      conditions.append("\(id) = ANY ($\(params.count)::BIGINT[])")
    }
    if let owner {
      params.append(.text(owner))
      conditions.append("\(t.owner) = $\(params.count)")
    } else if ids == nil {
      // The others belong to live workers of the fleet.
      params.append(callerNow)
      conditions.append("\(t.leaseUntil) <= \(now("$\(params.count)"))")
    }
    let filter = conditions.joined(separator: " AND ")
    let sql = t.released.map { "UPDATE \(t.table) SET \($0) WHERE \(filter)" } ?? "DELETE FROM \(t.table) WHERE \(filter)"
    return (sql, params)
  }
}
#endif
