// libFuzzer entry point for the WHATWG URL parser (ForageURL).
//
// Built by Fuzz/run-fuzz.sh (target `url`) against ForageURL compiled with
// -enable-testing. The whole input is parsed alone and against a few fixed
// bases; when it holds a newline, the text before it is also resolved against
// the text after it (the seeds are urltestdata.json's input and base). For each
// URL that parses:
// - the fast path, when it takes the input, gives exactly what the full parser
//   gives (href and every offset);
// - parsing the href again gives the same URL, alone and against every base
//   (an href is absolute), and so does re-parsing a re-parsed href;
// - the canonical form agrees with the canonicalizer's shortcut, is a fixed
//   point, parses to itself, and its fingerprint is the one of its href.

@testable import ForageURL

private let bases: [WebURL] = [
  "https://user:pass@www.example.com:8443/a/b/c.html?q=1#frag", "http://h/", "http://127.0.0.1/x/",
  "file:///C:/dir/file", "file://host/dir/", "sc://h/p/q?r", "sc:opaque?q#f", "sc:/a/b", "ws://h:1/",
].map { try! URLParser.parseFully($0, base: nil) }
/// A special, a file, a non-special and an opaque base: an href resolves to
/// itself against each.
private let hrefBases = [bases[0], bases[3], bases[5], bases[6]]
private let canonicalizers = [
  URLCanonicalizer.default, URLCanonicalizer(removingQueryParameters: [], sortingQueryParameters: false),
  URLCanonicalizer(removingQueryParameters: ["utm_*", "?d", "*id*"], sortingQueryParameters: true),
]

/// Stops with the message (-O drops the messages of `precondition`).
func require(_ condition: Bool, _ message: @autoclosure () -> String = "") {
  if !condition { fatalError(message()) }
}

private func describe(_ input: String, _ base: WebURL?) -> String {
  "input \(input.debugDescription) base \(base?.href.debugDescription ?? "none")"
}

/// Both parsers on one input; the URL when it parses.
private func parse(_ input: String, base: WebURL?) -> WebURL? {
  let full = try? URLParser.parseFully(input, base: base)
  if let fast = FastPath.parse(input, base: base) {
    require(fast.href == full?.href, "fast path href \(fast.href.debugDescription) vs full \(full?.href.debugDescription ?? "failure"): \(describe(input, base))")
    require(fast.layout == full?.layout, "fast path layout differs: \(describe(input, base))")
  }
  let public_ = WebURL(input, base: base)
  require(public_?.href == full?.href && public_?.layout == full?.layout, "WebURL.init differs: \(describe(input, base))")
  return full
}

private func checkStable(_ url: WebURL, from input: String, base: WebURL?) {
  guard let again = parse(url.href, base: nil) else {
    fatalError("href \(url.href.debugDescription) does not parse: \(describe(input, base))")
  }
  require(again.href == url.href, "href \(url.href.debugDescription) re-parses as \(again.href.debugDescription): \(describe(input, base))")
  require(again.layout == url.layout, "href \(url.href.debugDescription) re-parses with other offsets: \(describe(input, base))")
  for b in hrefBases {
    let resolved = parse(url.href, base: b)
    require(resolved?.href == url.href, "href \(url.href.debugDescription) against \(b.href.debugDescription) gives \(resolved?.href.debugDescription ?? "failure"): \(describe(input, base))")
  }
  // Every accessor reads within the href.
  _ = (url.scheme, url.username, url.password, url.host, url.port, url.effectivePort, url.path)
  _ = (url.query, url.fragment, url.origin, url.pathAndQuery, url.isHTTP, url.removingFragment)
  require(url.removingFragment.href == (try? URLParser.parseFully(url.removingFragment.href, base: nil))?.href)
}

private func checkCanonical(_ url: WebURL, from input: String, base: WebURL?) {
  for c in canonicalizers {
    let canonical = c.canonical(url)
    let fully = c.canonicalFully(url)
    require(canonical.href == fully.href && canonical.layout == fully.layout, "canonical shortcut \(canonical.href.debugDescription) vs \(fully.href.debugDescription): \(describe(input, base))")
    require(c.canonical(canonical).href == canonical.href, "canonical form of \(url.href.debugDescription) is not a fixed point: \(canonical.href.debugDescription)")
    let reparsed = try? URLParser.parseFully(canonical.href, base: nil)
    require(reparsed?.href == canonical.href && reparsed?.layout == canonical.layout, "canonical form of \(url.href.debugDescription) does not re-parse to itself: \(canonical.href.debugDescription)")
    require(c.fingerprint(url) == URLCanonicalizer.fingerprint(ofHref: canonical.href), "fingerprint of \(url.href.debugDescription) is not its canonical href's")
  }
}

/// Parses `input` against `base`; checks each new href once per input.
private func check(_ input: String, base: WebURL?, checked: inout Set<String>) {
  guard let url = parse(input, base: base), checked.insert(url.href).inserted else { return }
  checkStable(url, from: input, base: base)
  checkCanonical(url, from: input, base: base)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func urlFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  let input = String(decoding: bytes, as: UTF8.self)
  var checked = Set<String>()
  check(input, base: nil, checked: &checked)
  for base in bases { check(input, base: base, checked: &checked) }
  if let newline = bytes.firstIndex(of: 0x0A) {
    let reference = String(decoding: bytes[..<newline], as: UTF8.self)
    let baseText = String(decoding: bytes[(newline + 1)...], as: UTF8.self)
    if let base = parse(baseText, base: nil) { check(reference, base: base, checked: &checked) }
  }
  return 0
}
