import Foundation
import ForageHTTP
import ForageStore
import ForageSupport

/// Delivers the outbox: each notable change's notifications, through the
/// config's channels, at least once.
///
///     let notifier = Notifier(config: config, store: store, transport: CurlTransport())
///     let report = try await notifier.deliverDue()       // what is due now, then return
///
/// A notification is claimed (with a lease), sent, then settled: delivered,
/// retried later with exponential backoff and jitter (or at the receiver's
/// `Retry-After`), or dead once older than its channel's `maxAge` (kept,
/// shown by `forage notify` and `forage status`, never dropped silently). A
/// process killed between sending and settling leaves the claim, which the
/// next process releases: the notification goes again with the same id.
/// Channels deliver side by side; one that hangs holds up only itself, for
/// at most its `timeout`.
public final class Notifier: Sendable {
  let store: any Store
  let channels: [String: (settings: NotifyChannel, delivery: any DeliveryChannel)]
  let owner: String
  /// The wait before the first retry (later ones double it).
  let firstRetry: Duration
  /// The clock of the outbox's dates (due, age): the wall clock, or a
  /// simulator's virtual one. Timeouts run on real time.
  let now: @Sendable () -> Date

  /// - Parameters:
  ///   - directory: the config file's folder, for relative `file` paths
  ///     (default: the config's own `directory`).
  ///   - environment: where webhook secrets are read (`secretEnv`).
  ///   - firstRetry: about how long the first retry waits; each later one
  ///     waits twice as long as the one before, up to
  ///     ``EngineDefaults/notifyLongestRetry``.
  ///   - now: the clock of the outbox's dates (a simulator passes its own).
  ///   - localNotifications: what shows the `local` channel's notifications
  ///     (an iOS app's `ForageBackgroundTasks`); nil where there is none.
  public init(
    config: ForageConfig, store: any Store, transport: any Transport, directory: String? = nil,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    firstRetry: Duration = EngineDefaults.notifyFirstRetry, now: @escaping @Sendable () -> Date = { Date() },
    localNotifications: (any LocalNotificationPresenter)? = nil
  ) {
    self.now = now
    self.store = store
    self.firstRetry = firstRetry
    var channels: [String: (NotifyChannel, any DeliveryChannel)] = [:]
    for channel in config.notify {
      channels[channel.name] = (
        channel,
        channel.deliveryChannel(
          transport: transport, directory: directory ?? config.directory, environment: environment,
          localNotifications: localNotifications)
      )
    }
    self.channels = channels
    self.owner = "notify-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
  }

  /// What a round of delivery did.
  public struct Report: Sendable, Hashable {
    /// Notifications a receiver accepted.
    public var delivered = 0
    /// Attempts that failed; those notifications wait for a retry.
    public var failed = 0
    /// Notifications given up on (too old, channel gone or turned off).
    public var dead = 0
    /// One sentence per failure or death, in order (secrets never appear).
    public var problems: [String] = []

    /// An empty report: nothing delivered, failed or dead.
    public init() {}

    /// Adds another round's figures to these.
    public mutating func add(_ other: Report) {
      delivered += other.delivered
      failed += other.failed
      dead += other.dead
      problems += other.problems
    }
  }

  /// Delivers every notification due now, round after round, until none is
  /// due. Retries whose backoff has not passed wait for a later call.
  /// Cancelling the calling task stops at once: what was not settled goes
  /// again later with the same id.
  ///
  /// - Throws: store errors.
  @discardableResult
  public func deliverDue() async throws -> Report {
    try await deliverDue(startingNew: { true })
  }

  /// ``deliverDue()``, starting no new attempt once `mayStart` returns false
  /// (a launch asked to stop): the attempts in flight go on (until the
  /// calling task is cancelled); what was claimed and not sent is released,
  /// unchanged, for a later round.
  func deliverDue(startingNew mayStart: @escaping @Sendable () -> Bool) async throws -> Report {
    var report = Report()
    // Claims not settled are released on the way out: awaited below, or
    // (a store error thrown mid-round) behind the caller's back.
    var released = false
    defer { if !released { releaseClaimsDetached() } }
    while !Task.isCancelled && mayStart() {
      // Read each round: a 410 in the last one turned a channel off.
      let disabled = try await currentDisabledChannels()
      let now = self.now()
      let due = try await store.claimNotifications(
        limit: NotifierDefaults.claimBatch, lease: Lease(owner: owner, for: .seconds(leaseSeconds), at: now))
      if due.isEmpty { break }
      report.add(try await deliver(due, disabled: disabled, mayStart: mayStart))
    }
    try await store.release(.notification, owner: owner)
    released = true
    return report
  }

  /// Sends one sample notification through `channel` (`forage notify
  /// --test`); no store is involved.
  ///
  /// - Parameter directory: the config file's folder, for a relative file path.
  /// - Returns: nil when it was delivered, else why not (a sentence).
  public static func sendTest(
    _ channel: NotifyChannel, transport: any Transport, directory: String?,
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) async -> String? {
    let delivery = channel.deliveryChannel(transport: transport, directory: directory, environment: environment)
    let sample = NotificationPayload.sample(channel: channel.name, at: Date())
    let body = Array(NotificationPayload.document(id: sample.id, change: sample.change).serialized().utf8)
    switch await delivery.deliver(body, messageID: sample.id, at: Date()) {
    case .delivered: return nil
    case .failed(let why, _): return why
    case .gone(let why): return why
    }
  }

  // MARK: One round

  /// The lease of a claim: long enough for the slowest channel's attempt.
  var leaseSeconds: Double {
    let longest = channels.values.map(\.settings.timeout).max() ?? EngineDefaults.notifyTimeout
    return longest.seconds * 2 + 60
  }

