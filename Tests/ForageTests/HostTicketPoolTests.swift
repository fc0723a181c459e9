import Foundation
import Testing

@testable import Forage

/// A worker hands out the fleet's per-host request slots locally: one call to
/// the store takes several, and a request start waits for no round trip
/// (issue 27: a call per request was 40% of the PostgreSQL server's time).
struct HostTicketPoolTests {
  /// A store's side of the pool: counts calls, hands out numbered tickets up
  /// to `concurrency` held at once, and records what comes back.
  actor FakeStore {
    var takes = 0
    var gives = 0
    var held: Set<Int64> = []
    var returned: [Int64] = []
    private var next: Int64 = 1

    func take(concurrency: Int, delay: Duration, count: Int, returning: [Int64]) -> [Int64] {
      takes += 1
      give(returning)
      let grant = min(count, concurrency - held.count, delay == .zero ? .max : 1)
      guard grant > 0 else { return [] }
      let tickets = (0..<Int64(grant)).map { next + $0 }
      next += Int64(grant)
      held.formUnion(tickets)
      return tickets
    }

    func give(_ tickets: [Int64]) {
      if !tickets.isEmpty { gives += 1 }
      held.subtract(tickets)
      returned += tickets
    }
  }

  /// A pool on `store`, whose calls take `latency` (a round trip) each.
  func pool(
    _ store: FakeStore, hold: Duration, flushDelay: Duration = .milliseconds(10), latency: Duration = .zero
  ) -> HostTicketPool {
    HostTicketPool(
      hold: hold, flushDelay: flushDelay,
      take: { _, concurrency, delay, count, _, returning in
        if latency > .zero { try? await Task.sleep(for: latency) }
        return await store.take(concurrency: concurrency, delay: delay, count: count, returning: returning)
      },
      give: { tickets in await store.give(tickets) })
  }

