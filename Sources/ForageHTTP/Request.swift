import ForageURL

/// One HTTP request as a transport sends it: a single exchange, no redirects followed.
///
///     var request = Request(url: WebURL("https://example.com/")!)
///     request.headers["User-Agent"] = FetchSettings.defaultUserAgent
///     let response = try await CurlTransport.shared.fetch(request)
public struct Request: Sendable {
  /// The URL to request; its fragment is never sent.
  public var url: WebURL
  /// The request method, `GET` by default.
  public var method: String
  /// Header fields sent as given (the transport adds `Host`, `Accept-Encoding`).
  public var headers: HTTPHeaders
  /// A request body, for methods that carry one.
  public var body: [UInt8]?
  /// The limits that end the exchange with a typed ``FetchError``.
  public var limits: TransferLimits
  /// A proxy URL for this request; nil uses the environment (`http_proxy`,
  /// `https_proxy`, `no_proxy`). ``URLSessionTransport`` ignores it (session-wide only).
  public var proxy: String?

  /// Creates a request.
  public init(
    url: WebURL, method: String = "GET", headers: HTTPHeaders = [:], body: [UInt8]? = nil,
    limits: TransferLimits = TransferLimits(), proxy: String? = nil
  ) {
    self.proxy = proxy
    self.url = url
    self.method = method
    self.headers = headers
    self.body = body
    self.limits = limits
  }
}

/// The limits of one exchange. Each one, when crossed, ends the exchange with a
/// ``FetchError`` that names it.
public struct TransferLimits: Sendable, Hashable {
  /// The longest the whole exchange may take (``FetchError/Kind/timeout``).
  public var timeout: Duration
  /// The longest connecting (DNS, TCP, TLS) may take (``FetchError/Kind/connectFailed``
  /// with a timeout message).
  public var connectTimeout: Duration
  /// The exchange is aborted when fewer than this many bytes per second arrive over
  /// ``lowSpeedTime`` (``FetchError/Kind/tooSlow``); 0 turns the check off.
  public var lowSpeedLimit: Int
  /// The window of the low-speed check.
  public var lowSpeedTime: Duration
  /// The most body bytes accepted, counted after content decoding, so a gzip bomb
  /// stops here (``FetchError/Kind/bodyTooLarge``).
  public var maxBodySize: Int
  /// The most header bytes accepted (``FetchError/Kind/headersTooLarge``).
  public var maxHeaderSize: Int
  /// When true, a body longer than ``maxBodySize`` is cut at the limit and the
  /// response is returned without error (robots.txt parsing uses this).
  public var truncateBody: Bool
  /// When true, the body of a 2xx response whose `Content-Type` is given and
  /// names neither HTML nor XML is not read: the response has its status and
  /// headers, an empty body and ``Response/bodySkipped`` set.
  public var markupBodiesOnly: Bool

  /// Creates limits; the defaults are those of ``FetchSettings``.
  public init(
    timeout: Duration = FetchDefaults.timeout,
    connectTimeout: Duration = FetchDefaults.connectTimeout,
    lowSpeedLimit: Int = FetchDefaults.lowSpeedLimit,
    lowSpeedTime: Duration = FetchDefaults.lowSpeedTime,
    maxBodySize: Int = FetchDefaults.maxBodySize,
    maxHeaderSize: Int = FetchDefaults.maxHeaderSize,
    truncateBody: Bool = false,
    markupBodiesOnly: Bool = false
  ) {
    self.timeout = timeout
    self.connectTimeout = connectTimeout
    self.lowSpeedLimit = lowSpeedLimit
    self.lowSpeedTime = lowSpeedTime
    self.maxBodySize = maxBodySize
    self.maxHeaderSize = maxHeaderSize
    self.truncateBody = truncateBody
    self.markupBodiesOnly = markupBodiesOnly
  }
}
