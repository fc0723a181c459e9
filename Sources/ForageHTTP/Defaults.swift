/// The defaults of ``FetchSettings``, in one place.
public enum FetchDefaults {
  /// Honest, names the project and where to read about it.
  public static let userAgent = "Forage/0.1 (+https://github.com/forage/forage)"
  public static let concurrency = 16
  public static let perHostConcurrency = 2
  public static let perHostDelay: Duration = .milliseconds(500)
  public static let maxPerHostDelay: Duration = .seconds(60)
  public static let timeout: Duration = .seconds(15)
  public static let connectTimeout: Duration = .seconds(10)
  /// 1 KiB/s over 10 s: a server dripping bytes is dropped.
  public static let lowSpeedLimit = 1024
  public static let lowSpeedTime: Duration = .seconds(10)
  public static let maxBodySize = 10 << 20
  public static let maxHeaderSize = 256 << 10
  public static let robotsTxt = true
  public static let maxRedirects = 10
  public static let retries = 2
  public static let retryBaseDelay: Duration = .milliseconds(500)
  public static let retryMaxDelay: Duration = .seconds(30)
  /// robots.txt is kept this long (RFC 9309 §2.4 asks for at most 24 hours).
  public static let robotsCacheLifetime: Duration = .seconds(24 * 3600)
  /// An unreachable robots.txt (5xx, network) means "disallow all" for this long,
  /// then it is asked again.
  public static let robotsFailureLifetime: Duration = .seconds(600)
  /// RFC 9309 §2.5: parse at least the first 500 KiB.
  public static let robotsMaxSize = 500 << 10
  /// RFC 9309 §2.3.1.2: follow at least five redirects.
  public static let robotsMaxRedirects = 5
}

/// Fetch settings: limits, politeness and identity. Plain values with polite
/// defaults; the engine builds them from the config's `fetch` object, and a source may
/// pass its own to ``Fetcher/fetch(_:settings:validators:deadline:scope:)``.
///
///     var settings = FetchSettings()
///     settings.perHostDelay = .seconds(1)
///     settings.headers["Accept-Language"] = "en"
public struct FetchSettings: Sendable, Hashable {

  /// The `User-Agent` header; its first word is matched against robots.txt groups.
  public var userAgent = FetchDefaults.userAgent
  /// The most requests in flight at once over all hosts (fetcher-wide: the value of
  /// the settings given to ``Fetcher/init(transport:settings:)`` is used).
  public var concurrency = FetchDefaults.concurrency
  /// The most requests in flight to one host.
  public var perHostConcurrency = FetchDefaults.perHostConcurrency
  /// The least time between two request starts on one host; robots.txt
  /// `Crawl-delay` can raise it.
  public var perHostDelay = FetchDefaults.perHostDelay
  /// When true, the per-host delay adapts to observed latency and to 429/503.
  public var adaptiveDelay = true
  /// The adaptive delay never grows past this.
  public var maxPerHostDelay = FetchDefaults.maxPerHostDelay
  /// Total time limit of one exchange.
  public var timeout = FetchDefaults.timeout
  /// Time limit for connecting.
  public var connectTimeout = FetchDefaults.connectTimeout
  /// Bytes per second under which a transfer is too slow (0 turns it off).
  public var lowSpeedLimit = FetchDefaults.lowSpeedLimit
  /// Window of the low-speed check.
  public var lowSpeedTime = FetchDefaults.lowSpeedTime
  /// The most decoded body bytes accepted.
  public var maxBodySize = FetchDefaults.maxBodySize
  /// A body longer than ``maxBodySize`` is cut there and the response kept
  /// (a sitemap over the protocol's 50 MB is read up to it), instead of
  /// failing the fetch. Not a config key.
  public var truncatesBody = false
  /// A successful response whose `Content-Type` names neither HTML nor XML
  /// (see ``ContentType/isMarkup(_:)``) comes back without its body
  /// (``Response/bodySkipped``): a crawl that followed a link to an archive,
  /// an image or a video learns what it is from the head and reads no more.
  /// Not a config key: the engine sets it for the pages of HTML sources.
  public var markupBodiesOnly = false
  /// The most header bytes accepted.
  public var maxHeaderSize = FetchDefaults.maxHeaderSize
  /// When true, robots.txt is fetched and obeyed.
  public var robotsTxt = FetchDefaults.robotsTxt
  /// The most redirects followed.
  public var maxRedirects = FetchDefaults.maxRedirects
  /// How many times a transient failure is retried.
  public var retries = FetchDefaults.retries
  /// First retry delay before jitter; doubles on each attempt.
  public var retryBaseDelay = FetchDefaults.retryBaseDelay
  /// Longest retry delay; a `Retry-After` longer than this is not waited for.
  public var retryMaxDelay = FetchDefaults.retryMaxDelay
  /// Extra request headers (the source's own).
  public var headers: [String: String] = [:]
  /// When true, cookies set by servers are kept for the fetcher's lifetime (one job).
  public var cookies = false
  /// Secrets taken from environment variables (an `Authorization` header, an API
  /// key header), sent only to ``credentialOrigins``: never to another origin a
  /// redirect or a link leads to, never after a redirect from https to http.
  public var credentials: [Credentials] = []
  /// The origins (`https://api.example.com`, as `WebURL.origin` writes them) that
  /// receive ``credentials``. Empty means the origin of the URL each fetch starts
  /// from (its redirect targets elsewhere get nothing).
  public var credentialOrigins: Set<String> = []
  /// A proxy URL such as `http://proxy:3128`; nil uses the environment
  /// (`http_proxy`, `https_proxy`, `no_proxy`).
  public var proxy: String?