  /// Waits until `condition` holds, for up to ten seconds (the pool's
  /// background returns run on real time; the bound only stops a broken pool).
  func eventually(_ condition: () async -> Bool) async throws {
    let end = ContinuousClock.now + .seconds(10)
    while await !condition(), ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(5)) }
  }

  @Test func test_issue27_manyRequestsToAHost_takeItsSlotsInOneCallToTheStore() async throws {
    let store = FakeStore()
    let pool = pool(store, hold: .seconds(3600))
    let host = "http://example.com"
    // Four requests in flight at once, two hundred in all.
    var inFlight: [Int64] = []
    for _ in 0..<4 {
      inFlight.append(try #require(try await pool.take(host: host, concurrency: 4, delay: .zero, lease: .seconds(30))))
    }
    #expect(Set(inFlight).count == 4)
    #expect(try await pool.take(host: host, concurrency: 4, delay: .zero, lease: .seconds(30)) == nil, "all four in use")
    for round in 0..<196 {
      await pool.give(host: host, ticket: inFlight[round % 4])
      inFlight[round % 4] = try #require(try await pool.take(host: host, concurrency: 4, delay: .zero, lease: .seconds(30)))
    }
    // One call took the four tickets; the refused fifth request asked once more.
    #expect(await store.takes == 2)
    #expect(await store.held.count == 4)
  }

  /// A pool whose calls that bring nothing are not repeated for `backoff` (at first and at most).
  func pool(_ store: FakeStore, refusalBackoff backoff: Duration) -> HostTicketPool {
    HostTicketPool(
      hold: .seconds(3600), refusalBackoff: backoff, maxRefusalBackoff: backoff,
      take: { _, concurrency, delay, count, _, returning in
        await store.take(concurrency: concurrency, delay: delay, count: count, returning: returning)
      },
      give: { tickets in await store.give(tickets) })
  }

  /// A call that brought nothing is not repeated at once: requests meanwhile
  /// hear "busy" from the pool alone (each asked the store before).
  @Test func test_issue27_aRefusedCall_isNotRepeatedWhileItsBackoffLasts() async throws {
    let store = FakeStore()
    // Another worker holds the host's only slot.
    let others = await store.take(concurrency: 1, delay: .zero, count: 1, returning: [])
    let pool = pool(store, refusalBackoff: .seconds(3600))
    let host = "http://example.com"
    for _ in 0..<50 { #expect(try await pool.take(host: host, concurrency: 1, delay: .zero, lease: .seconds(30)) == nil) }
    #expect(await store.takes == 2, "the other worker's call and one refused call; none for the 49 after it")
    // The slot is free again, but the backoff has an hour to go.
    await store.give(others)
    #expect(try await pool.take(host: host, concurrency: 1, delay: .zero, lease: .seconds(30)) == nil)
    #expect(await store.takes == 2)
  }

  /// After the backoff, the next request asks the store again and gets the slot freed meanwhile.
  @Test func test_issue27_afterItsBackoff_aRefusedHostIsAskedAgain() async throws {
    let store = FakeStore()
    let others = await store.take(concurrency: 1, delay: .zero, count: 1, returning: [])
    let pool = pool(store, refusalBackoff: .milliseconds(10))
    let host = "http://example.com"
    #expect(try await pool.take(host: host, concurrency: 1, delay: .zero, lease: .seconds(30)) == nil)
    await store.give(others)
    try await Task.sleep(for: .milliseconds(50))
    #expect(try await pool.take(host: host, concurrency: 1, delay: .zero, lease: .seconds(30)) != nil)
    #expect(await store.takes == 3)
  }

  /// A store whose ticket calls fail while `failing` is true, counting them.
  actor FailingStore {
    var failing = true
    var calls = 0
    func take() throws -> [Int64] {
      calls += 1
      if failing { throw FakeFailure() }
      return [Int64(calls)]
    }
    func recover() { failing = false }
  }

  struct FakeFailure: Error, CustomStringConvertible {
    var description: String { "the server refused a statement" }
  }

  /// A pool on `store` that backs off `backoff` after a failed call and gives up after `limit`.
  func pool(_ store: FailingStore, backoff: Duration, limit: Duration) -> HostTicketPool {
    HostTicketPool(
      hold: .seconds(3600), refusalBackoff: backoff, maxRefusalBackoff: backoff, failureLimit: limit,
      take: { _, _, _, _, _, _ in try await store.take() }, give: { _ in })
  }

  /// A failing store is not asked again at once (the refusal backoff), and
  /// once its calls have failed for the limit, a request hears why instead
  /// of "busy" (a worker once polled a failing store for ten minutes, silently).
  @Test func test_issue27_ticketCallsThatKeepFailing_backOff_thenFailTheRequestWithTheStoresReason() async throws {
    let store = FailingStore()
    let pool = pool(store, backoff: .milliseconds(40), limit: .milliseconds(300))
    let host = "http://example.com"
    let start = ContinuousClock.now
    var busy = 0
    var unavailable: HostTicketPool.Unavailable?
    while unavailable == nil, ContinuousClock.now - start < .seconds(10) {
      do {
        #expect(try await pool.take(host: host, concurrency: 4, delay: .zero, lease: .seconds(30)) == nil)
        busy += 1
      } catch {
        unavailable = error
      }
      try await Task.sleep(for: .milliseconds(2))
    }
    let error = try #require(unavailable, "the requests kept hearing busy from a failing store")
    #expect(ContinuousClock.now - start >= .milliseconds(300))
    #expect(error.description.contains("example.com"), "\(error)")
    #expect(error.description.contains("the server refused a statement"), "\(error)")
    let calls = await store.calls
    // Polled every 2 ms for at least 300 ms, the store was asked about once per 40 ms.
    #expect(busy > 3 * calls, "\(busy) requests heard busy, \(calls) calls to the store")
    #expect(calls >= 2)
    // While the backoff lasts, the next request hears the reason at once, without a call.
    await #expect(throws: HostTicketPool.Unavailable.self) {
      try await pool.take(host: host, concurrency: 4, delay: .zero, lease: .seconds(30))
    }
    #expect(await store.calls == calls)
    // The store answers again: after the backoff, requests get tickets.
    await store.recover()
    try await Task.sleep(for: .milliseconds(60))
    #expect(try await pool.take(host: host, concurrency: 4, delay: .zero, lease: .seconds(30)) != nil)
  }

  @Test func test_issue27_requestsStartingTogether_shareOneCallToTheStore() async throws {
    let store = FakeStore()
    // Each call to the store takes a while, so the requests start while it is on its way.
    let pool = pool(store, hold: .seconds(3600), latency: .milliseconds(50))
    let tickets = await withTaskGroup(of: Int64?.self) { group in
      for _ in 0..<8 {
        group.addTask { (try? await pool.take(host: "http://example.com", concurrency: 8, delay: .zero, lease: .seconds(30))) ?? nil }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(Set(tickets.compactMap { $0 }).count == 8, "\(tickets)")
    #expect(await store.takes == 1)
  }

  @Test func test_issue27_ticketsGoBackWhenTheirHoldPasses_soOtherWorkersGetTheirShare() async throws {
    let store = FakeStore()
    let pool = pool(store, hold: .milliseconds(30))
    let host = "http://example.com"
    let first = try #require(try await pool.take(host: host, concurrency: 3, delay: .zero, lease: .seconds(30)))
    #expect(await store.held.count == 3, "the worker took the host's three slots")
    try await eventually { await store.held.count == 1 }
    // The two unused ones went back when the hold passed; the one in use goes
    // back when its request ends, since its hold is over.
    #expect(await store.held == [first])
    await pool.give(host: host, ticket: first)
    try await eventually { await store.held.isEmpty }
    #expect(await store.held.isEmpty)
    #expect(await store.returned.count == 3)
  }

  @Test func test_issue27_aHostWithADelay_takesOneStartPerRequest_andNeverReusesIt() async throws {
    let store = FakeStore()
    let pool = pool(store, hold: .seconds(3600))
    let host = "http://slow.example"
    let one = try #require(try await pool.take(host: host, concurrency: 4, delay: .seconds(1), lease: .seconds(30)))
    await pool.give(host: host, ticket: one)
    let two = try #require(try await pool.take(host: host, concurrency: 4, delay: .seconds(1), lease: .seconds(30)))
    #expect(one != two)
    #expect(await store.takes == 2, "each start asked the store, which spaces the fleet's starts")
    await pool.give(host: host, ticket: two)
    try await eventually { await store.held.isEmpty }
    #expect(await store.held.isEmpty)
  }

  /// Issue 27: a launch that ends gives back every slot it holds at once,
  /// not after the flush delay: a worker that exited within that delay of
  /// its last request left the host's slots taken in the store, and the
  /// fleet's next launch waited about half a minute (their leases) to fetch.
  @Test func test_issue27_returnUnused_givesEveryFreeTicketBackAtOnce() async throws {
    let store = FakeStore()
    // A flush delay no test waits for: only returnUnused can give them back.
    let pool = pool(store, hold: .seconds(3600), flushDelay: .seconds(3600))
    // (The fake store counts one budget over all hosts: b's allows 4 more.)
    for (host, concurrency) in [("http://a.example", 4), ("http://b.example", 8)] {
      let ticket = try #require(try await pool.take(host: host, concurrency: concurrency, delay: .zero, lease: .seconds(30)))
      await pool.give(host: host, ticket: ticket)
    }
    #expect(await store.held.count == 8)
    await pool.returnUnused()
    #expect(await store.held.isEmpty)
    #expect(await store.gives == 2, "one call per host")
  }

  @Test func test_issue27_aHostWithNothingInFlight_givesItsUnusedTicketsBack() async throws {
    let store = FakeStore()
    let pool = pool(store, hold: .seconds(3600))
    let host = "http://example.com"
    let ticket = try #require(try await pool.take(host: host, concurrency: 5, delay: .zero, lease: .seconds(30)))
    #expect(await store.held.count == 5)
    await pool.give(host: host, ticket: ticket)
    try await eventually { await store.held.isEmpty }
    #expect(await store.held.isEmpty, "a worker done with a host keeps none of its slots")
  }
}
