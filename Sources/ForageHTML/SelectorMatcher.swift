/// Matches a parsed `Selector` against the elements of one `Document`.
///
/// Complex selectors are matched right to left: the subject compound first,
/// then the combinators walk to parents and previous siblings. Failures
/// carry a hint on where the search may resume (the classic
/// "restart from the closest descendant / later sibling" pruning), so a
/// chain of descendant combinators costs linear, not exponential, time in
/// the depth of the tree. Type selectors are resolved once per matcher to
/// the document's interned name codes and compared as integers.
///
/// Recursion depth is bounded by the selector (its number of compounds and
/// nesting, both limited by the parser), never by the tree.
///
/// - SeeAlso: <https://www.w3.org/TR/selectors-4/#match-against-element>
struct SelectorMatcher {
  let document: Document
  let selector: CompiledSelector
  /// The element `:scope` stands for (-1: none).
  let scope: Int32
  /// The document's codes of the selector's type names (see `TypeCodes`).
  let codes: TypeCodes
  /// Ids and classes match case-insensitively in quirks mode.
  let quirks: Bool
  /// Snapshots of the document's arena (copy-on-write: no copy is made).
  /// Reading them through this struct avoids reference counting and
  /// exclusivity checks on the document's stored properties in the hot loop.
  let nodes: [Document.NodeRecord]
  let attributeStore: [StoredAttribute]
  /// The document's attribute values (borrowed: the document outlives the
  /// matcher and does not change while it runs).
  let attributeBytes: UnsafePointer<UInt8>
  /// Sibling indexes for the `:nth-*` family, computed per parent on
  /// first use (a class: the matcher itself is an immutable value); nil
  /// when the selector has no such pseudo-class.
  let siblingIndexes: SiblingIndexCache?
  /// What long walks found (see `WalkMemo`); nil when the selector has no
  /// combinator or `:has()` that walks far.
  let memo: WalkMemo?

  /// A matcher of `selector` on `document`. Costs no allocation when the
  /// selector's type names are all known tag names (the usual case): every
  /// document interns those with the same codes, so the selector's own
  /// resolution is reused.
  init(_ selector: Selector, document: Document, scope: NodeID?) {
    self.document = document
    self.nodes = document.nodes
    self.attributeStore = document.attributes
    self.attributeBytes = UnsafePointer(document.attributeBytes.base)
    self.selector = selector.compiled
    self.scope = scope?.raw ?? -1
    self.quirks = document.quirksMode == .quirks
    let compiled = selector.compiled
    if compiled.codes.complete {
      self.codes = compiled.codes
    } else {
      let index = document.nameIndex
      self.codes = TypeCodes(compiled.list, compiled.typeNames) { index[$0] }
    }
    self.siblingIndexes = compiled.usesSiblingIndexes ? SiblingIndexCache() : nil
    self.memo = compiled.walksFar ? WalkMemo() : nil
  }

  /// In `TypeCodes.subjectLower`/`subjectExact`: the subject has no type
  /// selector.
  static let anyType: Int32 = -2

  /// True when element `n` matches the selector.
  func matches(_ n: NodeID) -> Bool {
    guard nodes[Int(n.raw)].kind == .element else { return false }
    return matches(selector.list, n.raw, anchor: -1)
  }

  /// Appends to `result` the elements strictly inside `root` that match,
  /// in tree order (template contents are not children, so they are not
  /// visited).
  func collect(under root: Int32, into result: inout [Element]) {
    var n = firstMatch(after: root, under: root)
    while n >= 0 {
      result.append(Element(document, NodeID(raw: n)))
      n = firstMatch(after: n, under: root)
    }
  }

  /// The first element after `start` in tree order (pre-order, so the
  /// descendants of `start` come first) and strictly inside `root` that
  /// matches, or -1. `start` is `root` itself or a node inside it.
  func firstMatch(after start: Int32, under root: Int32) -> Int32 {
    // Borrowed buffers: no selector value is copied per element.
    selector.list.selectors.withUnsafeBufferPointer { selectors in
      codes.subjectLower.withUnsafeBufferPointer { subjectLower in
        codes.subjectExact.withUnsafeBufferPointer { subjectExact in
          var n = following(start, under: root)
          while n >= 0 {
            let r = nodes[Int(n)]
            if r.kind == .element {
              var i = 0
              while i < selectors.count {
                let wanted = r.namespace == .html ? subjectLower[i] : subjectExact[i]
                if (wanted == Self.anyType || wanted == r.name)
                  && matchComplex(selectors[i], 0, n, anchor: -1) == .matched
                {
                  return n
                }
                i += 1
              }
            }
            n = following(n, under: root)
          }
          return -1
        }
      }
    }
  }

