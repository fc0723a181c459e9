#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ForageSupport
import ForageURL

/// A ``Transport`` that can also stream a response body into a file as it arrives,
/// so that a download of any size holds no more than one network buffer in memory.
///
///     let fd = open("big.iso.part", O_RDWR | O_CREAT, 0o644)
///     let progress = DownloadProgress()
///     let head = try await transport.download(request, into: fd, resumingAt: 0, progress: progress)
///     // head.status, head.bodyBytesWritten; the bytes are in the file (not yet fsynced)
///
/// ``CurlTransport`` streams; ``URLSessionTransport`` buffers the body first (see its
/// conformance). The same ``TransferLimits`` apply as to ``Transport/fetch(_:)``: the
/// low-speed window, the header limit, the connect and total timeouts, and
/// ``TransferLimits/maxBodySize`` as the most body bytes written (pass the expected
/// size plus a little when it is known).
public protocol DownloadTransport: Transport {
  /// Performs `request` and writes the body of a 2xx answer to `fd`:
  ///
  /// - a `206 Partial Content` whose `Content-Range` starts at `offset` continues the
  ///   file there (a 206 for another range ends the exchange with
  ///   ``FetchError/Kind/invalidResponse``);
  /// - any other 2xx (a server that ignores `Range`, or one whose file changed under
  ///   `If-Range`) replaces the file's content from byte 0: the file is truncated first.
  ///
  /// Any other status is returned with its head; its body is read and dropped (up to
  /// 64 KiB, after which the connection is closed), never written. Bytes are written
  /// with `write(2)` as they arrive and not fsynced: that is the caller's job, which
  /// can read how far it got from `progress` at any time, including after an error.
  ///
  /// Cancelling the calling task aborts the exchange; what was written stays written.
  ///
  /// - Throws: ``FetchError`` as ``Transport/fetch(_:)`` does (`bodyTooLarge` past
  ///   `maxBodySize`); ``DownloadWriteError`` when the file cannot be written (a full
  ///   disk).
  func download(_ request: Request, into fd: Int32, resumingAt offset: Int, progress: DownloadProgress?)
    async throws -> ResponseHead
}

/// The head of a response whose body went to a file, and where the body went.
public struct ResponseHead: Sendable {
  /// The URL that answered.
  public var url: WebURL
  /// The status code.
  public var status: Int
  /// The response header fields.
  public var headers: HTTPHeaders
  /// Where the body starts in the file: the requested offset for a matching 206, 0
  /// for any other 2xx.
  public var bodyStart: Int
  /// Body bytes written to the file by this exchange (0 for a status other than 2xx).
  public var bodyBytesWritten: Int
  /// Phase timings (zero while the exchange runs).
  public var timings: Timings
  /// Bytes received on the wire (0 while the exchange runs).
  public var bytesReceived: Int
  /// The HTTP version spoken, when known.
  public var httpVersion: String?

  /// Creates a head.
  public init(
    url: WebURL, status: Int, headers: HTTPHeaders, bodyStart: Int = 0, bodyBytesWritten: Int = 0,
    timings: Timings = Timings(), bytesReceived: Int = 0, httpVersion: String? = nil
  ) {
    self.url = url
    self.status = status
    self.headers = headers
    self.bodyStart = bodyStart
    self.bodyBytesWritten = bodyBytesWritten
    self.timings = timings
    self.bytesReceived = bytesReceived
    self.httpVersion = httpVersion
  }

  /// The file's length once the body is written: ``bodyStart`` plus
  /// ``bodyBytesWritten``.
  public var fileSize: Int { bodyStart + bodyBytesWritten }

  /// The whole representation's length, when the server said it: the total of a
  /// 206's `Content-Range`, else a 200's `Content-Length` (nil for a compressed
  /// body, whose decoded length is not known).
  public var representationLength: Int? {
    if status == 206 { return headers["Content-Range"].flatMap(ContentRange.init)?.completeLength }
    guard (200..<300).contains(status), headers["Content-Encoding"] == nil else { return nil }
    return headers["Content-Length"].flatMap { Int($0.trimmingOWS()) }
  }
}

