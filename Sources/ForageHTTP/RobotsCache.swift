import ForageURL

/// robots.txt rules per origin, with their expiry. A plain value: the ``Fetcher``
/// owns one and does the fetching through ``RobotsCache/load(origin:transport:settings:)``.
///
/// RFC 9309 §2.3.1: a 2xx answer is parsed; 3xx is followed up to five times; 4xx
/// means no rules (allow all); 5xx or no answer means disallow all. §2.4: kept at most
/// 24 hours; failures are asked again sooner
/// (``FetchSettings/Default/robotsFailureLifetime``).
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

  /// Fetches and parses `origin`'s robots.txt; returns the rules for the settings'
  /// user agent and how long to keep them.
  static func load(origin: WebURL, transport: any Transport, settings: FetchSettings) async
    -> (RobotsRules, Duration)
  {
    guard var url = origin.resolving("/robots.txt") else { return (.allowAll, settings.robotsLifetime) }
    var limits = settings.limits
    limits.maxBodySize = FetchSettings.Default.robotsMaxSize
    limits.truncateBody = true
    for _ in 0...FetchSettings.Default.robotsMaxRedirects {
      var request = Request(url: url, limits: limits, proxy: settings.proxy)
      request.headers["User-Agent"] = settings.userAgent
      let response: Response
      do {
        response = try await transport.fetch(request)
      } catch {
        return (.disallowAll, FetchSettings.Default.robotsFailureLifetime)
      }
      switch response.status {
      case 200..<300:
        return (RobotsTxt(response.body).rules(for: settings.robotsProductToken), settings.robotsLifetime)
      case 300..<400:
        guard let location = response.headers["Location"], let next = url.resolving(location) else {
          return (.allowAll, settings.robotsLifetime)
        }
        url = next
      case 429, 500...:
        // 429 is a 4xx, but it says "too busy", not "no file": treated like 5xx.
        return (.disallowAll, FetchSettings.Default.robotsFailureLifetime)
      default:
        return (.allowAll, settings.robotsLifetime)
      }
    }
    // §2.3.1.2: after five redirects the file may be taken as unavailable.
    return (.allowAll, settings.robotsLifetime)
  }
}

extension FetchSettings {
  var robotsLifetime: Duration { Default.robotsCacheLifetime }
}
