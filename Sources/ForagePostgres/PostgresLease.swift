#if Postgres
import Foundation

/// One lease shape for every claim of a PostgreSQL store (frontier entries,
/// notifications, downloads, host tickets, robots.txt fetches): a lease ends
/// at the server's clock plus its length, and it has passed when the
/// server's clock says so. The workers of a fleet run on machines whose
/// clocks differ; the server's is the one they share.
///
/// One boundary for every kind, as on SQLite: a lease is held while
/// `now < lease_until`, and from `lease_until` on it has passed (another
/// owner may take the row: `lease_until <= now`). The host tickets' server
/// function (migration pg5) drops a ticket a millisecond later, once
/// `lease_until < now`; it has no caller's clock to be tested on.
///
/// The store protocol gives a lease as two dates of the caller (`leaseUntil`
/// and `now`); on PostgreSQL only their difference counts, the lease's length.
enum PostgresLease {
  /// The server's clock in SQL, milliseconds since 1970 (the store's date representation).
  static let serverNow = "(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT"

  /// The length in milliseconds of a lease until `until`, counted from `now`
  /// (none when `until` is not later).
  static func milliseconds(until: Date, from now: Date) -> Int64 {
    max(0, PostgresStore.milliseconds(until) - PostgresStore.milliseconds(now))
  }

  /// The clock a lease's end is counted on, as SQL: the caller's date in
  /// `parameter` when a store runs on its callers' clock
  /// (``PostgresStore/LeaseClock/caller``), the server's when it is NULL.
  static func now(_ parameter: String) -> String { "coalesce(\(parameter)::BIGINT, \(serverNow))" }

  /// A lease length as a statement parameter: `milliseconds(until:from:)`, or NULL.
  static func length(until: Date?, from now: Date) -> PostgresValue {
    .int(until.map { milliseconds(until: $0, from: now) })
  }
}
#endif