  /// Disabled channels that are still off: a channel whose target changed
  /// since a receiver turned it off is on again.
  func currentDisabledChannels() async throws -> [String: DisabledChannel] {
    var off: [String: DisabledChannel] = [:]
    for entry in try await store.disabledChannels() {
      if let channel = channels[entry.name], channel.settings.targetText != entry.target {
        try await store.setDisabledChannel(nil, name: entry.name)
      } else {
        off[entry.name] = entry
      }
    }
    return off
  }

  func deliver(
    _ due: [OutboxNotification], disabled: [String: DisabledChannel],
    mayStart: @escaping @Sendable () -> Bool = { true }
  ) async throws -> Report {
    var report = Report()
    var byChannel: [String: [OutboxNotification]] = [:]
    let now = self.now()
    for n in due {
      guard let channel = channels[n.channel] else {
        try await settle(n, .dead(error: "the config has no channel named \"\(n.channel)\" any more"), &report)
        continue
      }
      if let off = disabled[n.channel] {
        try await settle(n, .dead(error: "the channel is off: \(off.reason); it comes back on when its target changes"), &report)
        continue
      }
      if now.timeIntervalSince(n.createdAt) > channel.settings.maxAge.seconds {
        let last = n.lastError.map { "; the last attempt: \($0)" } ?? ""
        try await settle(
          n, .dead(error: "not delivered within \(Units.format(channel.settings.maxAge))\(last)"), &report)
        continue
      }
      byChannel[n.channel, default: []].append(n)
    }
    // Channels side by side; within one channel, in order.
    let results = await withTaskGroup(of: [(OutboxNotification, DeliveryResult)].self) { group in
      for (name, items) in byChannel {
        let channel = channels[name]!
        group.addTask { await Self.send(items, through: channel.settings, channel.delivery, mayStart: mayStart) }
      }
      var all: [(OutboxNotification, DeliveryResult)] = []
      for await part in group { all += part }
      return all
    }
    for (n, result) in results.sorted(by: { $0.0.id < $1.0.id }) {
      switch result {
      case .delivered:
        try await settle(n, .delivered, &report)
      case .failed(let why, let retryAfter):
        if Task.isCancelled { continue }  // abandoned, not failed: the claim is released
        let delay = retryAfter ?? Self.backoff(attempt: n.attempts, first: firstRetry)
        try await settle(n, .retry(at: self.now().addingTimeInterval(delay.seconds), error: why), &report)
      case .gone(let why):
        let channel = channels[n.channel]!.settings
        try await store.setDisabledChannel(
          DisabledChannel(name: n.channel, target: channel.targetText, reason: why, at: self.now()), name: n.channel)
        try await settle(n, .dead(error: "\(why): the channel is off until its target changes"), &report)
      }
    }
    return report
  }

  /// Sends `items` through one channel: one at a time, or as one batch when
  /// the channel batches. Starts no attempt after cancellation or once
  /// `mayStart` returns false; the items not sent have no result.
  static func send(
    _ items: [OutboxNotification], through settings: NotifyChannel, _ channel: any DeliveryChannel,
    mayStart: @Sendable () -> Bool = { true }
  ) async -> [(OutboxNotification, DeliveryResult)] {
    if Task.isCancelled || !mayStart() { return [] }
    if settings.batch && items.count > 1 {
      let id = NotificationPayload.batchID(items.map(\.messageID))
      let body = Array(NotificationPayload.batch(id: id, items).serialized().utf8)
      let result = await channel.deliver(body, messageID: id, at: Date())
      return items.map { ($0, result) }
    }
    var out: [(OutboxNotification, DeliveryResult)] = []
    for n in items {
      if Task.isCancelled || !mayStart() { break }
      let body = Array(NotificationPayload.document(n).serialized().utf8)
      let result = await channel.deliver(body, messageID: n.messageID, at: Date())
      out.append((n, result))
      // A receiver that is down fails the rest too: they wait for the retry.
      if case .failed(let why, let after) = result {
        for rest in items.dropFirst(out.count) { out.append((rest, .failed(why, retryAfter: after))) }
        break
      }
      if case .gone = result {
        for rest in items.dropFirst(out.count) { out.append((rest, result)) }
        break
      }
    }
    return out
  }

  func settle(_ n: OutboxNotification, _ settlement: NotificationSettlement, _ report: inout Report) async throws {
    try await store.settleNotification(n.id, settlement, now: now())
    switch settlement {
    case .delivered:
      report.delivered += 1
    case .retry(_, let error):
      report.failed += 1
      report.problems.append("\(n.channel): \(error)")
    case .dead(let error):
      report.dead += 1
      report.problems.append("\(n.channel): \(error)")
    }
  }

  /// The wait before retry `attempt + 1`: the first retry after about
  /// `first`, each later one twice as long, at most
  /// ``EngineDefaults/notifyLongestRetry``, each drawn between half and all of
  /// that (jitter, so that many notifications failing together do not all
  /// come back at once).
  static func backoff(
    attempt: Int, first: Duration = EngineDefaults.notifyFirstRetry, random: Double = Double.random(in: 0.5...1)
  ) -> Duration {
    let first = first.seconds
    let cap = EngineDefaults.notifyLongestRetry.seconds
    let full = min(cap, first * pow(2, Double(min(max(attempt, 0), 30))))
    return .milliseconds(Int64(full * random * 1000))
  }

  /// Releases this notifier's claims without waiting (after a thrown error).
  private func releaseClaimsDetached() {
    let store = self.store
    let owner = self.owner
    Task.detached { try? await store.release(.notification, owner: owner) }
  }
}

/// The notifier's fixed numbers.
enum NotifierDefaults {
  /// Notifications claimed per round.
  static let claimBatch = 64
}
