import Foundation
import Testing

/// Issue 28: README.md's module table names exactly the targets Package.swift
/// declares (test targets aside), each with the targets it depends on.
@Suite struct ModuleTableTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  static func text(_ name: String) throws -> String {
    try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
  }

  @Test func test_issue28_readmeModuleTable_namesEveryTargetOfPackageSwiftAndNoOther() throws {
    let targets = PackageTargets.parse(try Self.text("Package.swift")).filter { !$0.isTest }
    let table = try ModuleTable.parse(readme: try Self.text("README.md"))
    // Parsing found the package's targets, not nothing (so the checks below cannot pass vacuously).
    #expect(targets.contains { $0.name == "Forage" && $0.kind == "target" })
    #expect(targets.contains { $0.name == "ForageCLI" && $0.kind == "executableTarget" })
    #expect(targets.contains { $0.name == "CSQLite" && $0.kind == "systemLibrary" })
    let declared = Set(targets.map(\.name))
    let listed = Set(table.map(\.name))
    for name in declared.subtracting(listed).sorted() {
      Issue.record("README.md's module table has no row for \(name), a target of Package.swift")
    }
    for name in listed.subtracting(declared).sorted() {
      Issue.record("README.md's module table names \(name), which is not a target of Package.swift")
    }
    let repeated = Dictionary(grouping: table.map(\.name), by: { $0 }).filter { $0.value.count > 1 }.keys
    #expect(repeated.isEmpty, "README.md's module table names these more than once: \(repeated.sorted())")
  }

  @Test func test_issue28_readmeModuleTable_dependenciesAreThoseOfPackageSwift() throws {
    let targets = PackageTargets.parse(try Self.text("Package.swift")).filter { !$0.isTest }
    let table = try ModuleTable.parse(readme: try Self.text("README.md"))
    for row in table {
      guard let target = targets.first(where: { $0.name == row.name }) else { continue }
      guard let dependencies = row.dependencies else {
        Issue.record("README.md's module table has no \"depends on\" column in the row of \(row.name)")
        continue
      }
      #expect(
        Set(dependencies) == Set(target.dependencies.map(\.name)),
        """
        README.md says \(row.name) depends on \(dependencies.sorted()); \
        Package.swift says \(target.dependencies.map(\.name).sorted())
        """)
      for dependency in target.dependencies where dependency.isConditional {
        #expect(
          row.qualified.contains(dependency.name),
          "README.md should say when \(row.name) depends on \(dependency.name): \"`\(dependency.name)` (Linux)\"")
      }
    }
  }

  @Test func test_packageTargets_readsNestedDependenciesAndConditions() {
    let text = """
      // .target(name: "Commented") is not a target.
      let package = Package(
        products: [.library(name: "A", targets: ["A"])],
        traits: [.trait(name: "T", description: "x (y)")],
        targets: [
          .systemLibrary(name: "CLib", pkgConfig: "lib", providers: [.apt(["lib-dev"])]),
          .target(name: "B"),
          .target(
            name: "A",
            dependencies: [
              "B", .target(name: "CLib", condition: .when(platforms: [.linux])),
              .target(name: "C", condition: .when(traits: ["T"])),
            ]),
          .executableTarget(name: "Tool", dependencies: ["A"]),
          .testTarget(name: "ATests", dependencies: ["A", "B"]),
        ])
      """
    let targets = PackageTargets.parse(text)
    #expect(targets.map(\.name) == ["CLib", "B", "A", "Tool", "ATests"])
    #expect(targets.map(\.isTest) == [false, false, false, false, true])
    let a = targets[2]
    #expect(a.dependencies.map(\.name) == ["B", "CLib", "C"])
    #expect(a.dependencies.map(\.isConditional) == [false, true, true])
    #expect(targets[1].dependencies.isEmpty)
  }

  @Test func test_moduleTable_readsEveryRowOfTheModulesSection() throws {
    let readme = """
      ## Modules

      | target | role | depends on |
      |---|---|---|
      | `A` | the engine (see `B`) | `B`, `CLib` (Linux) |
      | `B` | a part | nothing |
      | `CLib`, `CTwo` | C libraries | — |

      | other | table |
      |---|---|
      | `NotARow` | x |
      """
    let table = try ModuleTable.parse(readme: readme)
    #expect(table.map(\.name) == ["A", "B", "CLib", "CTwo"])
    #expect(table[0].dependencies == ["B", "CLib"])
    #expect(table[0].qualified == ["CLib"])
    #expect(table[1].dependencies == [])
    #expect(table[2].dependencies == [])
    let twoColumns = try ModuleTable.parse(readme: "## Modules\n\n| target | role |\n|---|---|\n| `A` | x |\n")
    #expect(twoColumns.map(\.name) == ["A"])
    #expect(twoColumns[0].dependencies == nil)
    #expect(throws: ModuleTable.Missing.self) { try ModuleTable.parse(readme: "## Other\n") }
  }
}

/// The targets of a Package.swift, read from its text (no package resolution:
/// the text is the manifest as a reader sees it).
struct PackageTargets {
  struct Dependency: Equatable {
    var name: String
    /// Only on some platforms or with a trait (`condition:`).
    var isConditional: Bool
  }

