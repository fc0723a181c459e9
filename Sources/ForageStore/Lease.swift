import Foundation
import ForageSupport

/// A claim's lease: who holds it, for how long, and the caller's clock
/// reading when it is asked for. Every claim of a store takes one: frontier
/// entries, notifications, downloads, launches, robots.txt fetches and host
/// tickets (see ``LeaseKind``).
///
///     let lease = Lease(owner: "w1", for: .seconds(30), at: now)
///     let batch = try await store.claim(crawl: crawl.id, limit: 16, lease: lease)
///     try await store.renew(.frontier, lease: Lease(owner: "w1", for: .seconds(30), at: later))
///     try await store.release(.frontier, owner: "w1")
///
/// **Which clock.** A store of one process (SQLite) counts a lease on the
/// caller's clock: it ends at `at + length`, and it has passed when a later
/// call's `at` reaches that. A PostgreSQL store counts it on the server's
/// clock, which every worker of a fleet shares (their machines' clocks
/// differ): only `length` matters there, from the instant the server runs
/// the statement; a store opened with `leaseClock: .caller` counts on the
/// callers' `at` instead, as SQLite does (tests on a virtual clock). Host
/// tickets are always on the server's clock there (the server function that
/// hands them out reads it under the host's lock).
///
/// **One boundary.** A lease is held while `now < at + length`; from its end
/// on it has passed, and another owner may take the row. (PostgreSQL's host
/// ticket function drops a ticket a millisecond later, once its end is
/// before the server's clock.)
///
/// **Renew and release.** ``LeaseStore/renew(_:lease:)`` moves the end of
/// every lease of one kind its owner holds to `lease.length` after the
/// call; ``LeaseStore/release(_:owner:ids:)`` gives claims back (to the
/// queue, or as due at once, per kind), those of one owner, or every claim
/// of a store of one process and the lapsed ones of a shared store.
public struct Lease: Sendable, Hashable {
  /// Who holds the lease: a worker, a delivery or a daemon, unique across a fleet.
  public var owner: String
  /// How long the lease lasts from the call that takes or renews it.
  public var length: Duration
  /// The caller's clock reading when it asks (its `now`): what SQLite (and
  /// PostgreSQL on the `.caller` clock) counts the lease from; also the
  /// date a claim writes as its time (a download's `updatedAt`, a launch's
  /// due date).
  public var at: Date

  /// A lease of `owner` lasting `length` from the caller's `now`.
  ///
  ///     Lease(owner: "w1", for: .seconds(30), at: now)
  public init(owner: String, for length: Duration, at now: Date) {
    self.owner = owner
    self.length = length
    self.at = now
  }

  /// The end of the lease on the caller's clock: `at + length`.
  public var until: Date { at.addingTimeInterval(length.seconds) }

  /// The length in whole milliseconds, none when negative (the stores' date unit).
  package var milliseconds: Int64 { max(0, length.milliseconds) }
}

/// The kinds of claim a store leases, each kept in rows of its own.
///
/// Every kind is claimed with a ``Lease`` and has its one boundary; all but
/// ``robotsFetch`` are renewed and released through the one mechanism of
/// ``LeaseStore`` (``LeaseStore/renew(_:lease:)``,
/// ``LeaseStore/release(_:owner:ids:)``).
public enum LeaseKind: String, Sendable, CaseIterable, CustomStringConvertible {
  /// A crawl's frontier entries (``FrontierStore/claim(crawl:limit:lease:)``);
  /// released entries are queued again, attempts unchanged.
  case frontier
  /// The outbox's notifications (``OutboxStore/claimNotifications(limit:lease:)``);
  /// released ones are due again at once.
  case notification
  /// Downloads (``DownloadStore/claimDownloads(ids:afterID:limit:maxRemaining:lease:)``);
  /// released ones are queued again and keep the bytes they wrote.
  case download
  /// A scheduled task's launch in a fleet (``LeaseStore/claimLaunch(task:lease:)``);
  /// a released claim lets the next launcher run it. A store of one process
  /// keeps none.
  case launch
  /// The download of an origin's robots.txt by one worker of a fleet
  /// (``PolitenessStore/claimRobotsFetch(origin:lease:)``). It keeps no owner:
  /// it is neither renewed nor released, and ends when its lease passes.
  case robotsFetch
  /// A host's request slots in a fleet
  /// (``PolitenessStore/takeHostTickets(host:concurrency:delay:count:lease:returning:)``);
  /// released tickets are given back. A store of one process keeps none.
  case hostTicket

  /// False for a kind whose claims keep no owner (``robotsFetch``): renewing
  /// one holds nothing, releasing one gives nothing back.
  public var isRenewable: Bool { self != .robotsFetch }

  /// The kind's name (`frontier`, `hostTicket`…), as tests and messages show it.
  public var description: String { rawValue }
}

/// How a store keeps one ``LeaseKind``'s claims in a table: what the one
/// renew and the one release statement of each store are written from.
package struct LeaseTable: Sendable {
  /// The table of the claimed rows.
  package var table: String
  /// The column of each claim's owner.
  package var owner = "owner"
  /// The column of each claim's end (milliseconds since 1970).
  package var leaseUntil = "lease_until"
  /// The condition a row meets while claimed (its lease may have passed).
  package var held: String
  /// The assignments that return a released row to its unclaimed state; nil
  /// when a released claim is deleted (a host ticket, a launch claim).
  package var released: String?
  /// The column `ids` of ``LeaseStore/release(_:owner:ids:)`` name; nil
  /// when claims have no number (a launch claim is its task's), and then
  /// a release naming ids gives none back.
  package var id: String? = "id"

  /// Frontier entries: released ones are queued again.
  package static let frontier = LeaseTable(
    table: "frontier", held: "state = 'claimed'", released: "state = 'queued', owner = NULL, lease_until = NULL")
  /// Notifications: released ones are due again at once (their next attempt
  /// was due when they were claimed).
  package static let outbox = LeaseTable(
    table: "outbox", held: "state = 'pending' AND owner IS NOT NULL", released: "owner = NULL, lease_until = NULL")
  /// Downloads: released ones are queued again, their bytes kept.
  package static let downloads = LeaseTable(
    table: "downloads", held: "state = 'claimed'", released: "state = 'queued', owner = NULL, lease_until = NULL")
  /// A fleet's launch claims, one row per task: released ones are deleted.
  package static let taskLaunches = LeaseTable(table: "task_launches", held: "true", released: nil, id: nil)
  /// A fleet's host tickets: released ones are deleted (given back).
  package static let hostTickets = LeaseTable(table: "host_tickets", held: "true", released: nil)
}
