#if canImport(CCurl)
import CCurl
import ForageURL

/// One libcurl easy handle (`CURL *`) and the state of the transfer it runs.
///
/// The handle is owned by this object alone and freed in `deinit`. Handles are
/// pooled by ``CurlMulti`` and reset between transfers.
///
/// `@unchecked Sendable` is safe: the async caller configures the handle before
/// submitting it; from submission to completion only the event-loop thread touches the
/// transfer state (the callbacks run on it); `transferID` and `cancelRequested` are
/// read and written under the multi's lock only.
final class CurlEasy: @unchecked Sendable {
  let handle: UnsafeMutableRawPointer
  private let errorBuffer: UnsafeMutablePointer<CChar>
  private var headerList: UnsafeMutablePointer<curl_slist>?
  /// The fields `headerList` was built from: the next request with the same
  /// fields (a crawl's requests mostly are) reuses the list.
  private var listedFields: [HTTPHeaders.Field] = []

  // Guarded by CurlMulti's lock.
  var transferID: UInt64 = 0
  var cancelRequested = false

  // Transfer state: event-loop thread only once submitted.
  var url: WebURL?
  var limits = TransferLimits()
  var body: [UInt8] = []
  var headers = HTTPHeaders()
  var headerBytes = 0
  var abort: Abort?
  var continuation: CheckedContinuation<Response, any Error>?
  /// Set for a download (``streamBody(to:)``): the body goes to its file, not `body`.
  var sink: DownloadSink?
  private var baseConfigured = false
  private var needsFullReset = false

  enum Abort {
    case bodyTooLarge, headersTooLarge, truncatedAtLimit
    /// The body is not markup and only markup was asked for: the response
    /// stands without it (``TransferLimits/markupBodiesOnly``).
    case skippedBody
  }

  init?() {
    guard let handle = curl_easy_init() else { return nil }
    self.handle = handle
    errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
  }

  deinit {
    curl_easy_cleanup(handle)
    if let headerList { curl_slist_free_all(headerList) }
    errorBuffer.deallocate()
  }

  var errorMessage: String { String(cString: errorBuffer) }

