import Foundation

/// Durable state of Forage: crawl frontiers, pages, records, changes and task runs.
///
/// A job talks to the store only through this protocol, so that the embedded
/// default (`SQLiteStore`) and a shared PostgreSQL store can serve the same
/// engine. It is made of small pieces, one per concern (Store+Pieces.swift):
/// ``FrontierStore``, ``RecordStore``, ``OutboxStore``, ``RunStore``,
/// ``PolitenessStore``, ``LeaseStore``, ``DownloadStore``, ``HealthStore``, ``ChangeFeedStore`` and ``SinkCursorStore``. Every method is atomic; `commit(_:)` writes each page's records,
/// frontier state change and discovered links in one transaction, which is
/// what makes a killed job resume without losing or repeating work.
///
///     let store = try SQLiteStore(path: "forage.sqlite")
///     let crawl = try await store.openCrawl(source: "news", seeds: seeds, now: .now)
///     let batch = try await store.claim(crawl: crawl.id, limit: 16,
///                                       lease: Lease(owner: "run-1", for: .seconds(60), at: .now))
public protocol Store: FrontierStore, RecordStore, OutboxStore, RunStore, PolitenessStore, LeaseStore,
  DownloadStore, HealthStore, ChangeFeedStore, SinkCursorStore
{
  /// Writes everything out and closes the store; later calls throw. For
  /// SQLite the WAL is checkpointed into the database file and removed, so
  /// the file alone is a complete copy. A process that exits cleanly calls it.
  func close() async throws

  /// ``FrontierStore/claim(crawl:limit:lease:)`` and the stored pages of
  /// what it claimed (``RecordStore/pages(fingerprints:)``), which a launch
  /// needs before it fetches (for conditional requests). A store whose
  /// calls cross a network answers both in one round trip.
  func claimWithPages(crawl: Int64, limit: Int, lease: Lease) async throws -> ClaimedEntries
}

/// Frontier entries just claimed, with the last stored fetch of each page
/// that was fetched before.
public struct ClaimedEntries: Sendable {
  /// The entries, lowest depth first, then in discovery order.
  public var items: [FrontierItem]
  /// The stored pages among the entries', by fingerprint.
  public var pages: [UInt64: PageRecord]

  /// Entries and their stored pages.
  public init(items: [FrontierItem], pages: [UInt64: PageRecord]) {
    self.items = items
    self.pages = pages
  }
}

/// An origin's robots.txt answer as the store keeps it, so that later
/// processes need not ask again before it expires.
public struct RobotsFile: Sendable, Hashable {
  /// `https://example.com`.
  public var origin: String
  /// How the fetcher read an origin's answer (RFC 9309 §2.3.1).
  public enum Verdict: String, Sendable, Hashable, CaseIterable {
    /// The body holds the file.
    case rules
    /// No usable file (4xx, too many redirects): everything is allowed.
    case allowAll = "allow-all"
    /// The server failed or could not be reached: nothing is allowed.
    case disallowAll = "disallow-all"
  }

  /// How the fetcher read the answer.
  public var verdict: Verdict
  /// The file, for `rules`; for `disallow-all`, why it could not be had
  /// (UTF-8 text such as `HTTP 503`), so later launches can say so.
  public var body: [UInt8]
  /// When the file was fetched (or the fetch failed).
  public var fetchedAt: Date
  /// When the entry stops being used and robots.txt is fetched again.
  public var expiresAt: Date

  /// An entry for `origin`; each parameter has its property's meaning.
  public init(origin: String, verdict: Verdict, body: [UInt8], fetchedAt: Date, expiresAt: Date) {
    self.origin = origin
    self.verdict = verdict
    self.body = body
    self.fetchedAt = fetchedAt
    self.expiresAt = expiresAt
  }
}

/// A URL to put on a crawl's frontier.
public struct FrontierSeed: Sendable, Hashable {
  /// The URL to fetch (absolute, fragment removed).
  public var url: String
  /// The stable fingerprint of the canonical URL; identity on the frontier.
  public var fingerprint: UInt64
  /// Link distance from a start URL (start URLs have depth 0).
  public var depth: Int
  /// When the page last changed, as a sitemap's `lastmod` says; nil when
  /// nothing said so (links found on pages). Kept on the frontier entry so
  /// that the page's processing can skip a page not changed since its
  /// last fetch.
  public var lastModified: Date?

