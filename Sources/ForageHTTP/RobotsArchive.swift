import Foundation

/// Where robots.txt answers outlive the process: a ``Fetcher`` asks it before
/// downloading an origin's robots.txt and tells it what it downloaded.
///
/// An app woken for a 30-second background task starts in a new process each
/// time; without an archive every launch would ask every origin for robots.txt
/// again. With one (the engine passes its store), each origin is asked at most
/// once per ``FetchDefaults/robotsCacheLifetime`` (24 hours, RFC 9309
/// §2.4), and a failure is asked again after
/// ``FetchDefaults/robotsFailureLifetime``.
///
/// An archive that fails reads as empty and drops what it is given: fetching
/// never stops because of it.
public protocol RobotsArchive: Sendable {
  /// The kept answer of `origin` (`https://example.com`), expired or not.
  func robotsAnswer(origin: String) async -> RobotsAnswer?
  /// Keeps `answer` in place of its origin's earlier one.
  func keepRobotsAnswer(_ answer: RobotsAnswer) async
  /// Whether this process should download `origin`'s robots.txt now: false
  /// while another process sharing the archive (a fleet's worker) downloads
  /// it, so the fetcher waits for that answer to be kept instead.
  func claimRobotsFetch(origin: String) async -> Bool
}

extension RobotsArchive {
  /// An archive of one process: always fetch.
  public func claimRobotsFetch(origin: String) async -> Bool { true }
}

/// What an origin answered for `/robots.txt`, as RFC 9309 §2.3.1 reads it:
/// the file itself (2xx), "no rules" (4xx, or too many redirects) or "disallow
/// everything" (5xx, 429, unreachable). The file is kept rather than the rules,
/// so that each user agent finds its own group in it.
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9309#name-access-results>
public struct RobotsAnswer: Sendable, Hashable {
  /// How the answer reads.
  public enum Verdict: String, Sendable, CaseIterable {
    /// `body` holds the file.
    case rules
    /// No usable file: everything is allowed.
    case allowAll = "allow-all"
    /// The server failed or could not be reached: nothing is allowed.
    case disallowAll = "disallow-all"
  }

  /// The origin asked, as `WebURL.origin` serializes it.
  public var origin: String
  public var verdict: Verdict
  /// The file, up to ``FetchDefaults/robotsMaxSize`` bytes, for `.rules`;
  /// empty otherwise.
  public var body: [UInt8]
  public var fetchedAt: Date
  /// When the answer must be asked again.
  public var expiresAt: Date
  /// For `.disallowAll`: what went wrong, for a person (`HTTP 503`, `could not
  /// connect to example.com`).
  public var failure: String?

  /// Creates an answer.
  public init(
    origin: String, verdict: Verdict, body: [UInt8] = [], fetchedAt: Date, expiresAt: Date, failure: String? = nil
  ) {
    self.origin = origin
    self.verdict = verdict
    self.body = body
    self.fetchedAt = fetchedAt
    self.expiresAt = expiresAt
    self.failure = failure
  }

  /// The rules that apply to `productToken` (`forage` in `User-agent: forage`).
  public func rules(for productToken: String) -> RobotsRules {
    switch verdict {
    case .rules: return RobotsTxt(body).rules(for: productToken)
    case .allowAll: return .allowAll
    case .disallowAll:
      var rules = RobotsRules.disallowAll
      rules.unreachable = failure ?? "it could not be fetched"
      return rules
    }
  }
}
