import ForageSupport

/// A response for the test server to send: status, header fields and body.
///
/// The server adds `Content-Length` (unless a field already frames the body) and
/// `Connection: close` when it will close the connection; a `HEAD` request gets the
/// same fields and no body.
///
///     Route { request in .html("<h1>Hello</h1>") }
///     Route { _ in .redirect(to: "/elsewhere", status: 301) }
///     Route { _ in TestResponse(status: 204, body: []) }
public struct TestResponse: Sendable {
  /// The status code; the reason phrase comes from ``reasonPhrase(for:)``.
  public var status: Int
  /// Header fields in the order to send them.
  public var fields: [HTTPField]
  /// The body, sent as is.
  public var body: [UInt8]

  /// Creates a response from its parts.
  public init(status: Int = 200, headers: [(String, String)] = [], body: [UInt8]) {
    self.status = status
    self.fields = headers.map { HTTPField(name: $0.0, value: $0.1) }
    self.body = body
  }

  /// Header fields as `(name, value)` pairs.
  public var headers: [(name: String, value: String)] { fields.map { ($0.name, $0.value) } }

  /// The first value of a header field, matched case-insensitively.
  public func header(_ name: String) -> String? {
    let wanted = name.lowercased()
    return fields.first { $0.name.lowercased() == wanted }?.value
  }

  /// An HTML page, `text/html; charset=utf-8`.
  public static func html(_ s: String, status: Int = 200, headers: [(String, String)] = []) -> TestResponse {
    TestResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8")] + headers,
                 body: Array(s.utf8))
  }

  /// Plain text, `text/plain; charset=utf-8`.
  public static func text(_ s: String, status: Int = 200, headers: [(String, String)] = []) -> TestResponse {
    TestResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + headers,
                 body: Array(s.utf8))
  }

  /// JSON text given as a string, `application/json`.
  public static func json(_ s: String, status: Int = 200, headers: [(String, String)] = []) -> TestResponse {
    TestResponse(status: status, headers: [("Content-Type", "application/json")] + headers,
                 body: Array(s.utf8))
  }

  /// A redirect to `location` (sent as given: relative or absolute).
  /// https://www.rfc-editor.org/rfc/rfc9110#name-redirection-3xx
  public static func redirect(to location: String, status: Int = 302) -> TestResponse {
    TestResponse(status: status, headers: [("Location", location), ("Content-Type", "text/plain")],
                 body: Array("Redirecting to \(location)\n".utf8))
  }

  /// A 404 page.
  public static func notFound(_ target: String = "") -> TestResponse {
    .html("<!DOCTYPE html><title>Not found</title><h1>404 Not Found</h1><p>\(escapeHTML(target))</p>\n",
          status: 404)
  }

  /// The same response with its body gzip-compressed (stored blocks) and
  /// `Content-Encoding: gzip`.
  public func gzipped() -> TestResponse {
    var copy = self
    copy.body = Gzip.stored(body)
    copy.fields.append(HTTPField(name: "Content-Encoding", value: "gzip"))
    return copy
  }

  /// The reason phrase the server sends for a status code.
  /// https://www.rfc-editor.org/rfc/rfc9110#name-status-codes
  public static func reasonPhrase(for status: Int) -> String {
    switch status {
    case 100: "Continue"
    case 200: "OK"
    case 201: "Created"
    case 204: "No Content"
    case 206: "Partial Content"
    case 301: "Moved Permanently"
    case 302: "Found"
    case 303: "See Other"
    case 304: "Not Modified"
    case 307: "Temporary Redirect"
    case 308: "Permanent Redirect"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 408: "Request Timeout"
    case 410: "Gone"
    case 411: "Length Required"
    case 413: "Content Too Large"
    case 429: "Too Many Requests"
    case 431: "Request Header Fields Too Large"
    case 500: "Internal Server Error"
    case 501: "Not Implemented"
    case 502: "Bad Gateway"
    case 503: "Service Unavailable"
    case 504: "Gateway Timeout"
    case 505: "HTTP Version Not Supported"
    default: "Status \(status)"
    }
  }
}

/// What the server does for a path: answer through a closure, or misbehave.
///
///     let server = try TestServer(routes: [
///       "/hello": Route { _ in .text("hello") },
///       "/slow": .fault(.slowHeaders(seconds: 5)),
///       "/api/*": Route { request in .json("{\"path\":\"\(request.path)\"}") },
///     ])
///
/// A key ending in `*` matches every path with that prefix; the longest prefix wins and
/// exact keys win over prefixes.
public struct Route: Sendable {
  enum Action: Sendable {
    case respond(@Sendable (RecordedRequest) -> TestResponse)
    case fault(Fault)
    case choose(@Sendable (RecordedRequest) -> Reply)
  }

  /// What a choosing route does with one request.
  public enum Reply: Sendable {
    /// Answer with this response.
    case response(TestResponse)
    /// Misbehave as this fault describes.
    case fault(Fault)
  }

  let action: Action

  /// A route answered by `handler`, called on the connection's thread.
  public init(_ handler: @escaping @Sendable (RecordedRequest) -> TestResponse) {
    action = .respond(handler)
  }

  init(action: Action) { self.action = action }

  /// A route that misbehaves as `f` describes.
  public static func fault(_ f: Fault) -> Route { Route(action: .fault(f)) }

  /// A route that decides per request whether to answer or misbehave (a
  /// receiver that fails, hangs, then recovers).
  ///
  ///     let calls = Locked(0)
  ///     Route.choosing { _ in calls.withLock { $0 += 1; return $0 } == 1 ? .fault(.resetMidBody) : .response(.text("ok")) }
  public static func choosing(_ choose: @escaping @Sendable (RecordedRequest) -> Reply) -> Route {
    Route(action: .choose(choose))
  }

  /// A route that always sends the same response.
  public static func fixed(_ response: TestResponse) -> Route { Route { _ in response } }
}

/// `s` escaped for HTML text or a double-quoted attribute.
func escapeHTML(_ s: String) -> String { MarkupText.escaped(s, quotes: .double) }