  /// A seed for `url`; each parameter has its property's meaning.
  public init(url: String, fingerprint: UInt64, depth: Int, lastModified: Date? = nil) {
    self.url = url
    self.fingerprint = fingerprint
    self.depth = depth
    self.lastModified = lastModified
  }
}

/// A frontier entry claimed by a job.
public struct FrontierItem: Sendable, Hashable {
  /// The entry's identifier in the store.
  public var id: Int64
  /// The crawl whose frontier it is on.
  public var crawl: Int64
  /// The URL to fetch.
  public var url: String
  /// The fingerprint of the canonical URL (see `FrontierSeed`).
  public var fingerprint: UInt64
  /// Link distance from a start URL.
  public var depth: Int
  /// Failed attempts so far.
  public var attempts: Int
  /// The seed's ``FrontierSeed/lastModified``.
  public var lastModified: Date?

  /// An entry as the store hands it out; each parameter has its property's meaning.
  public init(
    id: Int64, crawl: Int64, url: String, fingerprint: UInt64, depth: Int, attempts: Int, lastModified: Date? = nil
  ) {
    self.id = id
    self.crawl = crawl
    self.url = url
    self.fingerprint = fingerprint
    self.depth = depth
    self.attempts = attempts
    self.lastModified = lastModified
  }
}

/// A crawl: one pass over a source's frontier.
public struct Crawl: Sendable, Hashable {
  /// The crawl's identifier in the store.
  public var id: Int64
  /// The name of the source it crawls.
  public var source: String
  /// When it began.
  public var startedAt: Date
  /// True when this call started the crawl (seeds inserted).
  public var isNew: Bool

  /// A crawl; each parameter has its property's meaning.
  public init(id: Int64, source: String, startedAt: Date, isNew: Bool) {
    self.id = id
    self.source = source
    self.startedAt = startedAt
    self.isNew = isNew
  }
}

/// How many frontier entries of a crawl are in each state.
public struct FrontierCounts: Sendable, Hashable {
  /// Entries waiting, held by a job, fetched and processed, and failed for good.
  public var queued = 0, claimed = 0, done = 0, failed = 0
  /// Counts of each state; zero when not given.
  public init(queued: Int = 0, claimed: Int = 0, done: Int = 0, failed: Int = 0) {
    self.queued = queued
    self.claimed = claimed
    self.done = done
    self.failed = failed
  }
  /// Every entry of the crawl.
  public var total: Int { queued + claimed + done + failed }
}

/// What became of a claimed frontier entry.
public enum FrontierOutcome: Sendable, Hashable {
  /// Fetched (or found unchanged) and processed: never fetched again in this crawl.
  case done
  /// Failed. A transient failure goes back to the queue with one more
  /// attempt until `maxAttempts`; a permanent one (or the last attempt) ends
  /// in the failed state.
  case failed(permanent: Bool, maxAttempts: Int)
  /// Not attempted (budget, politeness): back to the queue, attempts unchanged.
  case deferred
}

/// The stored outcome of fetching one URL.
public struct PageRecord: Sendable, Hashable {
  /// The URL that was fetched.
  public var url: String
  /// The fingerprint of the canonical URL; the page's identity.
  public var fingerprint: UInt64
  /// The HTTP status of the answer.
  public var status: Int
  /// The `ETag` the answer carried, sent back in `If-None-Match`.
  public var etag: String?
  /// The `Last-Modified` the answer carried, sent back in `If-Modified-Since`.
  public var lastModified: String?
  /// Hash of the body, nil when no body was read (e.g. 304).
  public var contentHash: UInt64?
  /// When it was fetched.
  public var fetchedAt: Date
  /// Absolute out-links found on the page, kept so that a revisit answered
  /// with 304 (or skipped as fresh) can still expand the crawl.
  public var links: [String]
  /// The encoding the page was decoded with (the Encoding Standard's name,
  /// such as `"Shift_JIS"`); nil when it was not decoded as HTML.
  public var encoding: String?
  /// How many records the page gave when its body was last read (0 when
  /// none, or when it was stored before stores kept the count), so a launch
  /// answered 304 can say how many records the server vouched for.
  public var recordCount: Int

