import Foundation
import Testing

@testable import ForageHTML

/// Runs html5lib-tests' tree-construction `.dat` files and compares the
/// tree dumps.
@Suite struct Html5libTreeConstructionTests {
  struct Case {
    var file: String
    var index: Int
    var data = ""
    var fragment: String? = nil
    var scriptingOn = false
    var document = ""
    var name: String { "\(file)#\(index)" }
  }

  static func parseDat(_ text: String, file: String) -> [Case] {
    var cases: [Case] = []
    var cur: Case? = nil
    var section = ""
    var lines: [String] = []
    func flush() {
      guard var c = cur else { return }
      switch section {
      case "#data": c.data = lines.joined(separator: "\n")
      case "#document-fragment": c.fragment = lines.first?.trimmingCharacters(in: .whitespaces)
      case "#document":
        var l = lines
        if l.last == "" { l.removeLast() }
        c.document = l.joined(separator: "\n")
      default: break
      }
      cur = c
      lines = []
    }
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
      if line == "#data" && (cur == nil || (section == "#document" && lines.last == "")) {
        flush()
        if let c = cur { cases.append(c) }
        cur = Case(file: file, index: cases.count)
        section = "#data"
        continue
      }
      if line.hasPrefix("#") && ["#errors", "#new-errors", "#document-fragment", "#document", "#script-on", "#script-off"].contains(line) {
        flush()
        section = line
        if line == "#script-on" { cur?.scriptingOn = true }
        continue
      }
      lines.append(line)
    }
    flush()
    if let c = cur { cases.append(c) }
    return cases
  }

  /// The html5lib tree dump of `doc` (children of `root`).
  static func dump(_ doc: Document, root: NodeID) -> String {
    var out: [String] = []
    func attrName(_ a: Attribute) -> String {
      switch a.namespace {
      case .none: return a.name
      case .xlink: return "xlink " + a.name
      case .xml: return "xml " + a.name
      case .xmlns: return "xmlns " + a.name
      }
    }
    func walk(_ n: NodeID, _ depth: Int) {
      let pad = "| " + String(repeating: "  ", count: depth)
      switch doc.kind(n) {
      case .documentType:
        let d = doc.doctype(n)!
        if d.publicIdentifier != nil || d.systemIdentifier != nil {
          out.append(pad + "<!DOCTYPE \(d.name ?? "") \"\(d.publicIdentifier ?? "")\" \"\(d.systemIdentifier ?? "")\">")
        } else {
          out.append(pad + "<!DOCTYPE \(d.name ?? "")>")
        }
      case .text: out.append(pad + "\"\(doc.data(n))\"")
      case .comment: out.append(pad + "<!-- \(doc.data(n)) -->")
      case .element:
        let prefix: String
        switch doc.namespace(n) {
        case .html: prefix = ""
        case .svg: prefix = "svg "
        case .mathml: prefix = "math "
        }
        out.append(pad + "<\(prefix)\(doc.localName(n))>")
        let attrPad = "| " + String(repeating: "  ", count: depth + 1)
        for a in doc.attributes(n).sorted(by: { attrName($0) < attrName($1) }) {
          out.append(attrPad + "\(attrName(a))=\"\(a.value)\"")
        }
        if let content = doc.templateContents(n) {
          out.append(attrPad + "content")
          for c in doc.children(content) { walk(c, depth + 2) }
        }
        for c in doc.children(n) { walk(c, depth + 1) }
      default:
        for c in doc.children(n) { walk(c, depth) }
      }
    }
    for c in doc.children(root) { walk(c, 0) }
    return out.joined(separator: "\n")
  }

  static func run(_ c: Case) -> String {
    if let fragment = c.fragment {
      var ns = Namespace.html
      var name = fragment
      if fragment.hasPrefix("svg ") { ns = .svg; name = String(fragment.dropFirst(4)) }
      else if fragment.hasPrefix("math ") { ns = .mathml; name = String(fragment.dropFirst(5)) }
      let (doc, root) = Document.parseFragment(html: c.data, context: name, contextNamespace: ns)
      return dump(doc, root: root)
    }
    let doc = Document.parse(html: c.data)
    return dump(doc, root: doc.rootID)
  }

  @Test(.enabled(if: Html5libData.available, "shared/testdata/html5lib-tests not found; skipped"))
  func test_html5libTreeConstruction_allCasesPassOrAreKnown() throws {
    var passed = 0
    var skipped = 0
    var failures: [String: String] = [:]
    var ran = Set<String>()
    for path in Html5libData.files("tree-construction", ext: "dat") {
      let file = (path as NSString).lastPathComponent
      let text = try String(contentsOfFile: path, encoding: .utf8)
      for c in Self.parseDat(text, file: file) {
        if c.scriptingOn { skipped += 1; continue }
        ran.insert(c.name)
        let got = Self.run(c)
        if got == c.document {
          passed += 1
        } else {
          failures[c.name] = "  data: \(c.data.debugDescription)\(c.fragment.map { " (fragment: \($0))" } ?? "")\n  expected:\n\(c.document)\n  got:\n\(got)"
        }
      }
    }
    print("html5lib tree-construction: \(passed) passed, \(failures.count) failed, \(skipped) skipped (#script-on)")
    let problems = Html5libData.check(failures: failures, known: Html5libKnownFailures.treeConstruction, ran: ran)
    if ProcessInfo.processInfo.environment["HTML5LIB_VERBOSE"] != nil {
      for p in problems { print(p) }
    } else {
      for p in problems.prefix(40) { print(p) }
    }
    #expect(problems.isEmpty, "\(problems.count) tree-construction cases differ from the known-failures list")
    #expect(passed > 0)
  }
}