  /// The index of the first entry of `order` in `range` (from its lower
  /// bound on) that matches, or -1: `firstMatch` over a flat list of the
  /// elements instead of the tree.
  func firstMatch(in order: ElementOrder, _ range: Range<Int>) -> Int {
    selector.list.selectors.withUnsafeBufferPointer { selectors in
      codes.subjectLower.withUnsafeBufferPointer { subjectLower in
        codes.subjectExact.withUnsafeBufferPointer { subjectExact in
          let entries = order.entries
          var k = range.lowerBound
          while k < range.upperBound {
            let entry = entries[k]
            var i = 0
            while i < selectors.count {
              let wanted = entry.isHTML ? subjectLower[i] : subjectExact[i]
              if (wanted == Self.anyType || wanted == entry.name)
                && matchComplex(selectors[i], 0, entry.node, anchor: -1) == .matched
              {
                return k
              }
              i += 1
            }
            k += 1
          }
          return -1
        }
      }
    }
  }

  /// Appends to `result` the elements of `order` in `range` that match.
  func collect(in order: ElementOrder, _ range: Range<Int>, into result: inout [Element]) {
    var k = firstMatch(in: order, range)
    while k >= 0 {
      result.append(Element(document, NodeID(raw: order.entries[k].node)))
      k = firstMatch(in: order, k + 1..<range.upperBound)
    }
  }

  /// The node after `n` in pre-order within the subtree of `root`, or -1.
  @inline(__always) func following(_ n: Int32, under root: Int32) -> Int32 {
    let first = nodes[Int(n)].firstChild
    if first >= 0 { return first }
    var c = n
    while c != root {
      let next = nodes[Int(c)].nextSibling
      if next >= 0 { return next }
      c = nodes[Int(c)].parent
      if c < 0 { return -1 }
    }
    return -1
  }

  // MARK: - Tree helpers

  /// The parent of `n` when it is an element, else -1.
  @inline(__always) func parentElement(_ n: Int32) -> Int32 {
    let p = nodes[Int(n)].parent
    return p >= 0 && nodes[Int(p)].kind == .element ? p : -1
  }

  @inline(__always) func previousElement(_ n: Int32) -> Int32 {
    var c = nodes[Int(n)].previousSibling
    while c >= 0 {
      if nodes[Int(c)].kind == .element { return c }
      c = nodes[Int(c)].previousSibling
    }
    return -1
  }

  @inline(__always) func nextElement(_ n: Int32) -> Int32 {
    var c = nodes[Int(n)].nextSibling
    while c >= 0 {
      if nodes[Int(c)].kind == .element { return c }
      c = nodes[Int(c)].nextSibling
    }
    return -1
  }

  @inline(__always) func isHTML(_ n: Int32) -> Bool {
    nodes[Int(n)].namespace == .html
  }

  /// The index in `attributeStore` of element `n`'s no-namespace
  /// attribute with name code `code`, or -1. (`Document.attributeIndex`
  /// is the same loop over the document's own arrays; one shared function
  /// taking the arrays as arguments made `Element.attr` retain and release
  /// both on every call, +0.9% instructions on the shop's product pages.)
  @inline(__always) func attributeSlot(_ n: Int32, _ code: Int32) -> Int {
    let r = nodes[Int(n)]
    var i = Int(r.attributeStart)
    let end = i + Int(r.attributeCount)
    while i < end {
      if attributeStore[i].name == code && attributeStore[i].namespace == .none { return i }
      i += 1
    }
    return -1
  }

  /// The slot of the no-namespace attribute named `name` of element `n`, or
  /// -1 (also when no attribute of the document has that name).
  @inline(__always) func attributeSlot(_ n: Int32, named name: String) -> Int {
    guard let code = document.attributeNameCode(name) else { return -1 }
    return attributeSlot(n, code)
  }

  /// Runs `body` over the value bytes of the attribute in `slot`.
  @inline(__always) func withValue<R>(_ slot: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    let a = attributeStore[slot]
    return body(UnsafeBufferPointer(start: attributeBytes + Int(a.valueStart), count: Int(a.valueCount)))
  }

