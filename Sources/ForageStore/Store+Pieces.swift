import Foundation

// The pieces of `Store`, each a small protocol of its own, so that a reader (and a
// conformance test) can take one concern at a time. `Store` composes them all.
//
// Every claim takes a `Lease` (Lease.swift: which clock, the one boundary),
// and `LeaseStore` renews and releases every kind of claim (`LeaseKind`) the
// same way.

/// A crawl's frontier: the URLs a crawl has yet to fetch, claimed by workers.
public protocol FrontierStore: AnyObject, Sendable {
  /// Returns the unfinished crawl of `source`, or starts a new one seeded
  /// with `seeds` (deduplicated by fingerprint) when there is none.
  func openCrawl(source: String, seeds: [FrontierSeed], now: Date) async throws -> Crawl

  /// Claims up to `limit` queued entries of `crawl` under `lease`, lowest
  /// depth first, then in discovery order. Entries whose lease has passed
  /// are claimable again. ``LeaseStore/renew(_:lease:)`` and
  /// ``LeaseStore/release(_:owner:ids:)`` of ``LeaseKind/frontier`` keep and
  /// give them back.
  func claim(crawl: Int64, limit: Int, lease: Lease) async throws -> [FrontierItem]

  /// Frontier counts of a crawl by state.
  func frontierCounts(crawl: Int64) async throws -> FrontierCounts

  /// How many entries of a crawl are queued and claimed (done and failed
  /// are left zero): what a fleet's worker asks each time its claim comes
  /// back empty. A store may count them from its indexes of those entries
  /// alone, without reading the crawl's fetched ones.
  func pendingCounts(crawl: Int64) async throws -> FrontierCounts
}

extension FrontierStore {
  /// The queued and claimed figures of ``frontierCounts(crawl:)``.
  public func pendingCounts(crawl: Int64) async throws -> FrontierCounts {
    let counts = try await frontierCounts(crawl: crawl)
    return FrontierCounts(queued: counts.queued, claimed: counts.claimed)
  }
}

/// Pages, records and their changes: what commits write and what readers list.
public protocol RecordStore: AnyObject, Sendable {
  /// Commits fetched pages. Each `PageCommit` is applied entirely or not at
  /// all: its frontier entry's new state, the page row, the records and the
  /// discovered links. Several pages may share one transaction.
  func commit(_ pages: [PageCommit]) async throws -> CommitResult

  /// Marks `crawl` complete when it has no queued or claimed entries left;
  /// nil while it has. Completing a crawl removes, in the same transaction,
  /// the records of its source that it did not see again (a `removed`
  /// change each, routed through `router`); when its frontier reached
  /// `maxPages`, only records of pages it fetched can be removed (the others
  /// may lie past the cap). A crawl completed earlier returns an empty
  /// completion.
  func completeCrawl(_ crawl: Int64, maxPages: Int?, router: (any ChangeRouter)?, now: Date) async throws
    -> CrawlCompletion?

  /// ``completeCrawl(_:maxPages:router:now:)`` under `health`: removals of
  /// an unhealthy crawl are held, an episode opens or ends, and its
  /// `source.unhealthy` or `source.recovered` goes to the outbox, all in the
  /// completion's transaction (see ``HealthRules``). A nil `health` holds nothing.
  func completeCrawl(
    _ crawl: Int64, maxPages: Int?, router: (any ChangeRouter)?, health: HealthPolicy?, now: Date
  ) async throws -> CrawlCompletion?

  /// The last stored fetch of a page, by the fingerprint of its canonical URL.
  func page(fingerprint: UInt64) async throws -> PageRecord?

  /// The stored pages among `fingerprints`, keyed by fingerprint; absent
  /// ones are left out.
  func pages(fingerprints: [UInt64]) async throws -> [UInt64: PageRecord]

  /// Records in insertion order after `afterID`, optionally of one source.
  func records(source: String?, afterID: Int64, limit: Int) async throws -> [StoredRecord]

  /// Changes in order after `afterID`, optionally of one source.
  func changes(source: String?, afterID: Int64, limit: Int) async throws -> [RecordChange]

