import Foundation
import ForageScheduler

/// How a launch of a job ended.
public enum RunOutcome: String, Sendable, Hashable, Codable, CaseIterable {
  /// Still running (a progress report), or its process died before it
  /// could say.
  case running
  /// Every source was crawled as far as its scope allows.
  case completed
  /// The budget ran out; the next launch continues where this one stopped.
  case budget
  /// Stopped on request (a signal) before the budget ran out; the next
  /// launch continues.
  case interrupted
  /// The job failed (a store error); what it committed is kept.
  case failed
}

/// What one launch of a job did: the engine reports it as the job runs and
/// when it ends, and the store keeps it with the run.
///
///     let summary = try await job.run(budget: .seconds(30))
///     print(summary)   // pages fetched, records new/changed, stopped by budget?
///     if summary.outcome == .budget { … }   // the next launch continues
public struct RunSummary: Sendable, Hashable {
  /// How the launch ended (`.running` while it runs).
  public var outcome: RunOutcome = .running
  /// When the launch ended; nil while it runs.
  public var finishedAt: Date?
  /// Pages fetched successfully (2xx) and processed.
  public var pagesFetched = 0
  /// Pages answered with 304 Not Modified.
  public var pagesNotModified = 0
  /// Pages not fetched again because the stored copy is younger than
  /// `revisitAfter`.
  public var pagesFresh = 0
  /// Pages that failed (network errors, 4xx/5xx, robots.txt, redirected out
  /// of scope).
  public var pagesFailed = 0
  /// Pages left for the next launch (budget, politeness).
  public var pagesDeferred = 0
  /// Records seen for the first time.
  public var recordsNew = 0
  /// Records seen again with different fields.
  public var recordsChanged = 0
  /// Records seen again with the same fields.
  public var recordsUnchanged = 0
  /// Records a completed crawl did not see again.
  public var recordsRemoved = 0
  /// Records seen again after they were removed.
  public var recordsRestored = 0
  /// Notifications of notable changes written to the outbox.
  public var notificationsQueued = 0
  /// Notifications delivered during the launch (of this launch's changes or
  /// earlier ones).
  public var notificationsDelivered = 0
  /// Delivery attempts that failed during the launch (retried later).
  public var notificationsFailed = 0
  /// Body bytes received.
  public var bytes: Int64 = 0
  /// Wall time of the launch in seconds.
  public var seconds: Double = 0
  /// Sources whose crawl completed in this launch.
  public var completedSources: [String] = []
  /// The first few problems met (failed fetches, fields that did not convert).
  public var warnings: [String] = []
  /// The same figures for each source of the launch, in the order run.
  public var sources: [SourceRunSummary] = []
  /// The device's state when the launch began, for launches a scheduler
  /// started (the daemon, the simulator, an app); nil for `forage run`.
  public var conditions: DeviceConditions?

  /// The most warnings kept.
  public static let warningLimit = 20

  /// An empty summary of a launch that is running.
  public init() {}

  /// An empty summary of a launch that ended with `outcome`.
  public init(outcome: RunOutcome, finishedAt: Date? = nil) {
    self.outcome = outcome
    self.finishedAt = finishedAt
  }

  /// True when the budget ran out; the next launch continues.
  public var stoppedByBudget: Bool { outcome == .budget }

  /// True when a stop request (a signal) ended the launch early; the next
  /// launch continues.
  public var stoppedOnRequest: Bool { outcome == .interrupted }

  /// Adds `message` to the warnings while there are fewer than
  /// ``warningLimit``.
  public mutating func warn(_ message: String) {
    if warnings.count < Self.warningLimit { warnings.append(message) }
  }
}

extension RunSummary: Codable {
  private enum CodingKeys: String, CodingKey {
    case outcome, finishedAt, pagesFetched, pagesNotModified, pagesFresh, pagesFailed, pagesDeferred
    case recordsNew, recordsChanged, recordsUnchanged, recordsRemoved, recordsRestored
    case notificationsQueued, notificationsDelivered, notificationsFailed, bytes, seconds, completedSources, warnings
    case stoppedByBudget, stoppedOnRequest, sources, conditions
  }

