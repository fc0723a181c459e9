// libFuzzer entry point for robots.txt parsing and matching (ForageHTTP).
//
// Built by Fuzz/run-fuzz.sh (target `robots`) against ForageHTTP compiled with
// -enable-testing. The input is parsed as a robots.txt file; the rules for a
// few product tokens (fixed ones and those its user-agent lines name) are then
// asked about paths taken from the input's own lines (the values of
// `Allow:`/`Disallow:` lines and a few variations), and:
// - each pattern matches a path exactly when a plain dynamic-programming
//   matcher says so (`*` any run of octets, a final `$` the end);
// - the answer is the longest matching rule's, `Allow` on a tie, allowed with
//   no match (RFC 9309 §2.2.2);
// - `/robots.txt` is always allowed (§2.4 of the RFC's crawler rules);
// - a crawl delay is between 0 and a day.

@testable import ForageHTTP
import ForageURL

/// Stops with the message (-O drops the messages of `precondition`).
func require(_ condition: Bool, _ message: @autoclosure () -> String = "") {
  if !condition { fatalError(message()) }
}

/// Whether `pattern` matches a prefix of `path`, by dynamic programming over
/// (pattern prefix, path prefix): `reach[j]` says the pattern read so far can
/// end at path offset `j`.
func referenceMatches(_ pattern: [UInt8], _ path: [UInt8]) -> Bool {
  var pattern = pattern[...]
  let anchored = pattern.last == UInt8(ascii: "$")
  if anchored { pattern = pattern.dropLast() }
  var reach = [Bool](repeating: false, count: path.count + 1)
  reach[0] = true
  for byte in pattern {
    var next = [Bool](repeating: false, count: path.count + 1)
    if byte == UInt8(ascii: "*") {
      var any = false
      for j in 0...path.count {
        any = any || reach[j]
        next[j] = any
      }
    } else {
      for j in 0..<path.count where reach[j] && path[j] == byte { next[j + 1] = true }
    }
    reach = next
  }
  return anchored ? reach[path.count] : reach.contains(true)
}

/// The decision RFC 9309 §2.2.2 describes, over the matcher's own rules.
func referenceAllowed(_ rules: RobotsRules, _ target: [UInt8]) -> Bool {
  var best: (length: Int, allow: Bool)?
  for rule in rules.rules where referenceMatches(rule.pattern, target) {
    let length = rule.pattern.count
    if best == nil || length > best!.length || (length == best!.length && rule.allow) {
      best = (length, rule.allow)
    }
  }
  return best?.allow ?? true
}

private let robotsURL = WebURL("https://example.com/robots.txt")!

@_cdecl("LLVMFuzzerTestOneInput")
public func robotsFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let file = RobotsTxt(bytes)
  _ = file.sitemaps

  // Values of the lines (after a colon or the first space), as paths.
  let text = String(decoding: bytes.prefix(8192), as: UTF8.self)
  var paths = ["/", "/robots.txt", "/a/b?c=d", "", "/%7Ea/%e2%82%ac"]
  var agents = ["Forage", "*", "", "foobot"]
  for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).prefix(64) {
    guard let colon = line.firstIndex(where: { $0 == ":" || $0 == " " }) else { continue }
    let key = line[..<colon].lowercased()
    let value = line[line.index(after: colon)...].trimmingPrefix(while: { $0 == " " || $0 == "\t" })
    if key.contains("agent") {
      if agents.count < 8 { agents.append(String(value)) }
    } else if paths.count < 16 {
      paths.append(String(value))
      paths.append(String(value.filter { $0 != "*" && $0 != "$" }))
      paths.append(String(value) + "x")
    }
  }

  var seen = Set<RobotsRules>()
  for agent in agents {
    let rules = file.rules(for: agent)
    guard seen.insert(rules).inserted else { continue }
    if let delay = rules.crawlDelay { require(delay >= .zero && delay < .seconds(86_400), "crawl delay \(delay)") }
    require(rules.isAllowed(robotsURL), "/robots.txt disallowed for \(agent.debugDescription)")
    // The reference costs (pattern length × path length) for each rule.
    let patternBytes = rules.rules.reduce(0) { $0 + $1.pattern.count + 1 }
    for path in paths {
      let allowed = rules.isAllowed(path: path)
      if patternBytes * (path.utf8.count + 1) <= 1 << 16 {
        let target = RobotsRules.normalize(Array(path.utf8), encodeNonASCII: false)
        for rule in rules.rules {
          require(RobotsRules.matches(rule.pattern, target) == referenceMatches(rule.pattern, target),
            "pattern \(String(decoding: rule.pattern, as: UTF8.self).debugDescription) against \(path.debugDescription)")
        }
        require(allowed == referenceAllowed(rules, target), "decision for \(path.debugDescription), agent \(agent.debugDescription)")
      }
      if let url = WebURL(path, base: robotsURL) { _ = rules.isAllowed(url) }
    }
  }
  require(RobotsRules.allowAll.isAllowed(path: paths.last!))
  return 0
}
