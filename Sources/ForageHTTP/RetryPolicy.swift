import ForageSupport
import Foundation

/// When and how long to wait before retrying a fetch.
///
///     let policy = RetryPolicy(maxRetries: 2)
///     if policy.shouldRetry(status: 503), let wait = policy.delay(
///       attempt: 0, retryAfter: .seconds(1), using: &rng) { … }
///
/// Only transient failures are retried: connection errors, timeouts, truncated
/// bodies, and statuses 408, 429 and 5xx; never other 4xx. The wait is exponential
/// with full jitter (`random(0...min(cap, base × 2^attempt))`), and a `Retry-After` from
/// the server takes precedence; a `Retry-After` longer than the cap means "give up".
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9110#field.retry-after>
public struct RetryPolicy: Sendable, Hashable {
  /// Retries after the first attempt.
  public var maxRetries: Int
  /// The wait before the first retry, before jitter.
  public var baseDelay: Duration
  /// The longest wait.
  public var maxDelay: Duration

  /// Creates a policy.
  public init(
    maxRetries: Int = FetchDefaults.retries,
    baseDelay: Duration = FetchDefaults.retryBaseDelay,
    maxDelay: Duration = FetchDefaults.retryMaxDelay
  ) {
    self.maxRetries = maxRetries
    self.baseDelay = baseDelay
    self.maxDelay = maxDelay
  }

  /// True when a response with `status` is worth retrying.
  public func shouldRetry(status: Int) -> Bool {
    status == 408 || status == 429 || (500...599).contains(status)
  }

  /// True when `error` is worth retrying.
  public func shouldRetry(error: FetchError) -> Bool { error.isTransient }

  /// The wait before retry number `attempt + 1` (attempt 0 is the first retry), or nil
  /// when no retry should be made (`attempt` ≥ ``maxRetries``, or `Retry-After` asks
  /// for longer than ``maxDelay``).
  public func delay(
    attempt: Int, retryAfter: Duration? = nil, using random: inout some RandomNumberGenerator
  ) -> Duration? {
    guard attempt < maxRetries else { return nil }
    if let retryAfter {
      return retryAfter <= maxDelay ? max(.zero, retryAfter) : nil
    }
    let exponent = min(attempt, 30)
    let ceiling = min(maxDelay, baseDelay * (1 << exponent))
    let ceilingMS = max(0, ceiling.milliseconds)
    let jittered = ceilingMS == 0 ? 0 : Int64.random(in: 0...ceilingMS, using: &random)
    return .milliseconds(jittered)
  }

  /// Parses a `Retry-After` value: delay-seconds or an HTTP-date (IMF-fixdate),
  /// relative to `now`. Nil when unreadable.
  public static func parseRetryAfter(_ value: String, now: Date = Date()) -> Duration? {
    let text = value.trimmingSpaces
    if let seconds = Int(text) { return seconds >= 0 ? .seconds(seconds) : nil }
    guard let seconds = HTTPDate.parse(text) else { return nil }
    let interval = Date(timeIntervalSince1970: TimeInterval(seconds)).timeIntervalSince(now)
    return .milliseconds(Int64(max(0, interval) * 1000))
  }
}
