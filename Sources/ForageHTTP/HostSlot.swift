/// Politeness state of one host: how many requests run, when the next may start, and
/// an adaptive delay learnt from latency and from 429/503 answers. No I/O, no clock:
/// the ``Fetcher`` passes the time in and performs what the slot says.
///
///     var slot = HostSlot(concurrency: 2, minDelay: .milliseconds(500))
///     switch slot.admission(now: clock.now) {
///     case .start: slot.started(now: clock.now)      // send the request
///     case .wait(let until): …                      // sleep, then ask again
///     case .full: …                                 // wait for a `finished`
///     }
///
/// The delay follows Scrapy's AutoThrottle: after each response the target delay is
/// `latency / targetConcurrency` and the delay moves halfway toward it, never under
/// `minDelay` nor over `maxDelay`; error statuses never shorten it. A 429 or 503 doubles
/// it (at least to `Retry-After`) and blocks the host until `Retry-After` has passed;
/// later successes bring it back down gradually.
///
/// - SeeAlso: <https://docs.scrapy.org/en/latest/topics/autothrottle.html>
struct HostSlot: Sendable {
  enum Admission: Equatable, Sendable {
    /// A request may start now.
    case start
    /// No request may start before this instant.
    case wait(until: ContinuousClock.Instant)
    /// The host's concurrency is used up; wait for a request to finish.
    case full
  }

  /// How a request ended, as far as politeness cares.
  enum Outcome: Equatable, Sendable {
    /// A response; its status.
    case response(status: Int)
    /// 429 or 503, with the server's `Retry-After` when it gave one.
    case throttled(retryAfter: Duration?)
    /// No response (connection error, timeout).
    case failed
    /// Cancelled or not sent: no information about the host.
    case abandoned
  }

  var concurrency: Int
  /// The configured (or robots.txt `Crawl-delay`) minimum delay between starts.
  var minDelay: Duration
  var maxDelay: Duration
  /// Adapt the delay from latency and throttling answers.
  var adaptive: Bool
  /// AutoThrottle's target number of parallel requests to the host.
  var targetConcurrency: Double = 1

  /// The current delay between request starts.
  private(set) var delay: Duration
  /// Requests running now.
  private(set) var active = 0
  /// The earliest the next request may start.
  private(set) var nextStart: ContinuousClock.Instant?
  /// Smoothed latency of successful exchanges (nil before the first).
  private(set) var latency: Duration?

  init(
    concurrency: Int, minDelay: Duration, maxDelay: Duration = FetchDefaults.maxPerHostDelay,
    adaptive: Bool = true
  ) {
    self.concurrency = max(1, concurrency)
    self.minDelay = max(.zero, minDelay)
    self.maxDelay = max(minDelay, maxDelay)
    self.adaptive = adaptive
    self.delay = self.minDelay
  }

  /// Whether a request may start at `now`.
  func admission(now: ContinuousClock.Instant) -> Admission {
    if active >= concurrency { return .full }
    if let nextStart, nextStart > now { return .wait(until: nextStart) }
    return .start
  }

  /// Records a start: the next one waits `delay`.
  mutating func started(now: ContinuousClock.Instant) {
    active += 1
    nextStart = max(nextStart ?? now, now + delay)
  }

  /// Records the end of a request that took `elapsed`, and adapts the delay.
  mutating func finished(now: ContinuousClock.Instant, elapsed: Duration, outcome: Outcome) {
    active = max(0, active - 1)
    switch outcome {
    case .abandoned:
      return
    case .response(let status):
      if status < 400 {
        latency = latency.map { ($0 * 3 + elapsed) / 4 } ?? elapsed
      }
      guard adaptive else { return }
      let target = max(minDelay, elapsed / targetConcurrency)
      let next = (delay + target) / 2
      // Error answers are often fast: they must not speed the crawl up.
      delay = clamp(status < 400 ? next : max(delay, next))
    case .throttled(let retryAfter):
      if adaptive { delay = clamp(max(delay * 2, retryAfter ?? .zero, .milliseconds(250))) }
      let blockedUntil = now + max(delay, retryAfter ?? .zero)
      nextStart = max(nextStart ?? blockedUntil, blockedUntil)
    case .failed:
      if adaptive { delay = clamp(max(delay, minDelay) * 3 / 2) }
    }
  }

  /// The time a request to this host is expected to take: the smoothed latency, or
  /// nil before anything was measured.
  var expectedLatency: Duration? { latency }

  /// Raises the minimum delay (robots.txt `Crawl-delay`).
  mutating func raiseMinDelay(to value: Duration) {
    guard value > minDelay else { return }
    minDelay = value
    maxDelay = max(maxDelay, value)
    delay = max(delay, value)
  }

  private func clamp(_ value: Duration) -> Duration {
    min(maxDelay, max(minDelay, value))
  }
}
