import Foundation
import ForageScheduler
import ForageStore
import ForageSupport

/// Whether background work is healthy, at a glance (`forage status`): each
/// task's last launches and next request, each source's data age, records,
/// recent changes and repeating errors, the notification outbox, and what
/// needs attention.
///
///     let status = try await StoreStatus.gather(store: store, config: config)
///     print(status.text())
///     exit(status.attention.isEmpty ? 0 : 1)
public struct StoreStatus: Sendable, Codable, Hashable {
  /// One launch of a task.
  public struct Launch: Sendable, Codable, Hashable {
    /// The launch's run identifier in the store.
    public var id: Int64
    /// When the launch began.
    public var startedAt: Date
    /// `completed`, `budget` (stopped by its budget or an expiration),
    /// `interrupted`, `failed`, or `unfinished` (no end recorded: running, or
    /// its process died).
    public var outcome: String
    /// How long it ran, in seconds; nil while no end is recorded.
    public var seconds: Double?
    /// Pages it handled: fetched, answered "not modified", or still fresh.
    public var pagesFetched = 0
    /// Pages whose fetch failed.
    public var pagesFailed = 0
    /// Notifications it delivered.
    public var notificationsDelivered = 0
    /// The device's state when it began, when a scheduler launched it.
    public var conditions: DeviceConditions?
  }

  /// A task: its last launches and its pending request.
  public struct TaskStatus: Sendable, Codable, Hashable {
    /// The task's identifier in the config.
    public var id: String
    /// Newest first.
    public var launches: [Launch]
    /// True when a request is pending (a daemon keeps them in the store).
    public var pending: Bool
    /// The pending request's earliest begin date (nil: as soon as possible).
    public var earliestBegin: Date?
  }

  /// Failures with the same cause.
  public struct ErrorGroup: Sendable, Codable, Hashable {
    /// What went wrong (`HTTP 500`, `timed out after 10 s`).
    public var cause: String
    /// How many failures had this cause.
    public var count: Int
    /// The first URL it happened to.
    public var firstURL: String
  }

  /// A source.
  public struct SourceStatus: Sendable, Codable, Hashable {
    /// The source's name in the config.
    public var name: String
    /// Records the store holds for it (removed ones excluded).
    public var records: Int
    /// Records marked removed: no longer seen by a completed crawl.
    public var removed: Int
    /// When a launch last saw any of its records (the newest data).
    public var newestData: Date?
    /// When its last crawl completed; nil when none has yet.
    public var lastCompletedCrawl: Date?
    /// Changes in the last day.
    public var changesLastDay: Int
    /// Pages fetched and failed in the last launch that ran it.
    public var lastLaunchPages: Int?
    /// Pages that failed in the last launch that ran it.
    public var lastLaunchFailures: Int?
    /// Of its last launches (up to the threshold), how many had every page fail.
    public var failingLaunches: Int
    /// The failures of its recent launches, grouped by cause, most frequent first.
    public var errors: [ErrorGroup]
    /// While its changes are held (an open health episode): what looks
    /// wrong, the selector or field, and the evidence, in a sentence.
    public var held: String? = nil
  }

  /// The notification outbox.
  public struct Outbox: Sendable, Codable, Hashable {
    /// Notifications waiting for delivery.
    public var pending = 0
    /// Pending ones that failed at least once and wait for a retry.
    public var retrying = 0
    /// Notifications a receiver accepted.
    public var delivered = 0
    /// Notifications given up on, kept and shown but never retried.
    public var dead = 0
    /// When the next pending one may be attempted; nil when none is pending.
    public var nextAttemptAt: Date?
    /// The newest dead ones: `channel: why`.
    public var deadReasons: [String] = []
  }

  /// Background downloads by state.
  public struct DownloadCounts: Sendable, Codable, Hashable {
    /// Downloads in each state: waiting, being written, finished and given up on.
    public var queued = 0, running = 0, done = 0, failed = 0
    /// The failed ones: `URL: why`.
    public var failures: [String] = []
  }

  /// When the status was gathered.
  public var at: Date
  /// Every task of the config, in its order.
  public var tasks: [TaskStatus]
  /// Every source of the config, in its order.
  public var sources: [SourceStatus]
  /// The notification outbox.
  public var notifications: Outbox
  /// Background downloads by state.
  public var downloads = DownloadCounts()
  /// Sentences about what needs a person (empty: healthy).
  public var attention: [String]

