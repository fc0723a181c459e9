// A fast path for the selectors most queries use: one compound of a type,
// ids, classes and attribute tests (`div.product`, `a[href]`, `#main`,
// `h1, h2`). The general matcher walks enums whose payloads are strings
// and classes, so each element it tests costs reference counting and a
// String's bytes fetched anew; here every test is plain data made once per
// selector, its strings' bytes in memory the selector owns, and a query
// borrows the document's attributes once and scans the element index
// (`ElementOrder`), whose entries carry each element's name and attribute
// range. The result is the same as `SelectorMatcher`'s
// (`SelectorQuickPathTests` compares the two).

/// One id, class or attribute test of a compound, as plain data.
struct QuickTest: Sendable {
  enum Kind: UInt8, Sendable {
    case id, className, attribute
  }

  var kind: Kind
  /// For `.attribute`; `.equals` for ids, `.includes` for classes (not read).
  var op: AttributeSelector.Operator
  /// The value compares ASCII case-insensitively on every element (the
  /// `i` flag).
  var foldAlways: Bool
  /// The value compares ASCII case-insensitively on HTML elements (an
  /// attribute the HTML standard lists, without an `s` flag).
  var foldOnHTML: Bool
  /// The attribute's name code on HTML elements (name lower-cased) and on
  /// others (as written): a common code (`A`), or `-1 - i` for the i-th of
  /// `QuickSelectors.uncommonNames`, which each document codes on its own.
  var lowerName: Int32
  var exactName: Int32
  /// The wanted value, as written and ASCII-lower-cased, as runs of
  /// `QuickSelectors.bytes`.
  var valueStart: Int32
  var valueCount: Int32
  var lowerStart: Int32
  var lowerCount: Int32
}

/// A top-level complex selector that is one compound: its type's name
/// codes on HTML elements (lower-cased) and others (as written), and its
/// run of `QuickSelectors.tests`. A type code is a known tag name's code
/// (`T`, the same in every document), `SelectorMatcher.anyType` for no
/// type, or `-3 - i` for the i-th of `QuickSelectors.typeNames`, which each
/// document codes on its own (`Document.withQuickProbe` resolves them).
struct QuickSubject: Sendable {
  var typeLower: Int32
  var typeExact: Int32
  var testStart: Int32
  var testCount: Int32
}

/// The quick form of a selector list whose every selector is one compound
/// of a type (or universal) selector, ids, classes and attribute selectors.
/// A class that owns its subjects, tests and bytes in memory of its own:
/// a query reads them through pointers, retaining no array (five retains
/// and releases per query cost more than the rest of its set-up).
///
/// `@unchecked Sendable`: the memory is written once, in `init`, and only
/// read afterwards.
final class QuickSelectors: @unchecked Sendable {
  let subjects: UnsafeBufferPointer<QuickSubject>
  let tests: UnsafeBufferPointer<QuickTest>
  let bytes: UnsafeBufferPointer<UInt8>
  /// Attribute names outside the common ones of `A` (see `QuickTest`).
  let uncommonNames: [String]
  /// Type names outside the known tag names of `T` (see `QuickSubject`).
  let typeNames: [String]

  /// The quick form of `list` (whose type selectors are `types`), or nil
  /// when some selector has a combinator or a pseudo-class.
  static func make(_ list: SelectorList, _ types: [TypeName]) -> QuickSelectors? {
    guard let b = Builder(list, types) else { return nil }
    return QuickSelectors(b)
  }

  private init(_ b: Builder) {
    /// A copy of `array` in memory this object owns (never empty, so the
    /// base address is never nil).
    func own<T>(_ array: [T]) -> UnsafeBufferPointer<T> {
      let p = UnsafeMutablePointer<T>.allocate(capacity: max(array.count, 1))
      p.initialize(from: array, count: array.count)
      return UnsafeBufferPointer(start: p, count: array.count)
    }
    subjects = own(b.subjects)
    tests = own(b.tests)
    bytes = own(b.bytes)
    uncommonNames = b.uncommonNames
    typeNames = b.typeNames
  }

  deinit {
    // Trivial element types: freeing is enough.
    UnsafeMutablePointer(mutating: subjects.baseAddress!).deallocate()
    UnsafeMutablePointer(mutating: tests.baseAddress!).deallocate()
    UnsafeMutablePointer(mutating: bytes.baseAddress!).deallocate()
  }