  /// Sets every option for `request`. Called before submission, on the caller's thread.
  ///
  /// - Throws: ``FetchError`` (`invalidURL`) when libcurl refuses an option.
  func configure(_ request: Request) throws {
    url = request.url
    limits = request.limits
    body = []
    headers = HTTPHeaders()
    headerBytes = 0
    abort = nil
    errorBuffer[0] = 0
    let host = request.url.host
    var ok = true
    func check(_ code: CURLcode) { if code != CURLE_OK { ok = false } }

    if needsFullReset {
      curl_easy_reset(handle)
      baseConfigured = false
      needsFullReset = false
    }
    if !baseConfigured {
      // Options that never change: set once per handle, kept across reuse.
      "http,https".withCString { check(forage_easy_setopt_ptr(handle, CURLOPT_PROTOCOLS_STR, $0)) }
      check(forage_easy_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer))
      check(forage_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
      check(forage_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
      check(forage_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)))
      // "" asks for every encoding libcurl can decode (gzip, deflate, br, zstd).
      "".withCString { check(forage_easy_setopt_ptr(handle, CURLOPT_ACCEPT_ENCODING, $0)) }
      check(forage_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
      check(forage_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
      let me = Unmanaged.passUnretained(self).toOpaque()
      check(forage_easy_setopt_write(handle, CURLOPT_WRITEFUNCTION, curlWrite))
      check(forage_easy_setopt_ptr(handle, CURLOPT_WRITEDATA, me))
      check(forage_easy_setopt_write(handle, CURLOPT_HEADERFUNCTION, curlHeader))
      check(forage_easy_setopt_ptr(handle, CURLOPT_HEADERDATA, me))
      baseConfigured = ok
    }

    let target = request.url.fragment == nil ? request.url.href : request.url.removingFragment.href
    target.withCString { check(forage_easy_setopt_ptr(handle, CURLOPT_URL, $0)) }
    check(forage_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, clampMS(limits.timeout)))
    check(
      forage_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, clampMS(limits.connectTimeout)))
    // A limit of 0 turns the low-speed check off.
    check(forage_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, max(0, limits.lowSpeedLimit)))
    let seconds = max(1, Int((limits.lowSpeedTime.seconds).rounded(.up)))
    check(forage_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, seconds))
    // Refuses early when Content-Length already says too much (0: no limit).
    let declaredLimit = limits.truncateBody ? 0 : curl_off_t(limits.maxBodySize)
    check(forage_easy_setopt_off(handle, CURLOPT_MAXFILESIZE_LARGE, declaredLimit))
    if let proxy = request.proxy {
      proxy.withCString { check(forage_easy_setopt_ptr(handle, CURLOPT_PROXY, $0)) }
      needsFullReset = true
    }
    if request.method != "GET" || request.body != nil { needsFullReset = true }

    switch request.method {
    case "GET": break
    case "HEAD": check(forage_easy_setopt_long(handle, CURLOPT_NOBODY, 1))
    default:
      request.method.withCString {
        check(forage_easy_setopt_ptr(handle, CURLOPT_CUSTOMREQUEST, $0))
      }
    }
    if let payload = request.body {
      check(forage_easy_setopt_long(handle, CURLOPT_POSTFIELDSIZE, payload.count))
      payload.withUnsafeBytes {
        check(forage_easy_setopt_ptr(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress))
      }
    }

    if request.headers.fields != listedFields {
      if let headerList { curl_slist_free_all(headerList) }
      headerList = nil
      for field in request.headers {
        // "Name;" sends an empty header in libcurl's syntax; "Name:" would remove it.
        let line = field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"
        headerList = curl_slist_append(headerList, line)
      }
      listedFields = request.headers.fields
    }
    // Set on every request: a full reset clears it, and nil sends none.
    check(forage_easy_setopt_ptr(handle, CURLOPT_HTTPHEADER, headerList))
    if !ok {
      throw FetchError(.invalidURL, host: host, "libcurl refused the request options for \(host ?? "this URL")")
    }
  }

  /// Clears the transfer state for reuse; options set for every request stay (a
  /// request that set a method, body or proxy makes the next `configure` reset all).
  /// The connection cache lives in the multi handle.
  func reset() {
    body = []
    headers = HTTPHeaders()
    continuation = nil
    url = nil
    sink = nil
  }

  /// Makes the configured transfer a download into `sink`: bodies are not decoded (a
  /// range of an encoded body could not be resumed) and arrive in larger pieces. The
  /// handle is fully reset before its next request.
  func streamBody(to sink: DownloadSink) {
    self.sink = sink
    _ = forage_easy_setopt_ptr(handle, CURLOPT_ACCEPT_ENCODING, nil)
    _ = forage_easy_setopt_long(handle, CURLOPT_BUFFERSIZE, DownloadSink.receiveBufferSize)
    needsFullReset = true
  }

  /// Turns the finished transfer into a response or an error (event-loop thread).
  func result(_ code: CURLcode) -> Result<Response, FetchError> {
    let host = url?.host
    switch abort {
    case .bodyTooLarge?: return .failure(.bodyTooLarge(host: host, limit: limits.maxBodySize))
    case .headersTooLarge?:
      return .failure(.headersTooLarge(host: host, limit: limits.maxHeaderSize))
    case .truncatedAtLimit?, .skippedBody?, nil: break
    }
    let stoppedOnPurpose = abort == .truncatedAtLimit || abort == .skippedBody
    if code != CURLE_OK && !(stoppedOnPurpose && code == CURLE_WRITE_ERROR) {
      return .failure(error(for: code))
    }
    var status = 0
    _ = forage_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
    var version = 0
    _ = forage_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
    var headerSize = 0
    _ = forage_easy_getinfo_long(handle, CURLINFO_HEADER_SIZE, &headerSize)
    var downloaded: curl_off_t = 0
    _ = forage_easy_getinfo_off(handle, CURLINFO_SIZE_DOWNLOAD_T, &downloaded)
    func time(_ info: CURLINFO) -> Duration? {
      var micros: curl_off_t = 0
      guard forage_easy_getinfo_off(handle, info, &micros) == CURLE_OK, micros > 0 else {
        return nil
      }
      return .microseconds(micros)
    }
    let timings = Timings(
      dns: time(CURLINFO_NAMELOOKUP_TIME_T), connect: time(CURLINFO_CONNECT_TIME_T),
      tls: time(CURLINFO_APPCONNECT_TIME_T), firstByte: time(CURLINFO_STARTTRANSFER_TIME_T),
      total: time(CURLINFO_TOTAL_TIME_T) ?? .zero)
    let versionName: String? =
      switch version {
      case Int(CURL_HTTP_VERSION_1_0): "1.0"
      case Int(CURL_HTTP_VERSION_1_1): "1.1"
      case Int(CURL_HTTP_VERSION_2_0): "2"
      case Int(CURL_HTTP_VERSION_3): "3"
      default: nil
      }
    guard status >= 100, let url else {
      return .failure(FetchError(.invalidResponse, host: host, "\(host ?? "the server") sent no valid status line"))
    }
    var response = Response(
      url: url, status: status, headers: headers, body: body, timings: timings,
      bytesReceived: headerSize + Int(downloaded), httpVersion: versionName)
    response.bodySkipped = abort == .skippedBody
    return .success(response)
  }

  /// Maps a libcurl error code to a typed error naming the limit and host.
  private func error(for code: CURLcode) -> FetchError {
    var error = mappedError(for: code)
    let text = errorMessage.isEmpty ? String(cString: curl_easy_strerror(code)) : errorMessage
    error.detail = "libcurl code \(code.rawValue): \(text)"
    return error
  }

  private func mappedError(for code: CURLcode) -> FetchError {
    let host = url?.host
    let name = host ?? "the server"
    let detail = errorMessage
    switch code {
    case CURLE_OPERATION_TIMEDOUT:
      if detail.hasPrefix("Operation too slow") {
        return .tooSlow(host: host, bytesPerSecond: limits.lowSpeedLimit, window: limits.lowSpeedTime)
      }
      if detail.hasPrefix("Connection timed out") || detail.hasPrefix("Resolving timed out")
        || detail.hasPrefix("Failed to connect")
      {
        return FetchError(
          .connectFailed, host: host,
          "could not connect to \(name) within connectTimeout (\(formatDuration(limits.connectTimeout)))")
      }
      return .timeout(host: host, limit: limits.timeout)
    case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
      return FetchError(.connectFailed, host: host, "could not resolve \(name)")
    case CURLE_COULDNT_CONNECT:
      return FetchError(.connectFailed, host: host, "could not connect to \(name)")
    case CURLE_FILESIZE_EXCEEDED:
      return .bodyTooLarge(host: host, limit: limits.maxBodySize)
    case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2,
      CURLE_HTTP2_STREAM:
      return FetchError(
        .truncated, host: host, "the connection to \(name) ended before the response was complete")
    case CURLE_WEIRD_SERVER_REPLY, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_CONTENT_ENCODING,
      CURLE_HTTP_RETURNED_ERROR:
      return FetchError(.invalidResponse, host: host, "\(name) sent an invalid HTTP response")
    case CURLE_OUT_OF_MEMORY where detail.lowercased().contains("header"):
      return .headersTooLarge(host: host, limit: limits.maxHeaderSize)
    case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
      CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR,
      CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
      return FetchError(.tls, host: host, "TLS with \(name) failed (certificate or handshake)")
    case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
      return FetchError(.invalidURL, host: host, "libcurl cannot fetch this URL")
    default:
      let text = String(cString: curl_easy_strerror(code))
      return FetchError(.transport, host: host, "fetching from \(name) failed: \(text)")
    }
  }

  /// Called by libcurl with decoded body bytes; returning less than given aborts.
  func receiveBody(_ data: UnsafeRawBufferPointer) -> Int {
    if let sink { return receiveDownload(data, into: sink) }
    let bytes = data.assumingMemoryBound(to: UInt8.self)  // typed: appends by memcpy
    if limits.markupBodiesOnly && body.isEmpty && !wantsBody() {
      abort = .skippedBody
      return 0
    }
    let room = limits.maxBodySize - body.count
    if bytes.count > room {
      if limits.truncateBody {
        body.append(contentsOf: UnsafeBufferPointer(rebasing: bytes.prefix(max(0, room))))
        abort = .truncatedAtLimit
      } else {
        abort = .bodyTooLarge
      }
      return 0
    }
    body.append(contentsOf: bytes)
    return bytes.count
  }

  /// False when the response being received is a success whose given
  /// `Content-Type` is not markup (asked on its first body bytes, when the
  /// head is complete).
  private func wantsBody() -> Bool {
    var status = 0
    _ = forage_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
    guard (200..<300).contains(status), let type = headers["Content-Type"], !type.isEmpty else { return true }
    return ContentType.isMarkup(type)
  }

  /// Called by libcurl once per header line (status line and blank line included).
  func receiveHeader(_ data: UnsafeRawBufferPointer) -> Int {
    headerBytes += data.count
    if headerBytes > limits.maxHeaderSize {
      abort = .headersTooLarge
      return 0
    }
    let line = data.assumingMemoryBound(to: UInt8.self)
    var end = line.count
    while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
    if end == 0 { return data.count }
    if line.count >= 5, line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == 0x2F {
      // "HTTP/": a new response starts (after 1xx or a proxy's CONNECT reply).
      headers = HTTPHeaders(capacity: 16)
    } else if line[0] == 0x20 || line[0] == 0x09 {
      // obs-fold continuation line (RFC 9112 §5.2): join to the previous value.
      if let last = headers.fields.last {
        headers.replaceLast(value: last.value + " " + Self.text(line, 0, end))
      }
    } else if let colon = line[0..<end].firstIndex(of: UInt8(ascii: ":")) {
      let name = Self.text(line, 0, colon)
      let value = Self.text(line, colon + 1, end)
      if colon == 14, sink == nil, body.isEmpty, HTTPHeaders.same(name, "Content-Length"), let length = Int(value), length > 0 {
        body.reserveCapacity(min(length, limits.maxBodySize))
      }
      headers.add(name, value)
    }
    return data.count
  }

  /// The bytes `start..<end` of `line` without surrounding spaces and tabs, as text,
  /// with each CR, LF or NUL inside replaced by a space, as RFC 9110 §5.5 asks of a
  /// recipient: a value sent back (a cookie, an ETag) must not split or cut a request
  /// header.
  ///
  /// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9110#name-field-values>
  private static func text(_ line: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String {
    var start = start
    var end = end
    while start < end, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
    while end > start, line[end - 1] == 0x20 || line[end - 1] == 0x09 { end -= 1 }
    let bytes = UnsafeBufferPointer(rebasing: line[start..<end])
    if bytes.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
      return String(decoding: bytes.map { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 ? 0x20 : $0 }, as: UTF8.self)
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}

private func clampMS(_ d: Duration) -> Int {
  Int(max(1, min(d.milliseconds, Int64(Int32.max))))
}

private let curlWrite: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
  data, size, count, context in
  guard let context else { return 0 }
  let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
  return easy.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
}

private let curlHeader: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
  data, size, count, context in
  guard let context else { return 0 }
  let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
  return easy.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
}
#endif
