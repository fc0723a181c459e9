// What a matcher remembers of its long walks, so that no shape of tree
// makes a query quadratic: `body div` over a chain of nested divs would
// otherwise walk every div's ancestors up to `body`, and `div:has(img)`
// every div's whole subtree.

/// The memory of one matcher's long walks (a class: the matcher itself is
/// an immutable value). Made for selectors with a descendant or
/// subsequent-sibling combinator or a `:has()`; filled only once a walk
/// turns out long, so ordinary pages never pay for it.
final class WalkMemo {
  /// Per combinator of a complex selector (`key(_:_:)`): per node id, the
  /// outcome (plus one; 0: not known) of the walk that starts at that node
  /// as its first candidate.
  private var walks: [Int: UnsafeMutableBufferPointer<UInt8>] = [:]
  /// True once some walk table exists: only then does a walk look for one
  /// before it starts.
  private(set) var hasWalkTables = false
  /// Per `:has()` argument of the form `:has(X)` (`key(_:_:)`): the number
  /// of elements matching X among `ElementOrder.entries[..<i]`, so an
  /// element's subtree holds a match when the count grows across it.
  var subtreeCounts: [Int: [Int32]] = [:]
  /// The element order `subtreeCounts` was made from.
  var order: ElementOrder?
  /// Steps of the combinator walks and nodes visited by `:has()` searches
  /// (debug builds only): what the tests count.
  var steps = 0

  deinit {
    for table in walks.values { table.deallocate() }
  }

  /// A key for the combinator or `:has()` argument at `index` of the
  /// selector whose compounds are `compounds` (their storage, which lives
  /// as long as the compiled selector, is unique to it).
  static func key(_ compounds: [CompoundSelector], _ index: Int) -> Int {
    compounds.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) &+ index }
  }

  /// The walk table for `key`, made (all unknown) on first use.
  func walkTable(_ key: Int, nodeCount: Int) -> UnsafeMutableBufferPointer<UInt8> {
    if let table = walks[key] { return table }
    let table = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(nodeCount, 1))
    table.initialize(repeating: 0)
    walks[key] = table
    hasWalkTables = true
    return table
  }

  /// True when the walk table for `key` exists.
  func hasWalkTable(_ key: Int) -> Bool { walks[key] != nil }
}

extension SelectorMatcher {
  /// A walk of a descendant or subsequent-sibling combinator longer than
  /// this many steps goes on with the memo: each node is then a candidate
  /// of at most one walk per combinator.
  static let walkMemoThreshold = 32
  /// A `:has()` search visiting more nodes than this makes the table of
  /// its argument's matches (one pass over the document), after which every
  /// element's answer is two lookups.
  static let hasMemoThreshold = 256

  /// Counts a step of a walk into the memo (debug builds only).
  @inline(__always) func countStep() {
    #if DEBUG
      memo?.steps += 1
    #endif
  }

  /// The rest of the walk of `complex.combinators[i]` (descendant or
  /// subsequent sibling) from `start`, its next candidate, remembering the
  /// outcome for every candidate it passes: `start` and the nodes after it
  /// give the same answer, whichever element the walk began at.
  func memoizedWalk(
    _ complex: ComplexSelector, _ i: Int, from start: Int32, _ combinator: Combinator, notFound: Outcome,
    _ memo: WalkMemo
  ) -> Outcome {
    let table = memo.walkTable(WalkMemo.key(complex.compounds, i), nodeCount: nodes.count)
    @inline(__always) func next(_ n: Int32) -> Int32 {
      combinator == .descendant ? parentElement(n) : previousElement(n)
    }
    var c = start
    var result = notFound
    while c >= 0 {
      let known = table[Int(c)]
      if known != 0 {
        result = Outcome(rawValue: known - 1)!
        break
      }
      countStep()
      let outcome = matchComplex(complex, i + 1, c, anchor: -1)
      let goesOn = combinator == .descendant
        ? outcome == .restartFromLaterSibling || outcome == .restartFromDescendant
        : outcome == .restartFromLaterSibling
      if !goesOn {
        result = outcome
        break
      }
      c = next(c)
    }
    var d = start
    while d != c {
      table[Int(d)] = result.rawValue + 1
      d = next(d)
    }
    if c >= 0 { table[Int(c)] = result.rawValue + 1 }
    return result
  }

  /// True when `relative` is `:has(X)` with X one compound: then `e`
  /// matches when some element of its subtree matches X, whatever `e` is,
  /// which a table of X's matches in document order answers.
  static func isSubtreeSearch(_ relative: RelativeSelector) -> Bool {
    relative.leading == .descendant && relative.complex.compounds.count == 2
  }

  /// `:has(X)` for element `e` from the table of X's matches (made on
  /// first use), or nil when `e` is not in the element order (template
  /// contents).
  func subtreeHasMatch(_ relative: RelativeSelector, _ e: Int32, _ memo: WalkMemo) -> Bool? {
    let order = memo.order ?? document.elementOrder
    memo.order = order
    let key = WalkMemo.key(relative.complex.compounds, 0)
    return subtreeHasMatch(relative, e, memo, order: order, key: key)
  }

  /// `subtreeHasMatch` once the order and key are known.
  private func subtreeHasMatch(
    _ relative: RelativeSelector, _ e: Int32, _ memo: WalkMemo, order: ElementOrder, key: Int
  ) -> Bool? {
    let counts: [Int32]
    if let known = memo.subtreeCounts[key] {
      counts = known
    } else {
      var made = [Int32](repeating: 0, count: order.entries.count + 1)
      var total: Int32 = 0
      relative.complex.compounds.withUnsafeBufferPointer { compounds in
        for (j, entry) in order.entries.enumerated() {
          countStep()
          if matchCompound(compounds[0], entry.node, anchor: -1) { total += 1 }
          made[j + 1] = total
        }
      }
      memo.subtreeCounts[key] = made
      counts = made
    }
    let i = Int(e)
    guard i < order.position.count else { return nil }
    let p = Int(order.position[i])
    guard p >= 0 else { return nil }
    return counts[Int(order.entries[p].end)] > counts[p + 1]
  }
}

extension CompiledSelector {
  /// True when `list` (nested lists included) has a descendant or
  /// subsequent-sibling combinator or a `:has()`: the walks a `WalkMemo`
  /// bounds.
  static func walksFar(_ list: SelectorList) -> Bool {
    for complex in list.selectors {
      if complex.combinators.contains(where: { $0 == .descendant || $0 == .subsequentSibling }) { return true }
      for compound in complex.compounds {
        for simple in compound.simples {
          switch simple {
          case .has: return true
          case .not(let inner), .isAny(let inner):
            if walksFar(inner) { return true }
          case .nth(let nth):
            if let of = nth.of, walksFar(of) { return true }
          default: break
          }
        }
      }
    }
    return false
  }
}