  /// The arrays being filled.
  private struct Builder {
    var subjects: [QuickSubject] = []
    var tests: [QuickTest] = []
    var bytes: [UInt8] = []
    var uncommonNames: [String] = []
    var typeNames: [String] = []

    init?(_ list: SelectorList, _ types: [TypeName]) {
      for complex in list.selectors {
        guard complex.combinators.isEmpty, complex.compounds.count == 1 else { return nil }
        var lowerType = SelectorMatcher.anyType
        var exactType = SelectorMatcher.anyType
        let ordinal = Int(complex.compounds[0].typeOrdinal)
        if ordinal >= 0 {
          let name = types[ordinal]
          lowerType = typeCode(name.lower)
          exactType = name.exact == name.lower ? lowerType : typeCode(name.exact)
        }
        let start = Int32(tests.count)
        for simple in complex.compounds[0].simples {
          switch simple {
          case .id(let id):
            tests.append(test(.id, .equals, A.id, A.id, id, asciiLowercased(id)))
          case .className(let name):
            // `holds` skips `containsWord`'s check of the wanted word; a name
            // that fails it (escaped whitespace) takes the general path.
            guard isValidWord(name) else { return nil }
            tests.append(test(.className, .includes, A.class, A.class, name, asciiLowercased(name)))
          case .attribute(let a):
            let lower = nameCode(a.name.lower)
            let exact = a.name.exact == a.name.lower ? lower : nameCode(a.name.exact)
            var t = test(.attribute, a.op, lower, exact, a.value, a.lowerValue)
            t.foldAlways = a.flag == .insensitive
            t.foldOnHTML = a.flag == .none && a.htmlCaseInsensitive
            tests.append(t)
          default:
            return nil
          }
        }
        subjects.append(
          QuickSubject(typeLower: lowerType, typeExact: exactType, testStart: start, testCount: Int32(tests.count) - start))
      }
    }

    /// A test with its values' bytes appended to `bytes`.
    private mutating func test(
      _ kind: QuickTest.Kind, _ op: AttributeSelector.Operator, _ lower: Int32, _ exact: Int32,
      _ value: String, _ lowerValue: String
    ) -> QuickTest {
      let valueStart = Int32(bytes.count)
      bytes.append(contentsOf: value.utf8)
      let lowerStart = Int32(bytes.count)
      bytes.append(contentsOf: lowerValue.utf8)
      return QuickTest(
        kind: kind, op: op, foldAlways: false, foldOnHTML: false, lowerName: lower, exactName: exact,
        valueStart: valueStart, valueCount: lowerStart - valueStart, lowerStart: lowerStart,
        lowerCount: Int32(bytes.count) - lowerStart)
    }

    /// True when `name` is a word `containsValidWord` may look for.
    private func isValidWord(_ name: String) -> Bool {
      !name.isEmpty && !name.utf8.contains(where: isASCIIWhitespace)
    }

    /// The code a subject stores for type name `name`.
    private mutating func typeCode(_ name: String) -> Int32 {
      if let code = T.index[name] { return code }
      if let i = typeNames.firstIndex(of: name) { return -3 - Int32(i) }
      typeNames.append(name)
      return -2 - Int32(typeNames.count)
    }

    /// The code a test stores for attribute name `name`.
    private mutating func nameCode(_ name: String) -> Int32 {
      if let code = A.index[name] { return code }
      if let i = uncommonNames.firstIndex(of: name) { return -1 - Int32(i) }
      uncommonNames.append(name)
      return -Int32(uncommonNames.count)
    }
  }
}

/// `QuickSelectors` and a document's attributes, borrowed for one query:
/// no reference is counted and no bounds are checked per element.
struct QuickProbe {
  let attributes: UnsafeBufferPointer<StoredAttribute>
  let values: UnsafePointer<UInt8>
  let subjects: UnsafeBufferPointer<QuickSubject>
  let tests: UnsafeBufferPointer<QuickTest>
  let bytes: UnsafeBufferPointer<UInt8>
  /// The document's codes of `QuickSelectors.uncommonNames` (-1: no
  /// attribute of the document has that name).
  let resolved: UnsafeBufferPointer<Int32>
  /// Ids and classes match case-insensitively in quirks mode.
  let quirks: Bool

