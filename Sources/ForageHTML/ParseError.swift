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
  /// The most elements open at once, which bounds how deep the tree gets
  /// (the `html` element is at depth 1). Past it, a new element closes the
  /// deepest open one and takes its place, as its next sibling; where that
  /// element cannot be closed (a table's parts, a template, `body`…) the new
  /// one still becomes its sibling, as in Blink and WebKit, which insert
  /// elements past 512 levels as siblings. So 60,000 nested `<span>`s parse
  /// into 512 levels, the deepest holding the rest side by side, every
  /// element and all their text kept. The HTML standard lets a user agent
  /// impose such limits on otherwise unconstrained input; with this one a
  /// page of any shape parses, and its selectors match, in time linear in
  /// its size. Values below 4 count as 4. Default:
  /// ``ParserOptions/defaultMaximumDepth``.
  ///
  /// The list of active formatting elements is bounded too: past
  /// ``ParserOptions/formattingElementLimit`` entries after its last marker,
  /// the earliest is dropped, as the spec's Noah's Ark clause drops the
  /// earliest of four identical ones.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#stack-of-open-elements>,
  ///   <https://html.spec.whatwg.org/#conformance-classes> ("user agents may
  ///   impose implementation-specific limits on otherwise unconstrained inputs")
  public var maximumDepth: Int
  /// Asked every few thousand tokens while parsing; when it returns true,
  /// parsing stops as if the input ended there and
  /// ``Document/parseWasInterrupted`` says so. A launch passes one that
  /// answers true once its budget and grace are over, so a huge page cannot
  /// hold it. Nil (the default): parse to the end.
  public var shouldStop: (@Sendable () -> Bool)?

  /// The default ``maximumDepth``: 512, Blink's and WebKit's limit.
  public static let defaultMaximumDepth = 512
  /// The most entries the list of active formatting elements keeps after
  /// its last marker: 64. Real pages keep a few; each entry may be
  /// reconstructed (a new element) for every later run of text, so a page
  /// of unclosed formatting elements with distinct attributes would
  /// otherwise make a number of elements quadratic in its size.
  public static let formattingElementLimit = 64

  /// The largest input a document is parsed from: 512 MiB of UTF-8. A
  /// document keeps its text and attribute values at 32-bit offsets, and
  /// parsing may make bytes longer (a NUL in a `<title>` becomes U+FFFD, three
  /// bytes), so more could not be held.
  public static let largestInput = 1 << 29

  public init(
    collectErrors: Bool = false, scripting: Bool = false, maximumInputSize: Int = ParserOptions.largestInput,
    maximumDepth: Int = ParserOptions.defaultMaximumDepth, shouldStop: (@Sendable () -> Bool)? = nil
  ) {
    self.collectErrors = collectErrors
    self.scripting = scripting
    self.maximumInputSize = min(max(0, maximumInputSize), ParserOptions.largestInput)
    self.maximumDepth = maximumDepth
    self.shouldStop = shouldStop
  }

  /// ``maximumDepth`` as the tree builder uses it (at least 4).
  var effectiveMaximumDepth: Int { max(4, maximumDepth) }
}