  /// Changes matching `query`, newest first.
  func changes(matching query: ChangeQuery) async throws -> [RecordChange]

  /// Drops changes past each source's retention (sources not named keep
  /// everything), except those with a notification still pending. Returns
  /// how many were dropped. A maintenance step: never inside a launch.
  func pruneHistory(_ retention: [String: HistoryRetention], now: Date) async throws -> Int

  /// The names of the sources the store holds records or crawls of, sorted.
  func sourceNames() async throws -> [String]

  /// Figures of each source the store knows, by name: records, when a crawl
  /// last saw one, changes since `since`, the last completed crawl.
  func sourceStatistics(since: Date) async throws -> [SourceStatistics]
}

/// The outbox: notifications waiting for delivery, claimed by the process that delivers them.
public protocol OutboxStore: AnyObject, Sendable {
  /// Claims up to `limit` pending notifications whose next attempt is due
  /// at `lease.at`, oldest first, under `lease`; a claim whose lease has
  /// passed is claimable again (a process killed mid-delivery). Released
  /// (``LeaseKind/notification``), they are due again at once.
  func claimNotifications(limit: Int, lease: Lease) async throws -> [OutboxNotification]

  /// Records how an attempt at notification `id` ended, and releases its claim.
  func settleNotification(_ id: Int64, _ settlement: NotificationSettlement, now: Date) async throws

  /// Notifications in `state` (every state when nil), newest first.
  func notifications(state: NotificationState?, limit: Int) async throws -> [OutboxNotification]

  /// How many notifications are in each state at `now`.
  func notificationCounts(now: Date) async throws -> NotificationCounts

  /// The channels a receiver turned off.
  func disabledChannels() async throws -> [DisabledChannel]

  /// Turns `channel.name` off (or on again, when `channel` is nil for that name).
  func setDisabledChannel(_ channel: DisabledChannel?, name: String) async throws
}

/// Task runs and the scheduler's pending task requests.
public protocol RunStore: AnyObject, Sendable {
  /// Records the start of a task run and returns its id.
  func beginRun(task: String, sources: [String], startedAt: Date) async throws -> Int64

  /// Records the end of a task run.
  func finishRun(_ id: Int64, summary: RunSummary) async throws

  /// Records the running totals of an unfinished run (after each of its
  /// commits), so that a run whose process was killed is listed with what
  /// it committed (``TaskRun/progress``). Does nothing once it finished.
  func recordRunProgress(_ id: Int64, summary: RunSummary) async throws

  /// The most recent runs, newest first.
  func runs(limit: Int) async throws -> [TaskRun]

  /// The task requests a scheduler left pending, ordered by identifier
  /// (empty when none were kept).
  func pendingTaskRequests() async throws -> [PendingTaskRequest]

  /// Replaces the kept pending task requests with `requests` in one
  /// transaction: a failure (or a crash) leaves the earlier set whole.
  /// Identifiers must be unique.
  func replacePendingTaskRequests(_ requests: [PendingTaskRequest]) async throws

  /// Writes `requests` over the kept requests of the same identifiers and
  /// removes those of `removing`, in one transaction; the requests of other
  /// identifiers stay as they are (another daemon of a fleet keeps them).
  /// Identifiers must be unique.
  func updatePendingTaskRequests(_ requests: [PendingTaskRequest], removing: [String]) async throws
}

/// robots.txt answers and request slots per host, shared by every worker of a store.
public protocol PolitenessStore: AnyObject, Sendable {
  /// The robots.txt answer kept for `origin`, expired or not.
  func robotsFile(origin: String) async throws -> RobotsFile?

  /// Keeps `file` in place of its origin's earlier answer.
  func keepRobotsFile(_ file: RobotsFile) async throws

  /// True when this process should download `origin`'s robots.txt now; false
  /// while another process of a fleet holds that task (until `lease` passes;
  /// the lease keeps no owner, see ``LeaseKind/robotsFetch``). A store of
  /// one process always says true.
  func claimRobotsFetch(origin: String, lease: Lease) async throws -> Bool

