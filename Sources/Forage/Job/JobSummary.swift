/// What one launch of a job did.
///
/// `forage run` prints it at the end, and as JSON with `--json`.
public struct JobSummary: Sendable, Hashable, Codable {
  /// Pages fetched successfully (2xx) and processed.
  public var pagesFetched = 0
  /// Pages answered with 304 Not Modified.
  public var pagesNotModified = 0
  /// Pages not fetched again because the stored copy is younger than `revisitAfter`.
  public var pagesFresh = 0
  /// Pages that failed (network errors, 4xx/5xx, robots.txt, redirected out of scope).
  public var pagesFailed = 0
  /// Pages left for the next launch (budget, politeness).
  public var pagesDeferred = 0
  public var recordsNew = 0
  public var recordsChanged = 0
  public var recordsUnchanged = 0
  /// Body bytes received.
  public var bytes: Int64 = 0
  /// Wall time of the launch in seconds.
  public var seconds: Double = 0
  /// True when the job stopped because its budget ran out; the next launch
  /// continues where this one stopped.
  public var stoppedByBudget = false
  /// True when a ``StopRequest`` (a signal) stopped the job before its budget
  /// ran out; the next launch continues where this one stopped.
  public var stoppedOnRequest = false
  /// Sources whose crawl completed in this launch.
  public var completedSources: [String] = []
  /// The first few problems met (failed fetches, fields that did not convert).
  public var warnings: [String] = []

  public init() {}

  /// Pages processed in any way.
  public var pages: Int { pagesFetched + pagesNotModified + pagesFresh + pagesFailed }

  mutating func warn(_ message: String) {
    if warnings.count < 20 { warnings.append(message) }
  }
}

extension JobSummary: CustomStringConvertible {
  /// A few readable lines.
  public var description: String {
    var lines = [
      "pages: \(pagesFetched) fetched, \(pagesNotModified) not modified, \(pagesFresh) fresh, \(pagesFailed) failed, \(pagesDeferred) deferred",
      "records: \(recordsNew) new, \(recordsChanged) changed, \(recordsUnchanged) unchanged",
      "bytes: \(bytes), time: \(String(format1: seconds))s"
        + (stoppedOnRequest
          ? ", stopped on request (the next run continues)"
          : stoppedByBudget ? ", stopped by budget (the next run continues)" : ""),
    ]
    if !completedSources.isEmpty { lines.append("completed: \(completedSources.joined(separator: ", "))") }
    for w in warnings { lines.append("warning: \(w)") }
    return lines.joined(separator: "\n")
  }
}
