import Foundation
import ForageHTML

/// `forage-bench parse DIR [--repeat K] [--json] [--select SEL] [--extract]`:
/// the HTML parser's throughput on a folder of pages.
///
/// Reads every `.html` file of DIR into memory, then parses all of them
/// (bytes in: encoding sniffing and decoding included) K times, timing each
/// pass, and prints the number of files, the bytes of one pass, the median
/// pass time and the throughput in MB/s (1 MB = 10^6 bytes). With
/// `--select SEL` each pass also runs the selector on every document (its
/// time is part of the pass) and the total number of matches of one pass
/// is printed. With `--extract` each pass also does, per document, what the
/// crawl engine does on a product page (selectors compiled once): the
/// first `div.product`, the text of the first `h1.product-title` and of the
/// first `span.price`, the `data-sku` of the first `div.product`, and the
/// `href` of every `a[href]`; the document is released inside the pass, so
/// its teardown is timed too. One untimed pass warms up first.
///
///     $ swift run -c release forage-bench parse ../shared/testdata/html-pages --repeat 5
///     files: 88
///     bytes: 18431234
///     median seconds: 0.095
///     MB/s: 194.0
///
/// `--json` prints `{"files":N,"bytes":B,"median_seconds":S,"mb_per_s":X}`
/// (plus `"matches":M` with `--select`), the format that
/// `Benchmarks/run-parse-bench.sh` reads.
enum ParseBenchmark {
  static let usage = """
    usage: forage-bench parse DIR [--repeat K] [--json] [--select SELECTOR] [--extract]

    Parses every .html file of DIR from memory K times (default 5) and prints
    files, bytes, median seconds and MB/s. --select also runs a CSS selector on
    each document and counts the matches; --extract also does the crawl
    engine's per-page extraction (product, title and price text, data-sku,
    every a[href]) on each document; --json prints one JSON object.
    """

  struct Options {
    var directory = ""
    var repeats = 5
    var json = false
    var selector: String?
    var extract = false
  }

  /// Runs the benchmark with the arguments that follow `parse` (a leading
  /// `parse` is skipped too). Returns the exit status: 0, or 2 for bad
  /// arguments, an unreadable folder or a bad selector (message on stderr).
  static func run(_ arguments: [String]) throws -> Int32 {
    var args = arguments[...]
    if args.first == "parse" { args = args.dropFirst() }
    let options: Options
    switch parseOptions(Array(args)) {
    case .success(let o): options = o
    case .failure(let message):
      if message.isEmpty {
        print(usage)
        return 0
      }
      printError("forage-bench parse: \(message)\n\n\(usage)")
      return 2
    }

    let selector: Selector?
    do {
      selector = try options.selector.map { try Selector($0) }
    } catch {
      printError("forage-bench parse: bad selector: \(error)")
      return 2
    }

    let extraction = options.extract ? Extraction() : nil

    let files: [[UInt8]]
    do {
      files = try loadPages(options.directory)
    } catch {
      printError("forage-bench parse: \(error)")
      return 2
    }
    if files.isEmpty {
      printError("forage-bench parse: no .html files in \(options.directory)")
      return 2
    }
    let bytes = files.reduce(0) { $0 + $1.count }

    var matches = 0
    var sink = 0
    _ = pass(files, selector, extraction, &sink)  // warm-up
    var seconds: [Double] = []
    for _ in 0..<options.repeats {
      let clock = ContinuousClock()
      let start = clock.now
      matches = pass(files, selector, extraction, &sink)
      let elapsed = clock.now - start
      seconds.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }
    let median = Self.median(seconds)
    let mbPerSecond = median > 0 ? Double(bytes) / 1e6 / median : 0

    if options.json {
      var line = "{\"files\":\(files.count),\"bytes\":\(bytes),\"median_seconds\":\(format(median, 6)),\"mb_per_s\":\(format(mbPerSecond, 2))"
      if selector != nil { line += ",\"matches\":\(matches)" }
      print(line + "}")
    } else {
      print("files: \(files.count)")
      print("bytes: \(bytes)")
      print("median seconds: \(format(median, 6)) (of \(options.repeats))")
      print("MB/s: \(format(mbPerSecond, 2))")
      if let s = options.selector { print("matches of '\(s)': \(matches)") }
    }
    if sink == -1 { print("") }  // keeps the parse results observable
    return 0
  }