  /// Reads a summary; members missing from older stores read as zero, and
  /// an outcome this build does not know reads as `.failed`.
  public init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    let outcome = try c.decodeIfPresent(String.self, forKey: .outcome)
    self.outcome = outcome.map { RunOutcome(rawValue: $0) ?? .failed } ?? .running
    finishedAt = try c.decodeIfPresent(Date.self, forKey: .finishedAt)
    pagesFetched = try c.decodeIfPresent(Int.self, forKey: .pagesFetched) ?? 0
    pagesNotModified = try c.decodeIfPresent(Int.self, forKey: .pagesNotModified) ?? 0
    pagesFresh = try c.decodeIfPresent(Int.self, forKey: .pagesFresh) ?? 0
    pagesFailed = try c.decodeIfPresent(Int.self, forKey: .pagesFailed) ?? 0
    pagesDeferred = try c.decodeIfPresent(Int.self, forKey: .pagesDeferred) ?? 0
    recordsNew = try c.decodeIfPresent(Int.self, forKey: .recordsNew) ?? 0
    recordsChanged = try c.decodeIfPresent(Int.self, forKey: .recordsChanged) ?? 0
    recordsUnchanged = try c.decodeIfPresent(Int.self, forKey: .recordsUnchanged) ?? 0
    recordsRemoved = try c.decodeIfPresent(Int.self, forKey: .recordsRemoved) ?? 0
    recordsRestored = try c.decodeIfPresent(Int.self, forKey: .recordsRestored) ?? 0
    notificationsQueued = try c.decodeIfPresent(Int.self, forKey: .notificationsQueued) ?? 0
    notificationsDelivered = try c.decodeIfPresent(Int.self, forKey: .notificationsDelivered) ?? 0
    notificationsFailed = try c.decodeIfPresent(Int.self, forKey: .notificationsFailed) ?? 0
    bytes = try c.decodeIfPresent(Int64.self, forKey: .bytes) ?? 0
    seconds = try c.decodeIfPresent(Double.self, forKey: .seconds) ?? 0
    completedSources = try c.decodeIfPresent([String].self, forKey: .completedSources) ?? []
    warnings = try c.decodeIfPresent([String].self, forKey: .warnings) ?? []
    sources = try c.decodeIfPresent([SourceRunSummary].self, forKey: .sources) ?? []
    conditions = try c.decodeIfPresent(DeviceConditions.self, forKey: .conditions)
  }

  /// Writes every member, and `stoppedByBudget` / `stoppedOnRequest` for
  /// readers of `forage run --json` that test those.
  public func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(outcome.rawValue, forKey: .outcome)
    try c.encodeIfPresent(finishedAt, forKey: .finishedAt)
    try c.encode(pagesFetched, forKey: .pagesFetched)
    try c.encode(pagesNotModified, forKey: .pagesNotModified)
    try c.encode(pagesFresh, forKey: .pagesFresh)
    try c.encode(pagesFailed, forKey: .pagesFailed)
    try c.encode(pagesDeferred, forKey: .pagesDeferred)
    try c.encode(recordsNew, forKey: .recordsNew)
    try c.encode(recordsChanged, forKey: .recordsChanged)
    try c.encode(recordsUnchanged, forKey: .recordsUnchanged)
    try c.encode(recordsRemoved, forKey: .recordsRemoved)
    try c.encode(recordsRestored, forKey: .recordsRestored)
    try c.encode(notificationsQueued, forKey: .notificationsQueued)
    try c.encode(notificationsDelivered, forKey: .notificationsDelivered)
    try c.encode(notificationsFailed, forKey: .notificationsFailed)
    try c.encode(bytes, forKey: .bytes)
    try c.encode(seconds, forKey: .seconds)
    try c.encode(completedSources, forKey: .completedSources)
    try c.encode(warnings, forKey: .warnings)
    try c.encode(sources, forKey: .sources)
    try c.encodeIfPresent(conditions, forKey: .conditions)
    try c.encode(stoppedByBudget, forKey: .stoppedByBudget)
    try c.encode(stoppedOnRequest, forKey: .stoppedOnRequest)
  }
}

