import Foundation
import ForageSupport
import ForageURL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``Transport`` over `URLSession`: the default on Apple platforms (background
/// sessions need it), also usable on Linux through FoundationNetworking.
///
/// Redirects are refused (the 3xx response is returned, the ``Fetcher`` follows it);
/// cookies and caching are off. The ``TransferLimits`` are enforced by a delegate and
/// a per-request watchdog, as far as URLSession allows:
///
/// - `maxBodySize` counts decoded bytes as they arrive; the task is cancelled past it.
/// - `timeout` and the low-speed window are checked by the watchdog every 100 ms.
/// - Gaps: `connectTimeout` is not separate from `timeout` (URLSession has no connect
///   timeout); `maxHeaderSize` is checked only once the headers arrived, so a server
///   can make URLSession buffer more than the limit first; header order and repeated
///   fields are lost (`allHeaderFields` merges them); `Request.proxy` is ignored
///   (proxies are session-wide: pass a configuration); timings hold the total only;
///   the HTTP version is unknown.
/// - Linux gap (FoundationNetworking): libcurl underneath reads and decodes ahead of
///   the delegate queue. A gzip bomb or an endless body still ends the fetch with
///   `bodyTooLarge` at once, but memory grows by what was already queued (hundreds of
///   MB for a 1 GiB bomb) and other requests on the same transport wait while that
///   queue drains. Cancelling does not close the connection at once either: an endless
///   body keeps being read (and dropped) until the server stops sending, which stalls
///   the transport that long. ``CurlTransport`` has none of these problems: use it on
///   Linux.
///
///     let transport = URLSessionTransport()
///     let response = try await transport.fetch(Request(url: url))
///
/// - SeeAlso: <https://developer.apple.com/documentation/foundation/urlsession>
public final class URLSessionTransport: Transport {
  private let session: URLSession
  private let delegate: Delegate

  /// Creates a transport; `configuration` defaults to an ephemeral one without
  /// cookies or cache.
  public init(configuration: URLSessionConfiguration? = nil) {
    let configuration = configuration ?? {
      let c = URLSessionConfiguration.ephemeral
      c.httpShouldSetCookies = false
      c.httpCookieAcceptPolicy = .never
      c.urlCache = nil
      c.requestCachePolicy = .reloadIgnoringLocalCacheData
      c.httpMaximumConnectionsPerHost = 16
      return c
    }()
    delegate = Delegate()
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
  }

  deinit { session.invalidateAndCancel() }

  /// Performs one exchange; cancelling the task aborts it.
  ///
  /// - Throws: ``FetchError`` (see ``CurlTransport/fetch(_:)`` for the kinds).
  public func fetch(_ request: Request) async throws -> Response {
    let host = request.url.host
    guard request.url.isHTTP, host != nil,
      let url = URL(string: request.url.removingFragment.href)
    else {
      throw FetchError(.invalidURL, host: host, "only http and https URLs with a host can be fetched")
    }
    if Task.isCancelled { throw FetchError.cancelled(host: host) }
    var urlRequest = URLRequest(url: url)
    urlRequest.httpMethod = request.method
    urlRequest.timeoutInterval = max(0.001, request.limits.timeout.seconds)
    urlRequest.httpShouldHandleCookies = false
    for field in request.headers {
      urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
    }
    if let body = request.body { urlRequest.httpBody = Data(body) }

    let task = session.dataTask(with: urlRequest)
    let state = TransferState(url: request.url, limits: request.limits)
    let delegate = self.delegate
    let watchdog = Task.detached { [weak state, weak task] in
      while let state, let task, !Task.isCancelled {
        if let reason = state.check(now: .now) {
          state.end(reason)
          task.cancel()
          return
        }
        try? await Task.sleep(for: .milliseconds(100))
      }
    }
    defer { watchdog.cancel() }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        delegate.register(task.taskIdentifier, state)
        if state.attach(continuation) { task.resume() }
      }
    } onCancel: {
      state.end(.cancelled(host: host))
      task.cancel()
    }
  }

  /// Per-request state shared by the delegate queue, the watchdog and the caller.
  final class TransferState: Sendable {
    let url: WebURL
    let limits: TransferLimits
    let start = ContinuousClock.now

    /// What changes while the transfer runs.
    private struct Progress {
      var body: [UInt8] = []
      var windowStart = ContinuousClock.now
      var windowBytes = 0
      var aborted: FetchError?
      var completed = false
      var truncated = false
      var stopped = false
      var continuation: CheckedContinuation<Response, any Error>?
    }

    private let progress = Locked(Progress())

    init(url: WebURL, limits: TransferLimits) {
      self.url = url
      self.limits = limits
    }

    /// Sets the caller's continuation; false (after resuming it with the error) when
    /// the transfer already ended, say cancelled before it started.
    func attach(_ continuation: CheckedContinuation<Response, any Error>) -> Bool {
      let ended: FetchError? = progress.withLock { p in
        if p.completed { return p.aborted ?? .cancelled(host: url.host) }
        p.continuation = continuation
        return nil
      }
      if let ended {
        continuation.resume(throwing: ended)
        return false
      }
      return true
    }

    /// Ends the transfer now with `error` (the first end wins) and resumes the caller
    /// at once: FoundationNetworking may still deliver what it already read, but the
    /// caller does not wait for that.
    func end(_ error: FetchError) {
      stop(recording: error)?.resume(throwing: error)
    }

    /// Stops taking body bytes and, unless the transfer already ended,
    /// ends it (with `error` recorded, when given): returns the caller's
    /// continuation to resume, once.
    private func stop(recording error: FetchError?) -> CheckedContinuation<Response, any Error>? {
      progress.withLock { p in
        if let error, p.aborted == nil { p.aborted = error }
        p.stopped = true
        guard !p.completed else { return nil }
        p.completed = true
        defer { p.continuation = nil }
        return p.continuation
      }
    }

    /// Appends decoded bytes. Returns true exactly once: when the body limit is first
    /// crossed and the task must be cancelled; later chunks (FoundationNetworking
    /// delivers what it already decoded) are dropped cheaply.
    func receive(_ data: Data) -> Bool {
      progress.withLock { p in
        if p.stopped { return false }
        p.windowBytes += data.count
        if p.body.count + data.count > limits.maxBodySize {
          p.stopped = true
          if limits.truncateBody {
            p.body.append(contentsOf: data.prefix(max(0, limits.maxBodySize - p.body.count)))
            p.truncated = true
          }
          return true
        }
        p.body.append(contentsOf: data)
        return false
      }
    }

    /// The limit crossed at `now`, if any (total timeout, low-speed window).
    func check(now: ContinuousClock.Instant) -> FetchError? {
      progress.withLock { p in
        if p.completed || p.aborted != nil || p.truncated { return nil }
        if now - start >= limits.timeout { return .timeout(host: url.host, limit: limits.timeout) }
        guard limits.lowSpeedLimit > 0 else { return nil }
        let window = now - p.windowStart
        if window >= limits.lowSpeedTime {
          let rate = Double(p.windowBytes) / max(window.seconds, 0.001)
          if rate < Double(limits.lowSpeedLimit) {
            return .tooSlow(host: url.host, bytesPerSecond: limits.lowSpeedLimit, window: limits.lowSpeedTime)
          }
          p.windowStart = now
          p.windowBytes = 0
        }
        return nil
      }
    }

    /// Ends the transfer once; returns the continuation to resume and the result.
    func complete(response: URLResponse?, error: (any Error)?) -> (CheckedContinuation<Response, any Error>?, Result<Response, FetchError>) {
      progress.withLock { p in
        guard !p.completed else { return (nil, .failure(.cancelled(host: url.host))) }
        p.completed = true
        let continuation = p.continuation
        p.continuation = nil
        if let aborted = p.aborted { return (continuation, .failure(aborted)) }
        if let error, !p.truncated { return (continuation, .failure(Self.map(error, host: url.host, limits: limits))) }
        guard let http = response as? HTTPURLResponse else {
          return (continuation, .failure(FetchError(.invalidResponse, host: url.host, "no HTTP response")))
        }
        guard let response = self.response(http, body: p.body) else {
          return (continuation, .failure(.headersTooLarge(host: url.host, limit: limits.maxHeaderSize)))
        }
        p.body = []
        return (continuation, .success(response))
      }
    }

    /// The response of `http` with `body`, or nil when its head passes the
    /// header limit.
    private func response(_ http: HTTPURLResponse, body: [UInt8]) -> Response? {
      var headers = HTTPHeaders()
      for (name, value) in http.allHeaderFields {
        headers.add("\(name)", "\(value)")
      }
      var headerBytes = 0
      for field in headers { headerBytes += field.name.utf8.count + field.value.utf8.count + 4 }
      if headerBytes > limits.maxHeaderSize { return nil }
      return Response(
        url: url, status: http.statusCode, headers: headers, body: body,
        timings: Timings(total: ContinuousClock.now - start),
        bytesReceived: headerBytes + body.count)
    }

    /// Ends the transfer with `http`'s head and no body when only markup
    /// bodies are wanted and this successful response is something else;
    /// returns true when it did (the task is then cancelled).
    func skipsBody(of http: HTTPURLResponse) -> Bool {
      guard limits.markupBodiesOnly, (200..<300).contains(http.statusCode),
        let type = http.value(forHTTPHeaderField: "Content-Type"), !type.isEmpty, !ContentType.isMarkup(type),
        var response = response(http, body: [])
      else { return false }
      response.bodySkipped = true
      stop(recording: nil)?.resume(returning: response)
      return true
    }

    /// Checks the header size as soon as the response head arrives.
    func headersArrived(_ response: URLResponse) -> Bool {
      guard let http = response as? HTTPURLResponse else { return true }
      var size = 0
      for (name, value) in http.allHeaderFields { size += "\(name)".utf8.count + "\(value)".utf8.count + 4 }
      if size > limits.maxHeaderSize {
        end(.headersTooLarge(host: url.host, limit: limits.maxHeaderSize))
        return false
      }
      return true
    }

    static func map(_ error: any Error, host: String?, limits: TransferLimits) -> FetchError {
      var mapped = mapped(error, host: host, limits: limits)
      mapped.detail = "\(type(of: error)) \((error as NSError).code): \((error as NSError).localizedDescription)"
      return mapped
    }

    private static func mapped(_ error: any Error, host: String?, limits: TransferLimits) -> FetchError {
      let name = host ?? "the server"
      guard let urlError = error as? Foundation.URLError else {
        return FetchError(.transport, host: host, "fetching from \(name) failed")
      }
      // FoundationNetworking passes some libcurl failures as code -1 with libcurl's text.
      let text = (urlError as NSError).localizedDescription
      if text.hasPrefix("transfer closed with") {
        return FetchError(.truncated, host: host, "the connection to \(name) ended before the response was complete")
      }
      if text.hasPrefix("Too large response headers") {
        return .headersTooLarge(host: host, limit: limits.maxHeaderSize)
      }
      switch urlError.code {
      case .timedOut: return .timeout(host: host, limit: limits.timeout)
      case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
        return FetchError(.connectFailed, host: host, "could not connect to \(name)")
      case .networkConnectionLost, .zeroByteResource:
        return FetchError(.truncated, host: host, "the connection to \(name) ended before the response was complete")
      case .badServerResponse, .cannotDecodeRawData, .cannotDecodeContentData, .cannotParseResponse:
        return FetchError(.invalidResponse, host: host, "\(name) sent an invalid HTTP response")
      case .cancelled: return .cancelled(host: host)
      case .dataLengthExceedsMaximum: return .bodyTooLarge(host: host, limit: limits.maxBodySize)
      case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
        .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
        return FetchError(.tls, host: host, "TLS with \(name) failed (certificate or handshake)")
      case .unsupportedURL, .badURL:
        // FoundationNetworking reports an invalid status line as "unsupported URL".
        return FetchError(.invalidResponse, host: host, "\(name) sent an invalid HTTP response")
      default: return FetchError(.transport, host: host, "fetching from \(name) failed")
      }
    }
  }

  /// The session delegate: refuses redirects, feeds bytes to the transfer states.
  ///
  /// `@unchecked Sendable` is safe: `states` is behind a lock; the rest is immutable.
  final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let states = Locked<[Int: TransferState]>([:])

    func register(_ id: Int, _ state: TransferState) {
      states.withLock { $0[id] = state }
    }

    private func state(_ task: URLSessionTask) -> TransferState? {
      states.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
      _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
      newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
      completionHandler(nil)
    }

    func urlSession(
      _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
      completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
      if let state = state(dataTask) {
        if !state.headersArrived(response) {
          completionHandler(.cancel)
          return
        }
        if let http = response as? HTTPURLResponse, state.skipsBody(of: http) {
          completionHandler(.cancel)
          return
        }
      }
      completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
      if let state = state(dataTask), state.receive(data) {
        if !state.limits.truncateBody {
          state.end(.bodyTooLarge(host: state.url.host, limit: state.limits.maxBodySize))
        }
        dataTask.cancel()
      }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
      guard let state = states.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
      let (continuation, result) = state.complete(response: task.response, error: error)
      continuation?.resume(with: result.mapError { $0 as any Error })
    }
  }
}
