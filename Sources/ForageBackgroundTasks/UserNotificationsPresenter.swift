#if os(Linux)
import AppleFrameworksStandIn
#elseif os(iOS) || os(visionOS) || os(macOS)
import UserNotifications
#endif

#if os(iOS) || os(visionOS) || os(macOS) || os(Linux)
import Foundation
import Forage

/// Shows Forage's `local` notifications with `UNUserNotificationCenter`: the
/// notification channel of an iOS app.
///
///     let granted = await UserNotificationsPresenter.requestAuthorization()   // once, from a user action
///
/// Each notification is added at once (no trigger) under its idempotency key,
/// so a retry of one already shown replaces it rather than showing it twice;
/// notifications of one source share a thread. When the person has not
/// allowed notifications, the delivery fails with a sentence saying so and
/// is retried later, as any channel's.
public struct UserNotificationsPresenter: LocalNotificationPresenter {
  /// Creates the presenter.
  public init() {}

  public func present(_ notification: LocalNotification) async throws {
    let content = UNMutableNotificationContent()
    content.title = notification.title
    content.body = notification.body
    content.threadIdentifier = notification.threadIdentifier
    if let url = notification.url { content.userInfo = ["url": url] }
    let request = UNNotificationRequest(identifier: notification.identifier, content: content, trigger: nil)
    do {
      try await UNUserNotificationCenter.current().add(request)
    } catch let error as UNError where error.code == .notificationsNotAllowed {
      throw LocalNotificationError.notAllowed
    }
  }

  /// Asks the person to allow alerts, sounds and badges (once: iOS shows the
  /// prompt the first time only). Returns whether they are allowed.
  public static func requestAuthorization() async -> Bool {
    (try? await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .sound, .badge])) ?? false
  }
}
#endif
