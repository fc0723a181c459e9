/// Why a string is not a URL, and where the parser gave up.
///
///     do { _ = try WebURL(parsing: "http://exa mple.com/") }
///     catch { print(error) }  // "invalid domain: forbidden code point ..."
///
/// The cases follow the WHATWG validation errors that are failures; more
/// may be added, so match on the static members rather than exhaustively.
///
/// - SeeAlso: <https://url.spec.whatwg.org/#validation-error>
public struct URLParseError: Error, Sendable, Hashable, CustomStringConvertible {
  enum Code: Sendable, Hashable {
    case missingSchemeNonRelativeURL
    case hostMissing
    case hostInvalidCodePoint
    case domainInvalidCodePoint
    case domainToASCII
    case ipv4
    case ipv6
    case portOutOfRange
    case portInvalid
    case tooLong
  }

  let code: Code
  /// The UTF-8 offset in the input (after tabs and newlines were removed)
  /// where the parser gave up, when known.
  public let offset: Int?

  init(_ code: Code, at offset: Int? = nil) {
    self.code = code
    self.offset = offset
  }

  /// A relative reference with no base (or a base that cannot be a base).
  public static let missingScheme = URLParseError(.missingSchemeNonRelativeURL)
  /// A special URL (http, https, ...) whose host is empty or missing.
  public static let hostMissing = URLParseError(.hostMissing)
  /// An opaque host containing a forbidden host code point.
  public static let invalidHost = URLParseError(.hostInvalidCodePoint)
  /// A domain containing a forbidden domain code point (space, %, <, ...).
  public static let invalidDomain = URLParseError(.domainInvalidCodePoint)
  /// A domain that IDNA processing (UTS #46) rejects.
  public static let invalidInternationalDomain = URLParseError(.domainToASCII)
  /// A host that ends in a number but is not a valid IPv4 address.
  public static let invalidIPv4 = URLParseError(.ipv4)
  /// A bracketed host that is not a valid IPv6 address.
  public static let invalidIPv6 = URLParseError(.ipv6)
  /// A port above 65535.
  public static let portOutOfRange = URLParseError(.portOutOfRange)
  /// A port containing something other than digits.
  public static let invalidPort = URLParseError(.portInvalid)
  /// A URL too long to be stored (more than 2 GB).
  public static let tooLong = URLParseError(.tooLong)

  /// Errors match by kind; the offset is not compared.
  public static func == (a: URLParseError, b: URLParseError) -> Bool { a.code == b.code }
  /// Hashes the kind only, consistently with `==`.
  public func hash(into hasher: inout Hasher) { hasher.combine(code) }

  /// Lets `catch URLParseError.hostMissing` match an error thrown at any offset.
  public static func ~= (pattern: URLParseError, value: any Error) -> Bool {
    (value as? URLParseError)?.code == pattern.code
  }

  /// What is wrong, for a person, with the offset when known. It never
  /// includes the input, which may hold credentials.
  public var description: String {
    let what: String
    switch code {
    case .missingSchemeNonRelativeURL:
      what = "missing scheme: a relative reference needs a base URL that is not opaque"
    case .hostMissing: what = "missing host: a special URL (http, https, ...) needs a host"
    case .hostInvalidCodePoint: what = "invalid host: forbidden host code point"
    case .domainInvalidCodePoint:
      what = "invalid domain: forbidden code point (space, %, <, >, ...)"
    case .domainToASCII: what = "invalid domain: IDNA processing failed"
    case .ipv4: what = "invalid IPv4 address"
    case .ipv6: what = "invalid IPv6 address"
    case .portOutOfRange: what = "port out of range (above 65535)"
    case .portInvalid: what = "invalid port: not a number"
    case .tooLong: what = "URL too long"
    }
    if let offset { return what + " (at UTF-8 offset \(offset))" }
    return what
  }
}
