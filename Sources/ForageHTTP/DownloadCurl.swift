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
    let sink = DownloadSink(
      fd: fd, offset: offset, limit: request.limits.maxBodySize, url: request.url, progress: progress)
    let response: Response
    do {
      response = try await exchange(request, fetching: false) { $0.streamBody(to: sink) }
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