  /// The value of the no-namespace attribute `name` of element `n`.
  func attributeValue(_ n: Int32, _ name: String) -> String? {
    let slot = attributeSlot(n, named: name)
    return slot >= 0 ? document.value(attributeStore[slot]) : nil
  }

  /// True when `n` is an HTML element whose local name is `name`.
  func isHTMLElement(_ n: Int32, _ name: String) -> Bool {
    let id = NodeID(raw: n)
    return document.kind(id) == .element && document.namespace(id) == .html
      && document.localName(id) == name
  }

  func hasAttribute(_ n: Int32, _ name: String) -> Bool {
    attributeSlot(n, named: name) >= 0
  }

  // MARK: - Lists, complex and compound selectors

  func matches(_ list: SelectorList, _ e: Int32, anchor: Int32) -> Bool {
    // Index loops (not for-in) so no selector value is copied per element.
    list.selectors.withUnsafeBufferPointer { selectors in
      for i in selectors.indices where matchComplex(selectors[i], 0, e, anchor: anchor) == .matched {
        return true
      }
      return false
    }
  }

  /// The outcome of matching the part of a complex selector left of (and
  /// including) one compound. The failure kinds tell the caller which
  /// further candidates cannot succeed either.
  enum Outcome: UInt8 {
    case matched
    /// Try the next candidate of the nearest sibling combinator.
    case restartFromLaterSibling
    /// Give up sibling candidates; try the next descendant-combinator
    /// candidate.
    case restartFromDescendant
    /// No candidate anywhere can succeed.
    case failedGlobally
  }

  /// Matches `complex.compounds[i...]` with `compounds[i]` at element `e`.
  func matchComplex(_ complex: ComplexSelector, _ i: Int, _ e: Int32, anchor: Int32) -> Outcome {
    let compoundMatches = complex.compounds.withUnsafeBufferPointer { matchCompound($0[i], e, anchor: anchor) }
    guard compoundMatches else { return .restartFromLaterSibling }
    if i == complex.combinators.count { return .matched }
    let combinator = complex.combinators[i]
    let notFound: Outcome
    switch combinator {
    case .nextSibling, .subsequentSibling: notFound = .restartFromDescendant
    case .child, .descendant: notFound = .failedGlobally
    }
    var candidate = e
    var steps = 0
    if anchor < 0, let memo, memo.hasWalkTables, combinator == .descendant || combinator == .subsequentSibling,
      memo.hasWalkTable(WalkMemo.key(complex.compounds, i))
    {
      // A walk of this combinator was long before: this one starts with
      // what that one learnt.
      let first = combinator == .descendant ? parentElement(e) : previousElement(e)
      return memoizedWalk(complex, i, from: first, combinator, notFound: notFound, memo)
    }
    while true {
      switch combinator {
      case .child, .descendant: candidate = parentElement(candidate)
      case .nextSibling, .subsequentSibling: candidate = previousElement(candidate)
      }
      guard candidate >= 0 else { return notFound }
      countStep()
      steps += 1
      // A long walk goes on with the memo (outside `:has()`, whose walks
      // depend on its anchor): a chain of nested elements, or a long run
      // of siblings, costs linear time.
      if steps == Self.walkMemoThreshold, anchor < 0, let memo {
        return memoizedWalk(complex, i, from: candidate, combinator, notFound: notFound, memo)
      }
      let outcome = matchComplex(complex, i + 1, candidate, anchor: anchor)
      switch (outcome, combinator) {
      case (.matched, _), (.failedGlobally, _), (_, .nextSibling):
        return outcome
      case (_, .child):
        return .restartFromDescendant
      case (.restartFromDescendant, .subsequentSibling):
        return outcome
      default:
        continue
      }
    }
  }

  @inline(__always)
  func matchCompound(_ compound: CompoundSelector, _ e: Int32, anchor: Int32) -> Bool {
    if compound.typeOrdinal >= 0 {
      let r = nodes[Int(e)]
      let ordinal = Int(compound.typeOrdinal)
      let wanted = r.namespace == .html ? codes.lower[ordinal] : codes.exact[ordinal]
      if r.name != wanted { return false }
    }
    return compound.simples.withUnsafeBufferPointer { simples in
      for i in simples.indices where !matchSimple(simples[i], e, anchor: anchor) { return false }
      return true
    }
  }

  // MARK: - Simple selectors

