extension HTTPHeaders {
  /// What is wrong with `name` as a header field name, or nil when it is a
  /// token (RFC 9110: letters, digits and ``!#$%&'*+-.^_`|~``). The message
  /// quotes the name: names are not secrets.
  ///
  ///     HTTPHeaders.nameProblem("X-Api-Key")   // nil
  ///     HTTPHeaders.nameProblem("X Api")       // "\"X Api\" is not a header name: …"
  ///
  /// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9110#name-field-names>
  public static func nameProblem(_ name: String) -> String? {
    if name.isEmpty { return "a header name must not be empty" }
    if name.utf8.allSatisfy(isTokenByte) { return nil }
    let shown = String(String.UnicodeScalarView(name.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    return "\"\(shown)\" is not a header name: a name is letters, digits and !#$%&'*+-.^_`|~ "
      + "(no spaces, colons or control characters)"
  }

  /// What is wrong with `value` as the value of a header a request sends,
  /// or nil: a line break (CR or LF) would end the header and start another
  /// one, a NUL or another control character (tab aside) is not allowed.
  /// The message never quotes the value, which may be a secret.
  ///
  /// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9110#name-field-values>
  public static func valueProblem(_ value: String) -> String? {
    var control: UInt8?
    for b in value.utf8 {
      if b == 0x0D || b == 0x0A {
        return "a header value must not hold a line break (CR or LF): it would end the header and start another one"
      }
      if control == nil, (b < 0x20 && b != 0x09) || b == 0x7F { control = b }
    }
    guard let control else { return nil }
    let hex = String(control, radix: 16, uppercase: true)
    return "a header value must not hold control characters (it holds U+\(String(repeating: "0", count: 4 - hex.count))\(hex))"
  }

  /// True for a byte of an RFC 9110 token (`tchar`).
  static func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
      return true
    default:
      return "!#$%&'*+-.^_`|~".utf8.contains(b)
    }
  }
}
