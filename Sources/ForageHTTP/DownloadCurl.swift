#if canImport(CCurl)
import CCurl
import ForageURL

extension DownloadSink {
  /// libcurl's receive buffer for downloads (`CURLOPT_BUFFERSIZE`): fewer, larger
  /// writes than the 16 KiB default.
  static let receiveBufferSize = 512 << 10
}

extension CurlTransport: DownloadTransport {
  /// Streams the body into `fd` from libcurl's write callback on the event-loop
  /// thread: memory stays at one receive buffer whatever the file's size. The body is
  /// not content-decoded (no `Accept-Encoding` is sent), so byte ranges stay valid.
  ///
  /// - Throws: ``FetchError`` (the kinds of ``fetch(_:)``), ``DownloadWriteError``.
  public func download(_ request: Request, into fd: Int32, resumingAt offset: Int, progress: DownloadProgress?)
    async throws -> ResponseHead
  {
    let host = request.url.host
    guard request.url.isHTTP, host != nil else {
      throw FetchError(.invalidURL, host: host, "only http and https URLs with a host can be downloaded")
    }
    if Task.isCancelled { throw FetchError.cancelled(host: host) }
    let multi = self.multi
    guard let (easy, id) = multi.acquire() else {
      throw FetchError(
        .transport, host: host, "the download from \(host ?? "the server") could not be started",
        detail: "curl_easy_init failed")
    }
    try easy.configure(request)
    let sink = DownloadSink(
      fd: fd, offset: offset, limit: request.limits.maxBodySize, url: request.url, progress: progress)
    easy.streamBody(to: sink)
    let response: Response
    do {
      response = try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
          easy.continuation = continuation
          multi.submit(easy)
        }
      } onCancel: {
        multi.cancel(easy, id: id)
      }
    } catch {
      throw sink.failure ?? error
    }
    return try sink.finish(response)
  }
}

extension CurlEasy {
  /// The write callback's work for a download (event-loop thread): the first piece
  /// decides where the body goes (see ``DownloadSink/begin(status:headers:)``).
  func receiveDownload(_ data: UnsafeRawBufferPointer, into sink: DownloadSink) -> Int {
    if !sink.decided {
      var status = 0
      _ = forage_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
      guard sink.begin(status: status, headers: headers) else { return 0 }
    }
    switch sink.write(data) {
    case .ok: return data.count
    case .tooLarge:
      abort = .bodyTooLarge
      return 0
    case .enoughDropped:
      // The status and headers are what matters: end the exchange, keep its head.
      abort = .truncatedAtLimit
      return 0
    case .failed:
      return 0
    }
  }
}
#endif