  /// A page's outcome; each parameter has its property's meaning.
  public init(
    url: String, fingerprint: UInt64, status: Int, etag: String? = nil,
    lastModified: String? = nil, contentHash: UInt64? = nil, fetchedAt: Date, links: [String] = [],
    encoding: String? = nil, recordCount: Int = 0
  ) {
    self.url = url
    self.fingerprint = fingerprint
    self.status = status
    self.etag = etag
    self.lastModified = lastModified
    self.contentHash = contentHash
    self.fetchedAt = fetchedAt
    self.links = links
    self.encoding = encoding
    self.recordCount = recordCount
  }
}

/// A record as extracted from a page, ready to store.
public struct RecordInput: Sendable, Hashable {
  /// The name of the source that extracted it.
  public var source: String
  /// Identity within the source.
  public var key: String
  /// The URL of the page it came from.
  public var url: String
  /// The fields as a canonical JSON object (sorted keys), so equal content
  /// has equal text.
  public var fieldsJSON: String
  /// The hash of `fieldsJSON`, compared to tell a changed record from an unchanged one.
  public var contentHash: UInt64

  /// A record to store; each parameter has its property's meaning.
  public init(source: String, key: String, url: String, fieldsJSON: String, contentHash: UInt64) {
    self.source = source
    self.key = key
    self.url = url
    self.fieldsJSON = fieldsJSON
    self.contentHash = contentHash
  }
}

/// Everything to write for one claimed frontier entry, atomically.
public struct PageCommit: Sendable {
  /// The claimed entry this commit settles.
  public var item: FrontierItem
  /// What became of it.
  public var outcome: FrontierOutcome
  /// The page row to upsert (by fingerprint), if the URL was fetched.
  public var page: PageRecord?
  /// The records extracted from the page.
  public var records: [RecordInput]
  /// Links to add to the crawl's frontier (duplicates by fingerprint ignored).
  public var discovered: [FrontierSeed]
  /// The crawl's frontier stops growing at this many entries.
  public var maxPages: Int?
  /// The task run this commit belongs to, for change attribution.
  public var run: Int64?
  /// The page was not read again (304 Not Modified, fresh enough to skip,
  /// a failure that may pass): the records it gave before still stand, and
  /// count as seen by this crawl.
  public var keepsRecords: Bool = false
  /// Decides which changes are notable and where they go; nil writes no
  /// notification.
  public var router: (any ChangeRouter)? = nil
  /// What the page gave its source's extraction, added to its crawl's
  /// field coverage; nil for pages not read as records (304, failures).
  public var extraction: PageExtraction? = nil
  /// When the records' changes are held (see ``HealthRules``); nil holds nothing.
  public var health: HealthPolicy? = nil
  /// The time written into the rows (the caller's clock).
  public var now: Date

  /// A commit for `item`; `keepsRecords` and `router` are set afterwards when needed.
  public init(
    item: FrontierItem, outcome: FrontierOutcome, page: PageRecord? = nil,
    records: [RecordInput] = [], discovered: [FrontierSeed] = [], maxPages: Int? = nil,
    run: Int64? = nil, now: Date
  ) {
    self.item = item
    self.outcome = outcome
    self.page = page
    self.records = records
    self.discovered = discovered
    self.maxPages = maxPages
    self.run = run
    self.now = now
  }
}

/// What a commit did to the records.
public struct CommitResult: Sendable, Hashable {
  /// Records written for the first time.
  public var newRecords = 0
  /// Records whose fields changed.
  public var changedRecords = 0
  /// Records seen again with the same fields.
  public var unchangedRecords = 0
  /// Frontier entries actually added (new fingerprints within the cap).
  public var linksAdded = 0
  /// Records seen again after they were removed.
  public var restoredRecords = 0
  /// The changes written (new, changed and restored records).
  public var changes: [RecordChange] = []
  /// Notifications written to the outbox.
  public var notifications = 0
  /// Changes held back (a field whose coverage collapsed), not written.
  public var held = 0
  /// A result of a commit that wrote nothing.
  public init() {}

