import Foundation
import ForageURL

/// robots.txt rules per origin, with their expiry, for one process. A plain value:
/// the ``Fetcher`` owns one and does the fetching through
/// ``RobotsCache/fetch(origin:transport:settings:now:)`` (after asking its
/// ``RobotsArchive``, when it has one).
///
/// RFC 9309 §2.3.1: a 2xx answer is parsed; 3xx is followed up to five times; 4xx
/// means no rules (allow all); 5xx or no answer means disallow all. §2.4: kept at most
/// 24 hours; failures are asked again sooner
/// (``FetchDefaults/robotsFailureLifetime``).
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9309#name-access-results>
struct RobotsCache: Sendable {
  struct Entry: Sendable {
    var rules: RobotsRules
    var expires: ContinuousClock.Instant
  }

  private var entries: [String: Entry] = [:]

  /// The cached rules for `origin`, if not expired at `now`.
  func rules(for origin: String, now: ContinuousClock.Instant) -> RobotsRules? {
    guard let entry = entries[origin], entry.expires > now else { return nil }
    return entry.rules
  }

  mutating func store(_ rules: RobotsRules, for origin: String, lifetime: Duration, now: ContinuousClock.Instant) {
    entries[origin] = Entry(rules: rules, expires: now + lifetime)
    if entries.count > 10_000 { entries = entries.filter { $0.value.expires > now } }
  }

  /// Asks `origin` for its robots.txt (following up to five redirects) and reads
  /// the answer as RFC 9309 does; `now` dates it.
  static func fetch(origin: WebURL, transport: any Transport, settings: FetchSettings, now: Date = Date()) async
    -> RobotsAnswer
  {
    func answer(_ verdict: RobotsAnswer.Verdict, _ body: [UInt8] = [], failure: String? = nil) -> RobotsAnswer {
      let lifetime = verdict == .disallowAll ? FetchDefaults.robotsFailureLifetime : settings.robotsLifetime
      return RobotsAnswer(
        origin: origin.origin, verdict: verdict, body: body, fetchedAt: now,
        expiresAt: now.addingTimeInterval(lifetime.seconds), failure: failure)
    }
    guard var url = origin.resolving("/robots.txt") else { return answer(.allowAll) }
    var limits = settings.limits
    limits.maxBodySize = FetchDefaults.robotsMaxSize
    limits.truncateBody = true
    limits.markupBodiesOnly = false  // robots.txt is text/plain
    for _ in 0...FetchDefaults.robotsMaxRedirects {
      var request = Request(url: url, limits: limits, proxy: settings.proxy)
      request.headers["User-Agent"] = settings.userAgent
      let response: Response
      do {
        response = try await transport.fetch(request)
      } catch let error as FetchError {
        return answer(.disallowAll, failure: error.message)
      } catch {
        return answer(.disallowAll, failure: "fetching it failed")
      }
      switch response.status {
      case 200..<300:
        return answer(.rules, response.body)
      case 300..<400:
        guard let location = response.headers["Location"], let next = url.resolving(location) else {
          return answer(.allowAll)
        }
        url = next
      case 429, 500...:
        // 429 is a 4xx, but it says "too busy", not "no file": treated like 5xx.
        return answer(.disallowAll, failure: "HTTP \(response.status)")
      default:
        return answer(.allowAll)
      }
    }
    // §2.3.1.2: after five redirects the file may be taken as unavailable.
    return answer(.allowAll)
  }
}

extension FetchSettings {
  var robotsLifetime: Duration { FetchDefaults.robotsCacheLifetime }
}
