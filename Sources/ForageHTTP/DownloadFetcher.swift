import ForageURL

/// How ``Fetcher/download(_:into:resumingAt:headers:limits:deadline:progress:)`` ended.
public enum DownloadOutcome: Sendable {
  /// The final answer after redirects: a 2xx whose body is in the file (see
  /// ``DownloadTransport``), or any other status, whose body was dropped.
  case answered(ResponseHead)
  /// Not started, or cut short, because of the deadline; what was written is in the
  /// file, and the progress object says how much.
  case deferred(reason: String)
  /// No answer: a ``FetchError`` (the transfer's limits, too many redirects,
  /// cancellation) or a ``DownloadWriteError`` (a full disk). What was written before
  /// stays in the file.
  case failed(any Error)
}

extension Fetcher {
  /// Downloads `url` into `fd` through the transport's streaming call
  /// (``DownloadTransport``; other transports buffer the body first), following
  /// redirects itself, each hop under the same per-host politeness as
  /// ``fetch(_:settings:validators:deadline:scope:)``: a download holds one of its
  /// host's slots while it runs, waits for the host's delay before it starts, and a
  /// 429 or 503 slows the host down for the crawl too. The fetcher's headers go with
  /// it (`User-Agent`, the settings' headers, credentials for their origins), then
  /// `headers` (a `Range`, an `If-Range`).
  ///
  /// Unlike a fetch, a download is not retried here (its caller resumes it), is not
  /// checked against robots.txt (a person or a feed asked for this file; robots.txt
  /// rules crawling), and its duration does not count as the host's latency.
  ///
  /// - Parameters:
  ///   - offset: where a matching 206 continues the file.
  ///   - limits: the exchange's limits; `maxBodySize` bounds the bytes written.
  ///   - deadline: no hop starts after it, and a running one ends at it
  ///     (``DownloadOutcome/deferred(reason:)``).
  public func download(
    _ url: WebURL, into fd: Int32, resumingAt offset: Int, headers extra: HTTPHeaders = [:],
    limits: TransferLimits, deadline: ContinuousClock.Instant? = nil, progress: DownloadProgress? = nil
  ) async -> DownloadOutcome {
    let first = url.removingFragment
    var current = first
    var visited: Set<String> = [first.href]
    var hops = 0
    while true {
      guard let key = Self.key(current) else {
        return .failed(FetchError(.invalidURL, host: current.host, "only http and https URLs with a host can be downloaded"))
      }
      if let problem = credentialProblem(for: current, original: first, settings: settings) { return .failed(problem) }
      switch await acquire(key, settings: settings, deadline: deadline) {
      case .deferred(let reason): return .deferred(reason: reason)
      case .cancelled: return .failed(FetchError.cancelled(host: current.host))
      case .budgetUnavailable(let error): return .failed(FetchError.budgetUnavailable(host: current.host, error))
      case .acquired: break
      }
      var request = Request(url: current, limits: limits, proxy: settings.proxy)
      var headers = self.headers(for: current, original: first, settings: settings, validators: nil)
      for field in extra { headers.replaceOrAdd(field.name, field.value) }
      request.headers = headers
      var cutByDeadline = false
      if let deadline, deadline - clock.now < request.limits.timeout {
        request.limits.timeout = max(.milliseconds(1), deadline - clock.now)
        cutByDeadline = true
      }
      let started = clock.now
      let head: ResponseHead
      do {
        if let streaming = transport as? any DownloadTransport {
          head = try await streaming.download(request, into: fd, resumingAt: offset, progress: progress)
        } else {
          head = try await bufferedDownload(transport, request, into: fd, resumingAt: offset, progress: progress)
        }
      } catch {
        let fetchError = error as? FetchError
        let elapsed = clock.now - started
        if cutByDeadline && fetchError?.kind == .timeout {
          release(key, elapsed: elapsed, outcome: .abandoned)
          return .deferred(reason: "the deadline passed while downloading from \(current.host ?? "the host")")
        }
        let failedHere = fetchError.map { $0.kind != .cancelled && $0.kind != .bodyTooLarge } ?? false
        release(key, elapsed: elapsed, outcome: failedHere ? .failed : .abandoned)
        return .failed(error)
      }
      let elapsed = clock.now - started
      switch head.status {
      case 429, 503:
        let retryAfter = head.headers["Retry-After"].flatMap { RetryPolicy.parseRetryAfter($0) }
        release(key, elapsed: elapsed, outcome: .throttled(retryAfter: retryAfter))
      case 200..<300:
        // A body's transfer time says nothing about the host's latency.
        release(key, elapsed: elapsed, outcome: .abandoned)
      default:
        release(key, elapsed: elapsed, outcome: .response(status: head.status))
      }
      guard [301, 302, 303, 307, 308].contains(head.status), let location = head.headers["Location"] else {
        return .answered(head)
      }
      switch Self.redirectTarget(
        from: current, to: location, hops: hops, maxRedirects: settings.maxRedirects, visited: &visited)
      {
      case .success(let next):
        hops += 1
        current = next
      case .failure(let error):
        return .failed(error)
      }
    }
  }
}
