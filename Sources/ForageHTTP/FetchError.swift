/// Why a fetch failed. A struct over a private code so that kinds can be added;
/// match on ``kind``:
///
///     do { _ = try await transport.fetch(request) }
///     catch let error as FetchError where error.kind == .bodyTooLarge { … }
///
/// The message names the limit crossed and the host, never a query string, a cookie
/// or an `Authorization` value. `description` is that message alone, a sentence
/// for a person; `debugDescription` adds the kind and the transport's own detail
/// (a libcurl code, a URLError), for `--verbose` and bug reports.
public struct FetchError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
  /// The kind of failure; compare with the static members.
  public struct Kind: Sendable, Hashable, CustomStringConvertible {
    private let code: Code
    private init(_ code: Code) { self.code = code }

    private enum Code: String, Sendable {
      case timeout, connectFailed, tooSlow, bodyTooLarge, headersTooLarge
      case tooManyRedirects, redirectLoop, invalidResponse, truncated, tls
      case robotsDisallowed, cancelled, invalidURL, invalidHeader, transport, budgetUnavailable
    }

    /// The total timeout passed.
    public static let timeout = Kind(.timeout)
    /// Resolving or connecting failed or timed out.
    public static let connectFailed = Kind(.connectFailed)
    /// Bytes arrived slower than the low-speed limit for its whole window.
    public static let tooSlow = Kind(.tooSlow)
    /// The decoded body passed the size limit.
    public static let bodyTooLarge = Kind(.bodyTooLarge)
    /// The response headers passed the size limit.
    public static let headersTooLarge = Kind(.headersTooLarge)
    /// More redirects than allowed.
    public static let tooManyRedirects = Kind(.tooManyRedirects)
    /// A redirect led back to a URL already visited.
    public static let redirectLoop = Kind(.redirectLoop)
    /// The server's reply was not valid HTTP.
    public static let invalidResponse = Kind(.invalidResponse)
    /// The connection ended before the whole response arrived (reset, short body).
    public static let truncated = Kind(.truncated)
    /// The TLS handshake or certificate check failed.
    public static let tls = Kind(.tls)
    /// robots.txt forbids the URL.
    public static let robotsDisallowed = Kind(.robotsDisallowed)
    /// The calling task was cancelled.
    public static let cancelled = Kind(.cancelled)
    /// The URL cannot be fetched (scheme other than http/https, no host).
    public static let invalidURL = Kind(.invalidURL)
    /// A header the settings would send cannot be sent: a value read from
    /// the environment holds a line break or another control character.
    public static let invalidHeader = Kind(.invalidHeader)
    /// Any other transport failure.
    public static let transport = Kind(.transport)
    /// The fleet's shared request budget (its database) could not be asked,
    /// so the request was not sent: nothing is known of the server, and the
    /// URL is for a later launch, not a failed attempt.
    public static let budgetUnavailable = Kind(.budgetUnavailable)

    public var description: String { code.rawValue }
  }

  /// The kind of failure.
  public let kind: Kind
  /// The host involved, when known.
  public let host: String?
  /// What happened, for a person: names the limit and the host.
  public let message: String
  /// What the transport said (a libcurl code and text, a URLError code), for
  /// `--verbose`; nil when there is nothing beyond the message.
  public var detail: String?

  /// Creates an error. Neither `message` nor `detail` may contain secrets.
  public init(_ kind: Kind, host: String?, _ message: String, detail: String? = nil) {
    self.kind = kind
    self.host = host
    self.message = message
    self.detail = detail
  }

  /// True for failures worth retrying: connection errors, timeouts, truncation.
  public var isTransient: Bool {
    [.timeout, .connectFailed, .tooSlow, .truncated, .transport].contains(kind)
  }

  /// The message: a sentence naming the host and what went wrong.
  public var description: String { message }

  /// The kind, host and transport detail beside the message.
  public var debugDescription: String {
    "\(message) [\(kind)\(host.map { ", host \($0)" } ?? "")\(detail.map { ", \($0)" } ?? "")]"
  }
}

extension FetchError {
  static func cancelled(host: String?) -> FetchError {
    FetchError(.cancelled, host: host, "the fetch was cancelled")
  }
  /// The fleet's ``SharedHostBudget`` could not be asked: its error says why
  /// (the database's reason), its debug description goes behind `--verbose`.
  static func budgetUnavailable(host: String?, _ error: any Error) -> FetchError {
    FetchError(.budgetUnavailable, host: host, "\(error)", detail: String(reflecting: error))
  }
  static func bodyTooLarge(host: String?, limit: Int) -> FetchError {
    FetchError(
      .bodyTooLarge, host: host,
      "the response body from \(host ?? "the server") passed maxBodySize (\(formatBytes(limit)))")
  }
  static func headersTooLarge(host: String?, limit: Int) -> FetchError {
    FetchError(
      .headersTooLarge, host: host,
      "the response headers from \(host ?? "the server") passed \(formatBytes(limit)), the most Forage reads of them")
  }
  static func timeout(host: String?, limit: Duration) -> FetchError {
    FetchError(
      .timeout, host: host,
      "\(host ?? "the server") did not answer completely within timeout (\(formatDuration(limit)))")
  }
  static func tooSlow(host: String?, bytesPerSecond: Int, window: Duration) -> FetchError {
    FetchError(
      .tooSlow, host: host,
      "\(host ?? "the server") sent less than \(formatBytes(bytesPerSecond))/s for \(formatDuration(window)), "
        + "so the transfer was stopped as stalled")
  }
  /// A credential's variable that cannot be sent; names the variable and
  /// the header, never the value (a secret).
  static func unsendableCredential(host: String?, variable: String, header: String, problem: String) -> FetchError {
    FetchError(
      .invalidHeader, host: host,
      "the environment variable \(variable) (the \(header) header for \(host ?? "this server")) cannot be sent: "
        + "\(problem); nothing was requested")
  }
}

func formatBytes(_ n: Int) -> String {
  if n >= 1 << 20, n % (1 << 20) == 0 { return "\(n >> 20) MiB" }
  if n >= 1 << 10, n % (1 << 10) == 0 { return "\(n >> 10) KiB" }
  return "\(n) bytes"
}

func formatDuration(_ d: Duration) -> String {
  let ms = d.milliseconds
  if ms % 1000 == 0 { return "\(ms / 1000) s" }
  return "\(ms) ms"
}