  /// Reads the status of `store`; with `config`, its tasks and sources are
  /// listed even before they ever ran.
  ///
  /// - Parameters:
  ///   - launches: how many launches to show per task.
  ///   - failingAfter: a source whose every page failed in this many
  ///     consecutive launches needs attention.
  /// - Throws: store errors.
  public static func gather(
    store: any Store, config: ForageConfig? = nil, now: Date = Date(), launches: Int = 5, failingAfter: Int = 3
  ) async throws -> StoreStatus {
    let runs = try await store.runs(limit: 500)
    let pending = try await store.pendingTaskRequests()
    let stats = try await store.sourceStatistics(since: now.addingTimeInterval(-86_400))

    var taskIDs = config?.tasks.map(\.id) ?? []
    for run in runs.reversed() where !taskIDs.contains(run.task) { taskIDs.append(run.task) }
    for request in pending where !taskIDs.contains(request.identifier) { taskIDs.append(request.identifier) }
    let tasks = taskIDs.map { id -> TaskStatus in
      let request = pending.first { $0.identifier == id }
      return TaskStatus(
        id: id, launches: runs.filter { $0.task == id }.prefix(launches).map(launch), pending: request != nil,
        earliestBegin: request?.earliestBeginDate)
    }

    var names = config?.sources.map(\.name) ?? []
    for s in stats where !names.contains(s.name) { names.append(s.name) }
    var attention: [String] = []
    let open = try await store.healthEpisodes(limit: 1_000).filter(\.isOpen)
    for e in open where !names.contains(e.source) { names.append(e.source) }
    let sources = names.map { name -> SourceStatus in
      let stat = stats.first { $0.name == name } ?? SourceStatistics(name: name)
      let mine = runs.compactMap { run in run.summary?.sources.first { $0.name == name } }
      let recent = mine.prefix(max(1, failingAfter))
      let failing = recent.prefix { $0.pagesFailed > 0 && $0.pagesFetched + $0.pagesNotModified + $0.pagesFresh == 0 }
        .count
      let errors = group(recent.flatMap(\.failures))
      if failing >= failingAfter {
        let cause = errors.first.map { ": \($0.cause) (first at \($0.firstURL))" } ?? ""
        attention.append("\(name): every page failed in its last \(failing) launches\(cause)")
      }
      let held = open.first { $0.source == name }.map(Self.heldSentence)
      if let held {
        attention.append(
          "\(name): \(held); `forage health accept \(name)` applies what is held, or fix the config and the next "
            + "healthy crawl ends it")
      }
      return SourceStatus(
        name: name, records: stat.records, removed: stat.removed, newestData: stat.lastSeen,
        lastCompletedCrawl: stat.lastCompletedCrawl, changesLastDay: stat.recentChanges,
        lastLaunchPages: mine.first.map { $0.pagesFetched + $0.pagesNotModified + $0.pagesFresh },
        lastLaunchFailures: mine.first?.pagesFailed, failingLaunches: failing, errors: errors, held: held)
    }

    let counts = try await store.notificationCounts(now: now)
    var outbox = Outbox(
      pending: counts.pending, retrying: counts.retrying, delivered: counts.delivered, dead: counts.dead,
      nextAttemptAt: counts.nextAttemptAt)
    if counts.dead > 0 {
      outbox.deadReasons = try await store.notifications(state: .dead, limit: 5).map {
        "\($0.channel): \($0.lastError ?? "given up")"
      }
      attention.append(
        "\(counts.dead) notification\(counts.dead == 1 ? " is" : "s are") dead (not delivered, given up): "
          + "forage notify shows why")
    }
    var downloads = DownloadCounts()
    for entry in try await store.downloads(state: nil, limit: 100_000) {
      switch entry.state {
      case .queued: downloads.queued += 1
      case .claimed: downloads.running += 1
      case .done: downloads.done += 1
      case .failed:
        downloads.failed += 1
        if downloads.failures.count < 5 { downloads.failures.append("\(entry.url): \(entry.lastError ?? "failed")") }
      }
    }
    if downloads.failed > 0 {
      attention.append(
        "\(downloads.failed) download\(downloads.failed == 1 ? "" : "s") failed: forage download --list shows why")
    }
    return StoreStatus(
      at: now, tasks: tasks, sources: sources, notifications: outbox, downloads: downloads, attention: attention)
  }

  /// An open episode in a sentence: what is held, why, and an example URL.
  public static func heldSentence(_ e: HealthEpisode) -> String {
    let why: String
    switch e.kind {
    case .removals: why = "a crawl would have removed too many records"
    case .pages: why = "pages answer without any of the source's selectors matching"
    case .field: why = "a field's coverage collapsed"
    }
    let example = e.examples.first.map { " (e.g. \($0))" } ?? ""
    return "changes held since \(ISODate.string(e.startedAt)): \(why), \(e.evidence)\(example)"
  }

  static func launch(_ run: TaskRun) -> Launch {
    guard let summary = run.summary else {
      // No end recorded: what it committed, as of its last commit.
      let p = run.progress
      return Launch(
        id: run.id, startedAt: run.startedAt, outcome: "unfinished",
        pagesFetched: p.map { $0.pagesFetched + $0.pagesNotModified + $0.pagesFresh } ?? 0,
        pagesFailed: p?.pagesFailed ?? 0, notificationsDelivered: p?.notificationsDelivered ?? 0)
    }
    return Launch(
      id: run.id, startedAt: run.startedAt, outcome: summary.outcome.rawValue, seconds: summary.seconds,
      pagesFetched: summary.pagesFetched + summary.pagesNotModified + summary.pagesFresh,
      pagesFailed: summary.pagesFailed, notificationsDelivered: summary.notificationsDelivered,
      conditions: summary.conditions)
  }

