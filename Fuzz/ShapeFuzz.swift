// libFuzzer target for the shape of HTML pages (issue 25): the input is a
// small program that expands into a hostile page (deep nesting, elements
// with many attributes, long runs of unclosed formatting elements, end
// tags and list items under deep nesting, text that makes the parser
// reconstruct formatting elements), which is parsed and queried. The target
// checks time per byte, not only crashes: parsing and matching must stay
// linear in the page's size whatever its shape, so a parse or a query that
// takes more than `nanosecondsPerByte` per byte (plus a constant) aborts,
// and so does a tree with more nodes than a bounded multiple of the bytes.
//
// Built by Fuzz/run-fuzz.sh together with the ForageHTML sources in one
// module (`Fuzz/run-fuzz.sh shape 60`).

/// The time a byte may take (parse, then each query), sanitizers included:
/// generous, as the machine is shared; a quadratic walk over the 1 MB pages
/// this target makes costs seconds per query.
private let nanosecondsPerByte: Int64 = 20_000
private let constantNanoseconds: Int64 = 300_000_000
/// The largest page an input expands to.
private let largestPage = 1 << 20

private let tags = [
  "div", "span", "b", "i", "a", "p", "li", "table", "tr", "td", "svg", "math", "template", "select",
  "option", "font", "nobr", "object", "h1", "x-y", "button", "form", "ruby", "dd",
]
private let queries = ["body div", "span span", "div:has(span)", "p ~ p", "* > b", ":is(div, span) i", "li:nth-child(2n)"]

/// Expands `program` into a page: each three bytes are an operation, a
/// count and a tag.
private func page(_ program: ArraySlice<UInt8>) -> [UInt8] {
  var out: [UInt8] = Array("<!doctype html><body>".utf8)
  func add(_ s: String) { out.append(contentsOf: s.utf8) }
  var i = program.startIndex
  while i + 2 < program.endIndex && out.count < largestPage {
    let op = program[i] % 9
    let count = 1 + Int(program[i + 1]) * Int(program[i + 1]) / 4   // up to 16,257
    let tag = tags[Int(program[i + 2]) % tags.count]
    i += 3
    for k in 0..<count where out.count < largestPage {
      switch op {
      case 0: add("<\(tag)>")                                   // deep nesting
      case 1: add("</\(tag)>")
      case 2:                                                    // many attributes
        add("<\(tag)")
        for a in 0..<min(count, 4096) { add(" a\(a)=v") }
        add(">")
      case 3: add("<\(tag) class=c\(k)>x")                       // unclosed formatting runs
      case 4: add("<p>x</p>")                                    // reconstruction
      case 5: add("<li></li>")
      case 6: add("x<!---->")
      case 7: add("<\(tag)><div>")
      default:
        // A few of the program's bytes as they are.
        let end = min(i + 8, program.endIndex)
        out.append(contentsOf: program[i..<end])
        i = end
      }
      if op == 2 || op == 8 { break }
    }
  }
  return out
}

private func nanoseconds(_ d: Duration) -> Int64 {
  let (s, a) = d.components
  return s * 1_000_000_000 + a / 1_000_000_000
}

@_cdecl("LLVMFuzzerTestOneInput")
public func shapeFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard let first = bytes.first else { return 0 }
  let html = page(bytes.dropFirst())
  let depth = [ParserOptions.defaultMaximumDepth, 64, 8][Int(first) % 3]
  let allowed = Int64(html.count) * nanosecondsPerByte + constantNanoseconds
  let clock = ContinuousClock()
  var doc: Document!
  let parse = clock.measure { doc = Document.parse(html, options: ParserOptions(maximumDepth: depth)) }
  precondition(
    nanoseconds(parse) <= allowed, "parsing \(html.count) bytes took \(parse): more than \(nanosecondsPerByte) ns a byte")
  // Reconstructed formatting elements may make more nodes than bytes, but
  // a bounded number per byte.
  let limit = ParserOptions.formattingElementLimit + 8
  precondition(doc.nodes.count <= limit * html.count + 1000, "\(doc.nodes.count) nodes from \(html.count) bytes")
  for css in queries {
    let selector = try! Selector(css)
    let took = clock.measure { _ = doc.select(selector).count }
    precondition(nanoseconds(took) <= allowed, "'\(css)' over \(html.count) bytes took \(took)")
  }
  return 0
}
