#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ForageSupport
import ForageURL

/// Where a download's body goes: the rules of ``DownloadTransport`` in one place,
/// whichever transport delivers the bytes.
///
/// At the first body byte (``begin(status:headers:)``) it decides: a 206 continuing at
/// `offset` appends there; another 2xx truncates the file and starts at 0; any other
/// status is read and dropped. Then each piece is written at once (``write(_:)``),
/// within `limit` bytes.
///
/// `@unchecked Sendable` is safe: one transfer uses it, on one thread at a time (the
/// transport's event loop while the exchange runs, the caller after it ended).
final class DownloadSink: @unchecked Sendable {
  let fd: Int32
  let offset: Int
  let limit: Int
  let url: WebURL
  let progress: DownloadProgress?

  /// True once the status was seen and the file positioned.
  private(set) var decided = false
  /// True when the body goes to the file (a 2xx).
  private(set) var writing = false
  /// Where the body starts in the file.
  private(set) var start = 0
  /// Body bytes written.
  private(set) var written = 0
  /// Bytes of a non-2xx body read and dropped.
  private(set) var dropped = 0
  /// Why the sink stopped the exchange, when it did for a reason of its own
  /// (``DownloadWriteError``, or a 206 for the wrong range).
  private(set) var failure: (any Error)?

  /// The most bytes of a non-2xx body read before the exchange is cut short.
  static let droppedBodyLimit = 64 << 10

  init(fd: Int32, offset: Int, limit: Int, url: WebURL, progress: DownloadProgress?) {
    self.fd = fd
    self.offset = max(0, offset)
    self.limit = max(0, limit)
    self.url = url
    self.progress = progress
  }

  /// Decides where the body goes, from the response's status and headers. False
  /// (with ``failure`` set) when the exchange must stop.
  func begin(status: Int, headers: HTTPHeaders) -> Bool {
    decided = true
    guard (200..<300).contains(status) else { return true }
    if status == 206 {
      let range = headers["Content-Range"].flatMap(ContentRange.init)
      guard let first = range?.range?.lowerBound, first == offset else {
        let host = url.host
        failure = FetchError(
          .invalidResponse, host: host,
          "\(host ?? "the server") answered a request for bytes from \(offset) with another range "
            + "(Content-Range: \(headers["Content-Range"] ?? "none"))")
        return false
      }
      start = offset
    } else {
      start = 0
    }
    // The file holds exactly the bytes before `start`: a 200 restarts it from zero.
    // (A pipe or a device cannot be repositioned: the body is written on.)
    var info = stat()
    let regular = fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    if regular, ftruncate(fd, off_t(start)) != 0 || lseek(fd, off_t(start), SEEK_SET) < 0 {
      failure = DownloadWriteError(code: errno)
      return false
    }
    writing = true
    progress?.begin(ResponseHead(url: url, status: status, headers: headers, bodyStart: start))
    return true
  }

  /// What ``write(_:)`` did.
  enum Written {
    /// Written (or dropped, for a non-2xx body).
    case ok
    /// The body passed `limit`: end the exchange as `bodyTooLarge`.
    case tooLarge
    /// A non-2xx body passed ``droppedBodyLimit``: end the exchange, keep its head.
    case enoughDropped
    /// The write failed (``failure`` is set).
    case failed
  }

  /// Writes (or drops) the next piece of the body.
  func write(_ bytes: UnsafeRawBufferPointer) -> Written {
    guard writing else {
      dropped += bytes.count
      return dropped > Self.droppedBodyLimit ? .enoughDropped : .ok
    }
    if bytes.count > limit - written { return .tooLarge }
    let error = writeAll(fd, bytes.assumingMemoryBound(to: UInt8.self))
    if error != 0 {
      failure = DownloadWriteError(code: error)
      return .failed
    }
    written += bytes.count
    progress?.add(bytes.count)
    return .ok
  }

  /// The head of the finished exchange; positions the file for a 2xx whose body was
  /// empty (no byte ever came to ``begin(status:headers:)``).
  ///
  /// - Throws: ``failure``, or what positioning the file raised.
  func finish(_ response: Response) throws -> ResponseHead {
    if let failure { throw failure }
    if !decided, !begin(status: response.status, headers: response.headers), let failure { throw failure }
    return ResponseHead(
      url: response.url, status: response.status, headers: response.headers, bodyStart: writing ? start : 0,
      bodyBytesWritten: written, timings: response.timings, bytesReceived: response.bytesReceived,
      httpVersion: response.httpVersion)
  }
}

/// A download through a transport that cannot stream: the body is fetched whole into
/// memory (within `maxBodySize`), then written by the same rules. What
/// ``URLSessionTransport`` does, and the ``Fetcher`` for any transport that is not a
/// ``DownloadTransport``.
func bufferedDownload(
  _ transport: any Transport, _ request: Request, into fd: Int32, resumingAt offset: Int,
  progress: DownloadProgress?
) async throws -> ResponseHead {
  let response = try await transport.fetch(request)
  let sink = DownloadSink(
    fd: fd, offset: offset, limit: request.limits.maxBodySize, url: request.url, progress: progress)
  if !response.body.isEmpty {
    guard sink.begin(status: response.status, headers: response.headers) else {
      throw sink.failure ?? FetchError(.transport, host: request.url.host, "the download could not be written")
    }
    let result = response.body.withUnsafeBytes { sink.write($0) }
    switch result {
    case .ok, .enoughDropped: break
    case .tooLarge: throw FetchError.bodyTooLarge(host: request.url.host, limit: request.limits.maxBodySize)
    case .failed: throw sink.failure ?? DownloadWriteError(code: EIO)
    }
  }
  return try sink.finish(response)
}

extension URLSessionTransport: DownloadTransport {
  /// Downloads through ``bufferedDownload``: URLSession's data tasks deliver the body
  /// to the delegate, which keeps it in memory, so the whole body (up to
  /// `maxBodySize`) is held before it is written. Use ``CurlTransport`` for large
  /// files on Linux; a streaming URLSession download (download tasks, which also
  /// survive suspension on Apple platforms) is not built yet.
  public func download(_ request: Request, into fd: Int32, resumingAt offset: Int, progress: DownloadProgress?)
    async throws -> ResponseHead
  {
    try await bufferedDownload(self, request, into: fd, resumingAt: offset, progress: progress)
  }
}
