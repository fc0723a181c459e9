import Foundation
import Testing

@testable import ForageHTML

/// Finds `shared/testdata/html5lib-tests` from this file's location: the
/// folder holding Package.swift, then `../shared/testdata` (also tried with
/// symbolic links resolved, for development checkouts).
enum Html5libData {
  static let root: String? = {
    var candidates = [#filePath]
    if let real = realpath(#filePath, nil) {
      candidates.append(String(cString: real))
      free(real)
    }
    let fm = FileManager.default
    for file in candidates {
      var dir = (file as NSString).deletingLastPathComponent
      while dir != "/" && !dir.isEmpty {
        if fm.fileExists(atPath: dir + "/Package.swift") {
          let data = dir + "/../shared/testdata/html5lib-tests"
          if fm.fileExists(atPath: data) { return (data as NSString).standardizingPath }
          break
        }
        dir = (dir as NSString).deletingLastPathComponent
      }
    }
    return nil
  }()

  static var available: Bool { root != nil }

  static func files(_ sub: String, ext: String) -> [String] {
    guard let root else { return [] }
    let dir = root + "/" + sub
    let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
    return names.filter { $0.hasSuffix("." + ext) }.sorted().map { dir + "/" + $0 }
  }

  /// Compares failures with a known-failure list; returns messages for
  /// unexpected failures and for listed cases that now pass.
  static func check(failures: [String: String], known: [String: String], ran: Set<String>) -> [String] {
    var problems: [String] = []
    for (name, detail) in failures.sorted(by: { $0.key < $1.key }) where known[name] == nil {
      problems.append("unexpected failure: \(name)\n\(detail)")
    }
    for name in known.keys.sorted() where ran.contains(name) && failures[name] == nil {
      problems.append("now passes, remove from the known-failures list: \(name)")
    }
    return problems
  }
}

@Suite struct Html5libTokenizerTests {
  static func unescape(_ s: String) -> String {
    var units: [UInt16] = []
    var it = Array(s.utf16)[...]
    while let u = it.first {
      if u == 0x5C, it.count >= 6, it[it.startIndex + 1] == 0x75,
         let v = UInt16(String(decoding: it[(it.startIndex + 2)..<(it.startIndex + 6)], as: UTF16.self), radix: 16) {
        units.append(v)
        it = it.dropFirst(6)
      } else {
        units.append(u)
        it = it.dropFirst()
      }
    }
    return String(decoding: units, as: UTF16.self)
  }

  /// A canonical one-line form of a token, for comparing.
  static func describe(_ t: Token) -> String {
    switch t {
    case .doctype(let d):
      return "DOCTYPE|\(d.name ?? "<nil>")|\(d.publicIdentifier ?? "<nil>")|\(d.systemIdentifier ?? "<nil>")|\(!d.forceQuirks)"
    case .startTag(let tag):
      let attrs = tag.attributes.map { "\($0.name)=\($0.value)" }.sorted().joined(separator: "\u{1}")
      return "StartTag|\(tag.name)|\(attrs)|\(tag.selfClosing)"
    case .endTag(let tag): return "EndTag|\(tag.name)"
    case .comment(let s): return "Comment|\(s)"
    case .characters(let s): return "Character|\(s)"
    case .endOfFile: return "EOF"
    }
  }

  static func describeExpected(_ any: Any, escaped: Bool) -> String {
    guard let a = any as? [Any], let kind = a.first as? String else { return "?" }
    func s(_ x: Any) -> String {
      guard let v = x as? String else { return "<nil>" }
      return escaped ? unescape(v) : v
    }
    switch kind {
    case "DOCTYPE": return "DOCTYPE|\(s(a[1]))|\(s(a[2]))|\(s(a[3]))|\((a[4] as? Bool) ?? false)"
    case "StartTag":
      let dict = (a[2] as? [String: Any]) ?? [:]
      let attrs = dict.map { "\(escaped ? unescape($0.key) : $0.key)=\(s($0.value))" }.sorted().joined(separator: "\u{1}")
      let sc = a.count > 3 ? ((a[3] as? Bool) ?? false) : false
      return "StartTag|\(s(a[1]))|\(attrs)|\(sc)"
    case "EndTag": return "EndTag|\(s(a[1]))"
    case "Comment": return "Comment|\(s(a[1]))"
    case "Character": return "Character|\(s(a[1]))"
    default: return "?"
    }
  }