  /// Creates the default settings.
  public init() {}

  /// The transfer limits these settings imply.
  public var limits: TransferLimits {
    TransferLimits(
      timeout: timeout, connectTimeout: connectTimeout, lowSpeedLimit: lowSpeedLimit,
      lowSpeedTime: lowSpeedTime, maxBodySize: maxBodySize, maxHeaderSize: maxHeaderSize,
      truncateBody: truncatesBody, markupBodiesOnly: markupBodiesOnly)
  }

  /// The product token matched against robots.txt user-agent lines: the leading
  /// letters, `-` and `_` of ``userAgent`` (`Forage` for the default).
  public var robotsProductToken: String {
    String(userAgent.prefix { $0.isASCII && ($0.isLetter || $0 == "-" || $0 == "_") })
  }
}

/// Credentials named by environment variable, never stored in the config itself.
///
///     settings.credentials = [.basic(userEnv: "SHOP_USER", passwordEnv: "SHOP_PASSWORD")]
///     settings.credentialOrigins = ["https://shop.example.com"]
public struct Credentials: Sendable, Hashable {
  enum Kind: Sendable, Hashable {
    case basic(userEnv: String, passwordEnv: String)
    case bearer(tokenEnv: String)
    case header(name: String, valueEnv: String)
  }
  let kind: Kind

  /// HTTP Basic authentication from two variables.
  public static func basic(userEnv: String, passwordEnv: String) -> Credentials {
    Credentials(kind: .basic(userEnv: userEnv, passwordEnv: passwordEnv))
  }
  /// `Authorization: Bearer <token>` from a variable.
  public static func bearer(tokenEnv: String) -> Credentials {
    Credentials(kind: .bearer(tokenEnv: tokenEnv))
  }
  /// Any header whose value comes from a variable (an API key header, say).
  public static func header(_ name: String, valueEnv: String) -> Credentials {
    Credentials(kind: .header(name: name, valueEnv: valueEnv))
  }

  /// For a credential made by ``header(_:valueEnv:)``: the header's name and
  /// the variable its value comes from (never the value); nil otherwise.
  public var environmentHeader: (name: String, variable: String)? {
    if case .header(let name, let variable) = kind { return (name, variable) }
    return nil
  }

  /// The variable whose value cannot be sent (a line break or another
  /// control character in it would add or cut headers), with the header it
  /// is for and what is wrong; nil when every variable is unset or sendable.
  func unsendableVariable(environment: [String: String]) -> (variable: String, header: String, problem: String)? {
    switch kind {
    case .basic:
      return nil  // sent base64-encoded
    case .bearer(let tokenEnv):
      return environment[tokenEnv].flatMap(HTTPHeaders.valueProblem).map { (tokenEnv, "Authorization", $0) }
    case .header(let name, let valueEnv):
      return environment[valueEnv].flatMap(HTTPHeaders.valueProblem).map { (valueEnv, name, $0) }
    }
  }

  /// The header to send, read from `environment`; nil when a variable is unset.
  func header(environment: [String: String]) -> (name: String, value: String)? {
    switch kind {
    case .basic(let userEnv, let passwordEnv):
      guard let user = environment[userEnv], let password = environment[passwordEnv] else {
        return nil
      }
      return ("Authorization", "Basic " + base64(Array("\(user):\(password)".utf8)))
    case .bearer(let tokenEnv):
      return environment[tokenEnv].map { ("Authorization", "Bearer " + $0) }
    case .header(let name, let valueEnv):
      return environment[valueEnv].map { (name, $0) }
    }
  }
}

func base64(_ bytes: [UInt8]) -> String {
  let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
  var out: [UInt8] = []
  var i = 0
  while i < bytes.count {
    let b0 = bytes[i], b1 = i + 1 < bytes.count ? bytes[i + 1] : 0
    let b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
    out.append(table[Int(b0 >> 2)])
    out.append(table[Int((b0 & 3) << 4 | b1 >> 4)])
    out.append(i + 1 < bytes.count ? table[Int((b1 & 15) << 2 | b2 >> 6)] : UInt8(ascii: "="))
    out.append(i + 2 < bytes.count ? table[Int(b2 & 63)] : UInt8(ascii: "="))
    i += 3
  }
  return String(decoding: out, as: UTF8.self)
}
