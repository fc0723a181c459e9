import Foundation

/// Several refresh tasks served by one `BGAppRefreshTaskRequest`.
///
/// iOS keeps one pending refresh request per app, so a config with several
/// `appRefresh` tasks (prices every 15 minutes, news every hour) cannot
/// submit one request each: the second submission is refused. The adapter
/// submits one request, under the first refresh task's identifier (the
/// carrier), whose earliest begin date is the soonest of theirs; a launch of
/// it runs every refresh task that is due.
///
///     var shared = SharedRefresh(members: ["prices", "news"])
///     shared.submit("prices", earliest: now + 900)   // carrier due at now + 900
///     shared.submit("news", earliest: now + 3600)    // still now + 900
///     shared.launch(now: now + 900)                  // ["prices"]
///
/// No I/O: the adapter's host applies what it returns to `BGTaskScheduler`.
/// What is due lives in memory; in a new process (a background launch)
/// nothing is known until the tasks are submitted again, and a launch then
/// runs every member, as a cold start would.
struct SharedRefresh: Sendable, Hashable {
  /// The refresh tasks, in config order; the first is the carrier.
  let members: [String]
  /// When each submitted member is due (`distantPast`: as soon as possible).
  private(set) var dues: [String: Date] = [:]

  init(members: [String]) { self.members = members }

  /// The identifier submitted to iOS, or nil when the config has no refresh task.
  var carrier: String? { members.first }

  /// True when `identifier` is served by the shared request.
  func serves(_ identifier: String) -> Bool { members.contains(identifier) }

  /// The earliest begin date of the shared request: the soonest member's
  /// (nil: as soon as possible, or nothing is due).
  var soonest: Date? {
    guard let first = dues.values.min(), first != .distantPast else { return nil }
    return first
  }

  /// True when some member waits for a launch.
  var hasPending: Bool { !dues.isEmpty }

  /// Records `identifier`'s request; returns the shared request's date.
  mutating func submit(_ identifier: String, earliest: Date?) -> Date? {
    dues[identifier] = earliest ?? .distantPast
    return soonest
  }

  /// Records a pending request found at iOS (after a relaunch) if its
  /// member is not known yet.
  mutating func seed(_ identifier: String, earliest: Date?) {
    if dues[identifier] == nil { dues[identifier] = earliest ?? .distantPast }
  }

  /// Forgets `identifier`'s request; true when others still wait.
  @discardableResult
  mutating func cancel(_ identifier: String) -> Bool {
    dues[identifier] = nil
    return hasPending
  }

  /// Forgets every request.
  mutating func cancelAll() { dues = [:] }

  /// The members a launch at `now` runs: every one that is due; when none
  /// is (the debugger launches at any time), the soonest; when nothing is
  /// known (a new process), all of them. They are no longer pending: each
  /// submits its next request as it starts.
  mutating func launch(now: Date) -> [String] {
    guard let first = dues.values.min() else { return members }
    var run = members.filter { dues[$0].map { $0 <= now } ?? false }
    if run.isEmpty { run = members.filter { dues[$0] == first } }
    for identifier in run { dues[identifier] = nil }
    return run
  }

  /// The members waiting, with their dates, in config order.
  var pending: [(identifier: String, earliest: Date?)] {
    members.compactMap { id in dues[id].map { (id, $0 == .distantPast ? nil : $0) } }
  }
}