  enum ParsedOptions {
    case success(Options)
    /// An error message, or "" for `--help`.
    case failure(String)
  }

  static func parseOptions(_ args: [String]) -> ParsedOptions {
    var options = Options()
    var positional: [String] = []
    var i = 0
    while i < args.count {
      let arg = args[i]
      switch arg {
      case "-h", "--help":
        return .failure("")
      case "--json":
        options.json = true
      case "--extract":
        options.extract = true
      case "--repeat", "--select":
        guard i + 1 < args.count else { return .failure("\(arg) needs a value") }
        i += 1
        if arg == "--select" {
          options.selector = args[i]
        } else {
          guard let k = Int(args[i]), k > 0 else { return .failure("--repeat needs a positive integer, not '\(args[i])'") }
          options.repeats = k
        }
      default:
        if arg.hasPrefix("--repeat=") {
          guard let k = Int(arg.dropFirst(9)), k > 0 else { return .failure("--repeat needs a positive integer") }
          options.repeats = k
        } else if arg.hasPrefix("--select=") {
          options.selector = String(arg.dropFirst(9))
        } else if arg.hasPrefix("-") && arg.count > 1 {
          return .failure("unknown option '\(arg)'")
        } else {
          positional.append(arg)
        }
      }
      i += 1
    }
    guard positional.count == 1 else {
      return .failure(positional.isEmpty ? "missing DIR" : "expected one DIR, got \(positional.count) arguments")
    }
    options.directory = positional[0]
    return .success(options)
  }

  /// Parses every page once (and runs the selector and the extraction);
  /// returns the matches. Each document is released before the next parse.
  static func pass(_ files: [[UInt8]], _ selector: Selector?, _ extraction: Extraction?, _ sink: inout Int) -> Int {
    var matches = 0
    for file in files {
      let document = Document.parse(file)
      sink &+= document.nodeCount
      if let selector { matches += document.select(selector).count }
      if let extraction { sink &+= extraction.run(document) }
    }
    return matches
  }

  /// The crawl engine's work on one product page, with its selectors
  /// compiled once.
  struct Extraction {
    let product = try! Selector("div.product")
    let title = try! Selector("h1.product-title")
    let price = try! Selector("span.price")
    let links = try! Selector("a[href]")

    /// Extracts the fields of `document`; returns a checksum of what it
    /// found (so the work cannot be optimised away).
    func run(_ document: Document) -> Int {
      var sum = 0
      if document.selectFirst(product) != nil { sum &+= 1 }
      if let t = document.selectFirst(title)?.text { sum &+= t.utf8.count }
      if let p = document.selectFirst(price)?.text { sum &+= p.utf8.count }
      if let sku = document.selectFirst(product)?.attr("data-sku") { sum &+= sku.utf8.count }
      for link in document.select(links) {
        if let href = link.attr("href") { sum &+= href.utf8.count }
      }
      return sum
    }
  }

  struct LoadError: Error, CustomStringConvertible {
    var description: String
  }

  /// The contents of the `.html` files of `directory`, sorted by name.
  static func loadPages(_ directory: String) throws -> [[UInt8]] {
    let names: [String]
    do {
      names = try FileManager.default.contentsOfDirectory(atPath: directory)
    } catch {
      throw LoadError(description: "cannot list \(directory): \(error.localizedDescription)")
    }
    var files: [[UInt8]] = []
    for name in names.sorted() where name.lowercased().hasSuffix(".html") {
      let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
      guard let data = FileManager.default.contents(atPath: path) else {
        throw LoadError(description: "cannot read \(path)")
      }
      files.append([UInt8](data))
    }
    return files
  }

  static func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
  }

  /// `value` with `digits` decimals (no Foundation formatting needed).
  static func format(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (value * scale).rounded()
    let integer = Int(scaled / scale)
    var fraction = String(Int(scaled) - integer * Int(scale))
    while fraction.count < digits { fraction = "0" + fraction }
    return digits == 0 ? String(integer) : "\(integer).\(fraction)"
  }

  static func printError(_ message: String) {
    var stderr = StandardError()
    print(message, to: &stderr)
  }

  struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
      FileHandle.standardError.write(Data(string.utf8))
    }
  }
}