  /// The index of the first entry of `entries[start..<end]` that matches
  /// one of the selectors, or -1.
  @inline(__always)
  func first(_ entries: UnsafeBufferPointer<ElementOrder.Entry>, from start: Int, to end: Int) -> Int {
    var k = start
    if let s = singleType {
      while true {
        k = Self.scan(entries, from: k, to: end, for: s.typeLower)
        guard k < end else { return -1 }
        if passes(s, entries[k]) { return k }
        k += 1
      }
    }
    while k < end {
      if matches(entries[k]) { return k }
      k += 1
    }
    return -1
  }

  /// Writes the node ids of the entries of `entries[start..<end]` that
  /// match to `found`; returns their number.
  @inline(__always)
  func collect(
    _ entries: UnsafeBufferPointer<ElementOrder.Entry>, from start: Int, to end: Int,
    into found: UnsafeMutableBufferPointer<Int32>
  ) -> Int {
    var count = 0
    var k = start
    if let s = singleType {
      // Inline, not `scan`: a full walk meets many candidates (links),
      // and a call per candidate cost more than the tighter loop saved.
      let type = s.typeLower
      while k < end {
        if entries[k].name == type && passes(s, entries[k]) {
          found[count] = entries[k].node
          count += 1
        }
        k += 1
      }
      return count
    }
    while k < end {
      if matches(entries[k]) {
        found[count] = entries[k].node
        count += 1
      }
      k += 1
    }
    return count
  }

  /// The index of the first entry of `entries[start..<end]` whose name
  /// code is `name`, or `end`. Not inlined: alone, the loop keeps its four
  /// values in registers (inlined into `first`, it read them from the
  /// stack: 11 instructions per element instead of 6).
  @inline(never)
  static func scan(_ entries: UnsafeBufferPointer<ElementOrder.Entry>, from start: Int, to end: Int, for name: Int32) -> Int {
    var k = start
    while k < end && entries[k].name != name { k += 1 }
    return k
  }

  /// The only selector when there is one and its type has the same code
  /// in every namespace (written in lower case: `a[href]`, `div.product`),
  /// so one integer compare rejects most elements.
  @inline(__always)
  var singleType: QuickSubject? {
    guard subjects.count == 1 else { return nil }
    let s = subjects[0]
    return s.typeLower == s.typeExact && s.typeLower != SelectorMatcher.anyType ? s : nil
  }

  /// True when element `e` matches one of the selectors.
  @inline(__always)
  func matches(_ e: ElementOrder.Entry) -> Bool {
    var i = 0
    while i < subjects.count {
      let s = subjects[i]
      let wanted = e.isHTML ? s.typeLower : s.typeExact
      if (wanted == SelectorMatcher.anyType || wanted == e.name) && passes(s, e) { return true }
      i += 1
    }
    return false
  }

  /// True when element `e` passes every test of `s`.
  @inline(__always)
  func passes(_ s: QuickSubject, _ e: ElementOrder.Entry) -> Bool {
    var t = Int(s.testStart)
    let end = t + Int(s.testCount)
    let first = Int(e.attributeStart)
    let last = first + Int(e.attributeCount)
    while t < end {
      // Only the name is read here; `holds` reads the rest of the test
      // (loading the whole test up front cost every candidate a dozen
      // instructions, most of them for presence tests such as `[href]`).
      var code = e.isHTML ? tests[t].lowerName : tests[t].exactName
      if code < 0 { code = resolved[Int(-1 - code)] }
      // The element's no-namespace attribute with that name (-1 is no
      // stored name: a name the document lacks is never found).
      var slot = first
      while slot < last && (attributes[slot].name != code || attributes[slot].namespace != .none) { slot += 1 }
      guard slot < last else { return false }
      if tests[t].kind != .attribute || tests[t].op != .exists {
        let a = attributes[slot]
        let value = UnsafeBufferPointer(start: values + Int(a.valueStart), count: Int(a.valueCount))
        guard holds(tests[t], value, e.isHTML) else { return false }
      }
      t += 1
    }
    return true
  }