  /// Failures (`URL: cause`) grouped by cause, most frequent first.
  static func group(_ failures: [String]) -> [ErrorGroup] {
    var groups: [ErrorGroup] = []
    for failure in failures {
      let (url, cause) = split(failure)
      if let i = groups.firstIndex(where: { $0.cause == cause }) {
        groups[i].count += 1
      } else {
        groups.append(ErrorGroup(cause: cause, count: 1, firstURL: url))
      }
    }
    return groups.enumerated().sorted { ($0.element.count, -$0.offset) > ($1.element.count, -$1.offset) }.map(\.element)
  }

  /// `https://x/y: HTTP 500` → (`https://x/y`, `HTTP 500`). A URL holds no
  /// ": " (its scheme's colon is followed by slashes).
  static func split(_ failure: String) -> (url: String, cause: String) {
    guard let r = failure.range(of: ": ") else { return ("", failure) }
    return (String(failure[..<r.lowerBound]), String(failure[r.upperBound...]))
  }
}

extension StoreStatus {
  /// The status as lines for a terminal (`colour`: ANSI colours).
  public func text(colour: Bool = false) -> String {
    func paint(_ s: String, _ code: String) -> String { colour ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }
    var lines: [String] = []
    lines.append(paint("Tasks", "1"))
    if tasks.isEmpty { lines.append("  none ran yet") }
    for task in tasks {
      var line = "  \(task.id)"
      if task.pending {
        line += ": next launch " + (task.earliestBegin.map { $0 > at ? "in \(age($0)) or later" : "due now" } ?? "as soon as possible")
      }
      lines.append(line)
      if task.launches.isEmpty { lines.append("    no launches yet") }
      for l in task.launches {
        let mark: String
        switch l.outcome {
        case "completed": mark = paint("completed", "32")
        case "failed", "unfinished": mark = paint(l.outcome, "31")
        default: mark = paint(l.outcome == "budget" ? "stopped by budget" : l.outcome, "33")
        }
        let time = l.seconds.map { ", \(Units.format(.milliseconds(Int64($0 * 1000))))" } ?? ""
        lines.append("    \(ago(l.startedAt)): \(mark)\(time), \(l.pagesFetched) pages, \(l.pagesFailed) failed")
      }
    }
    lines.append(paint("Sources", "1"))
    if sources.isEmpty { lines.append("  none") }
    for s in sources {
      var line = "  \(s.name): "
      line += s.newestData.map { "data \(age($0)) old" } ?? "no data yet"
      line += ", \(s.records) record\(s.records == 1 ? "" : "s")"
      if s.removed > 0 { line += " (\(s.removed) removed)" }
      line += ", \(s.changesLastDay) change\(s.changesLastDay == 1 ? "" : "s") in the last day"
      if let pages = s.lastLaunchPages, let failed = s.lastLaunchFailures {
        line += "; last launch: \(pages) pages, \(failed) failed"
      }
      lines.append(line)
      if let held = s.held { lines.append("    " + paint(held, "31")) }
      for e in s.errors.prefix(3) {
        lines.append("    " + paint("\(e.cause) ×\(e.count)", "31") + " (first: \(e.firstURL))")
      }
    }
    lines.append(paint("Notifications", "1"))
    let o = notifications
    var line = "  \(o.pending) pending"
    if o.retrying > 0 { line += " (\(o.retrying) retrying)" }
    if o.pending > 0, let next = o.nextAttemptAt { line += ", next attempt " + (next > at ? "in \(age(next))" : "now") }
    line += ", \(o.delivered) delivered, \(o.dead) dead"
    lines.append(line)
    for reason in o.deadReasons { lines.append("    dead: \(reason)") }
    let d = downloads
    if d.queued + d.running + d.done + d.failed > 0 {
      lines.append(paint("Downloads", "1"))
      lines.append("  \(d.queued) queued, \(d.running) running, \(d.done) done, \(d.failed) failed")
      for failure in d.failures { lines.append("    " + paint("failed: ", "31") + failure) }
    }
    if attention.isEmpty {
      lines.append(paint("Healthy.", "32"))
    } else {
      lines.append(paint("Needs attention:", "31"))
      for a in attention { lines.append("  - \(a)") }
    }
    return lines.joined(separator: "\n")
  }

  /// `3m`, `2h`, `5d`: how far `date` is from `at`, either way.
  func age(_ date: Date) -> String {
    let seconds = abs(at.timeIntervalSince(date))
    switch seconds {
    case ..<60: return "\(Int(seconds))s"
    case ..<3600: return "\(Int(seconds / 60))m"
    case ..<172_800: return "\(Int(seconds / 3600))h"
    default: return "\(Int(seconds / 86_400))d"
    }
  }

  /// `3m ago`, or `in 3m` for a future date.
  func ago(_ date: Date) -> String { date > at ? "in \(age(date))" : "\(age(date)) ago" }
}
