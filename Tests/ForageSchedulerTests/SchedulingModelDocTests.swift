import Foundation
import Testing

@testable import ForageScheduler

/// docs/scheduling-model.md says what every rule and number rests on: a
/// source with a URL, or "assumption" with the direction of its error
/// (issue 14). These checks keep it so as the model grows.
@Suite struct SchedulingModelDocTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  func doc() throws -> String {
    try String(contentsOf: Self.root.appendingPathComponent("docs/scheduling-model.md"), encoding: .utf8)
  }

  /// The lines of the section under `heading` (up to the next heading of
  /// the same or a higher level).
  func section(_ heading: String, in text: String) -> [Substring] {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(where: { $0 == heading }) else { return [] }
    let level = heading.prefix { $0 == "#" }.count
    let rest = lines[(start + 1)...]
    let end = rest.firstIndex { line in
      let hashes = line.prefix { $0 == "#" }.count
      return hashes > 0 && hashes <= level && line.dropFirst(hashes).first == " "
    } ?? lines.endIndex
    return Array(lines[(start + 1)..<end])
  }

  /// The body rows of the tables in `lines` (no header, no separator).
  func rows(_ lines: [Substring]) -> [[String]] {
    var out: [[String]] = []
    var previous: Substring = ""
    for line in lines where line.hasPrefix("|") {
      defer { previous = line }
      if line.hasPrefix("|---") || !previous.hasPrefix("|") { continue }  // header and separator
      out.append(line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) })
    }
    return out
  }

  func citations(_ text: some StringProtocol) -> Set<Int> {
    var found = Set<Int>()
    var rest = Substring(text)
    while let open = rest.firstIndex(of: "[") {
      rest = rest[rest.index(after: open)...]
      guard let close = rest.firstIndex(of: "]"), let n = Int(rest[..<close]) else { continue }
      found.insert(n)
    }
    return found
  }

  @Test func test_issue14_everySourceHasAURL_andEveryCitationASource() throws {
    let text = try doc()
    var sources: [Int: String] = [:]
    var current: Int?
    for line in section("## Sources", in: text) {
      if let dot = line.firstIndex(of: "."), let n = Int(line[..<dot]) { current = n }
      if let n = current { sources[n, default: ""] += line + "\n" }
    }
    #expect(sources.count >= 14)
    for (n, entry) in sources.sorted(by: { $0.key < $1.key }) {
      #expect(entry.contains("<https://"), "source [\(n)] has no URL: \(entry)")
    }
    for n in citations(text).sorted() {
      #expect(sources[n] != nil, "[\(n)] is cited but not listed under Sources")
    }
  }

  @Test func test_issue14_everyRuleAndNumber_citesASourceOrIsAnAssumptionWithItsDirection() throws {
    let text = try doc()
    let apple = rows(section("## The API and its rules (Apple)", in: text))
    #expect(apple.count >= 15)
    for row in apple {
      #expect(!citations(row[1]).isEmpty, "an Apple rule without a source: \(row)")
    }
    let assumed = rows(section("## The rules that are assumptions", in: text))
    #expect(assumed.count >= 6)
    for row in assumed {
      let direction = row.last ?? ""
      #expect(
        ["pessimistic", "optimistic", "neutral"].contains { direction.contains($0) },
        "an assumption without the direction of its error: \(row)")
    }
    let numbers = rows(section("## The numbers", in: text))
    for row in numbers {
      let kind = row[2]
      #expect(kind.hasPrefix("Apple") || kind.hasPrefix("Assumed") || kind.hasPrefix("Forage"), "\(row)")
      if kind.hasPrefix("Apple") { #expect(!citations(kind).isEmpty, "an Apple number without a source: \(row)") }
    }
    let documented = Set(numbers.map { $0[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")) })
    for case let (name?, _) in Mirror(reflecting: SchedulingPolicy()).children {
      #expect(documented.contains(name), "SchedulingPolicy.\(name) is not in the table of numbers")
    }
  }

  @Test func test_issue14_doesNotClaimTheAppleAdapterExists() throws {
    let text = try doc()
    let exists = FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("Sources/ForageBackgroundTasks").path)
    if !exists && text.contains("ForageBackgroundTasks") {
      #expect(text.contains("does not\nexist yet") || text.contains("does not exist yet"), "the doc names the adapter as if it existed")
    }
    #expect(!text.contains("and, through `ForageBackgroundTasks`, under the"))
  }
}