extension RunSummary: CustomStringConvertible {
  /// A few readable lines.
  public var description: String {
    let tenths = (seconds * 10).rounded() / 10
    let time = tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    var lines = [
      "pages: \(pagesFetched) fetched, \(pagesNotModified) not modified, \(pagesFresh) fresh, \(pagesFailed) failed, \(pagesDeferred) deferred",
      "records: \(recordsNew) new, \(recordsChanged) changed, \(recordsUnchanged) unchanged"
        + (recordsRemoved > 0 ? ", \(recordsRemoved) removed" : "")
        + (recordsRestored > 0 ? ", \(recordsRestored) restored" : ""),
      "bytes: \(bytes), time: \(time)s"
        + (outcome == .interrupted
          ? ", stopped on request (the next run continues)"
          : outcome == .budget ? ", stopped by budget (the next run continues)" : ""),
    ]
    if notificationsQueued + notificationsDelivered + notificationsFailed > 0 {
      lines.append(
        "notifications: \(notificationsQueued) queued, \(notificationsDelivered) delivered"
          + (notificationsFailed > 0 ? ", \(notificationsFailed) attempts failed (retried later)" : ""))
    }
    if !completedSources.isEmpty { lines.append("completed: \(completedSources.joined(separator: ", "))") }
    if sources.count > 1 {
      for s in sources {
        lines.append(
          "  \(s.name): \(s.pagesFetched) fetched, \(s.pagesNotModified + s.pagesFresh) unchanged, "
            + "\(s.pagesFailed) failed, \(s.pagesDeferred) deferred; records \(s.recordsNew) new, "
            + "\(s.recordsChanged) changed\(s.completed ? "; completed" : "")")
      }
    }
    for w in warnings { lines.append("warning: \(w)") }
    return lines.joined(separator: "\n")
  }
}

/// One source's part of a launch.
public struct SourceRunSummary: Sendable, Hashable, Codable {
  /// The source's name.
  public var name: String
  /// The source's pages fetched successfully (2xx) and processed.
  public var pagesFetched = 0
  /// The source's pages answered with 304 Not Modified.
  public var pagesNotModified = 0
  /// The source's pages not fetched again because their stored copy is younger than `revisitAfter`.
  public var pagesFresh = 0
  /// The source's pages that failed.
  public var pagesFailed = 0
  /// The source's pages left for the next launch (budget, politeness).
  public var pagesDeferred = 0
  /// The source's records seen for the first time.
  public var recordsNew = 0
  /// The source's records seen again with different fields.
  public var recordsChanged = 0
  /// The source's records seen again with the same fields.
  public var recordsUnchanged = 0
  /// Records the source's completed crawl did not see again.
  public var recordsRemoved = 0
  /// Records seen again after they were removed.
  public var recordsRestored = 0
  /// True when the source's crawl completed in this launch.
  public var completed = false
  /// The first few failures of its pages (`URL: what went wrong`), for
  /// grouping the errors that repeat.
  public var failures: [String] = []

  /// The most failures kept per source.
  public static let failureLimit = 10

  /// An empty summary for source `name`.
  public init(name: String) { self.name = name }

  private enum CodingKeys: String, CodingKey {
    case name, pagesFetched, pagesNotModified, pagesFresh, pagesFailed, pagesDeferred
    case recordsNew, recordsChanged, recordsUnchanged, recordsRemoved, recordsRestored, completed, failures
  }

  /// Reads a source's summary; members missing from older stores read as zero.
  public init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    name = try c.decode(String.self, forKey: .name)
    func count(_ key: CodingKeys) throws -> Int { try c.decodeIfPresent(Int.self, forKey: key) ?? 0 }
    pagesFetched = try count(.pagesFetched)
    pagesNotModified = try count(.pagesNotModified)
    pagesFresh = try count(.pagesFresh)
    pagesFailed = try count(.pagesFailed)
    pagesDeferred = try count(.pagesDeferred)
    recordsNew = try count(.recordsNew)
    recordsChanged = try count(.recordsChanged)
    recordsUnchanged = try count(.recordsUnchanged)
    recordsRemoved = try count(.recordsRemoved)
    recordsRestored = try count(.recordsRestored)
    completed = try c.decodeIfPresent(Bool.self, forKey: .completed) ?? false
    failures = try c.decodeIfPresent([String].self, forKey: .failures) ?? []
  }
}

/// How many pages of a launch (or of one of its sources) ended each way.
public protocol PageTally {
  var pagesFetched: Int { get set }
  var pagesNotModified: Int { get set }
  var pagesFresh: Int { get set }
  var pagesFailed: Int { get set }
  var pagesDeferred: Int { get set }
}

extension PageTally {
  /// Pages processed in any way.
  public var pages: Int { pagesFetched + pagesNotModified + pagesFresh + pagesFailed }
}

extension RunSummary: PageTally {}
extension SourceRunSummary: PageTally {}

/// The name runs' conditions had before issue 28 made the scheduler's
/// ``DeviceConditions`` the one conditions type (its JSON is the form
/// stored runs have always had, so runs stored before still read).
@available(*, deprecated, renamed: "DeviceConditions")
public typealias LaunchConditions = DeviceConditions
