import Foundation
import Testing

@testable import ForageURL

/// Runs the WHATWG URL conformance data (web-platform-tests'
/// `url/resources/urltestdata.json`) from `../shared/testdata/whatwg-url`.
struct WHATWGURLTests {
  /// The shared test data folder, found from this file: up to the folder
  /// holding Package.swift, then `../shared/testdata`. Symlinks are resolved
  /// first, so a development package that links this folder finds it too.
  static let testdata: URL? = {
    let file = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
    var dir = file.deletingLastPathComponent()
    while dir.path != "/" {
      if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
        let data = dir.deletingLastPathComponent().appendingPathComponent("shared/testdata")
        return FileManager.default.fileExists(atPath: data.path) ? data : nil
      }
      dir = dir.deletingLastPathComponent()
    }
    return nil
  }()

  static var dataFile: URL? {
    testdata?.appendingPathComponent("whatwg-url/urltestdata.json")
  }

  /// Cases this implementation gets wrong on purpose, with the reason.
  /// Most need the full UTS #46 mapping table, NFC, or the Bidi rule
  /// (see `IDNA`). The test fails if any other case fails, and reports
  /// entries of this list that now pass.
  static let knownFailures: [(input: String, base: String?, reason: String)] = [
  ]

  @Test(.enabled(if: dataFile != nil, "../shared/testdata/whatwg-url missing: skipped"))
  func test_urltestdata() throws {
    let data = try Data(contentsOf: #require(Self.dataFile))
    let entries = try #require(try JSONSerialization.jsonObject(with: data) as? [Any])
    var passed = 0, failed = 0
    var unexpected = [String]()
    var nowPassing = [String]()
    let known = Set(Self.knownFailures.map { "\($0.input)\u{0}\($0.base ?? "")" })
    for entry in entries {
      guard let c = entry as? [String: Any], let input = c["input"] as? String else { continue }
      let baseString = c["base"] as? String
      let problem = Self.check(c, input: input, base: baseString)
      let key = "\(input)\u{0}\(baseString ?? "")"
      if let problem {
        failed += 1
        if !known.contains(key) {
          unexpected.append("\(input.debugDescription) base \(baseString.debugDescription): \(problem)")
        }
      } else {
        passed += 1
        if known.contains(key) { nowPassing.append(input.debugDescription) }
      }
    }
    print("whatwg-url: \(passed) passed, \(failed) failed")
    for u in unexpected { print("  unexpected failure: \(u)") }
    for p in nowPassing { print("  known failure now passes: \(p)") }
    #expect(unexpected.isEmpty, "\(unexpected.count) unexpected failures")
    #expect(nowPassing.isEmpty, "\(nowPassing.count) known failures now pass")
  }

  /// Nil when the case passes, else what differs.
  static func check(_ c: [String: Any], input: String, base baseString: String?) -> String? {
    var base: WebURL?
    if let baseString {
      base = WebURL(baseString)
      if base == nil { return "base did not parse" }
    }
    let url = WebURL(input, base: base)
    if c["failure"] as? Bool == true {
      return url.map { "parsed as \($0.href) but must fail" }
    }
    guard let url else { return "failed to parse" }
    let host = url.host ?? ""
    let port = url.port.map(String.init) ?? ""
    let actual: [String: String] = [
      "href": url.href,
      "protocol": url.scheme + ":",
      "username": url.username,
      "password": url.password,
      "host": port.isEmpty ? host : host + ":" + port,
      "hostname": host,
      "port": port,
      "pathname": url.path,
      "search": url.query.map { $0.isEmpty ? "" : "?" + $0 } ?? "",
      "hash": url.fragment.map { $0.isEmpty ? "" : "#" + $0 } ?? "",
      "origin": url.origin,
    ]
    var diffs = [String]()
    for key in ["href", "protocol", "username", "password", "host", "hostname", "port",
      "pathname", "search", "hash", "origin"]
    {
      guard let expected = c[key] as? String else { continue }
      if actual[key] != expected {
        diffs.append("\(key) \(actual[key]!.debugDescription) != \(expected.debugDescription)")
      }
    }
    return diffs.isEmpty ? nil : diffs.joined(separator: ", ")
  }
}
