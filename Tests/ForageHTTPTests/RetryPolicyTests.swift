import Testing

@testable import ForageHTTP

/// A seeded generator (SplitMix64) so jitter is reproducible.
struct SeededRandom: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

@Suite struct RetryPolicyTests {
  @Test func test_retriesOnlyTransientStatuses() {
    let policy = RetryPolicy()
    for status in [408, 429, 500, 502, 503, 504] { #expect(policy.shouldRetry(status: status)) }
    for status in [200, 301, 304, 400, 401, 403, 404, 410] { #expect(!policy.shouldRetry(status: status)) }
    #expect(policy.shouldRetry(error: FetchError(.timeout, host: "h", "")))
    #expect(policy.shouldRetry(error: FetchError(.connectFailed, host: "h", "")))
    #expect(!policy.shouldRetry(error: FetchError(.bodyTooLarge, host: "h", "")))
    #expect(!policy.shouldRetry(error: FetchError(.cancelled, host: "h", "")))
  }

  @Test func test_backoff_isBoundedExponentialJitter() {
    for seed in UInt64(0)..<50 {
      var random = SeededRandom(state: seed)
      let policy = RetryPolicy(maxRetries: 10, baseDelay: .milliseconds(100), maxDelay: .seconds(1))
      for attempt in 0..<10 {
        let delay = policy.delay(attempt: attempt, using: &random)
        let ceiling = min(Duration.seconds(1), .milliseconds(100) * (1 << attempt))
        #expect(delay != nil && delay! >= .zero && delay! <= ceiling, "seed \(seed) attempt \(attempt)")
      }
      #expect(policy.delay(attempt: 10, using: &random) == nil, "seed \(seed)")
    }
  }

  @Test func test_retryAfter_takesPrecedence_andTooLongMeansGiveUp() {
    var random = SeededRandom(state: 1)
    let policy = RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(100), maxDelay: .seconds(30))
    #expect(policy.delay(attempt: 0, retryAfter: .seconds(7), using: &random) == .seconds(7))
    #expect(policy.delay(attempt: 0, retryAfter: .seconds(3600), using: &random) == nil)
  }

  @Test func test_parseRetryAfter_secondsAndHTTPDate() {
    #expect(RetryPolicy.parseRetryAfter("120") == .seconds(120))
    #expect(RetryPolicy.parseRetryAfter(" 3 ") == .seconds(3))
    #expect(RetryPolicy.parseRetryAfter("soon") == nil)
    let now = RetryPolicy.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT")!
    #expect(RetryPolicy.parseRetryAfter("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == .seconds(60))
    #expect(RetryPolicy.parseRetryAfter("Sun, 06 Nov 1994 08:48:37 GMT", now: now) == .zero)
  }
}