  @inline(__always)
  func matchSimple(_ simple: SimpleSelector, _ e: Int32, anchor: Int32) -> Bool {
    switch simple {
    case .id(let id):
      let slot = attributeSlot(e, A.id)
      guard slot >= 0 else { return false }
      return withValue(slot) { v in
        quirks ? asciiEqualFolded(v, asciiLowercased(id)) : withBytes(id) { w in v.elementsEqual(w) }
      }
    case .className(let name):
      let slot = attributeSlot(e, A.class)
      guard slot >= 0 else { return false }
      return withValue(slot) { v in containsWord(v, quirks ? asciiLowercased(name) : name, fold: quirks) }
    case .attribute(let a):
      return matchAttribute(a, e)
    case .not(let list):
      return !matches(list, e, anchor: anchor)
    case .isAny(let list):
      return matches(list, e, anchor: anchor)
    case .has(let relatives):
      return matchHas(relatives, e)
    case .nth(let nth):
      let index = position(of: e, nth)
      return index > 0 && nth.accepts(index)
    case .onlyChild:
      return previousElement(e) < 0 && nextElement(e) < 0
    case .onlyOfType:
      return typeIndex(e, forward: false) == 1 && typeIndex(e, forward: true) == 1
    case .empty:
      var child = nodes[Int(e)].firstChild
      while child >= 0 {
        switch nodes[Int(child)].kind {
        case .element: return false
        case .text: if !nodes[Int(child)].textRun.isEmpty { return false }
        default: break
        }
        child = nodes[Int(child)].nextSibling
      }
      return true
    case .root:
      let p = nodes[Int(e)].parent
      return p >= 0 && nodes[Int(p)].kind == .document
    case .scope:
      return e == scope
    case .hasAnchor:
      return e == anchor
    case .checked:
      guard isHTML(e) else { return false }
      let name = document.localName(NodeID(raw: e))
      if name == "input" {
        guard hasAttribute(e, "checked"), let type = attributeValue(e, "type") else { return false }
        let lower = asciiLowercased(type)
        return lower == "checkbox" || lower == "radio"
      }
      return name == "option" && hasAttribute(e, "selected")
    case .disabled:
      return isActuallyDisabled(e) == true
    case .enabled:
      return isActuallyDisabled(e) == false
    case .link:
      guard isHTML(e) else { return false }
      let name = document.localName(NodeID(raw: e))
      return (name == "a" || name == "area") && hasAttribute(e, "href")
    }
  }

  /// https://www.w3.org/TR/selectors-4/#attribute-selectors
  func matchAttribute(_ a: AttributeSelector, _ e: Int32) -> Bool {
    let html = isHTML(e)
    let common = html ? a.commonLowerCode : a.commonExactCode
    let slot = common >= 0 ? attributeSlot(e, common) : attributeSlot(e, named: html ? a.name.lower : a.name.exact)
    guard slot >= 0 else { return false }
    if a.op == .exists { return true }
    let fold = a.flag == .insensitive || (a.flag == .none && html && a.htmlCaseInsensitive)
    let wanted = fold ? a.lowerValue : a.value
    return withValue(slot) { value in
      switch a.op {
      case .exists: return true
      case .equals: return fold ? asciiEqualFolded(value, wanted) : withBytes(wanted) { value.elementsEqual($0) }
      case .includes: return containsWord(value, wanted, fold: fold)
      case .dashMatch: return dashMatches(value, wanted, fold: fold)
      case .prefix: return !wanted.isEmpty && bytesHasPrefix(value, wanted, fold: fold)
      case .suffix: return !wanted.isEmpty && bytesHasSuffix(value, wanted, fold: fold)
      case .substring: return !wanted.isEmpty && bytesContains(value, wanted, fold: fold)
      }
    }
  }

