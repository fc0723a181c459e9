// libFuzzer entry point for the HTML parser and the CSS selector parser
// (ForageHTML).
//
// Built by Fuzz/run-fuzz.sh together with the ForageHTML sources in one
// module. Each input is parsed as a document (bytes: encoding sniffing
// included) and, with its first byte choosing a context element, as a
// fragment; the tree is then walked without recursion. The input's first
// line is also tried as a selector against the document.

private let contexts: [(String, Namespace)] = [
  ("div", .html), ("td", .html), ("tr", .html), ("table", .html), ("select", .html),
  ("template", .html), ("title", .html), ("textarea", .html), ("script", .html),
  ("svg", .svg), ("foreignObject", .svg), ("mi", .mathml), ("annotation-xml", .mathml), ("html", .html),
]

private func walk(_ doc: Document) -> Int {
  var count = 0
  var n: NodeID? = doc.rootID
  while let c = n {
    count += 1
    _ = doc.localName(c)
    _ = doc.data(c)
    n = doc.following(c, within: doc.rootID)
  }
  return count
}

@_cdecl("LLVMFuzzerTestOneInput")
public func parserFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let doc = Document.parse(bytes, options: ParserOptions(collectErrors: true))
  precondition(walk(doc) >= 4, "a document always has html, head and body")
  precondition(doc.parseErrors.count == doc.parseErrorCount)
  if let first = bytes.first {
    let (context, ns) = contexts[Int(first) % contexts.count]
    let html = String(decoding: bytes.dropFirst(), as: UTF8.self)
    let (fragment, root) = Document.parseFragment(html: html, context: context, contextNamespace: ns)
    precondition(fragment.localName(root) == "html")
    _ = walk(fragment)
    let css = String(decoding: bytes.prefix(while: { $0 != 0x0A }).prefix(256), as: UTF8.self)
    if let selector = try? Selector(css) { _ = doc.select(selector) }
  }
  return 0
}
