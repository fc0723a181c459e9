/// How long each phase of one HTTP exchange took, measured from its start.
///
/// A phase the transport could not observe (URLSession on Linux reports fewer
/// phases than libcurl) is `nil`; a reused connection has zero DNS and connect times.
///
/// - SeeAlso: <https://curl.se/libcurl/c/curl_easy_getinfo.html#TIMES>
public struct Timings: Sendable, Hashable {
  /// Until the host name was resolved.
  public var dns: Duration?
  /// Until the TCP connection was established.
  public var connect: Duration?
  /// Until the TLS handshake finished (nil for plain HTTP).
  public var tls: Duration?
  /// Until the first response byte arrived.
  public var firstByte: Duration?
  /// Until the exchange finished.
  public var total: Duration

  /// Creates timings.
  public init(
    dns: Duration? = nil, connect: Duration? = nil, tls: Duration? = nil,
    firstByte: Duration? = nil, total: Duration = .zero
  ) {
    self.dns = dns
    self.connect = connect
    self.tls = tls
    self.firstByte = firstByte
    self.total = total
  }
}