  /// `:has()`: some candidate element relative to `e` matches one of the
  /// relative selectors (whose leftmost compound is anchored at `e`).
  /// https://www.w3.org/TR/selectors-4/#relational
  func matchHas(_ relatives: [RelativeSelector], _ e: Int32) -> Bool {
    for relative in relatives {
      switch relative.leading {
      case .child where !relative.reachesDescendants:
        // Candidates: the children of `e`.
        var child = nodes[Int(e)].firstChild
        while child >= 0 {
          if nodes[Int(child)].kind == .element, matchComplex(relative.complex, 0, child, anchor: e) == .matched {
            return true
          }
          child = nodes[Int(child)].nextSibling
        }
      case .child, .descendant:
        if let memo, Self.isSubtreeSearch(relative) {
          // A search that turns out long is answered from the table of
          // the argument's matches: every element's answer then costs two
          // lookups, not a walk of its subtree.
          if memo.subtreeCounts[WalkMemo.key(relative.complex.compounds, 0)] == nil,
            let found = anyInSubtree(of: e, relative, anchor: e, limit: Self.hasMemoThreshold)
          {
            if found { return true }
            continue
          }
          if let found = subtreeHasMatch(relative, e, memo) {
            if found { return true }
            continue
          }
        }
        if anyInSubtree(of: e, relative, anchor: e) == true { return true }
      case .nextSibling, .subsequentSibling:
        let siblingsOnly = relative.leading == .nextSibling && !relative.reachesSiblings
        var s = nextElement(e)
        while s >= 0 {
          if matchComplex(relative.complex, 0, s, anchor: e) == .matched { return true }
          if relative.reachesDescendants && anyInSubtree(of: s, relative, anchor: e) == true { return true }
          if siblingsOnly { break }
          s = nextElement(s)
        }
      }
    }
    return false
  }

  /// True when some element strictly inside `root` matches `relative`;
  /// nil when more than `limit` nodes were visited before an answer.
  func anyInSubtree(of root: Int32, _ relative: RelativeSelector, anchor: Int32, limit: Int = .max) -> Bool? {
    let scopeID = NodeID(raw: root)
    var n = document.following(scopeID, within: scopeID)
    var visited = 0
    while let c = n {
      countStep()
      visited += 1
      if visited > limit { return nil }
      if document.kind(c) == .element, matchComplex(relative.complex, 0, c.raw, anchor: anchor) == .matched {
        return true
      }
      n = document.following(c, within: scopeID)
    }
    return false
  }

  // MARK: - Structural pseudo-classes

  /// The 1-based index that `nth` counts for element `e` (0 when an
  /// `of S` filter excludes `e` itself).
  func position(of e: Int32, _ nth: NthSelector) -> Int {
    if nth.of == nil, let cached = cachedIndex(e, nth.kind) { return cached }
    switch nth.kind {
    case .ofType: return typeIndex(e, forward: false)
    case .lastOfType: return typeIndex(e, forward: true)
    case .child, .lastChild:
      let forward = nth.kind == .lastChild
      if let of = nth.of {
        // `of S`: the element itself must match S; count siblings matching S.
        guard matches(of, e, anchor: -1) else { return 0 }
        var index = 1
        var s = forward ? nextElement(e) : previousElement(e)
        while s >= 0 {
          if matches(of, s, anchor: -1) { index += 1 }
          s = forward ? nextElement(s) : previousElement(s)
        }
        return index
      }
      var index = 1
      var s = forward ? nextElement(e) : previousElement(e)
      while s >= 0 {
        index += 1
        s = forward ? nextElement(s) : previousElement(s)
      }
      return index
    }
  }

  /// The index of `e` for `kind` from the per-parent cache (filling it for
  /// `e`'s parent on first use), or nil for an element without a parent.
  func cachedIndex(_ e: Int32, _ kind: NthSelector.Kind) -> Int? {
    let p = nodes[Int(e)].parent
    guard p >= 0, let cache = siblingIndexes else { return nil }
    if cache.fromStart.isEmpty || cache.fromStart[Int(e)] == 0 { cache.fill(parent: p, nodes) }
    switch kind {
    case .child: return Int(cache.fromStart[Int(e)])
    case .lastChild: return Int(cache.fromEnd[Int(e)])
    case .ofType: return Int(cache.typeFromStart[Int(e)])
    case .lastOfType: return Int(cache.typeFromEnd[Int(e)])
    }
  }

  /// The 1-based index of `e` among its siblings of the same type, counted
  /// from the start (or from the end when `forward`).
  func typeIndex(_ e: Int32, forward: Bool) -> Int {
    if let cached = cachedIndex(e, forward ? .lastOfType : .ofType) { return cached }
    let code = nodes[Int(e)].name
    let namespace = nodes[Int(e)].namespace
    var index = 1
    var s = forward ? nextElement(e) : previousElement(e)
    while s >= 0 {
      if nodes[Int(s)].name == code && nodes[Int(s)].namespace == namespace { index += 1 }
      s = forward ? nextElement(s) : previousElement(s)
    }
    return index
  }

  // MARK: - Form states

