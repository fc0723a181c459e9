// The stand-in's UserNotifications: see BackgroundTasks.swift for what this
// module is (the only place that assumes Apple's behaviour) and its rules.

// Linux only: on Apple platforms this module is empty, so it can never
// stand in for the real frameworks there.
#if os(Linux)
import Foundation
import ForageSupport

/// Options that determine the authorized features of local and remote notifications.
///
/// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unauthorizationoptions>
public struct UNAuthorizationOptions: OptionSet, Sendable, Hashable {
  public let rawValue: UInt
  public init(rawValue: UInt) { self.rawValue = rawValue }
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unauthorizationoptions/badge>
  public static let badge = UNAuthorizationOptions(rawValue: 1 << 0)
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unauthorizationoptions/sound>
  public static let sound = UNAuthorizationOptions(rawValue: 1 << 1)
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unauthorizationoptions/alert>
  public static let alert = UNAuthorizationOptions(rawValue: 1 << 2)
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unauthorizationoptions/provisional>
  public static let provisional = UNAuthorizationOptions(rawValue: 1 << 6)
}

/// The errors of the `UNErrorDomain` domain.
///
/// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unerror>
public struct UNError: Error, Hashable, Sendable, CustomStringConvertible {
  /// Codes for errors that the notification center reports.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unerror/code>
  public enum Code: Int, Sendable, Hashable {
    /// The app isn't authorized to schedule or receive notifications.
    ///
    /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unerror/code/notificationsnotallowed>
    case notificationsNotAllowed = 1
  }
  /// The error's code.
  public let code: Code
  /// An error with `code` (the stand-in's way to throw one).
  public init(_ code: Code) { self.code = code }
  public var description: String { "UNErrorDomain error \(code.rawValue)" }
}

/// The uneditable content of a notification.
///
/// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationcontent>
open class UNNotificationContent: NSObject, NSCopying, NSMutableCopying {
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationcontent/title>
  open fileprivate(set) var title = ""
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationcontent/subtitle>
  open fileprivate(set) var subtitle = ""
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationcontent/body>
  open fileprivate(set) var body = ""
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationcontent/threadidentifier>
  open fileprivate(set) var threadIdentifier = ""
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationcontent/userinfo>
  open fileprivate(set) var userInfo: [AnyHashable: Any] = [:]

  public override init() { super.init() }

  open func copy(with zone: NSZone? = nil) -> Any { fill(UNNotificationContent()) }
  open func mutableCopy(with zone: NSZone? = nil) -> Any { fill(UNMutableNotificationContent()) }

  private func fill<C: UNNotificationContent>(_ c: C) -> C {
    c.title = title
    c.subtitle = subtitle
    c.body = body
    c.threadIdentifier = threadIdentifier
    c.userInfo = userInfo
    return c
  }
}

/// The editable content for a notification.
///
/// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unmutablenotificationcontent>
open class UNMutableNotificationContent: UNNotificationContent {
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unmutablenotificationcontent/title>
  open override var title: String {
    get { super.title }
    set { super.title = newValue }
  }
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unmutablenotificationcontent/subtitle>
  open override var subtitle: String {
    get { super.subtitle }
    set { super.subtitle = newValue }
  }
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unmutablenotificationcontent/body>
  open override var body: String {
    get { super.body }
    set { super.body = newValue }
  }
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unmutablenotificationcontent/threadidentifier>
  open override var threadIdentifier: String {
    get { super.threadIdentifier }
    set { super.threadIdentifier = newValue }
  }
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unmutablenotificationcontent/userinfo>
  open override var userInfo: [AnyHashable: Any] {
    get { super.userInfo }
    set { super.userInfo = newValue }
  }
}

/// The common behavior for subclasses that trigger the delivery of a local
/// or remote notification.
///
/// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationtrigger>
open class UNNotificationTrigger: NSObject {
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationtrigger/repeats>
  public let repeats: Bool
  init(repeats: Bool) { self.repeats = repeats }
}

/// A request to schedule a local notification, which includes the content
/// of the notification and the trigger conditions for delivery.
///
/// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationrequest>
open class UNNotificationRequest: NSObject {
  /// The unique identifier for this notification request. A new request
  /// with the identifier of a pending or delivered one replaces it.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationrequest/identifier>
  public let identifier: String
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationrequest/content>
  public let content: UNNotificationContent
  /// `nil` delivers the notification right away.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationrequest/trigger>
  public let trigger: UNNotificationTrigger?

  /// Creates a notification request object that you use to schedule a notification.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unnotificationrequest/init(identifier:content:trigger:)>
  public init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
    self.identifier = identifier
    self.content = content.copy() as! UNNotificationContent
    self.trigger = trigger
  }
}

/// The central object for managing notification-related activities for
/// your app or app extension.
///
/// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unusernotificationcenter>
open class UNUserNotificationCenter: NSObject {
  /// The user's answer to the authorization prompt: nil until asked.
  private struct State: @unchecked Sendable {
    var granted: Bool?
    var answer = true
    var requests: [UNAuthorizationOptions] = []
    var delivered: [UNNotificationRequest] = []
  }

  private let state = Locked(State())
  nonisolated(unsafe) private static let shared = UNUserNotificationCenter()

  override init() { super.init() }

  /// Returns your app's notification center.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/current()>
  open class func current() -> UNUserNotificationCenter { shared }

  /// Requests a person's authorization to allow local and remote
  /// notifications for your app. The person is asked once; later calls
  /// return the first answer.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/requestauthorization(options:completionhandler:)>
  open func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool {
    state.withLock { s in
      s.requests.append(options)
      if s.granted == nil { s.granted = s.answer }
      return s.granted!
    }
  }

  /// Schedules the delivery of a local notification. A request with the
  /// identifier of one already delivered replaces it.
  ///
  /// - Throws: `UNError` `.notificationsNotAllowed` when the app is not authorized.
  /// - SeeAlso: <https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/add(_:withcompletionhandler:)>
  open func add(_ request: UNNotificationRequest) async throws {
    let allowed = state.withLock { s -> Bool in
      guard s.granted == true else { return false }
      s.delivered.removeAll { $0.identifier == request.identifier }
      s.delivered.append(request)
      return true
    }
    if !allowed { throw UNError(.notificationsNotAllowed) }
  }

  // MARK: - Test-only hooks (not Apple API)

  /// Test only: how the person answers the authorization prompt.
  public func _setAuthorizationAnswer(_ granted: Bool) {
    state.withLock { $0.answer = granted }
  }

  /// Test only: the notifications shown (delivered), oldest first.
  public var _delivered: [UNNotificationRequest] { state.withLock { $0.delivered } }

  /// Test only: the options of every authorization request, in order.
  public var _authorizationRequests: [UNAuthorizationOptions] { state.withLock { $0.requests } }

  /// Test only: a fresh install: never asked, nothing delivered.
  public func _reset() {
    state.withLock { $0 = State() }
  }
}
#endif
