// The elements of a document in tree order, for selector queries.

/// The elements reachable from the document node, in tree order, each
/// with the end of its subtree: the subtree of the element at `i` is
/// `entries[i + 1 ..< entries[i].end]`. A query walks this flat array
/// instead of the linked tree: no text or comment node is visited, and an
/// element's name is read next to its id.
///
/// Built on a document's first query (one walk of the tree) and kept until
/// the tree changes (`Document.treeVersion`). Template contents are not
/// children in the DOM, so they are not here; a query rooted in a node
/// this index does not hold walks the tree instead.
final class ElementOrder {
  struct Entry {
    /// The element's node id.
    var node: Int32
    /// One past the last entry of its subtree.
    var end: Int32
    /// Its interned local name (`Document.names`).
    var name: Int32
    /// Its attributes, `Document.attributes[attributeStart ..<
    /// attributeStart + attributeCount]` (copied from its record, so the
    /// quick selector path reads no node record).
    var attributeStart: Int32
    var attributeCount: Int32
    /// True in the HTML namespace (type selectors match case-insensitively).
    var isHTML: Bool
  }

  /// The version of the tree this index describes.
  let version: UInt64
  /// The elements in tree order, in memory this index owns: a query reads
  /// them without retaining an array.
  let entries: UnsafeBufferPointer<Entry>
  /// The number of nodes of the document when the index was built.
  private let nodeCount: Int
  /// For each node id: its index in `entries`, or -1 (not an element, or
  /// not reachable from the document node). Made on the first query rooted
  /// at an element: most pages are only queried from the document.
  private(set) lazy var position: [Int32] = {
    var position = [Int32](repeating: -1, count: nodeCount)
    for (i, e) in entries.enumerated() { position[Int(e.node)] = Int32(i) }
    return position
  }()

  init(_ document: Document) {
    version = document.treeVersion
    let nodes = document.nodes
    nodeCount = nodes.count
    // At most one entry per node; written in one pass through raw memory.
    // The stack of open elements (entry indices of the elements whose
    // subtree is being walked) is temporary memory: on the stack for
    // ordinary pages. Counters wrap rather than trap: they stay below the
    // node count, which fits in Int32.
    let out = UnsafeMutablePointer<Entry>.allocate(capacity: max(nodes.count, 1))
    var count: Int32 = 0
    withUnsafeTemporaryAllocation(of: Int32.self, capacity: max(nodes.count, 1)) { open in
      nodes.withUnsafeBufferPointer { p in
        var depth = 0
        var n = p[0].firstChild
        while n >= 0 {
          let r = p[Int(n)]
          if r.kind == .element {
            let index = count
            (out + Int(index)).initialize(
              to: Entry(
                node: n, end: -1, name: r.name, attributeStart: r.attributeStart, attributeCount: r.attributeCount,
                isHTML: r.namespace == .html))
            count &+= 1
            if r.firstChild >= 0 {
              open[depth] = index
              depth &+= 1
              n = r.firstChild
              continue
            }
            out[Int(index)].end = count
          }
          // Leave `n`: its next sibling, or the next sibling of the
          // nearest open element that has one (closing each one passed).
          var c = n
          while true {
            let next = p[Int(c)].nextSibling
            if next >= 0 {
              n = next
              break
            }
            guard depth > 0 else {
              n = -1
              break
            }
            depth &-= 1
            let up = Int(open[depth])
            out[up].end = count
            c = out[up].node
          }
        }
      }
    }
    entries = UnsafeBufferPointer(start: out, count: Int(count))
  }

  deinit {
    // `Entry` is a trivial type: nothing to deinitialize.
    UnsafeMutablePointer(mutating: entries.baseAddress!).deallocate()
  }
}

extension Document {
  /// The element index of the current tree (built on first use).
  var elementOrder: ElementOrder {
    if let order = elementOrderCache, order.version == treeVersion { return order }
    let order = ElementOrder(self)
    elementOrderCache = order
    return order
  }

  /// The range of `elementOrder.entries` strictly inside `root`, or nil
  /// when `root` is not the document node or an element reachable from it.
  func elementRange(under root: NodeID, in order: ElementOrder) -> Range<Int>? {
    if root == rootID { return 0..<order.entries.count }
    let i = Int(root.raw)
    guard i < order.position.count else { return nil }
    let p = Int(order.position[i])
    guard p >= 0 else { return nil }
    return p + 1..<Int(order.entries[p].end)
  }
}