  /// Takes up to `count` of `host`'s `concurrency` request slots for
  /// `lease.owner` in one call, when the host's next start has come, moving
  /// it `delay` later; each slot is a ticket held under `lease` (a killed
  /// worker's come back when it passes). Gives back `returning`, tickets of
  /// the owner it is done with, first (others are given back by
  /// ``LeaseStore/release(_:owner:ids:)`` of ``LeaseKind/hostTicket``). A
  /// worker gets at most its fair share of the slots (the host's
  /// concurrency over the workers that hold or asked for them lately), and
  /// one ticket a call when `delay` is not zero (each is one start); none
  /// when the host is busy. Politeness shared by a fleet (see
  /// ``LeaseStore/isShared``); a store of one process gives `count` tickets
  /// at once and keeps none.
  func takeHostTickets(
    host: String, concurrency: Int, delay: Duration, count: Int, lease: Lease, returning: [Int64]
  ) async throws -> [Int64]
}

/// The one lease mechanism of a store: whether it is shared, the renewal
/// and release of every kind of claim (``LeaseKind``), and the election of
/// a task's launch. Each kind's claim is taken where its rows are
/// (``FrontierStore/claim(crawl:limit:lease:)``,
/// ``OutboxStore/claimNotifications(limit:lease:)``,
/// ``DownloadStore/claimDownloads(ids:afterID:limit:maxRemaining:lease:)``,
/// ``claimLaunch(task:lease:)``, ``PolitenessStore/claimRobotsFetch(origin:lease:)``,
/// ``PolitenessStore/takeHostTickets(host:concurrency:delay:count:lease:returning:)``),
/// always with a ``Lease``, and renewed and released here.
///
///     let lease = Lease(owner: "w1", for: .seconds(30), at: now)
///     let batch = try await store.claim(crawl: crawl.id, limit: 16, lease: lease)
///     try await store.renew(.frontier, lease: lease)   // well before it passes
///     try await store.release(.frontier, owner: "w1")  // what was not committed
public protocol LeaseStore: AnyObject, Sendable {
  /// True when other processes work on the store at the same time (a
  /// PostgreSQL fleet): claims are then leased briefly and renewed, and a
  /// worker whose frontier is empty waits while others hold claims.
  var isShared: Bool { get }

  /// Extends every claim of `kind` that `lease.owner` holds, lapsed or not
  /// and not yet taken by another, to last `lease.length` from now (the
  /// server's clock on PostgreSQL, `lease.at` on SQLite); returns how many
  /// it holds. Other owners' claims are untouched. A worker of a shared
  /// store renews well before its leases pass (see ``isShared``); one of a
  /// store of one process need not (its leases last a whole launch). A kind
  /// the store keeps no claims of (launches and host tickets of a store of
  /// one process, robots.txt fetches anywhere) holds none: 0.
  @discardableResult
  func renew(_ kind: LeaseKind, lease: Lease) async throws -> Int

  /// Gives claims of `kind` back: frontier entries and downloads to the
  /// queue (attempts, and downloads' bytes, kept), notifications as due at
  /// once, launch claims and host tickets deleted. Those of `owner`, only
  /// `ids` among them when given; with no owner, the `ids` given whoever
  /// holds them (a worker taking over downloads whose part files nobody
  /// holds), or with no ids every claim of a store of one process (its
  /// process does it at start, after a crash) and only the lapsed claims of
  /// a shared store (the others are live workers'). Launch claims have no
  /// ids (a release naming ids gives none back); robots.txt fetches are
  /// never released (``LeaseKind/isRenewable``).
  func release(_ kind: LeaseKind, owner: String?, ids: [Int64]?) async throws

  /// True when `lease.owner` may run the launch of `task` due at `lease.at`:
  /// no other owner holds a launch claim on `task` that has not passed. The
  /// claim granted is `lease`; a claim of a killed launcher lapses when it
  /// passes, and the task's next launch is granted again. A store of one
  /// process always says true.
  func claimLaunch(task: String, lease: Lease) async throws -> Bool
}

