import Testing

@testable import ForageHTTP

@Suite struct HostSlotTests {
  let t0 = ContinuousClock.now

  @Test func test_concurrencyLimit_reportsFull() {
    var slot = HostSlot(concurrency: 2, minDelay: .zero)
    #expect(slot.admission(now: t0) == .start)
    slot.started(now: t0)
    slot.started(now: t0)
    #expect(slot.admission(now: t0) == .full)
    slot.finished(now: t0, elapsed: .milliseconds(10), outcome: .response(status: 200))
    #expect(slot.admission(now: t0 + .seconds(1)) == .start)
  }

  @Test func test_minDelay_spacesStarts() {
    var slot = HostSlot(concurrency: 4, minDelay: .milliseconds(500), adaptive: false)
    slot.started(now: t0)
    #expect(slot.admission(now: t0 + .milliseconds(100)) == .wait(until: t0 + .milliseconds(500)))
    #expect(slot.admission(now: t0 + .milliseconds(500)) == .start)
  }

  @Test func test_adaptiveDelay_followsLatency_withinBounds() {
    var slot = HostSlot(concurrency: 1, minDelay: .milliseconds(100), maxDelay: .seconds(10))
    var now = t0
    for _ in 0..<20 {
      slot.started(now: now)
      now += .seconds(2)
      slot.finished(now: now, elapsed: .seconds(2), outcome: .response(status: 200))
    }
    // Converges toward latency / targetConcurrency = 2 s.
    #expect(slot.delay > .milliseconds(1900) && slot.delay <= .seconds(2))
    #expect(slot.expectedLatency == .seconds(2))
    for _ in 0..<40 {
      slot.started(now: now)
      now += .milliseconds(1)
      slot.finished(now: now, elapsed: .milliseconds(1), outcome: .response(status: 200))
    }
    #expect(slot.delay >= .milliseconds(100) && slot.delay < .milliseconds(101))
  }

  @Test func test_errorStatuses_neverShortenTheDelay() {
    var slot = HostSlot(concurrency: 1, minDelay: .milliseconds(100))
    slot.started(now: t0)
    slot.finished(now: t0, elapsed: .seconds(1), outcome: .response(status: 200))
    let before = slot.delay
    slot.started(now: t0)
    slot.finished(now: t0, elapsed: .milliseconds(1), outcome: .response(status: 404))
    #expect(slot.delay >= before)
  }

  @Test func test_throttled_honoursRetryAfter_thenRecoversGradually() {
    var slot = HostSlot(concurrency: 2, minDelay: .milliseconds(100), maxDelay: .seconds(60))
    slot.started(now: t0)
    slot.finished(now: t0, elapsed: .milliseconds(50), outcome: .throttled(retryAfter: .seconds(5)))
    #expect(slot.delay >= .seconds(5))
    #expect(slot.admission(now: t0 + .seconds(1)) == .wait(until: t0 + .seconds(5)))
    var now = t0 + .seconds(5)
    var delays: [Duration] = []
    for _ in 0..<5 {
      if case .wait(let until) = slot.admission(now: now) { now = until }
      #expect(slot.admission(now: now) == .start)
      slot.started(now: now)
      slot.finished(now: now, elapsed: .milliseconds(50), outcome: .response(status: 200))
      delays.append(slot.delay)
    }
    // Each success halves the distance to the target: gradual, monotonic.
    #expect(delays == delays.sorted(by: >))
    #expect(delays.first! > .seconds(2))
    #expect(delays.last! < .seconds(1))
  }

  @Test func test_throttled_withoutRetryAfter_doublesTheDelay() {
    var slot = HostSlot(concurrency: 1, minDelay: .seconds(1), maxDelay: .seconds(3))
    slot.started(now: t0)
    slot.finished(now: t0, elapsed: .zero, outcome: .throttled(retryAfter: nil))
    #expect(slot.delay == .seconds(2))
    slot.started(now: t0)
    slot.finished(now: t0, elapsed: .zero, outcome: .throttled(retryAfter: nil))
    #expect(slot.delay == .seconds(3))  // capped
  }

  @Test func test_crawlDelay_raisesTheMinimum() {
    var slot = HostSlot(concurrency: 1, minDelay: .milliseconds(100))
    slot.raiseMinDelay(to: .seconds(2))
    #expect(slot.delay == .seconds(2))
    slot.started(now: t0)
    slot.finished(now: t0, elapsed: .milliseconds(1), outcome: .response(status: 200))
    #expect(slot.delay == .seconds(2))
  }

  @Test func test_abandoned_freesTheSlotWithoutLearning() {
    var slot = HostSlot(concurrency: 1, minDelay: .zero)
    slot.started(now: t0)
    slot.finished(now: t0, elapsed: .seconds(30), outcome: .abandoned)
    #expect(slot.active == 0)
    #expect(slot.expectedLatency == nil)
  }
}