  /// True when `value` satisfies `test` (its attribute is present): the
  /// comparisons of `SelectorMatcher.matchSimple` and `matchAttribute`.
  func holds(_ test: QuickTest, _ value: UnsafeBufferPointer<UInt8>, _ html: Bool) -> Bool {
    let fold = test.kind == .attribute ? test.foldAlways || (html && test.foldOnHTML) : quirks
    let start = Int(fold ? test.lowerStart : test.valueStart)
    let count = Int(fold ? test.lowerCount : test.valueCount)
    let wanted = UnsafeBufferPointer(start: bytes.baseAddress! + start, count: count)
    switch test.kind {
    case .id: return bytesEqual(value, wanted, fold: fold)
    case .className: return containsValidWord(value, wanted, fold: fold)
    case .attribute:
      switch test.op {
      case .exists: return true
      case .equals: return bytesEqual(value, wanted, fold: fold)
      case .includes: return containsWord(value, wanted, fold: fold)
      case .dashMatch: return dashMatches(value, wanted, fold: fold)
      case .prefix: return !wanted.isEmpty && bytesHasPrefix(value, wanted, fold: fold)
      case .suffix: return !wanted.isEmpty && bytesHasSuffix(value, wanted, fold: fold)
      case .substring: return !wanted.isEmpty && bytesContains(value, wanted, fold: fold)
      }
    }
  }
}

extension Document {
  /// Runs `body` with `quick` and this document's attributes borrowed, the
  /// names `quick` leaves to each document resolved (in temporary memory,
  /// only when there are some).
  @inline(__always)
  func withQuickProbe<R>(_ quick: QuickSelectors, _ body: (QuickProbe) -> R) -> R {
    let quirks = quirksMode == .quirks
    let values = UnsafePointer(attributeBytes.base)
    return attributes.withUnsafeBufferPointer { attributes in
      func run(_ subjects: UnsafeBufferPointer<QuickSubject>, _ resolved: UnsafeBufferPointer<Int32>) -> R {
        body(
          QuickProbe(
            attributes: attributes, values: values, subjects: subjects, tests: quick.tests, bytes: quick.bytes,
            resolved: resolved, quirks: quirks))
      }
      if quick.typeNames.isEmpty && quick.uncommonNames.isEmpty {
        return run(quick.subjects, UnsafeBufferPointer(start: nil, count: 0))
      }
      return withUnsafeTemporaryAllocation(of: Int32.self, capacity: max(quick.uncommonNames.count, 1)) { codes in
        for (i, name) in quick.uncommonNames.enumerated() { codes[i] = attributeNameCode(name) ?? -1 }
        let resolved = UnsafeBufferPointer(codes)
        if quick.typeNames.isEmpty { return run(quick.subjects, resolved) }
        return withUnsafeTemporaryAllocation(of: QuickSubject.self, capacity: quick.subjects.count) { subjects in
          func code(_ c: Int32) -> Int32 { c <= -3 ? nameIndex[quick.typeNames[Int(-3 - c)]] ?? -1 : c }
          for (i, s) in quick.subjects.enumerated() {
            var r = s
            r.typeLower = code(s.typeLower)
            r.typeExact = code(s.typeExact)
            (subjects.baseAddress! + i).initialize(to: r)
          }
          return run(UnsafeBufferPointer(subjects), resolved)
        }
      }
    }
  }

  /// The index of the first entry of `entries` in `range` that matches, or
  /// -1. (The entries of an element index the caller keeps alive: taking
  /// the index itself, the closures retained and released it twice.)
  func quickFirst(
    _ quick: QuickSelectors, in entries: UnsafeBufferPointer<ElementOrder.Entry>, _ range: Range<Int>
  ) -> Int {
    withQuickProbe(quick) { probe in probe.first(entries, from: range.lowerBound, to: range.upperBound) }
  }

  /// The elements of `entries` in `range` that match, in order.
  func quickSelect(
    _ quick: QuickSelectors, in entries: UnsafeBufferPointer<ElementOrder.Entry>, _ range: Range<Int>
  ) -> [Element] {
    // The matches' ids go to temporary memory first, so the result is
    // allocated once, at its size.
    withUnsafeTemporaryAllocation(of: Int32.self, capacity: max(range.count, 1)) { found in
      let count = withQuickProbe(quick) { probe in
        probe.collect(entries, from: range.lowerBound, to: range.upperBound, into: found)
      }
      // (`Array(unsafeUninitializedCapacity:)` allocated through an
      // unspecialized path, three times the cost of this.)
      var result: [Element] = []
      result.reserveCapacity(count)
      for i in 0..<count { result.append(Element(self, NodeID(raw: found[i]))) }
      return result
    }
  }
}
