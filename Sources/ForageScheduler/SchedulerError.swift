import Foundation

/// An error a ``TaskScheduler`` throws from `submit(_:)`, with the meanings of
/// Apple's `BGTaskScheduler.Error.Code`.
///
///     do { try scheduler.submit(AppRefreshTaskRequest(identifier: "com.example.refresh")) }
///     catch where error == .unavailable { showRefreshSettingsHint() }
///
/// The error is a struct over a private code so that new cases can be added
/// without breaking callers; compare against the static members.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/error/code>
public struct SchedulerError: Error, Hashable, Sendable, CustomStringConvertible {
  private enum Code: String, Hashable, Sendable {
    case unavailable
    case tooManyPendingTaskRequests
    case notPermitted
    case immediateRunIneligible
    case launchHandlerNotRegistered
    case unsupportedTaskKind
  }

  private let code: Code
  /// The identifier of the request that failed, when there is one.
  public let identifier: String?
  /// Extra context for a person: what was refused and what to do about it.
  public let detail: String

  private init(_ code: Code, identifier: String?, detail: String) {
    self.code = code
    self.identifier = identifier
    self.detail = detail
  }

  /// Background work is unavailable: Background App Refresh is off or
  /// restricted (Apple: `.unavailable`).
  public static let unavailable = SchedulerError(.unavailable, identifier: nil, detail: "")
  /// Too many requests of this kind are pending: at most one app-refresh and
  /// ten processing requests (Apple: `.tooManyPendingTaskRequests`).
  public static let tooManyPendingTaskRequests = SchedulerError(
    .tooManyPendingTaskRequests, identifier: nil, detail: "")
  /// The identifier is not in the permitted list (`BGTaskSchedulerPermittedIdentifiers`
  /// in Info.plist; the config's task list in Forage) (Apple: `.notPermitted`).
  public static let notPermitted = SchedulerError(.notPermitted, identifier: nil, detail: "")
  /// A continued-processing request with strategy `.fail` cannot start now
  /// (Apple: `.immediateRunIneligible`).
  public static let immediateRunIneligible = SchedulerError(
    .immediateRunIneligible, identifier: nil, detail: "")
  /// Forage's own: a request was submitted for an identifier that has no
  /// launch handler (iOS traps on this at launch time; lenient mode throws).
  public static let launchHandlerNotRegistered = SchedulerError(
    .launchHandlerNotRegistered, identifier: nil, detail: "")

  /// Forage's own: the task's kind cannot be scheduled from a task
  /// definition. A continued-processing task starts only from a user action
  /// in the foreground and shows its progress, so Forage refuses to submit
  /// one for a schedule (rather than run it as processing).
  public static let unsupportedTaskKind = SchedulerError(.unsupportedTaskKind, identifier: nil, detail: "")

  /// The same error with the request's identifier and an explanation.
  public func with(identifier: String?, detail: String) -> SchedulerError {
    SchedulerError(code, identifier: identifier, detail: detail)
  }

  /// Errors compare by kind only, so `error == .unavailable` works whatever
  /// the identifier and detail.
  public static func == (lhs: SchedulerError, rhs: SchedulerError) -> Bool { lhs.code == rhs.code }
  public func hash(into hasher: inout Hasher) { hasher.combine(code) }

  /// A short name of the kind of error, e.g. `tooManyPendingTaskRequests`.
  public var name: String { code.rawValue }

  public var description: String {
    let base: String
    switch code {
    case .unavailable:
      base = "background tasks are unavailable: Background App Refresh is off or restricted (Settings > General > Background App Refresh)"
    case .tooManyPendingTaskRequests:
      base = "too many pending task requests: at most 1 app-refresh and 10 processing requests may be pending; resubmit an existing identifier to replace its request"
    case .notPermitted:
      base = "task identifier not permitted: add it to the permitted identifiers (Info.plist BGTaskSchedulerPermittedIdentifiers, or the config's task list)"
    case .immediateRunIneligible:
      base = "the continued-processing request cannot run now and its strategy is .fail; use .queue to wait"
    case .launchHandlerNotRegistered:
      base = "no launch handler is registered for this identifier: register one before finishLaunching()"
    case .unsupportedTaskKind:
      base = "this kind of task cannot be submitted on a schedule"
    }
    var text = base
    if let identifier { text = "\(identifier): " + text }
    if !detail.isEmpty { text += " (\(detail))" }
    return text
  }
}
