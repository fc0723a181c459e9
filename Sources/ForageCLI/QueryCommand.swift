import Foundation
import Forage
import ForageHTML
import ForageHTTP
import ForageURL

/// `forage query`: tries a CSS selector on a file or a URL.
struct QueryCommand: Command {
  static let name = "query"
  static let abstract = "Try a CSS selector on an HTML file or URL."
  static let arguments: [Argument] = [
    .positional("FILE|URL", "The HTML file, or an http(s) URL to fetch."),
    .positional("SELECTOR", "The CSS selector to try."),
    .flag("--text", "Print each match's text (whitespace collapsed)."),
    .option("--attr", "NAME", "Print each match's attribute NAME (skipping those without it)."),
    .flag("--count", "Print only the number of matches."),
    .flag("--json", "Print a JSON array (of strings; or a number with --count)."),
    .option(
      "--charset", "NAME",
      "Decode the page as NAME, any encoding label of the WHATWG Encoding Standard (utf-8, shift_jis, euc-jp, "
        + "gbk, gb18030, big5, euc-kr, koi8-r, windows-1251, latin1...). It takes the place of the server's "
        + "charset and of the page's <meta charset>; a byte order mark still wins."),
  ]
  static let exclusive = [["--text", "--attr", "--count"]]
  static let discussion = """
    Parses the page with Forage's HTML parser and prints every element that
    matches SELECTOR: its outer HTML, or its text with --text, an attribute
    with --attr NAME, or only the number of matches with --count.
    Use it to try a selector before putting it in a config.
    """

  var input: String
  var selector: String
  var text = false
  var attr: String?
  var count = false
  var json = false
  /// The encoding `--charset` names, if given.
  var charset: InputDecoder.Encoding?

  init(_ args: inout ArgumentList) throws(UsageError) {
    text = args.flag("--text")
    count = args.flag("--count")
    json = args.flag("--json")
    attr = try args.option("--attr")
    if let name = try args.option("--charset") {
      guard let encoding = InputDecoder.encoding(forLabel: name) else {
        let hint = Spelling.hint(for: name, in: InputDecoder.allLabels)
        throw UsageError(
          "unknown charset \"\(name)\"\(hint); --charset takes a label of the WHATWG Encoding Standard "
            + "(https://encoding.spec.whatwg.org/#names-and-labels)")
      }
      charset = encoding
    }
    input = try args.positional("FILE|URL")
    selector = try args.positional("SELECTOR")
    try args.expectNoMore()
  }

  func run(_ out: Terminal) async -> ExitStatus {
    let compiled: Selector
    do { compiled = try Selector(selector) } catch {
      out.error("forage query: invalid selector: \(error)")
      return .badInput
    }
    let bytes: [UInt8]
    var encoding = charset?.rawValue
    if input.hasPrefix("http://") || input.hasPrefix("https://") {
      guard let url = WebURL(input) else {
        out.error("forage query: not a valid URL: \(input)")
        return .badInput
      }
      var settings = FetchSettings()
      settings.robotsTxt = false
      settings.perHostDelay = .zero
      let fetcher = Fetcher(transport: Engine.defaultTransport(), settings: settings)
      switch await fetcher.fetch(url) {
      case .fetched(let response):
        if !(200..<300).contains(response.status) {
          out.error("forage query: \(url.href) answered HTTP \(response.status)")
          return .jobFailed
        }
        bytes = response.body
        // The parser reads the charset parameter of a whole Content-Type
        // value; --charset, when given, takes its place.
        if charset == nil, let ct = response.headers["Content-Type"] { encoding = ct }
      case .failed(let error):
        out.error("forage query", error)
        return .jobFailed
      default:
        out.error("forage query: \(url.href) could not be fetched")
        return .jobFailed
      }
    } else {
      let size = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? NSNumber)?.intValue ?? 0
      if size > EngineDefaults.maxReadSize {
        out.error(
          "forage query: \(input) is larger than \(Units.formatBytes(EngineDefaults.maxReadSize)), "
            + "the most a page may be (it is read whole to be parsed)")
        return .badInput
      }
      guard let data = FileManager.default.contents(atPath: input) else {
        out.error("forage query: cannot read \(input)")
        return .badInput
      }
      bytes = Array(data)
    }
    let document = Document.parse(bytes, transportEncoding: encoding)
    if document.inputWasTruncated {
      out.error(
        "forage query: warning: the page is longer than the parser takes "
          + "(\(Units.formatBytes(ParserOptions.largestInput)) once decoded); only its beginning was read")
    }
    let matches = document.select(compiled)
    if count {
      out.print(String(matches.count))
      return .ok
    }
    let values: [String] = matches.compactMap { e in
      if let attr { return e.attr(attr) }
      return text ? e.text : e.outerHTML
    }
    if json {
      out.print(jsonText(values))
    } else {
      for v in values { out.print(v) }
    }
    return .ok
  }
}
