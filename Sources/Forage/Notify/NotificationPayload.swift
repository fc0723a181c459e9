import Foundation
import ForageStore
import ForageSupport

/// The JSON a channel delivers for a notification:
///
///     {"type": "record.changed", "id": "msg_…", "source": "prices", "key": "lamp",
///      "url": "https://…", "at": "2026-12-01T09:00:00.000Z",
///      "before": {…}, "after": {…},
///      "changes": [{"field": "price", "before": 12, "after": 10}]}
///
/// `id` is the notification's idempotency key (the Standard Webhooks
/// `webhook-id`): the same on every retry, so a receiver can drop the
/// duplicates that at-least-once delivery allows. `before` is null for a new
/// record, `after` for a removed one.
package enum NotificationPayload {
  /// The document of one notification.
  package static func document(id: String, change: RecordChange) -> JSONValue {
    let (before, after) = change.parsedFields
    let changes = change.fieldChanges.map(\.jsonValue)
    return .object([
      ("type", .string("record." + change.kind.rawValue)),
      ("id", .string(id)),
      ("source", .string(change.source)),
      ("key", .string(change.key)),
      ("url", .string(change.url)),
      ("at", .string(ISODate.string(change.at, milliseconds: true))),
      ("before", before ?? .null),
      ("after", after ?? .null),
      ("changes", .array(changes)),
    ])
  }

  /// The document of an outbox notification: a change's, or a source event's.
  package static func document(_ n: OutboxNotification) -> JSONValue {
    n.event.map { document(id: n.messageID, event: $0) } ?? document(id: n.messageID, change: n.change)
  }

  /// The document of a source event (see docs/notifications.md):
  ///
  ///     {"type": "source.unhealthy", "id": "msg_…", "source": "shop", "at": "…",
  ///      "episode": 3, "problem": "pages", "selector": "div.product",
  ///      "before": 6, "beforeOf": 6, "now": 0, "nowOf": 6,
  ///      "examples": ["https://…"], "message": "div.product: …", "resolution": null}
  package static func document(id: String, event: SourceEvent) -> JSONValue {
    let e = event.episode
    let at = event.kind == .unhealthy ? e.startedAt : e.endedAt ?? e.startedAt
    return .object([
      ("type", .string(event.kind.rawValue)),
      ("id", .string(id)),
      ("source", .string(e.source)),
      ("at", .string(ISODate.string(at, milliseconds: true))),
      ("episode", .number(Double(e.id))),
      ("problem", .string(e.kind.rawValue)),
      ("selector", .string(e.subject)),
      ("before", .number(Double(e.before))),
      ("beforeOf", .number(Double(e.beforeTotal))),
      ("now", .number(Double(e.now))),
      ("nowOf", .number(Double(e.nowTotal))),
      ("examples", .array(e.examples.map(JSONValue.string))),
      ("message", .string(e.evidence)),
      ("resolution", event.kind == .recovered ? e.resolution.map { .string($0.rawValue) } ?? .null : .null),
    ])
  }

  /// The document of a batch: `{"type": "batch", "id": …, "notifications": [...]}`.
  package static func batch(id: String, _ notifications: [(id: String, change: RecordChange)]) -> JSONValue {
    .object([
      ("type", .string("batch")),
      ("id", .string(id)),
      ("notifications", .array(notifications.map { document(id: $0.id, change: $0.change) })),
    ])
  }

  /// The document of a batch of outbox notifications (changes and source events).
  package static func batch(id: String, _ notifications: [OutboxNotification]) -> JSONValue {
    .object([
      ("type", .string("batch")),
      ("id", .string(id)),
      ("notifications", .array(notifications.map(document))),
    ])
  }

  /// The idempotency key of a batch: derived from its members' keys, so a
  /// retry of the same batch carries the same one (a batch that gained
  /// members is another message; receivers dedupe members by their `id`).
  package static func batchID(_ memberIDs: [String]) -> String {
    var hash = SHA256()
    for id in memberIDs.sorted() { hash.update(Array(id.utf8) + [0]) }
    return "msg_batch_" + hash.finalize().prefix(16).map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined()
  }

  /// A sample notification for `forage notify --test`.
  package static func sample(channel: String, at date: Date) -> (id: String, change: RecordChange) {
    let change = RecordChange(
      id: 0, source: "forage-test", key: "sample", kind: .changed, url: "https://example.com/item/1",
      beforeJSON: #"{"price":12,"title":"Sample item"}"#, afterJSON: #"{"price":10,"title":"Sample item"}"#,
      at: date, run: nil)
    return ("msg_test_" + String(Int(date.timeIntervalSince1970)) + "_" + channel, change)
  }
}
