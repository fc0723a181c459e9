/// One header field as received: its name as the client spelled it, and its value.
public struct HTTPField: Sendable, Equatable {
  public var name: String
  public var value: String

  public init(name: String, value: String) {
    self.name = name
    self.value = value
  }
}

/// A request the test server received, as parsed from the wire.
///
///     let server = try TestServer(routes: ["/": Route { _ in .text("hi") }])
///     // … fetch server.url("/?q=1") …
///     server.requests.last?.header("user-agent")   // case-insensitive
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9112#name-request-line>
public struct RecordedRequest: Sendable {
  /// The method token, such as `GET`.
  public var method: String
  /// The request target as sent, such as `/category/2?page=3`.
  public var target: String
  /// `HTTP/1.1` or `HTTP/1.0`.
  public var version: String
  /// Header fields in the order received.
  public var fields: [HTTPField]
  /// The body (`Content-Length` bytes); empty when none.
  public var body: [UInt8]

  public init(method: String, target: String, version: String = "HTTP/1.1",
              fields: [HTTPField] = [], body: [UInt8] = []) {
    self.method = method
    self.target = target
    self.version = version
    self.fields = fields
    self.body = body
  }

  /// Header fields as `(name, value)` pairs in the order received.
  public var headers: [(name: String, value: String)] { fields.map { ($0.name, $0.value) } }

  /// The first value of a header field, matched case-insensitively; nil when absent.
  public func header(_ name: String) -> String? {
    let wanted = name.lowercased()
    return fields.first { $0.name.lowercased() == wanted }?.value
  }

  /// The target's path, without the query: `/category/2` for `/category/2?page=3`.
  public var path: String {
    guard let mark = target.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return target }
    return String(target[..<mark])
  }

  /// The value of a query parameter (not percent-decoded); nil when absent.
  ///
  ///     // target "/fault/drip?rate=4&total=10"
  ///     request.query("rate")   // "4"
  public func query(_ name: String) -> String? {
    guard let mark = target.firstIndex(of: "?") else { return nil }
    for pair in target[target.index(after: mark)...].split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      if parts[0] == name { return parts.count > 1 ? String(parts[1]) : "" }
    }
    return nil
  }

  /// True when the client asked to close the connection after this response
  /// (`Connection: close`, or HTTP/1.0 without `keep-alive`).
  /// https://www.rfc-editor.org/rfc/rfc9112#name-persistence
  public var wantsClose: Bool {
    let options = (header("connection") ?? "").lowercased()
      .split(separator: ",").map { $0.trimmingSpaces() }
    if options.contains("close") { return true }
    return version == "HTTP/1.0" && !options.contains("keep-alive")
  }
}

extension Substring {
  func trimmingSpaces() -> String {
    String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
  }
}