  /// True when `e` is "actually disabled", false when it is a form element
  /// that is enabled, nil when `:enabled`/`:disabled` do not apply.
  /// https://html.spec.whatwg.org/#concept-element-disabled
  func isActuallyDisabled(_ e: Int32) -> Bool? {
    guard isHTML(e) else { return nil }
    switch document.localName(NodeID(raw: e)) {
    case "button", "input", "select", "textarea", "fieldset":
      return hasAttribute(e, "disabled") || inDisabledFieldset(e)
    case "optgroup":
      return hasAttribute(e, "disabled")
    case "option":
      if hasAttribute(e, "disabled") { return true }
      let p = parentElement(e)
      return p >= 0 && isHTMLElement(p, "optgroup") && hasAttribute(p, "disabled")
    default:
      return nil
    }
  }

  /// True when `e` is inside a fieldset with a `disabled` attribute, and not
  /// inside that fieldset's first `legend` child.
  /// https://html.spec.whatwg.org/#concept-fieldset-disabled
  func inDisabledFieldset(_ e: Int32) -> Bool {
    var child = e
    var p = parentElement(e)
    while p >= 0 {
      if isHTMLElement(p, "fieldset") && hasAttribute(p, "disabled") {
        var legend: Int32 = -1
        var c = document.firstChild(NodeID(raw: p))
        while let n = c {
          if isHTMLElement(n.raw, "legend") {
            legend = n.raw
            break
          }
          c = document.nextSibling(n)
        }
        if child != legend { return true }
      }
      child = p
      p = parentElement(p)
    }
    return false
  }
}

/// The positions of elements among their element siblings, filled one
/// parent at a time, so `:nth-child()` and relatives cost linear rather than
/// quadratic time over a long list of siblings.
final class SiblingIndexCache {
  /// Per node id: 1-based index among element siblings from the start and
  /// from the end, and among siblings of the same type; 0 = not computed.
  var fromStart: [Int32] = []
  var fromEnd: [Int32] = []
  var typeFromStart: [Int32] = []
  var typeFromEnd: [Int32] = []

  /// Computes the indexes of every element child of `parent`.
  func fill(parent: Int32, _ nodes: [Document.NodeRecord]) {
    if fromStart.isEmpty {
      fromStart = Array(repeating: 0, count: nodes.count)
      fromEnd = fromStart
      typeFromStart = fromStart
      typeFromEnd = fromStart
    }
    var total: Int32 = 0
    var perType: [Int64: Int32] = [:]
    var c = nodes[Int(parent)].firstChild
    while c >= 0 {
      let r = nodes[Int(c)]
      if r.kind == .element {
        total += 1
        fromStart[Int(c)] = total
        let key = Int64(r.name) << 8 | Int64(r.namespace.rawValue)
        let n = (perType[key] ?? 0) + 1
        perType[key] = n
        typeFromStart[Int(c)] = n
      }
      c = r.nextSibling
    }
    c = nodes[Int(parent)].firstChild
    while c >= 0 {
      let r = nodes[Int(c)]
      if r.kind == .element {
        fromEnd[Int(c)] = total - fromStart[Int(c)] + 1
        let key = Int64(r.name) << 8 | Int64(r.namespace.rawValue)
        typeFromEnd[Int(c)] = perType[key, default: 0] - typeFromStart[Int(c)] + 1
      }
      c = r.nextSibling
    }
  }
}

// MARK: - Byte-level string helpers (no allocation)

@inline(__always) func foldASCII(_ b: UInt8) -> UInt8 {
  b &- 0x41 < 26 ? b | 0x20 : b
}

@inline(__always) func isASCIIWhitespace(_ b: UInt8) -> Bool {
  b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0C || b == 0x0D
}

/// Runs `body` over the UTF-8 bytes of `s` (contiguous, without a copy,
/// for native strings; bridged ones are copied once).
@inline(__always) func withBytes<R>(_ s: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
  if let result = s.utf8.withContiguousStorageIfAvailable(body) { return result }
  return Array(s.utf8).withUnsafeBufferPointer(body)
}

func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ aStart: Int, _ b: UnsafeBufferPointer<UInt8>, count: Int, fold: Bool) -> Bool {
  if fold {
    for i in 0..<count where foldASCII(a[aStart + i]) != b[i] { return false }
  } else {
    for i in 0..<count where a[aStart + i] != b[i] { return false }
  }
  return true
}

