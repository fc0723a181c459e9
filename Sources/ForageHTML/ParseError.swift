/// A parse error the tokenizer or tree builder reported.
///
/// HTML parsing never fails: every error has a defined recovery, so errors
/// are counted (`Document.parseErrorCount`) and, when
/// `ParserOptions.collectErrors` is set, listed in `Document.parseErrors`.
///
/// - SeeAlso: <https://html.spec.whatwg.org/#parse-errors>
public struct ParseError: Sendable, Equatable, CustomStringConvertible {
  /// The spec's error code (`unexpected-null-character`), or a short
  /// description for tree-construction errors, which the spec leaves unnamed.
  public let code: String
  /// The byte offset in the decoded UTF-8 input where the error was noticed.
  public let offset: Int

  public init(code: String, offset: Int) {
    self.code = code
    self.offset = offset
  }

  public var description: String { "\(code) at byte \(offset)" }
}

/// Options for `Document.parse`.
///
///     let page = Document.parse(bytes, options: ParserOptions(collectErrors: true))
///     for e in page.parseErrors { print(e) }
public struct ParserOptions: Sendable {
  /// Keep a list of parse errors (they are always counted).
  public var collectErrors: Bool
  /// The scripting flag. Forage never runs scripts, so the default is off,
  /// which makes `<noscript>` content parse as markup.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#scripting-flag>
  public var scripting: Bool
  /// The most bytes of decoded (UTF-8) input parsed; what follows is left
  /// out and ``Document/inputWasTruncated`` says so. At most, and by
  /// default, ``ParserOptions/largestInput``.
  public var maximumInputSize: Int

  /// The largest input a document is parsed from: 512 MiB of UTF-8. A
  /// document keeps its text and attribute values at 32-bit offsets, and
  /// parsing may make bytes longer (a NUL in a `<title>` becomes U+FFFD, three
  /// bytes), so more could not be held.
  public static let largestInput = 1 << 29

  public init(collectErrors: Bool = false, scripting: Bool = false, maximumInputSize: Int = ParserOptions.largestInput) {
    self.collectErrors = collectErrors
    self.scripting = scripting
    self.maximumInputSize = min(max(0, maximumInputSize), ParserOptions.largestInput)
  }
}
