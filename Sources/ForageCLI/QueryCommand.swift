import Foundation
import ForageHTML
import ForageHTTP
import ForageURL

/// `forage query`: tries a CSS selector on a file or a URL.
struct QueryCommand: Command {
  static let name = "query"
  static let abstract = "Try a CSS selector on an HTML file or URL."
  static let help = """
    Usage: forage query FILE|URL SELECTOR [--text | --attr NAME | --count] [--json]

    Parses the page with Forage's HTML parser and prints every element that
    matches SELECTOR: its outer HTML, or its text with --text, an attribute
    with --attr NAME, or only the number of matches with --count.
    Use it to try a selector before putting it in a config.

    Options:
      --text        Print each match's text (whitespace collapsed).
      --attr NAME   Print each match's attribute NAME (skipping those without it).
      --count       Print only the number of matches.
      --json        Print a JSON array (of strings; or a number with --count).
      --charset CS  The page's encoding when it does not say (files only).
    """

  var input: String
  var selector: String
  var text = false
  var attr: String?
  var count = false
  var json = false
  var charset: String?

  init(_ args: inout ArgumentList) throws(UsageError) {
    text = args.flag("--text")
    count = args.flag("--count")
    json = args.flag("--json")
    attr = try args.option("--attr")
    charset = try args.option("--charset")
    input = try args.positional("a FILE or URL")
    selector = try args.positional("a SELECTOR")
    try args.expectNoMore()
    if [text, count, attr != nil].filter({ $0 }).count > 1 {
      throw UsageError("give one of --text, --attr, --count")
    }
  }

  func run(_ out: Terminal) async -> ExitStatus {
    let compiled: Selector
    do { compiled = try Selector(selector) } catch {
      out.error("forage query: invalid selector: \(error)")
      return .badInput
    }
    let bytes: [UInt8]
    var encoding = charset
    if input.hasPrefix("http://") || input.hasPrefix("https://") {
      guard let url = WebURL(input) else {
        out.error("forage query: not a valid URL: \(input)")
        return .badInput
      }
      var settings = FetchSettings()
      settings.robotsTxt = false
      settings.perHostDelay = .zero
      let fetcher = Fetcher(transport: defaultTransport(), settings: settings)
      switch await fetcher.fetch(url) {
      case .fetched(let response):
        if !(200..<300).contains(response.status) {
          out.error("forage query: \(url.href) answered HTTP \(response.status)")
          return .jobFailed
        }
        bytes = response.body
        // The parser reads the charset parameter of a whole Content-Type value.
        if let ct = response.headers["Content-Type"] { encoding = ct }
      case .failed(let error):
        out.error("forage query: \(error)")
        return .jobFailed
      default:
        out.error("forage query: \(url.href) could not be fetched")
        return .jobFailed
      }
    } else {
      guard let data = FileManager.default.contents(atPath: input) else {
        out.error("forage query: cannot read \(input)")
        return .badInput
      }
      bytes = Array(data)
    }
    let document = Document.parse(bytes, transportEncoding: encoding)
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