/// How far a streamed download got, readable from any thread while it runs (for a
/// progress line, and for the caller that fsyncs and records the bytes written).
public final class DownloadProgress: Sendable {
  /// One consistent reading.
  public struct Snapshot: Sendable {
    /// The head of the 2xx response being written, once its first byte came (or
    /// once an empty 2xx body ended); nil before that and for other statuses.
    public var head: ResponseHead?
    /// Body bytes written so far by this exchange.
    public var written: Int
    /// The file's length so far: the body's start plus ``written`` (0 without a head).
    public var fileSize: Int { (head?.bodyStart ?? 0) + written }
  }

  private let state = Locked(Snapshot(head: nil, written: 0))

  /// Creates an empty progress.
  public init() {}

  /// The current reading.
  public var snapshot: Snapshot { state.withLock { $0 } }

  func begin(_ head: ResponseHead) {
    state.withLock {
      $0.head = head
      $0.written = 0
    }
  }

  func add(_ count: Int) {
    state.withLock { $0.written += count }
  }
}

/// A download's file could not be written: the disk is full, a quota was reached,
/// or another I/O error. The bytes written before it stay in the file.
public struct DownloadWriteError: Error, Sendable, CustomStringConvertible {
  /// The `errno` of the write that failed (`ENOSPC`, `EDQUOT`, `EIO`…).
  public let code: Int32

  /// Creates the error for `errno` value `code`.
  public init(code: Int32) { self.code = code }

  /// True when the disk (or the user's quota) is full.
  public var isDiskFull: Bool { code == ENOSPC || code == EDQUOT }

  public var description: String {
    isDiskFull
      ? "the disk is full (\(String(cString: strerror(code))))"
      : "writing the file failed (\(String(cString: strerror(code))))"
  }
}

/// A `Content-Range` header of a 206 or 416 answer (RFC 9110 §14.4):
/// `bytes 100-199/1000`, `bytes 100-199/*`, `bytes */1000`.
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9110#name-content-range>
public struct ContentRange: Sendable, Hashable {
  /// The first and last byte positions sent, nil for an unsatisfied range (`*`).
  public var range: ClosedRange<Int>?
  /// The representation's length, nil when the server does not know it (`*`).
  public var completeLength: Int?

  /// Parses a `Content-Range` value; nil when it is not a valid byte range.
  public init?(_ text: String) {
    let value = text.trimmingOWS()
    guard value.count > 6, value.prefix(6).lowercased() == "bytes " else { return nil }
    let rest = value.dropFirst(6).trimmingOWS()
    guard let slash = rest.firstIndex(of: "/") else { return nil }
    let positions = rest[..<slash]
    let length = rest[rest.index(after: slash)...]
    if length == "*" {
      completeLength = nil
    } else {
      guard let n = Self.number(length) else { return nil }
      completeLength = n
    }
    if positions == "*" {
      guard completeLength != nil else { return nil }
      range = nil
    } else {
      let parts = positions.split(separator: "-", omittingEmptySubsequences: false)
      guard parts.count == 2, let first = Self.number(parts[0]), let last = Self.number(parts[1]), first <= last
      else { return nil }
      if let completeLength, last >= completeLength { return nil }
      range = first...last
    }
  }

  private static func number(_ s: Substring) -> Int? {
    guard !s.isEmpty, s.count <= 18, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
    return Int(s)
  }
}

extension Substring {
  /// The text without leading and trailing spaces and tabs (optional whitespace,
  /// RFC 9110 §5.6.3).
  func trimmingOWS() -> Substring {
    var s = self
    while let first = s.first, first == " " || first == "\t" { s = s.dropFirst() }
    while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
    return s
  }
}

extension String {
  /// The text without leading and trailing spaces and tabs.
  func trimmingOWS() -> Substring { self[...].trimmingOWS() }
}
