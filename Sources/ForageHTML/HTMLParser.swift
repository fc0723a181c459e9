/// Entry points of the HTML parser.
///
///     let page = Document.parse(bytes, transportEncoding: "text/html; charset=utf-8")
///     let (fragment, root) = Document.parseFragment(html: "<td>1</td>", context: "tr")
///
/// - SeeAlso: <https://html.spec.whatwg.org/#parsing>
extension Document {
  /// Parses a document from bytes.
  ///
  /// The encoding is sniffed as the spec describes: a byte order mark, then
  /// `transportEncoding` (a label such as `"utf-8"` or a whole
  /// `Content-Type` value), then a `<meta charset>` / `http-equiv` prescan
  /// of the first 1024 bytes; without any, bytes that are valid UTF-8
  /// decode as UTF-8, otherwise as windows-1252. Parsing never fails:
  /// errors are counted in `parseErrorCount`.
  ///
  ///     let page = Document.parse(Array("<p class=a>Hi</p>".utf8))
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#determining-the-character-encoding>
  public static func parse(_ bytes: [UInt8], transportEncoding: String? = nil) -> Document {
    parse(bytes, transportEncoding: transportEncoding, options: ParserOptions())
  }

  /// Parses a document from bytes with `options` (error list, scripting flag).
  public static func parse(_ bytes: [UInt8], transportEncoding: String? = nil, options: ParserOptions) -> Document {
    let (utf8, encoding) = InputDecoder.decode(bytes, transportEncoding: transportEncoding)
    let doc = parseDecoded(utf8, options: options)
    doc.encoding = encoding.rawValue
    return doc
  }

  /// Parses a document from a string.
  ///
  ///     let page = Document.parse(html: "<title>Hi</title>")
  public static func parse(html: String, options: ParserOptions = ParserOptions()) -> Document {
    parseDecoded(InputDecoder.normalizeNewlines(Array(html.utf8)), options: options)
  }

  static func parseDecoded(_ utf8: [UInt8], options: ParserOptions) -> Document {
    if let cut = cut(utf8, options) {
      let doc = parseDecoded(cut, options: options)
      doc.inputWasTruncated = true
      return doc
    }
    let doc = Document(expectedBytes: utf8.count)
    utf8.withUnsafeBufferPointer { input in
      let tokenizer = Tokenizer(borrowing: input, collectErrors: options.collectErrors, document: doc)
      let builder = TreeBuilder(document: doc, tokenizer: tokenizer, options: options)
      builder.run()
      doc.finishParse(tokenizer, builder)
    }
    return doc
  }

  /// `utf8` cut to the options' input limit, before the character that
  /// crosses it (a continuation byte is 10xxxxxx); nil when it fits.
  static func cut(_ utf8: [UInt8], _ options: ParserOptions) -> [UInt8]? {
    let limit = min(max(0, options.maximumInputSize), ParserOptions.largestInput)
    guard utf8.count > limit else { return nil }
    var end = limit
    while end > 0 && utf8[end] & 0xC0 == 0x80 { end -= 1 }
    return Array(utf8[..<end])
  }

  func finishParse(_ tokenizer: Tokenizer, _ builder: TreeBuilder) {
    parseWasInterrupted = builder.interrupted
    parserWalkSteps = builder.walkSteps
    parseErrorCount = tokenizer.errorCount + builder.errorCount
    if let a = tokenizer.errors, let b = builder.errors {
      parseErrors = (a + b).sorted { $0.offset < $1.offset }
    }
  }

  /// Parses an HTML fragment as the spec's fragment parsing algorithm does
  /// for `innerHTML`, with a context element named `context` in
  /// `contextNamespace`.
  ///
  ///     let (doc, root) = Document.parseFragment(html: "<li>a<li>b", context: "ul")
  ///     let items = doc.children(root)   // two <li> elements
  ///
  /// - Returns: the document and the `html` element whose children are the
  ///   parsed nodes.
  /// - SeeAlso: <https://html.spec.whatwg.org/#parsing-html-fragments>
  public static func parseFragment(html: String, context: String, contextNamespace: Namespace = .html,
                                   options: ParserOptions = ParserOptions()) -> (Document, NodeID) {
    let doc = Document()
    var input = InputDecoder.normalizeNewlines(Array(html.utf8))
    if let cut = cut(input, options) {
      input = cut
      doc.inputWasTruncated = true
    }
    let tokenizer = Tokenizer(input, collectErrors: options.collectErrors, document: doc)
    let builder = TreeBuilder(document: doc, tokenizer: tokenizer, options: options)
    let code = doc.intern(context)
    let contextNode = doc.createElement(code: code, namespace: contextNamespace, attributes: [])
    if contextNamespace == .html {
      switch code {
      case T.title, T.textarea: tokenizer.state = .rcdata
      case T.style, T.xmp, T.iframe, T.noembed, T.noframes: tokenizer.state = .rawtext
      case T.script: tokenizer.state = .scriptData
      case T.noscript: tokenizer.state = options.scripting ? .rawtext : .data
      case T.plaintext: tokenizer.state = .plaintext
      default: break
      }
    }
    let root = doc.createElement(code: T.html, namespace: .html, attributes: [])
    doc.append(NodeID(raw: root), to: doc.rootID)
    builder.push(OpenElement(node: root, code: T.html, ns: .html))
    builder.context = OpenElement(node: contextNode, code: code, ns: contextNamespace)
    if contextNamespace == .html && code == T.template { builder.templateModes.append(.inTemplate) }
    builder.resetInsertionMode()
    builder.run()
    doc.finishParse(tokenizer, builder)
    return (doc, NodeID(raw: root))
  }
}
