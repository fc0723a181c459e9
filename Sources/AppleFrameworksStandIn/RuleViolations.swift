// The stand-in's traps: Apple's documented runtime rules, turned into
// observable failures. See BackgroundTasks.swift for what this module is.
//
// On a device, breaking one of these rules ends the app
// (`NSInternalInconsistencyException`) or fails silently (a task that is
// never launched). A test process must not end, so the stand-in reports
// each broken rule to a violation handler instead: by default it is
// recorded, and the adapter's test support fails every test that leaves
// one unexamined. Each rule names the header sentence it comes from in
// docs/apple.md.

// Linux only: on Apple platforms this module is empty, so it can never
// stand in for the real frameworks there.
#if os(Linux)
import Foundation
import ForageSupport

/// Test only (not Apple API): a broken rule of Apple's that a device would
/// answer with a crash or a silent failure.
public struct _AppleRuleViolation: Sendable, Hashable, CustomStringConvertible {
  /// The rules the stand-in enforces.
  public enum Rule: String, Sendable, Hashable, CaseIterable {
    /// A launch of an identifier with no registered handler ("every
    /// identifier … requires a handler"): the app is terminated.
    case launchWithoutHandler
    /// A registration after the app finished launching: the app is terminated.
    case registeredAfterLaunch
    /// A second registration of one identifier ("the system kills the app
    /// on the second registration").
    case registeredTwice
    /// `setTaskCompleted(success:)` called again for a finished task.
    case completedTwice
    /// A refresh request submitted while another identifier's is pending
    /// (one refresh request per app): refused, the task never runs.
    case tooManyRefreshRequests
    /// An eleventh pending processing request: refused, the task never runs.
    case tooManyProcessingRequests
    /// An identifier missing from `BGTaskSchedulerPermittedIdentifiers`:
    /// refused, the task never runs.
    case notPermitted
    /// `NSBackgroundActivityScheduler`: an empty identifier, a property set
    /// after `schedule(_:)`, a second `schedule(_:)`, or its completion
    /// handler called twice.
    case activityMisuse
  }

  /// The rule broken.
  public let rule: Rule
  /// What Apple's exception or log says, with the identifier.
  public let message: String

  public init(_ rule: Rule, _ message: String) {
    self.rule = rule
    self.message = message
  }

  public var description: String { "\(rule.rawValue): \(message)" }
}

/// Test only (not Apple API): where the stand-in reports broken rules.
public enum _AppleRules {
  private struct State: Sendable {
    var recorded: [_AppleRuleViolation] = []
    var handler: (@Sendable (_AppleRuleViolation) -> Void)?
  }
  private static let state = Locked(State())

  /// Reports `violation`: recorded, then passed to the handler if one is set.
  static func report(_ rule: _AppleRuleViolation.Rule, _ message: String) {
    let violation = _AppleRuleViolation(rule, message)
    let handler = state.withLock { s in
      s.recorded.append(violation)
      return s.handler
    }
    handler?(violation)
  }

  /// Every violation since the last ``_take()`` or ``_reset()``, in order.
  public static var _recorded: [_AppleRuleViolation] { state.withLock { $0.recorded } }

  /// Returns the recorded violations and forgets them (a test that expects
  /// one takes it, so what remains is unexpected).
  @discardableResult
  public static func _take() -> [_AppleRuleViolation] {
    state.withLock { s in
      defer { s.recorded = [] }
      return s.recorded
    }
  }

  /// Calls `handler` for every violation as it happens (nil: only record).
  public static func _setHandler(_ handler: (@Sendable (_AppleRuleViolation) -> Void)?) {
    state.withLock { $0.handler = handler }
  }

  /// Forgets the recorded violations and the handler.
  public static func _reset() {
    state.withLock { $0 = State() }
  }
}
#endif