  /// Adds another result's counts and changes to this one.
  public mutating func add(_ other: CommitResult) {
    newRecords += other.newRecords
    changedRecords += other.changedRecords
    unchangedRecords += other.unchangedRecords
    linksAdded += other.linksAdded
    restoredRecords += other.restoredRecords
    changes += other.changes
    notifications += other.notifications
    held += other.held
  }
}

/// What completing a crawl did.
public struct CrawlCompletion: Sendable, Hashable {
  /// The `removed` changes written: records the crawl did not see again.
  public var removed: [RecordChange] = []
  /// Notifications written to the outbox.
  public var notifications = 0
  /// Removals held back: the crawl was not healthy (see ``HealthRules``).
  public var held = 0
  /// Changes held by this crawl's commits (a field lost early in the crawl)
  /// and applied now, the crawl having completed healthy.
  public var released: [RecordChange] = []
  /// The episode this completion opened, or ended (a healthy crawl); nil when neither.
  public var episode: HealthEpisode? = nil
  /// A completion that wrote these `removed` changes and `notifications`.
  public init(removed: [RecordChange] = [], notifications: Int = 0) {
    self.removed = removed
    self.notifications = notifications
  }
}

extension Store {
  /// A store of one process (SQLite): leases last a whole launch.
  public var isShared: Bool { false }

  /// Claims, then reads the claimed entries' stored pages: two calls.
  public func claimWithPages(crawl: Int64, limit: Int, lease: Lease) async throws -> ClaimedEntries {
    let items = try await claim(crawl: crawl, limit: limit, lease: lease)
    let pages = items.isEmpty ? [:] : try await pages(fingerprints: items.map(\.fingerprint))
    return ClaimedEntries(items: items, pages: pages)
  }

  /// A store of one process keeps politeness in the process: it gives
  /// `count` tickets, numbered from 0, at once, and keeps none.
  public func takeHostTickets(
    host: String, concurrency: Int, delay: Duration, count: Int, lease: Lease, returning: [Int64]
  ) async throws -> [Int64] {
    (0..<Int64(max(0, count))).map { $0 }
  }

  /// A store of one process: this process fetches robots.txt itself.
  public func claimRobotsFetch(origin: String, lease: Lease) async throws -> Bool { true }

  /// A store of one process: this process runs every launch itself.
  public func claimLaunch(task: String, lease: Lease) async throws -> Bool { true }

  /// For a store of one process (one writer): reads the kept set, merges
  /// `requests` into it, drops `removing`, and replaces it.
  public func updatePendingTaskRequests(_ requests: [PendingTaskRequest], removing: [String]) async throws {
    let gone = Set(removing).union(requests.map(\.identifier))
    let kept = try await pendingTaskRequests().filter { !gone.contains($0.identifier) }
    try await replacePendingTaskRequests((kept + requests).sorted { $0.identifier < $1.identifier })
  }

  /// Marks `crawl` complete when it has no queued or claimed entries left,
  /// removing what it did not see again without notifying; true when it is
  /// (now) complete.
  public func completeCrawlIfExhausted(_ crawl: Int64, now: Date) async throws -> Bool {
    try await completeCrawl(crawl, maxPages: nil, router: nil, now: now) != nil
  }
}

/// A record as stored.
public struct StoredRecord: Sendable, Hashable {
  /// The record's identifier in the store.
  public var id: Int64
  /// The name of the source it belongs to.
  public var source: String
  /// Its identity within the source.
  public var key: String
  /// The page it was last seen on.
  public var url: String
  /// The fields as a canonical JSON object (sorted keys).
  public var fieldsJSON: String
  /// The hash of `fieldsJSON`.
  public var contentHash: UInt64
  /// When it was first stored.
  public var firstSeen: Date
  /// When a page last gave it. A page that was not read again (a 304 Not
  /// Modified, see `PageCommit.keepsRecords`) keeps its records for the
  /// crawl without moving this date: the page's row records that visit, so a
  /// recrawl answered 304 writes nothing per record.
  public var lastSeen: Date
  /// When a completed crawl did not see it again; nil while it is present.
  public var removedAt: Date?

