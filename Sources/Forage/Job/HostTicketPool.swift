import Foundation

/// A worker's share of the fleet's per-host request slots, taken from the
/// store in bulk and handed out locally, so that a request start does not
/// wait for a round trip to the database.
///
/// Without a per-host delay, one call to the store takes as many of the
/// host's slots as this worker may use at once (at most its fair share: the
/// store decides), and each is reused for request after request until its
/// hold passes; then it goes back to the store, so that the other workers
/// of the fleet get their share again. Tickets this worker is done with are
/// given back in its next call, or shortly after in one call of their own.
/// With a delay, each start is a ticket of its own, taken from the store
/// (which spaces the fleet's starts) and given back when its request ends.
///
/// A call that brings nothing (the worker has its fair share, or the host's
/// slots are all taken) is not repeated for a while: requests meanwhile hear
/// "busy" without a round trip, `refusalBackoff` after a first refusal,
/// twice as long after each next one, at most `maxRefusalBackoff` (under a
/// second, so that the store still counts this worker among the host's
/// waiters). Before, each refused request asked again every 20 ms: with
/// three workers sharing a host, a call every 20 ms a worker, a sixth of the
/// server's statement time in the fleet benchmark.
///
/// A call that fails (the store's error) backs off the same way, and the
/// request hears "busy"; once calls have failed for `failureLimit` in a row,
/// ``take(host:concurrency:delay:lease:)`` throws ``Unavailable`` instead,
/// naming the store's error, so that the request fails with that reason
/// rather than waiting for its deadline (a run without one, for ever: a
/// worker whose ticket calls kept failing once made no progress for ten
/// minutes, and said nothing).
///
/// A killed worker's tickets come back when their lease on the store passes
/// (the request's lease plus the hold).
actor HostTicketPool {
  /// The fleet's request slots could not be asked for: the store's calls
  /// have failed for longer than the pool waits.
  struct Unavailable: Error, CustomStringConvertible, CustomDebugStringConvertible {
    /// The host whose request needed a slot.
    let host: String
    /// How long calls have failed in a row.
    let failingFor: Duration
    /// The store's last error.
    let error: any Error

    var description: String {
      "the fleet's store did not hand out request slots for \(host) for \(Units.format(failingFor)): \(error)"
    }
    var debugDescription: String { String(reflecting: error) }
  }

  /// One call to the store: takes up to `count` tickets, giving back `returning` first.
  typealias Take = @Sendable (
    _ host: String, _ concurrency: Int, _ delay: Duration, _ count: Int, _ lease: Duration, _ returning: [Int64]
  ) async throws -> [Int64]
  /// One call to the store: gives `tickets` back.
  typealias Give = @Sendable (_ tickets: [Int64]) async throws -> Void

  /// How long a ticket taken in bulk is reused before it goes back.
  let hold: Duration
  /// How long tickets given back wait for others to share their call.
  let flushDelay: Duration
  /// How long after a call that brought nothing the next one waits, at first.
  let refusalBackoff: Duration
  /// The longest wait after calls that brought nothing.
  let maxRefusalBackoff: Duration
  /// How long calls may fail in a row before requests hear ``Unavailable``.
  let failureLimit: Duration
  private let takeFromStore: Take
  private let giveToStore: Give
  private let clock = ContinuousClock()
  private var hosts: [String: Host] = [:]
  /// When the calls failing now began to fail (nil while they succeed), and the last error.
  private var failingSince: ContinuousClock.Instant?
  private var lastFailure: (any Error)?

  /// One host's tickets in this worker.
  private struct Host {
    /// Tickets not in use, reusable until their hold passes.
    var free: [(id: Int64, holdUntil: ContinuousClock.Instant)] = []
    /// Tickets of requests in flight, with the end of their hold.
    var inUse: [Int64: ContinuousClock.Instant] = [:]
    /// Tickets to give back in the next call.
    var returning: [Int64] = []
    var flushScheduled = false
    /// True while a call to the store for this host is in flight.
    var calling = false
    /// Requests waiting for that call's tickets.
    var waiting: [CheckedContinuation<Void, Never>] = []
    /// Calls in a row that brought nothing, and until when the next one waits.
    var refusals = 0
    var refusedUntil: ContinuousClock.Instant?
  }

  /// Ends a call to the store: the requests that waited for it look at the free tickets.
  private func wakeWaiting(_ host: String) {
    guard var entry = hosts[host] else { return }
    entry.calling = false
    let waiting = entry.waiting
    entry.waiting = []
    hosts[host] = entry
    for continuation in waiting { continuation.resume() }
  }

  init(
    hold: Duration = .seconds(2), flushDelay: Duration = .milliseconds(100),
    refusalBackoff: Duration = .milliseconds(20), maxRefusalBackoff: Duration = .milliseconds(640),
    failureLimit: Duration = .seconds(30), take: @escaping Take, give: @escaping Give
  ) {
    self.hold = hold
    self.flushDelay = flushDelay
    self.refusalBackoff = refusalBackoff
    self.maxRefusalBackoff = maxRefusalBackoff
    self.failureLimit = failureLimit
    self.takeFromStore = take
    self.giveToStore = give
  }

  /// A ticket for one request to `host`, or nil when the fleet's budget for
  /// it is spent now (ask again shortly). A store error reads as nil, and
  /// the next call waits as after a refusal.
  ///
  /// - Throws: ``Unavailable`` once the store's calls have failed for
  ///   `failureLimit` in a row (until one succeeds).
  func take(host: String, concurrency: Int, delay: Duration, lease: Duration) async throws(Unavailable) -> Int64? {
    // One call to the store per host at a time: requests starting meanwhile
    // share what it brings, or come back shortly when it brought nothing.
    if delay == .zero, hosts[host]?.calling == true {
      await withCheckedContinuation { hosts[host]!.waiting.append($0) }
      guard hosts[host]?.free.isEmpty == false else {
        try checkFailures(host, now: clock.now)
        return nil
      }
    }
    let now = clock.now
    var entry = hosts[host] ?? Host()
    retireFree(&entry, now: now)
    if delay == .zero, let ticket = entry.free.popLast() {
      entry.inUse[ticket.id] = ticket.holdUntil
      hosts[host] = entry
      return ticket.id
    }
    // Refused a moment ago: busy, without asking again yet.
    if let until = entry.refusedUntil, now < until, delay == .zero || failingSince != nil {
      hosts[host] = entry
      try checkFailures(host, now: now)
      return nil
    }
    let count = delay == .zero ? max(1, concurrency - entry.inUse.count) : 1
    let returning = entry.returning
    entry.returning = []
    hosts[host] = entry
    if delay == .zero { hosts[host, default: Host()].calling = true }
    let answer: Result<[Int64], any Error>
    do {
      answer = .success(try await takeFromStore(host, concurrency, delay, count, lease + hold, returning))
    } catch {
      answer = .failure(error)
    }
    defer { if delay == .zero { wakeWaiting(host) } }
    let granted: [Int64]
    switch answer {
    case .failure(let error):
      hosts[host, default: Host()].returning += returning
      failingSince = failingSince ?? now
      lastFailure = error
      refused(host, at: now)
      try checkFailures(host, now: clock.now)
      return nil
    case .success(let tickets):
      granted = tickets
      failingSince = nil
      lastFailure = nil
    }
    guard let first = granted.first else {
      if delay == .zero { refused(host, at: now) }
      return nil
    }
    hosts[host, default: Host()].refusals = 0
    hosts[host, default: Host()].refusedUntil = nil
    // A ticket with a delay is one start: it is never reused.
    let holdUntil = delay == .zero ? now + hold : now
    hosts[host, default: Host()].inUse[first] = holdUntil
    if granted.count > 1 {
      hosts[host, default: Host()].free += granted.dropFirst().map { ($0, holdUntil) }
      Task { [clock] in
        try? await clock.sleep(until: holdUntil)
        await self.retireAndFlush(host)
      }
    }
    return first
  }

  /// Throws ``Unavailable`` when the store's calls have failed for `failureLimit` by `now`.
  private func checkFailures(_ host: String, now: ContinuousClock.Instant) throws(Unavailable) {
    guard let since = failingSince, let error = lastFailure, now - since >= failureLimit else { return }
    throw Unavailable(host: host, failingFor: now - since, error: error)
  }

  /// Notes a call for `host`, made at `now`, that brought nothing (or failed): the next
  /// one waits, longer after each refusal in a row.
  private func refused(_ host: String, at now: ContinuousClock.Instant) {
    var entry = hosts[host] ?? Host()
    var wait = refusalBackoff
    for _ in 0..<entry.refusals where wait < maxRefusalBackoff { wait *= 2 }
    entry.refusals += 1
    entry.refusedUntil = now + min(wait, maxRefusalBackoff)
    hosts[host] = entry
  }

  /// Ends a request's use of `ticket`: kept for the next request while its
  /// hold lasts, given back to the store otherwise.
  func give(host: String, ticket: Int64) async {
    guard let holdUntil = hosts[host]?.inUse.removeValue(forKey: ticket) else { return }
    let now = clock.now
    if now < holdUntil {
      hosts[host]!.free.append((ticket, holdUntil))
      // A host with nothing in flight gives its unused tickets back soon:
      // this worker may be done with it.
      if hosts[host]!.inUse.isEmpty { scheduleFlush(host) }
    } else {
      hosts[host]!.returning.append(ticket)
      scheduleFlush(host)
    }
  }

  /// Moves the free tickets whose hold passed to those to give back.
  private func retireFree(_ entry: inout Host, now: ContinuousClock.Instant) {
    guard entry.free.contains(where: { $0.holdUntil <= now }) else { return }
    entry.returning += entry.free.filter { $0.holdUntil <= now }.map(\.id)
    entry.free.removeAll { $0.holdUntil <= now }
  }

  private func retireAndFlush(_ host: String) async {
    guard var entry = hosts[host] else { return }
    retireFree(&entry, now: clock.now)
    hosts[host] = entry
    await flush(host)
  }

  private func scheduleFlush(_ host: String) {
    guard hosts[host]?.flushScheduled == false else { return }
    hosts[host]!.flushScheduled = true
    Task { [clock, flushDelay] in
      try? await clock.sleep(for: flushDelay)
      await self.flush(host)
    }
  }

  /// Gives back at once, one call per host, every ticket no request uses: a
  /// launch that ends calls it, so that the fleet's next worker does not
  /// wait for their leases (a worker that exited within the flush delay of
  /// its last request left the host's slots taken, and the next launch on
  /// the fleet waited about half a minute for them).
  func returnUnused() async {
    for host in Array(hosts.keys) { await flush(host) }
  }

  /// Gives back the tickets waiting to go, and the free ones too when the
  /// host has no request in flight, in one call.
  private func flush(_ host: String) async {
    guard var entry = hosts[host] else { return }
    entry.flushScheduled = false
    if entry.inUse.isEmpty {
      entry.returning += entry.free.map(\.id)
      entry.free = []
    }
    let tickets = entry.returning
    entry.returning = []
    hosts[host] = entry
    guard !tickets.isEmpty else { return }
    do {
      try await giveToStore(tickets)
    } catch {
      // Their leases free them on the store in any case.
    }
  }
}