/// `v` equals `lowerWanted` ignoring ASCII case (`lowerWanted` is
/// already lower-cased).
func asciiEqualFolded(_ v: UnsafeBufferPointer<UInt8>, _ lowerWanted: String) -> Bool {
  withBytes(lowerWanted) { w in bytesEqual(v, w, fold: true) }
}

/// `v` and `w` are the same bytes (ASCII case folded in `v` when `fold`;
/// `w` is then lower case).
@inline(__always)
func bytesEqual(_ v: UnsafeBufferPointer<UInt8>, _ w: UnsafeBufferPointer<UInt8>, fold: Bool) -> Bool {
  v.count == w.count && bytesEqual(v, 0, w, count: w.count, fold: fold)
}

func bytesHasPrefix(_ v: UnsafeBufferPointer<UInt8>, _ wanted: String, fold: Bool) -> Bool {
  withBytes(wanted) { w in bytesHasPrefix(v, w, fold: fold) }
}

func bytesHasPrefix(_ v: UnsafeBufferPointer<UInt8>, _ w: UnsafeBufferPointer<UInt8>, fold: Bool) -> Bool {
  v.count >= w.count && bytesEqual(v, 0, w, count: w.count, fold: fold)
}

func bytesHasSuffix(_ v: UnsafeBufferPointer<UInt8>, _ wanted: String, fold: Bool) -> Bool {
  withBytes(wanted) { w in bytesHasSuffix(v, w, fold: fold) }
}

func bytesHasSuffix(_ v: UnsafeBufferPointer<UInt8>, _ w: UnsafeBufferPointer<UInt8>, fold: Bool) -> Bool {
  v.count >= w.count && bytesEqual(v, v.count - w.count, w, count: w.count, fold: fold)
}

func bytesContains(_ v: UnsafeBufferPointer<UInt8>, _ wanted: String, fold: Bool) -> Bool {
  withBytes(wanted) { w in bytesContains(v, w, fold: fold) }
}

func bytesContains(_ v: UnsafeBufferPointer<UInt8>, _ w: UnsafeBufferPointer<UInt8>, fold: Bool) -> Bool {
  guard v.count >= w.count else { return false }
  for start in 0...(v.count - w.count) where bytesEqual(v, start, w, count: w.count, fold: fold) {
    return true
  }
  return false
}

/// `v` is `wanted` or starts with `wanted` followed by `-`.
func dashMatches(_ v: UnsafeBufferPointer<UInt8>, _ wanted: String, fold: Bool) -> Bool {
  withBytes(wanted) { w in dashMatches(v, w, fold: fold) }
}

func dashMatches(_ v: UnsafeBufferPointer<UInt8>, _ w: UnsafeBufferPointer<UInt8>, fold: Bool) -> Bool {
  guard v.count >= w.count, bytesEqual(v, 0, w, count: w.count, fold: fold) else { return false }
  return v.count == w.count || v[w.count] == 0x2D
}

/// One of the ASCII-whitespace-separated words of `v` is `word`.
func containsWord(_ v: UnsafeBufferPointer<UInt8>, _ word: String, fold: Bool) -> Bool {
  withBytes(word) { w in containsWord(v, w, fold: fold) }
}

/// One of the ASCII-whitespace-separated words of `v` is `w` (never true
/// for an empty `w` or one with whitespace).
func containsWord(_ v: UnsafeBufferPointer<UInt8>, _ w: UnsafeBufferPointer<UInt8>, fold: Bool) -> Bool {
  guard !w.isEmpty, !w.contains(where: isASCIIWhitespace) else { return false }
  return containsValidWord(v, w, fold: fold)
}

/// `containsWord` for a `w` known to be non-empty and without whitespace.
func containsValidWord(_ v: UnsafeBufferPointer<UInt8>, _ w: UnsafeBufferPointer<UInt8>, fold: Bool) -> Bool {
  // A value no longer than the word can only be the word itself (the
  // usual one-class attribute): one compare, no scan for whitespace.
  if v.count <= w.count { return v.count == w.count && bytesEqual(v, 0, w, count: w.count, fold: fold) }
  var i = 0
  let n = v.count
  while i < n {
    while i < n && isASCIIWhitespace(v[i]) { i += 1 }
    let start = i
    while i < n && !isASCIIWhitespace(v[i]) { i += 1 }
    if i - start == w.count && bytesEqual(v, start, w, count: w.count, fold: fold) { return true }
  }
  return false
}
