import ForageSupport
import Foundation
import Testing

@testable import ForageHTTP

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
      var random = SplitMix64(seed: seed)
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
    var random = SplitMix64(seed: 1)
    let policy = RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(100), maxDelay: .seconds(30))
    #expect(policy.delay(attempt: 0, retryAfter: .seconds(7), using: &random) == .seconds(7))
    #expect(policy.delay(attempt: 0, retryAfter: .seconds(3600), using: &random) == nil)
  }

  @Test func test_parseRetryAfter_secondsAndHTTPDate() {
    #expect(RetryPolicy.parseRetryAfter("120") == .seconds(120))
    #expect(RetryPolicy.parseRetryAfter(" 3 ") == .seconds(3))
    #expect(RetryPolicy.parseRetryAfter("soon") == nil)
    let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
    #expect(RetryPolicy.parseRetryAfter("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == .seconds(60))
    #expect(RetryPolicy.parseRetryAfter("Sun, 06 Nov 1994 08:48:37 GMT", now: now) == .zero)
  }
}
