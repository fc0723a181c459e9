#if canImport(CCurl)
import CCurl
import ForageSupport
import ForageURL

/// A ``Transport`` over libcurl's multi interface: the Linux default.
///
/// One event-loop thread per transport runs every transfer; connections are reused,
/// HTTP/2 is used when a TLS server offers it, gzip/deflate/br bodies are decoded,
/// TLS certificates are verified, and proxies come from the request or the
/// environment. Redirects are never followed here (the ``Fetcher`` follows them).
///
///     let transport = CurlTransport()
///     let response = try await transport.fetch(Request(url: WebURL("http://127.0.0.1:8080/")!))
///
/// - SeeAlso: <https://curl.se/libcurl/c/libcurl-multi.html>
public final class CurlTransport: Transport {
  private let loops: [CurlMulti]
  private let nextLoop = Locked(0)

  /// Creates a transport with `threads` event-loop threads (each with its own libcurl
  /// multi handle and connection cache; requests are spread round-robin).
  public init(threads: Int = 1) {
    loops = (0..<max(1, threads)).map { _ in CurlMulti() }
  }

  deinit {
    for loop in loops { loop.shutdown() }
  }

  /// The loop for a new transfer: the current thread's when called on a loop thread
  /// (a task preferring that executor), else the next one round-robin. Downloads
  /// (`DownloadCurl.swift`) take theirs here too.
  var multi: CurlMulti {
    if loops.count == 1 { return loops[0] }
    if let current = loops.first(where: \.isCurrentThread) { return current }
    let index = nextLoop.withLock { next in
      defer { next = (next + 1) % loops.count }
      return next
    }
    return loops[index]
  }

  /// The transport's event-loop thread as a task executor. Code that does little
  /// besides fetching can run on it, so that a finished transfer resumes its caller
  /// without a thread switch:
  ///
  ///     await withTaskExecutorPreference(transport.taskExecutor) {
  ///       for url in urls { _ = try? await transport.fetch(Request(url: url)) }
  ///     }
  ///
  /// Keep the transport alive while tasks prefer it. CPU-heavy work (parsing) belongs
  /// elsewhere: it would delay every transfer.
  public var taskExecutor: any TaskExecutor { loops[0] }

  /// One task executor per event-loop thread (see ``taskExecutor``).
  public var taskExecutors: [any TaskExecutor] { loops }

  /// Performs one exchange; cancelling the task aborts it.
  ///
  /// - Throws: ``FetchError``: `timeout`, `connectFailed`, `tooSlow`, `bodyTooLarge`,
  ///   `headersTooLarge`, `truncated`, `invalidResponse`, `tls`, `invalidURL`,
  ///   `cancelled` or `transport`.
  public func fetch(_ request: Request) async throws -> Response {
    try await exchange(request, fetching: true)
  }

  /// One exchange on a pooled handle: a fetch's (the body in memory), or a
  /// download's, whose `prepare` points the body at a file first.
  func exchange(_ request: Request, fetching: Bool, prepare: (CurlEasy) -> Void = { _ in }) async throws -> Response {
    let host = request.url.host
    guard request.url.isHTTP, host != nil else {
      throw FetchError(
        .invalidURL, host: host, "only http and https URLs with a host can be \(fetching ? "fetched" : "downloaded")")
    }
    if Task.isCancelled { throw FetchError.cancelled(host: host) }
    // One loop for the whole exchange: its pool gives the handle, its thread runs it.
    let multi = self.multi
    guard let (easy, id) = multi.acquire() else {
      throw FetchError(
        .transport, host: host,
        "the \(fetching ? "request to" : "download from") \(host ?? "the server") could not be started",
        detail: "curl_easy_init failed")
    }
    try easy.configure(request)
    prepare(easy)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        easy.continuation = continuation
        multi.submit(easy)
      }
    } onCancel: {
      multi.cancel(easy, id: id)
    }
  }
}
#endif