  /// Joins adjacent character tokens.
  static func merge(_ list: [String]) -> [String] {
    var out: [String] = []
    for t in list {
      if t.hasPrefix("Character|"), let last = out.last, last.hasPrefix("Character|") {
        out[out.count - 1] = last + t.dropFirst("Character|".count)
      } else {
        out.append(t)
      }
    }
    return out
  }

  static func state(named name: String) -> TokenizerState? {
    switch name {
    case "Data state": return .data
    case "PLAINTEXT state": return .plaintext
    case "RCDATA state": return .rcdata
    case "RAWTEXT state": return .rawtext
    case "Script data state": return .scriptData
    case "CDATA section state": return .cdataSection
    default: return nil
    }
  }

  static func run(input: String, state: TokenizerState, lastStartTag: String?) -> [String] {
    let bytes = InputDecoder.normalizeNewlines(Array(input.utf8))
    let tokenizer = Tokenizer(bytes)
    tokenizer.state = state
    if let lastStartTag { tokenizer.setLastStartTag(lastStartTag) }
    var out: [String] = []
    var guardCount = 0
    while true {
      let t = tokenizer.next()
      if case .endOfFile = t { break }
      out.append(describe(t))
      guardCount += 1
      if guardCount > 100_000 { out.append("<runaway>"); break }
    }
    return merge(out)
  }

  @Test(.enabled(if: Html5libData.available, "shared/testdata/html5lib-tests not found; skipped"))
  func test_html5libTokenizer_allCasesPassOrAreKnown() throws {
    var passed = 0
    var failures: [String: String] = [:]
    var ran = Set<String>()
    for path in Html5libData.files("tokenizer", ext: "test") {
      let file = (path as NSString).lastPathComponent
      let data = try #require(FileManager.default.contents(atPath: path))
      let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
      let tests = (json["tests"] as? [[String: Any]]) ?? (json["xmlViolationTests"] as? [[String: Any]]) ?? []
      if json["xmlViolationTests"] != nil { continue }
      for (index, test) in tests.enumerated() {
        let escaped = (test["doubleEscaped"] as? Bool) ?? false
        var input = (test["input"] as? String) ?? ""
        if escaped { input = Self.unescape(input) }
        let expected = Self.merge(((test["output"] as? [Any]) ?? []).map { Self.describeExpected($0, escaped: escaped) })
        let states = (test["initialStates"] as? [String]) ?? ["Data state"]
        for stateName in states {
          let name = "\(file)#\(index) [\(stateName)] \((test["description"] as? String) ?? "")"
          ran.insert(name)
          guard let st = Self.state(named: stateName) else { failures[name] = "unknown state"; continue }
          let got = Self.run(input: input, state: st, lastStartTag: test["lastStartTag"] as? String)
          if got == expected {
            passed += 1
          } else {
            failures[name] = "  input: \(input.debugDescription)\n  expected: \(expected.debugDescription)\n  got:      \(got.debugDescription)"
          }
        }
      }
    }
    print("html5lib tokenizer: \(passed) passed, \(failures.count) failed")
    let problems = Html5libData.check(failures: failures, known: Html5libKnownFailures.tokenizer, ran: ran)
    for p in problems.prefix(40) { print(p) }
    #expect(problems.isEmpty, "\(problems.count) tokenizer cases differ from the known-failures list")
    #expect(passed > 0)
  }
}
