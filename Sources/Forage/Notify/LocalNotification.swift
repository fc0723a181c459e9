import Foundation

/// A notification shown on the device the app runs on (on iOS, through
/// `UNUserNotificationCenter`, by `ForageBackgroundTasks`), made from a
/// notification document: what the `local` channel hands to its presenter.
///
///     let shown = LocalNotification(document: body, messageID: id)
///     // title "prices: lamp changed", body "price: 12 → 10"
///
/// The `identifier` is the notification's idempotency key, so a retry of a
/// notification already shown replaces it instead of showing it twice.
public struct LocalNotification: Sendable, Hashable {
  /// The idempotency key of the notification (the document's `id`).
  public var identifier: String
  /// One line: the source, the record and what happened to it.
  public var title: String
  /// The changed fields, one per line (at most ``maxLines``).
  public var body: String
  /// Notifications of one source are grouped together (the source's name).
  public var threadIdentifier: String
  /// The record's page, when known.
  public var url: String?

  /// The most field lines a body shows; the rest are counted.
  public static let maxLines = 4

  /// Creates a notification.
  public init(identifier: String, title: String, body: String, threadIdentifier: String, url: String? = nil) {
    self.identifier = identifier
    self.title = title
    self.body = body
    self.threadIdentifier = threadIdentifier
    self.url = url
  }

  /// The notification of one document (``NotificationPayload``); a batch
  /// shows its first member's heading and counts the others. Nil when the
  /// bytes are not such a document.
  public init?(document bytes: [UInt8], messageID: String) {
    guard let document = try? JSONValue.parse(bytes) else { return nil }
    if case .string("batch")? = document["type"], case .array(let members)? = document["notifications"] {
      guard let first = members.first, var shown = LocalNotification(member: first, id: messageID) else { return nil }
      if members.count > 1 {
        shown.title += " and \(members.count - 1) more"
        shown.threadIdentifier = "forage"
      }
      self = shown
      return
    }
    guard let shown = LocalNotification(member: document, id: messageID) else { return nil }
    self = shown
  }

  private init?(member: JSONValue, id: String) {
    // A source event: its sentence is the body.
    if case .string(let type)? = member["type"], type.hasPrefix("source."), case .string(let source)? = member["source"] {
      let title = type == "source.unhealthy" ? "\(source): changes held" : "\(source): healthy again"
      var body = ""
      if case .string(let message)? = member["message"] { body = message }
      var url: String?
      if case .array(let examples)? = member["examples"], case .string(let u)? = examples.first { url = u }
      self.init(identifier: id, title: title, body: body, threadIdentifier: source, url: url)
      return
    }
    guard case .string(let type)? = member["type"], type.hasPrefix("record."),
      case .string(let source)? = member["source"], case .string(let key)? = member["key"]
    else { return nil }
    let kind = String(type.dropFirst("record.".count))
    let what: String
    switch kind {
    case "new": what = "is new"
    case "removed": what = "was removed"
    case "restored": what = "is back"
    default: what = "changed"
    }
    var lines: [String] = []
    if case .array(let changes)? = member["changes"] {
      for change in changes {
        guard case .string(let field)? = change["field"] else { continue }
        let before = change["before"].map(Self.show)
        let after = change["after"].map(Self.show)
        switch (before, after) {
        case (let b?, let a?) where kind == "changed" || kind == "restored": lines.append("\(field): \(b) → \(a)")
        case (_, let a?): lines.append("\(field): \(a)")
        case (let b?, nil): lines.append("\(field): \(b)")
        case (nil, nil): lines.append(field)
        }
      }
    }
    if lines.count > Self.maxLines {
      let more = lines.count - (Self.maxLines - 1)
      lines = Array(lines.prefix(Self.maxLines - 1)) + ["and \(more) more fields"]
    }
    var url: String?
    if case .string(let u)? = member["url"], !u.isEmpty { url = u }
    self.init(identifier: id, title: "\(source): \(key) \(what)", body: lines.joined(separator: "\n"), threadIdentifier: source, url: url)
  }

  /// A value as a person reads it: strings without quotes, null as "none".
  private static func show(_ value: JSONValue) -> String {
    switch value {
    case .string(let s): return s
    case .null: return "none"
    default: return value.serialized()
    }
  }
}

/// Shows ``LocalNotification``s on the device: `ForageBackgroundTasks`
/// implements it with `UNUserNotificationCenter`. Throw
/// ``LocalNotificationError`` so the outbox can tell a refusal from a
/// failure worth retrying.
public protocol LocalNotificationPresenter: Sendable {
  /// Shows `notification` now (replacing one shown with its identifier).
  func present(_ notification: LocalNotification) async throws
}

/// Why a ``LocalNotificationPresenter`` could not show a notification.
public struct LocalNotificationError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A sentence for a person.
  public let message: String
  /// Creates an error with a sentence for a person.
  public init(_ message: String) { self.message = message }
  /// The person has not allowed notifications for the app (or was not asked yet).
  public static let notAllowed = LocalNotificationError(
    "notifications are not allowed for this app: allow them in Settings, or ask again with requestAuthorization")
  /// The sentence for a person (`message`).
  public var description: String { message }
}

/// The `local` channel: the document becomes a ``LocalNotification`` that
/// the host app's presenter shows. Without a presenter (the command line,
/// a daemon) every attempt fails with a sentence saying why.
struct LocalChannel: DeliveryChannel {
  let presenter: (any LocalNotificationPresenter)?

  func deliver(_ body: [UInt8], messageID: String, at date: Date) async -> DeliveryResult {
    guard let presenter else {
      return .failed("local notifications are shown only in an app that uses ForageBackgroundTasks")
    }
    guard let notification = LocalNotification(document: body, messageID: messageID) else {
      return .failed("the notification could not be read to show it on the device")
    }
    do {
      try await presenter.present(notification)
      return .delivered
    } catch let error as LocalNotificationError {
      return .failed(error.message)
    } catch {
      return .failed("the device did not show the notification: \(error)")
    }
  }
}
