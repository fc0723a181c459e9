import Foundation
import ForageSupport

/// What happened to a record.
public enum ChangeKind: String, Sendable, Hashable, CaseIterable, Codable {
  /// First seen.
  case new
  /// Seen again with different fields.
  case changed
  /// Not seen again by a completed crawl of its source (an interrupted crawl
  /// never removes anything).
  case removed
  /// Seen again after it was removed.
  case restored
}

/// How long a source's change history is kept. Pruning is a maintenance step
/// (`Store.pruneHistory`), never part of a launch's budget, and never deletes
/// a change that still has a notification waiting to be delivered.
///
///     HistoryRetention(keep: 50, maxAge: .seconds(90 * 86_400))
public struct HistoryRetention: Sendable, Hashable {
  /// The most changes kept per record (the newest); nil keeps every one.
  public var keep: Int?
  /// Changes older than this are dropped; nil keeps them at any age.
  public var maxAge: Duration?

  /// A retention keeping at most `keep` changes per record, none older than `maxAge`; nil keeps all.
  public init(keep: Int? = nil, maxAge: Duration? = nil) {
    self.keep = keep
    self.maxAge = maxAge
  }

  /// How long a record sink keeps holding this history after its last
  /// delivery: pruning keeps every change after the cursor of each sink
  /// delivered to within it (so a sink misses nothing), and drops the
  /// changes a sink not delivered to for longer still waits for (its next
  /// delivery then throws `ChangeHistoryPruned`). The retention's `maxAge`,
  /// or ``StoreDefaults/sinkHistoryHold`` when it has none.
  public var sinkHold: Duration { maxAge ?? StoreDefaults.sinkHistoryHold }

  /// The earliest last delivery (milliseconds since 1970) of a sink that
  /// still holds this history at `nowMS`.
  package func sinkHoldCutoff(nowMS: Int64) -> Int64 { nowMS - sinkHold.milliseconds }
}

/// Decides which notification channels a change goes to. The record rules
/// ask it over a commit's planned changes (`RecordPlan.route`), before the
/// store writes them, so a notable change and its outbox rows are committed
/// together or not at all.
public protocol ChangeRouter: Sendable {
  /// The names of the channels `change` is delivered to; empty when it is
  /// not notable.
  ///
  /// - Parameter firstCrawl: the change's source has no completed crawl yet
  ///   (its records are all new, and a user may not want to hear of each).
  func channels(for change: RecordChange, firstCrawl: Bool) -> [String]

  /// The names of the channels a source event (`source.unhealthy`,
  /// `source.recovered`) of `source` goes to.
  func channels(forSourceEvent source: String) -> [String]
}

extension ChangeRouter {
  /// No channel: a router that does not say hears of no source event.
  public func channels(forSourceEvent source: String) -> [String] { [] }
}

/// Which changes `Store.changes(matching:)` returns, newest first.
public struct ChangeQuery: Sendable, Hashable {
  /// Only changes of this source; nil for every source.
  public var source: String?
  /// Only changes of these kinds; empty for every kind.
  public var kinds: Set<ChangeKind>
  /// Only changes at or after this date.
  public var since: Date?
  /// Only changes with an id below this (paging from the newest).
  public var beforeID: Int64?
  /// At most this many.
  public var limit: Int

  /// A query; with no arguments, the newest 100 changes of every source and kind.
  public init(
    source: String? = nil, kinds: Set<ChangeKind> = [], since: Date? = nil, beforeID: Int64? = nil,
    limit: Int = 100
  ) {
    self.source = source
    self.kinds = kinds
    self.since = since
    self.beforeID = beforeID
    self.limit = limit
  }
}

/// Where a notification is in its life.
public enum NotificationState: String, Sendable, Hashable, CaseIterable {
  /// Waiting for (another) delivery attempt.
  case pending
  /// A receiver accepted it.
  case delivered
  /// Given up on: too old, or its channel is gone; kept to be seen.
  case dead
}

/// A notification of the outbox with the change it tells of.
public struct OutboxNotification: Sendable, Hashable {
  /// The notification's row identifier in the outbox.
  public var id: Int64
  /// The idempotency key, the same on every attempt (`webhook-id`).
  public var messageID: String
  /// The name of the channel it goes to.
  public var channel: String
  /// Where it is in its life: pending, delivered or dead.
  public var state: NotificationState
  /// Attempts made so far.
  public var attempts: Int
  /// When it was written to the outbox, in the transaction of its change.
  public var createdAt: Date
  /// When the next attempt is due (pending ones).
  public var nextAttemptAt: Date
  /// Why the last attempt failed, in a sentence.
  public var lastError: String?
  /// The change it tells of. For a source event, a stand-in: the event's
  /// source, its kind's name as key, the episode's first example URL.
  public var change: RecordChange
  /// The source event it tells of (`source.unhealthy`, `source.recovered`),
  /// in place of a change; nil for a change's notification.
  public var event: SourceEvent?

  /// A notification as the outbox keeps it; each parameter has its property's meaning.
  public init(
    id: Int64, messageID: String, channel: String, state: NotificationState, attempts: Int, createdAt: Date,
    nextAttemptAt: Date, lastError: String?, change: RecordChange, event: SourceEvent? = nil
  ) {
    self.event = event
    self.id = id
    self.messageID = messageID
    self.channel = channel
    self.state = state
    self.attempts = attempts
    self.createdAt = createdAt
    self.nextAttemptAt = nextAttemptAt
    self.lastError = lastError
    self.change = change
  }
}

/// How a delivery attempt ended, as the outbox records it.
public enum NotificationSettlement: Sendable, Hashable {
  /// Accepted: never sent again.
  case delivered
  /// Failed; try again at this date.
  case retry(at: Date, error: String)
  /// Given up on, with the reason.
  case dead(error: String)
}

/// How many notifications are in each state.
public struct NotificationCounts: Sendable, Hashable {
  /// Notifications waiting for an attempt, accepted by a receiver, and given up on.
  public var pending = 0, delivered = 0, dead = 0
  /// Pending ones whose next attempt is due.
  public var due = 0
  /// Pending ones that failed at least once and wait for a retry.
  public var retrying = 0
  /// The earliest next attempt of a pending one.
  public var nextAttemptAt: Date?
  /// Counts of an empty outbox.
  public init() {}
}

/// What the store holds of one source (`forage status`).
public struct SourceStatistics: Sendable, Hashable, Codable {
  /// The source's name.
  public var name: String
  /// Current records (not removed).
  public var records = 0
  /// Records a completed crawl removed.
  public var removed = 0
  /// When a launch last saw any of its records: the age of its newest data.
  public var lastSeen: Date?
  /// Changes since the date asked.
  public var recentChanges = 0
  /// When its last crawl completed.
  public var lastCompletedCrawl: Date?

  /// Statistics of source `name` before anything is counted: all zero.
  public init(name: String) { self.name = name }
}

/// A channel that a receiver turned off (HTTP 410 Gone), kept until the
/// config points the channel somewhere else.
public struct DisabledChannel: Sendable, Hashable {
  /// The channel's name in the config.
  public var name: String
  /// The target the channel had when it was turned off (a webhook URL).
  public var target: String
  /// Why the receiver turned it off, in a sentence.
  public var reason: String
  /// When it was turned off.
  public var at: Date
  /// A channel `name` that was turned off at `at` while it delivered to `target`.
  public init(name: String, target: String, reason: String, at: Date) {
    self.name = name
    self.target = target
    self.reason = reason
    self.at = at
  }
}
