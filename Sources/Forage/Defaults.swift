/// Every default of the engine, in one place.
///
/// Defaults are named by area, each a top-level enum: `EngineDefaults`
/// (this module), `SchedulerDefaults`, `StoreDefaults`, `FetchDefaults`
/// (ForageHTTP) and `DownloadDefaults`.
public enum EngineDefaults {
  /// Config file read when `--config` is not given.
  public static let configFile = "forage.json"
  /// Store used when neither the config nor `--store` names one.
  public static let storePath = "forage.sqlite"
  /// Links followed by a crawl when `follow` is not given.
  public static let follow = "a[href]"
  /// Link distance from a start URL a crawl follows links to when `maxDepth` is not given.
  public static let maxDepth = 5
  /// URLs a crawl's frontier holds at most when `maxPages` is not given.
  public static let maxPages = 10_000
  /// Age after which a later crawl fetches a page again when `revisitAfter` is not given (six hours).
  public static let revisitAfter: Duration = .seconds(6 * 3600)
  // A task's budget, when it names none, is its kind's `defaultBudget`
  // (ForageScheduler's `SchedulerDefaults`).
  /// Budget of `forage run` when no task and no `--budget` gives one.
  public static let runBudget: Duration = .seconds(300)
  /// Near the deadline, no new request starts within this margin.
  public static let stopMargin: Duration = .milliseconds(500)
  /// How long a worker of a fleet (a shared store, such as PostgreSQL) holds
  /// a claimed URL without renewing: a killed worker's URLs return to the
  /// frontier this long after it died.
  public static let fleetLease: Duration = .seconds(15)
  /// How often a fleet worker renews its leases (well within `fleetLease`).
  public static let fleetLeaseRenewal: Duration = .seconds(5)
  /// How often a fleet worker whose frontier is empty looks again while other
  /// workers still hold claims, once it has looked for ``fleetLease`` in a
  /// row (those workers are slow, or one died and its URLs return when its
  /// leases pass).
  public static let fleetPoll: Duration = .milliseconds(500)
  /// The first of those looks: each wait in a row doubles it, up to
  /// ``fleetPollSoon`` (the other workers' commits that add links land within
  /// milliseconds).
  public static let fleetPollFirst: Duration = .milliseconds(10)
  /// The longest wait between looks during a wait's first ``fleetLease``:
  /// a crawl's last commits come a commit interval apart at most, and a
  /// worker that waited 500 ms to see the others done made the fleet's
  /// launch that much longer (a sixth of a three-second crawl).
  public static let fleetPollSoon: Duration = .milliseconds(50)

  /// How long a fleet worker waits before its `waits`-th look in a row (0:
  /// the first): ``fleetPollFirst`` doubled `waits` times, at most
  /// ``fleetPollSoon``, and ``fleetPoll`` once the waits in a row add up
  /// to ``fleetLease``.
  public static func fleetPoll(after waits: Int) -> Duration {
    var delay = fleetPollFirst
    var waited = Duration.zero
    for _ in 0..<max(0, waits) {
      waited += delay
      if waited >= fleetLease { return fleetPoll }
      delay = min(delay * 2, fleetPollSoon)
    }
    return delay
  }
  /// The shortest budget worth running: twice the stop margin leaves at least
  /// half a second to fetch in.
  public static let minimumBudget: Duration = .seconds(1)
  /// In-flight fetches get this long past the deadline before they are cancelled.
  public static let grace: Duration = .seconds(2)
  /// A failing URL is retried on later launches this many times in all.
  public static let maxAttempts = 3
  /// Pages gathered for one store transaction (fewer when nothing else is
  /// in flight or ``commitInterval`` passes first; more when they finish
  /// while a commit runs). Every commit rewrites the index pages it touches,
  /// so fewer, larger commits write less.
  public static let commitBatch = 1024
  /// ``commitBatch`` for a store that many workers share: a fleet's
  /// discovered links can be claimed only once committed, and a worker whose
  /// frontier ran dry waits for the commit in flight.
  public static let fleetCommitBatch = 512
  /// A page waits at most about this long to be committed.
  public static let commitInterval: Duration = .milliseconds(250)
  /// The largest page, or downloaded source file, read into memory to
  /// extract from (1 GiB): a page is held whole while it is parsed, and the
  /// HTML parser's offsets are 32-bit. `fetch.maxBodySize` may not exceed it.
  public static let maxReadSize = 1 << 30
  /// Query parameters dropped from URLs for deduplication.
  public static let removedQueryParameters = ["utm_*"]

  // MARK: Notifications

  /// The longest one delivery attempt (a webhook request, a command) may take.
  public static let notifyTimeout: Duration = .seconds(10)
  /// A notification not delivered this long after its change is marked dead.
  public static let notifyMaxAge: Duration = .seconds(24 * 3600)
  /// The first retry waits about this long; each later one twice as long.
  public static let notifyFirstRetry: Duration = .seconds(30)
  /// No retry waits longer than this.
  public static let notifyLongestRetry: Duration = .seconds(3600)
  /// The daemon looks for due notifications at least this often.
  public static let daemonDeliveryInterval: Duration = .seconds(60)
  /// The daemon prunes the change history this often.
  public static let maintenanceInterval: Duration = .seconds(6 * 3600)
}

/// Defaults of reading records into an app (``Engine/records(_:source:undecodable:)``,
/// ``Engine/deliver(to:as:batchSize:)``).
public enum RecordDefaults {
  /// Records read from the store per query while decoding a source.
  public static let readPage = 1000
  /// Changes handed to a ``RecordSink`` per `apply` call.
  public static let deliveryBatch = 500
}
