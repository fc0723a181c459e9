import ForageURL

/// An HTTP response with its whole (decoded) body.
///
///     let response = try await transport.fetch(Request(url: url))
///     if response.status == 200 { parse(response.body) }
public struct Response: Sendable {
  /// The URL that answered: the last hop when the ``Fetcher`` followed redirects.
  public var url: WebURL
  /// The status code, such as 200 or 304.
  public var status: Int
  /// The response header fields (of the final hop).
  public var headers: HTTPHeaders
  /// The body after content decoding (gzip, deflate, br); empty for 304 and HEAD.
  public var body: [UInt8]
  /// The URLs redirected from, in order, ending before ``url``; empty without redirects.
  public var redirectChain: [WebURL]
  /// Phase timings of the final exchange.
  public var timings: Timings
  /// Bytes received on the wire (headers plus encoded body) over every hop.
  public var bytesReceived: Int
  /// The HTTP version spoken, such as `"1.1"` or `"2"`, when known.
  public var httpVersion: String?
  /// True when the body was not read because its `Content-Type` is not
  /// markup and the request asked only for markup bodies
  /// (``TransferLimits/markupBodiesOnly``); ``body`` is then empty.
  public var bodySkipped = false

  /// Creates a response.
  public init(
    url: WebURL, status: Int, headers: HTTPHeaders = [:], body: [UInt8] = [],
    redirectChain: [WebURL] = [], timings: Timings = Timings(), bytesReceived: Int = 0,
    httpVersion: String? = nil
  ) {
    self.url = url
    self.status = status
    self.headers = headers
    self.body = body
    self.redirectChain = redirectChain
    self.timings = timings
    self.bytesReceived = bytesReceived
    self.httpVersion = httpVersion
  }

  /// True for a 3xx status that carries a `Location` header.
  public var isRedirect: Bool {
    [301, 302, 303, 307, 308].contains(status) && headers["Location"] != nil
  }

  /// The body decoded as UTF-8, replacing invalid bytes (charset sniffing is the
  /// HTML parser's job).
  public var text: String { String(decoding: body, as: UTF8.self) }
}