extension LeaseStore {
  /// Gives back the claims of `kind` that `owner` holds (every claim of a
  /// store of one process, the lapsed ones of a shared store, when nil);
  /// see ``release(_:owner:ids:)``.
  public func release(_ kind: LeaseKind, owner: String?) async throws {
    try await release(kind, owner: owner, ids: nil)
  }
}

/// Queued, running and finished downloads of files.
public protocol DownloadStore: AnyObject, Sendable {
  /// Queues a download of `request.url` into `request.folder`, or returns the one
  /// already kept for that URL and folder (a URL lands in a folder once); `repeat`
  /// says what happens to that one (see ``DownloadRequest/Repeat``). An existing
  /// download not yet done takes the request's expected size and SHA-256 when it
  /// gives them.
  func enqueueDownload(_ request: DownloadRequest, repeat: DownloadRequest.Repeat, now: Date) async throws
    -> DownloadEntry

  /// Claims up to `limit` queued downloads, and claimed ones whose lease has passed
  /// (a process killed mid-download), in id order after `afterID` (a worker passes
  /// the last id it claimed, so that one it put back is not taken again at once),
  /// under `lease`. With `ids`, only those; with `maxRemaining`, only downloads
  /// whose size is known (expected, or said by the server) with at most that many
  /// bytes left to fetch (what a short launch may start). Released
  /// (``LeaseKind/download``), they are queued again with their bytes kept.
  func claimDownloads(
    ids: [Int64]?, afterID: Int64, limit: Int, maxRemaining: Int?, lease: Lease
  ) async throws -> [DownloadEntry]

  /// Writes a claimed download's progress or outcome, every field but its URL,
  /// folder, source and creation date, when `lease.owner` still holds it, dated
  /// `lease.at`. The claim is renewed for `lease.length`, or, when `releasing`,
  /// it ends and the entry's state (queued, done or failed) is written. Returns
  /// false, writing nothing, when the claim was lost (released, or taken over
  /// after its lease passed).
  func updateDownload(_ entry: DownloadEntry, lease: Lease, releasing: Bool) async throws -> Bool

  /// Downloads in `state` (every state when nil), oldest first.
  func downloads(state: DownloadState?, limit: Int) async throws -> [DownloadEntry]

  /// One download by id, nil when there is none.
  func download(id: Int64) async throws -> DownloadEntry?
}

/// Extraction health: the episodes during which a source's changes are
/// held, and the user's acceptance of what they held (`forage health`).
public protocol HealthStore: AnyObject, Sendable {
  /// Episodes, open ones first, then the most recently ended, at most `limit`.
  func healthEpisodes(limit: Int) async throws -> [HealthEpisode]

  /// Applies the changes held by `source`'s open episode (removals and
  /// field losses, each still applying to the record as it is: one changed
  /// since is left), routed through `router`, and ends the episode as
  /// accepted with a `source.recovered` notification; one transaction. Nil
  /// when the source has no open episode.
  func acceptHeldChanges(source: String, router: (any ChangeRouter)?, now: Date) async throws -> HealthAcceptance?

  /// The last `limit` crawls of `source` whose pages were read for health
  /// (a crawl with a stored coverage), newest first: records, field
  /// coverage and whether each completed healthy.
  func crawlHealth(source: String, limit: Int) async throws -> [CrawlHealth]
}

/// How far each of an app's record sinks has applied the changes: one cursor
/// (the id of the last change applied) per sink name, moved only after the
/// sink's `apply` returned, so that a process killed in between applies that
/// batch again.
public protocol SinkCursorStore: AnyObject, Sendable {
  /// The id of the last change the sink `name` applied; 0 for a sink that
  /// applied none (or was never seen).
  func sinkCursor(_ name: String) async throws -> Int64

  /// Sets the cursor of the sink `name` to `change` (a change's id; 0
  /// starts it over), creating it when it is new.
  func setSinkCursor(_ name: String, to change: Int64, now: Date) async throws
}
