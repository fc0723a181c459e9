import Foundation
import ForageHTTP
import ForageStore

/// The store as the fetcher's ``RobotsArchive``: robots.txt answers kept across
/// launches. A store error reads as "nothing kept" and drops the answer (the
/// fetcher then asks the origin, as it would without an archive).
struct StoreRobotsArchive: RobotsArchive {
  let store: any Store
  /// Whose lease a robots.txt fetch is (the job's owner).
  let owner: String
  /// The job's clock, which a lease is asked on.
  let now: @Sendable () -> Date

  func robotsAnswer(origin: String) async -> RobotsAnswer? {
    guard let file = try? await store.robotsFile(origin: origin) else { return nil }
    let verdict: RobotsAnswer.Verdict
    switch file.verdict {
    case .rules: verdict = .rules
    case .allowAll: verdict = .allowAll
    case .disallowAll: verdict = .disallowAll
    }
    // A failure keeps its reason where a file would be (its body is empty).
    let failed = verdict == .disallowAll
    return RobotsAnswer(
      origin: file.origin, verdict: verdict, body: failed ? [] : file.body, fetchedAt: file.fetchedAt,
      expiresAt: file.expiresAt, failure: failed && !file.body.isEmpty ? String(decoding: file.body, as: UTF8.self) : nil)
  }

  /// A fleet's store elects one worker to download an origin's robots.txt;
  /// a store error reads as "fetch it yourself".
  func claimRobotsFetch(origin: String) async -> Bool {
    (try? await store.claimRobotsFetch(origin: origin, lease: Lease(owner: owner, for: .seconds(15), at: now()))) ?? true
  }

  func keepRobotsAnswer(_ answer: RobotsAnswer) async {
    let body = answer.verdict == .disallowAll ? Array((answer.failure ?? "").utf8) : answer.body
    // The store keeps its own copy of the verdicts (it does not depend on
    // ForageHTTP); the switches keep the two in step at compile time.
    let verdict: RobotsFile.Verdict
    switch answer.verdict {
    case .rules: verdict = .rules
    case .allowAll: verdict = .allowAll
    case .disallowAll: verdict = .disallowAll
    }
    try? await store.keepRobotsFile(
      RobotsFile(
        origin: answer.origin, verdict: verdict, body: body, fetchedAt: answer.fetchedAt,
        expiresAt: answer.expiresAt))
  }
}

/// The store as the fetcher's ``SharedHostBudget``: per-host politeness kept in
/// a shared store (a PostgreSQL fleet), its slots taken in bulk and handed out
/// by a ``HostTicketPool``. A store error reads as "busy": the fetcher asks
/// again, so a worker that lost its database stops sending requests rather
/// than ignoring the fleet's budget; once the store's calls have failed for
/// the pool's `failureLimit`, requests fail with the store's reason.
struct StoreHostBudget: SharedHostBudget {
  let pool: HostTicketPool

  init(store: any Store, owner: String, now: @escaping @Sendable () -> Date) {
    pool = HostTicketPool(
      take: { host, concurrency, delay, count, lease, returning in
        try await store.takeHostTickets(
          host: host, concurrency: concurrency, delay: delay, count: count,
          lease: Lease(owner: owner, for: lease, at: now()), returning: returning)
      },
      give: { tickets in try await store.release(.hostTicket, owner: owner, ids: tickets) })
  }

  func take(host: String, concurrency: Int, delay: Duration, lease: Duration) async throws -> Int64? {
    try await pool.take(host: host, concurrency: concurrency, delay: delay, lease: lease)
  }

  func give(host: String, ticket: Int64) async {
    await pool.give(host: host, ticket: ticket)
  }

  /// Gives back every ticket no request uses (see ``HostTicketPool/returnUnused()``).
  func returnUnused() async {
    await pool.returnUnused()
  }
}