  var kind: String
  var name: String
  var dependencies: [Dependency]
  var isTest: Bool { kind == "testTarget" }

  static let kinds = ["target", "executableTarget", "systemLibrary", "testTarget"]

  static func parse(_ manifest: String) -> [PackageTargets] {
    let text = Array(
      manifest.split(separator: "\n", omittingEmptySubsequences: false)
        .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
        .joined(separator: "\n"))
    var found: [PackageTargets] = []
    var index = 0
    while index < text.count {
      guard text[index] == ".", let kind = kinds.first(where: { matches(text, at: index + 1, "\($0)(") }) else {
        index += text[index] == "\"" ? stringEnd(text, from: index) - index : 1
        continue
      }
      let open = index + 1 + kind.count
      let close = closing(text, open)
      let body = String(text[(open + 1)..<close])
      if let name = firstString(after: "name:", in: body) {
        found.append(PackageTargets(kind: kind, name: name, dependencies: dependencies(in: body)))
      }
      index = close + 1  // nested `.target(name:)` dependencies are inside this one
    }
    return found
  }

  /// The names in `dependencies: [...]` of a target's arguments.
  static func dependencies(in body: String) -> [Dependency] {
    let chars = Array(body)
    guard let start = body.range(of: "dependencies:") else { return [] }
    var index = body.distance(from: body.startIndex, to: start.upperBound)
    while index < chars.count, chars[index] != "[" { index += 1 }
    guard index < chars.count else { return [] }
    let end = closing(chars, index)
    var result: [Dependency] = []
    var i = index + 1
    while i < end {
      if chars[i] == "\"" {
        let stop = stringEnd(chars, from: i)
        result.append(Dependency(name: String(chars[(i + 1)..<(stop - 1)]), isConditional: false))
        i = stop
      } else if chars[i] == "." && matches(chars, at: i + 1, "target(") {
        let open = i + "target".count + 1
        let close = closing(chars, open)
        let inner = String(chars[(open + 1)..<close])
        if let name = firstString(after: "name:", in: inner) {
          result.append(Dependency(name: name, isConditional: inner.contains("condition:")))
        }
        i = close + 1
      } else {
        i += 1
      }
    }
    return result
  }

  static func matches(_ text: [Character], at index: Int, _ word: String) -> Bool {
    let word = Array(word)
    return index + word.count <= text.count && Array(text[index..<(index + word.count)]) == word
  }

  /// The index just past the string literal starting at `start`.
  static func stringEnd(_ text: [Character], from start: Int) -> Int {
    var i = start + 1
    while i < text.count, text[i] != "\"" { i += text[i] == "\\" ? 2 : 1 }
    return min(i + 1, text.count)
  }

  /// The index of the bracket closing the one at `open`, skipping string literals.
  static func closing(_ text: [Character], _ open: Int) -> Int {
    let pairs: [Character: Character] = ["(": ")", "[": "]"]
    var stack: [Character] = []
    var i = open
    while i < text.count {
      let c = text[i]
      if c == "\"" {
        i = stringEnd(text, from: i)
        continue
      }
      if let close = pairs[c] {
        stack.append(close)
      } else if c == stack.last {
        stack.removeLast()
        if stack.isEmpty { return i }
      }
      i += 1
    }
    return text.count - 1
  }

  static func firstString(after label: String, in text: String) -> String? {
    guard let range = text.range(of: label) else { return nil }
    let rest = text[range.upperBound...]
    guard let open = rest.firstIndex(of: "\"") else { return nil }
    let after = rest[rest.index(after: open)...]
    guard let close = after.firstIndex(of: "\"") else { return nil }
    return String(after[..<close])
  }
}

/// The rows of README.md's module table (the first table under `## Modules`).
struct ModuleTable {
  struct Missing: Error {}

  var name: String
  /// The targets named in the "depends on" column; nil when the row has none.
  var dependencies: [String]?
  /// Those followed by a qualifier in parentheses: `` `CCurl` (Linux) ``.
  var qualified: [String]

  static func parse(readme: String) throws -> [ModuleTable] {
    let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let heading = lines.firstIndex(of: "## Modules") else { throw Missing() }
    let table = lines[(heading + 1)...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
    var rows: [ModuleTable] = []
    for line in table.dropFirst(2) {  // the header and the |---| line
      let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
        .map { $0.trimmingCharacters(in: .whitespaces) }
      guard let first = cells.first else { continue }
      let dependsOn = cells.count >= 3 ? cells[cells.count - 1] : nil
      let qualified = dependsOn.map { names(in: $0, followedBy: " (") } ?? []
      for name in names(in: first, followedBy: nil) {
        rows.append(
          ModuleTable(name: name, dependencies: dependsOn.map { names(in: $0, followedBy: nil) }, qualified: qualified))
      }
    }
    return rows
  }

  /// The `backticked` words of `cell`; with `followedBy`, only those the text follows.
  static func names(in cell: String, followedBy suffix: String?) -> [String] {
    let parts = cell.split(separator: "`", omittingEmptySubsequences: false)
    var result: [String] = []
    for index in stride(from: 1, to: parts.count - 1, by: 2) {
      if let suffix, !(parts[index + 1].hasPrefix(suffix)) { continue }
      result.append(String(parts[index]))
    }
    return result
  }
}