  /// A record as stored; each parameter has its property's meaning.
  public init(
    id: Int64, source: String, key: String, url: String, fieldsJSON: String,
    contentHash: UInt64, firstSeen: Date, lastSeen: Date, removedAt: Date? = nil
  ) {
    self.removedAt = removedAt
    self.id = id
    self.source = source
    self.key = key
    self.url = url
    self.fieldsJSON = fieldsJSON
    self.contentHash = contentHash
    self.firstSeen = firstSeen
    self.lastSeen = lastSeen
  }
}

/// A change of a record (new, changed, removed or restored), kept for the
/// history (`forage changes`) and notifications.
public struct RecordChange: Sendable, Hashable {
  /// The change's identifier in the store; higher is newer.
  public var id: Int64
  /// The name of the record's source.
  public var source: String
  /// The record's key within the source.
  public var key: String
  /// What happened to the record.
  public var kind: ChangeKind
  /// The record's page URL when the change was seen.
  public var url: String
  /// The fields before the change; nil for a new record.
  public var beforeJSON: String?
  /// The fields after the change; nil for a removed record.
  public var afterJSON: String?
  /// When the change was seen.
  public var at: Date
  /// The task run that saw it; nil when none was recorded.
  public var run: Int64?
  /// The names of the fields whose values differ between `beforeJSON` and
  /// `afterJSON`, sorted (every field, in the record's order, for a new or
  /// removed record): found once when the change is committed and stored
  /// with it.
  public var changedFields: [String]
  /// The fields whose values differ, each with its value's JSON text before
  /// and after (nil where absent): in `afterJSON`'s member order, then the
  /// fields only `beforeJSON` has; every field for a new or removed record.
  ///
  /// A commit finds them once, in the scan that names `changedFields`, and
  /// returns them with its changes (`CommitResult.changes`); a change read
  /// from a store finds them from its stored texts with one scan of their
  /// top-level members. No reader parses a whole record to learn what
  /// changed: one that needs a value parses that member's text alone.
  ///
  /// They are not stored: each value is a slice of `beforeJSON` or
  /// `afterJSON`, so a column of them would repeat both records, while
  /// finding them again is one scan of the two texts already read.
  public var fieldChanges: [FieldChange]

  /// A change; each parameter has its property's meaning. Without
  /// `fieldChanges`, they are found from `beforeJSON` and `afterJSON`;
  /// without `changedFields`, from `fieldChanges`.
  public init(
    id: Int64, source: String, key: String, kind: ChangeKind, url: String = "", beforeJSON: String?,
    afterJSON: String?, at: Date, run: Int64?, changedFields: [String]? = nil, fieldChanges: [FieldChange]? = nil
  ) {
    if let fieldChanges {
      self.fieldChanges = fieldChanges
      self.changedFields =
        changedFields ?? ChangedFields.names(of: fieldChanges, wholeRecord: beforeJSON == nil || afterJSON == nil)
    } else {
      let diff = ChangedFields.diff(beforeJSON, afterJSON)
      self.fieldChanges = diff.changes
      self.changedFields = changedFields ?? diff.names
    }
    self.id = id
    self.source = source
    self.key = key
    self.kind = kind
    self.url = url
    self.beforeJSON = beforeJSON
    self.afterJSON = afterJSON
    self.at = at
    self.run = run
  }
}

/// A task run as stored.
public struct TaskRun: Sendable, Hashable {
  /// The run's identifier in the store.
  public var id: Int64
  /// The identifier of the task it ran.
  public var task: String
  /// The sources the run refreshed.
  public var sources: [String]
  /// When it began.
  public var startedAt: Date
  /// Nil while running (or when the process died mid-run).
  public var summary: RunSummary?
  /// For a run without a summary: its totals as of its last recorded
  /// commit (`Store.recordRunProgress`), outcome `.running`; nil when it
  /// recorded none, and for a finished run.
  public var progress: RunSummary?

  /// A run as stored; `progress` is kept only while there is no `summary`.
  public init(
    id: Int64, task: String, sources: [String], startedAt: Date, summary: RunSummary?, progress: RunSummary? = nil
  ) {
    self.id = id
    self.task = task
    self.sources = sources
    self.startedAt = startedAt
    self.summary = summary
    self.progress = summary == nil ? progress : nil
  }
}
