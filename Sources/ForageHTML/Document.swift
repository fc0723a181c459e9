/// A parsed HTML document: every node lives in one flat arena.
///
/// Nodes are addressed by `NodeID`; `Node` and `Element` are small handles
/// (document + id) that are cheap to copy. The arena keeps one fixed-size
/// record per node and shares attribute and text storage, so a page costs a
/// few times its size in memory rather than an object per node.
///
///     let page = Document.parse(Array("<p class=a>Hi</p>".utf8))
///     let p = try page.selectFirst("p.a")
///
/// A `Document` is not `Sendable`: parse and query it on one task, and pass
/// the values you extracted (strings, records) across boundaries.
public final class Document {
  /// One node of the arena. `-1` stands for "none" in the link fields.
  struct NodeRecord {
    var kind: NodeKind
    var namespace: Namespace = .html
    var parent: Int32 = -1
    var firstChild: Int32 = -1
    var lastChild: Int32 = -1
    var nextSibling: Int32 = -1
    var previousSibling: Int32 = -1
    /// Element: index into `names`. Doctype: index into `doctypes`.
    var name: Int32 = -1
    /// Comment: index into `texts`. Template element: the id of its
    /// contents fragment. Otherwise -1.
    var payload: Int32 = -1
    /// Element attributes: `attributes[attributeStart ..< attributeStart + attributeCount]`.
    /// Text: its data, `textBytes[attributeStart ..< attributeStart + attributeCount]`
    /// (see `textRun`).
    var attributeStart: Int32 = 0
    var attributeCount: Int32 = 0

    /// The data of a text node, as a run of `textBytes`.
    @inline(__always) var textRun: TextRun {
      get { TextRun(start: attributeStart, count: attributeCount) }
      set {
        attributeStart = newValue.start
        attributeCount = newValue.count
      }
    }
  }

  // The arena's storage skips Swift's run-time exclusivity checks (they cost
  // the parser a third of its time); a Document is used from one task and
  // no method holds an access across a call that could touch it again.
  @exclusivity(unchecked) var nodes: [NodeRecord] = []
  /// Interned element local names.
  @exclusivity(unchecked) var names: [String] = []
  @exclusivity(unchecked) var nameIndex: [String: Int32] = [:]
  /// Comment data.
  @exclusivity(unchecked) var texts: [String] = []
  /// The UTF-8 data of every text node, one run per node (`textRun`).
  /// Append-only: a run, once written, never changes, so nodes may share
  /// runs, a node's text grows in place when its run ends the buffer, and
  /// freeing a document frees one buffer rather than a string per node.
  /// The tokenizer writes character data here directly. A `ByteBuffer`
  /// (freed in `deinit`), like `attributeBytes`: the array's generic
  /// append of each character run cost more than the copy.
  @exclusivity(unchecked) var textBytes: ByteBuffer
  /// Text nodes that had to move to grow (their run did not end where the
  /// new text began), each with the end of the spare room left after its
  /// run: the next appends fill that room instead of moving the run again.
  /// Without it, text fed to one node between other nodes' text (foster
  /// parenting: `<table><tr>A<td>B</td>A<td>B</td>…`) would be copied
  /// whole on every append, quadratic in time and in memory.
  @exclusivity(unchecked) var textRoom: [Int32: Int32] = [:]
  /// The same for elements whose attributes had to move to grow (a later
  /// `<html>` or `<body>` tag adds the attributes they lack): the end of
  /// the spare room after each one's range.
  @exclusivity(unchecked) var attributeRoom: [Int32: Int32] = [:]
  /// The attribute names of elements that gained attributes, so that each
  /// later tag's attributes are checked in constant time, not against the
  /// whole list (`<html a1><html a2>…` would be quadratic).
  @exclusivity(unchecked) var addedAttributeKeys: [Int32: Set<AttributeKey>] = [:]
  /// Attribute storage. Elements reference ranges of it (`attributeStart`,
  /// `attributeCount`); the parser writes a tag's attributes here once and
  /// its element, and any element made again from the same token, share
  /// that range, so a range is never changed in place.
  @exclusivity(unchecked) var attributes: [StoredAttribute] = []
  /// The attributes' values, one run each (see `StoredAttribute`);
  /// append-only. A `ByteBuffer` (freed in `deinit`): the tokenizer appends
  /// a value per attribute, and an array's generic append cost more than
  /// the copy.
  @exclusivity(unchecked) var attributeBytes = ByteBuffer(capacity: 256)
  /// Attribute names beyond the common ones of `A`, which keep their codes:
  /// `extraAttributeNames[i]` has code `A.names.count + i`. (Starting from
  /// empty tables, rather than copies of `A`'s, a page with one unusual
  /// name does not copy the common ones.)
  @exclusivity(unchecked) var extraAttributeNames: [String] = []
  @exclusivity(unchecked) var extraAttributeIndex: [String: Int32] = [:]
  @exclusivity(unchecked) var doctypes: [Doctype] = []
  /// Counts changes to the tree's shape (`append`, `insert`, `remove`) and
  /// to elements' attribute ranges (`addMissingAttributes`), so that
  /// `elementOrder` knows when to build itself again.
  @exclusivity(unchecked) var treeVersion: UInt64 = 0
  /// The element index of the last query (see `elementOrder`).
  @exclusivity(unchecked) var elementOrderCache: ElementOrder?

  /// The document's quirks mode, set by the tree builder from the DOCTYPE.
  /// (Unchecked like the arena: every selector query reads it, and a
  /// checked access cost more than the rest of a quick query's set-up.)
  @exclusivity(unchecked) public internal(set) var quirksMode: QuirksMode = .noQuirks
  /// How many parse errors the tokenizer and tree builder reported.
  public internal(set) var parseErrorCount: Int = 0
  /// The parse errors, when parsed with `ParserOptions(collectErrors: true)`;
  /// empty otherwise.
  public internal(set) var parseErrors: [ParseError] = []
  /// The character encoding the bytes were decoded with (`"UTF-8"` for
  /// documents parsed from a `String`).
  public internal(set) var encoding: String = "UTF-8"
  /// True when the decoded input was longer than the parser takes
  /// (``ParserOptions/maximumInputSize``): only its first bytes, cut at a
  /// character boundary, were parsed.
  public internal(set) var inputWasTruncated = false
  /// True when parsing stopped early because ``ParserOptions/shouldStop``
  /// asked it to: the tree holds only what came before (a launch whose
  /// budget ran out leaves such a page for the next launch).
  public internal(set) var parseWasInterrupted = false
  /// The tree builder's `walkSteps` (debug builds only; 0 otherwise): tests
  /// count it to see that parsing stays linear whatever the page's shape.
  var parserWalkSteps = 0

  /// The id of the document node itself (always the first node).
  public let rootID = NodeID(raw: 0)

  /// Creates an empty document holding only the document node.
  public convenience init() {
    self.init(expectedBytes: 0)
  }

  /// Creates an empty document with room for what a page of
  /// `expectedBytes` bytes typically holds (see `reserveCapacity`).
  init(expectedBytes: Int) {
    // Sized at once: made small and then reserved, it was allocated twice.
    textBytes = ByteBuffer(capacity: Self.textCapacity(forInputBytes: expectedBytes))
    reserveCapacity(forInputBytes: expectedBytes)
    nodes.append(NodeRecord(kind: .document))
    // The parser's known tag names come first, so their codes are the
    // constants of `T` (see TagSets.swift).
    names = T.names
    assert(names.count == Int(T.knownCount), "T.knownCount is out of date")
    nameIndex = T.index
  }

  deinit {
    attributeBytes.free()
    textBytes.free()
  }

  /// The number of nodes in the arena, detached ones included.
  public var nodeCount: Int { nodes.count }

  /// Reserves room for the nodes, texts and attributes a page of `bytes`
  /// bytes typically has, so small pages do not regrow the arena's arrays
  /// many times over. Past 64 KB the estimate stops growing: big pages
  /// vary too much, and their regrowth is a small share of their cost.
  func reserveCapacity(forInputBytes bytes: Int) {
    let b = min(bytes, 1 << 16)
    textBytes.reserve(Self.textCapacity(forInputBytes: bytes))
    // Product pages of 2 KB hold about 170 nodes; the old b / 16 made
    // every such page regrow the array.
    nodes.reserveCapacity(max(64, b / 8))
    texts.reserveCapacity(8)
    // Product pages have about one attribute per 40 bytes.
    attributes.reserveCapacity(max(16, b / 32))
    attributeBytes.reserve(max(256, b / 8))
  }
}

extension Document {
  /// The text bytes a page of `bytes` bytes typically needs (its text is
  /// at most half its size on most pages). Capped at 2 MiB rather than
  /// at the other estimates' 64 KiB: a 140 KB page regrew its text from
  /// 32 KiB, copying it twice over.
  static func textCapacity(forInputBytes bytes: Int) -> Int {
    max(256, min(bytes, 1 << 22) / 2)
  }
}

/// The quirks mode of a document.
///
/// - SeeAlso: <https://dom.spec.whatwg.org/#concept-document-quirks>
public enum QuirksMode: Sendable {
  case noQuirks, limitedQuirks, quirks
}

/// The kind of a DOM node.
public enum NodeKind: UInt8, Sendable {
  case document, documentType, element, text, comment, documentFragment
}

/// A run of `Document.attributes`: those of a tag token, or of an element.
struct AttributeRange: BitwiseCopyable {
  var start: Int32
  var count: Int32
  static let empty = AttributeRange(start: 0, count: 0)
}

/// The address of a node inside its `Document`.
public struct NodeID: Hashable, Sendable {
  public let raw: Int32
  @inlinable public init(raw: Int32) { self.raw = raw }
}

// MARK: - Reading the tree

extension Document {
  @inline(__always) func id(_ raw: Int32) -> NodeID? { raw < 0 ? nil : NodeID(raw: raw) }

  /// The kind of node `n`.
  public func kind(_ n: NodeID) -> NodeKind { nodes[Int(n.raw)].kind }
  /// The parent of `n`, or nil for the document node and detached nodes.
  public func parent(_ n: NodeID) -> NodeID? { id(nodes[Int(n.raw)].parent) }
  /// The first child of `n`.
  public func firstChild(_ n: NodeID) -> NodeID? { id(nodes[Int(n.raw)].firstChild) }
  /// The last child of `n`.
  public func lastChild(_ n: NodeID) -> NodeID? { id(nodes[Int(n.raw)].lastChild) }
  /// The next sibling of `n`.
  public func nextSibling(_ n: NodeID) -> NodeID? { id(nodes[Int(n.raw)].nextSibling) }
  /// The previous sibling of `n`.
  public func previousSibling(_ n: NodeID) -> NodeID? { id(nodes[Int(n.raw)].previousSibling) }

  /// The local name of element `n` (lower case for HTML elements; SVG keeps
  /// its adjusted camel case such as `foreignObject`). Empty for non-elements.
  public func localName(_ n: NodeID) -> String {
    let r = nodes[Int(n.raw)]
    return r.kind == .element ? names[Int(r.name)] : ""
  }

  /// The interned index of element `n`'s local name, for fast comparisons.
  func nameCode(_ n: NodeID) -> Int32 { nodes[Int(n.raw)].name }

  /// The namespace of element `n`.
  public func namespace(_ n: NodeID) -> Namespace { nodes[Int(n.raw)].namespace }

  /// The attributes of element `n`, in source order.
  public func attributes(_ n: NodeID) -> [Attribute] {
    let r = nodes[Int(n.raw)]
    let start = Int(r.attributeStart)
    return attributes[start..<start + Int(r.attributeCount)].map(attribute)
  }

  /// The value of the attribute named `name` (no namespace) on element `n`.
  /// `name` must be lower case for HTML elements.
  public func attribute(_ n: NodeID, _ name: String) -> String? {
    guard let code = attributeNameCode(name) else { return nil }
    let i = attributeIndex(n.raw, code: code)
    return i >= 0 ? value(attributes[i]) : nil
  }

  /// The data of a text or comment node; empty for other kinds.
  public func data(_ n: NodeID) -> String {
    let r = nodes[Int(n.raw)]
    switch r.kind {
    case .text: return string(r.textRun)
    case .comment: return texts[Int(r.payload)]
    default: return ""
    }
  }

  /// The DOCTYPE fields of a document type node.
  public func doctype(_ n: NodeID) -> Doctype? {
    let r = nodes[Int(n.raw)]
    return r.kind == .documentType ? doctypes[Int(r.name)] : nil
  }

  /// The contents fragment of a `<template>` element, or nil.
  public func templateContents(_ n: NodeID) -> NodeID? {
    let r = nodes[Int(n.raw)]
    return r.kind == .element && r.namespace == .html && names[Int(r.name)] == "template"
      ? id(r.payload) : nil
  }

  /// The children of `n`, in order.
  public func children(_ n: NodeID) -> ChildSequence { ChildSequence(document: self, first: nodes[Int(n.raw)].firstChild) }

  /// The node following `n` in tree order within the subtree of `scope`
  /// (pre-order), or nil at the end. Does not enter template contents.
  public func following(_ n: NodeID, within scope: NodeID) -> NodeID? {
    let r = nodes[Int(n.raw)]
    if r.firstChild >= 0 { return NodeID(raw: r.firstChild) }
    var cur = n.raw
    while cur != scope.raw {
      let c = nodes[Int(cur)]
      if c.nextSibling >= 0 { return NodeID(raw: c.nextSibling) }
      cur = c.parent
      if cur < 0 { return nil }
    }
    return nil
  }
}

/// The children of a node, as a sequence of ids.
public struct ChildSequence: Sequence, IteratorProtocol {
  let document: Document
  var cursor: Int32
  init(document: Document, first: Int32) { self.document = document; self.cursor = first }
  public mutating func next() -> NodeID? {
    guard cursor >= 0 else { return nil }
    let n = NodeID(raw: cursor)
    cursor = document.nodes[Int(cursor)].nextSibling
    return n
  }
}

// MARK: - Building the tree

extension Document {
  func intern(_ name: String) -> Int32 {
    if let i = nameIndex[name] { return i }
    let i = Int32(names.count)
    names.append(name)
    nameIndex[name] = i
    return i
  }

  /// Creates a detached element. Template elements get a contents fragment.
  public func createElement(_ localName: String, namespace: Namespace = .html, attributes: [Attribute] = []) -> NodeID {
    var r = NodeRecord(kind: .element)
    r.namespace = namespace
    r.name = intern(localName)
    r.attributeStart = Int32(self.attributes.count)
    r.attributeCount = Int32(attributes.count)
    for a in attributes { self.attributes.append(store(a)) }
    let n = NodeID(raw: Int32(nodes.count))
    nodes.append(r)
    if namespace == .html && localName == "template" {
      let fragment = Int32(nodes.count)
      nodes.append(NodeRecord(kind: .documentFragment))
      nodes[Int(n.raw)].payload = fragment
    }
    return n
  }

  /// The attributes in range `r` of `attributes`.
  @inline(__always)
  func attributes(in r: AttributeRange) -> ArraySlice<StoredAttribute> {
    attributes[Int(r.start)..<Int(r.start) + Int(r.count)]
  }

  /// Stores `list` at the end of `attributes` and returns its range.
  func appendAttributes(_ list: [Attribute]) -> AttributeRange {
    guard !list.isEmpty else { return .empty }
    let r = AttributeRange(start: Int32(attributes.count), count: Int32(list.count))
    for a in list { attributes.append(store(a)) }
    return r
  }

  /// Creates a detached element from an interned name code whose
  /// attributes are already in `attributes` (the parser's fast path: the
  /// element shares its token's range).
  func createElement(code: Int32, namespace: Namespace, attributes range: AttributeRange) -> Int32 {
    var r = NodeRecord(kind: .element)
    r.namespace = namespace
    r.name = code
    r.attributeStart = range.start
    r.attributeCount = range.count
    let n = Int32(nodes.count)
    nodes.append(r)
    if namespace == .html && code == T.template {
      nodes[Int(n)].payload = Int32(nodes.count)
      nodes.append(NodeRecord(kind: .documentFragment))
    }
    return n
  }

  /// Creates an element from an interned name code whose attributes are
  /// already in `attributes`, as the last child of `parent`: the parser's
  /// usual insertion, with the record written linked rather than created
  /// and then moved.
  @inline(__always)
  func createElement(code: Int32, namespace: Namespace, attributes range: AttributeRange, appendingTo parent: Int32) -> Int32 {
    let last = nodes[Int(parent)].lastChild
    var r = NodeRecord(kind: .element)
    r.namespace = namespace
    r.name = code
    r.attributeStart = range.start
    r.attributeCount = range.count
    r.parent = parent
    r.previousSibling = last
    let n = Int32(nodes.count)
    nodes.append(r)
    linkLast(n, parent: parent, previous: last)
    if namespace == .html && code == T.template {
      nodes[Int(n)].payload = Int32(nodes.count)
      nodes.append(NodeRecord(kind: .documentFragment))
    }
    return n
  }

  /// Makes node `n`, whose record already names `parent` and `previous`
  /// (the parent's last child), the last child of `parent`.
  @inline(__always)
  private func linkLast(_ n: Int32, parent: Int32, previous: Int32) {
    treeVersion &+= 1
    nodes.withUnsafeMutableBufferPointer { p in
      if previous >= 0 { p[Int(previous)].nextSibling = n } else { p[Int(parent)].firstChild = n }
      p[Int(parent)].lastChild = n
    }
  }

  /// Inserts the text `run` at the end of `parent`: appended to its last
  /// child when that is a text node (the spec's "insert a character"),
  /// else as a new text node.
  @inline(__always)
  func appendText(run: TextRun, to parent: Int32) {
    let last = nodes[Int(parent)].lastChild
    if last >= 0 && nodes[Int(last)].kind == .text {
      appendData(last, run: run)
      return
    }
    var r = NodeRecord(kind: .text)
    r.textRun = run
    r.parent = parent
    r.previousSibling = last
    let n = Int32(nodes.count)
    nodes.append(r)
    linkLast(n, parent: parent, previous: last)
  }

  /// Creates a detached element from an interned name code.
  func createElement(code: Int32, namespace: Namespace, attributes: [Attribute]) -> Int32 {
    createElement(code: code, namespace: namespace, attributes: appendAttributes(attributes))
  }

  /// Creates a detached text node.
  public func createText(_ data: String) -> NodeID {
    NodeID(raw: createText(run: appendText(data)))
  }

  /// Creates a detached text node whose data is `run` of `textBytes`.
  func createText(run: TextRun) -> Int32 {
    var r = NodeRecord(kind: .text)
    r.textRun = run
    nodes.append(r)
    return Int32(nodes.count - 1)
  }

  /// Creates a detached comment node.
  public func createComment(_ data: String) -> NodeID {
    NodeID(raw: createComment(textIndex: storeComment(data)))
  }

  /// Stores comment data in `texts` for a later `createComment(textIndex:)`
  /// (the tokenizer's comment tokens carry the index).
  func storeComment(_ data: String) -> Int32 {
    texts.append(data)
    return Int32(texts.count - 1)
  }

  /// Creates a detached comment node whose data is `texts[textIndex]`.
  func createComment(textIndex: Int32) -> Int32 {
    var r = NodeRecord(kind: .comment)
    r.payload = textIndex
    nodes.append(r)
    return Int32(nodes.count - 1)
  }

  /// Creates a detached document type node.
  public func createDoctype(_ doctype: Doctype) -> NodeID {
    createDoctype(index: storeDoctype(doctype))
  }

  /// Stores a DOCTYPE in `doctypes` for a later `createDoctype(index:)`
  /// (the tokenizer's DOCTYPE tokens carry the index).
  func storeDoctype(_ doctype: Doctype) -> Int32 {
    doctypes.append(doctype)
    return Int32(doctypes.count - 1)
  }

  /// Creates a detached document type node for `doctypes[index]`.
  func createDoctype(index: Int32) -> NodeID {
    var r = NodeRecord(kind: .documentType)
    r.name = index
    nodes.append(r)
    return NodeID(raw: Int32(nodes.count - 1))
  }

  /// Appends `data` to a text or comment node.
  public func appendData(_ n: NodeID, _ data: String) {
    let i = Int(n.raw)
    switch nodes[i].kind {
    case .text: appendData(n.raw, run: appendText(data))
    case .comment: texts[Int(nodes[i].payload)] += data
    default: break
    }
  }

  /// Appends `run` of `textBytes` to text node `n`: in place when the
  /// node's run ends where `run` starts (the parser's usual case), else as
  /// `grow` says (in place, into the room an earlier move left, or moved
  /// with as much room again).
  func appendData(_ n: Int32, run: TextRun) {
    guard run.count > 0 else { return }
    let old = nodes[Int(n)].textRun
    let end = old.start &+ old.count
    if end == run.start {
      nodes[Int(n)].textRun.count = old.count + run.count
      return
    }
    let added = Array(textBytes.bytes(run))
    let start = Self.grow(&textBytes, start: old.start, count: old.count, by: added, room: &textRoom[n])
    nodes[Int(n)].textRun = TextRun(start: start, count: old.count + run.count)
  }

  /// Appends `added` to the range `start ..< start + count` of `storage`
  /// (text bytes or attributes) and returns the range's new start, writing
  /// nothing another range may share: in place when the range ends
  /// `storage` (an empty range starts there), else into the spare room an
  /// earlier move left after it (`room`, its end), else by moving the range
  /// to the end with as much room again. A range that keeps growing
  /// between other ranges is thus moved O(log n) times, and `storage`
  /// stays within a small multiple of what it holds.
  static func grow<Element>(
    _ storage: inout [Element], start: Int32, count: Int32, by added: [Element], room: inout Int32?,
    filler: Element
  ) -> Int32 {
    let start = count == 0 ? Int32(storage.count) : start
    let end = Int(start) + Int(count)
    if end == storage.count {
      storage.append(contentsOf: added)
      return start
    }
    if let room, end + added.count <= Int(room) {
      // The room is past every other range: writing it changes no one's data.
      storage.replaceSubrange(end..<end + added.count, with: added)
      return start
    }
    let kept = Array(storage[Int(start)..<end])
    let moved = Int32(storage.count)
    storage.append(contentsOf: kept)
    storage.append(contentsOf: added)
    storage.append(contentsOf: repeatElement(filler, count: kept.count + added.count))
    room = Int32(storage.count)
    return moved
  }


  /// `grow` for the text bytes (a `ByteBuffer`); `added` is not empty.
  static func grow(_ storage: inout ByteBuffer, start: Int32, count: Int32, by added: [UInt8], room: inout Int32?) -> Int32 {
    let start = count == 0 ? Int32(storage.count) : start
    let end = Int(start) + Int(count)
    if end == storage.count {
      added.withUnsafeBufferPointer { storage.append(contentsOf: $0) }
      return start
    }
    if let room, end + added.count <= Int(room) {
      // The room is past every other run: writing it changes no one's data.
      added.withUnsafeBufferPointer { storage.overwrite(at: end, with: $0) }
      return start
    }
    let kept = Array(storage.bytes(TextRun(start: start, count: count)))
    let moved = Int32(storage.count)
    kept.withUnsafeBufferPointer { storage.append(contentsOf: $0) }
    added.withUnsafeBufferPointer { storage.append(contentsOf: $0) }
    storage.append(repeating: 0, count: kept.count + added.count)
    room = Int32(storage.count)
    return moved
  }

  /// Adds attributes to element `n` (those it does not have yet are added;
  /// existing names are kept, as the tree builder's "add the attribute if
  /// missing" steps require).
  ///
  /// Linear however often it is called: names are looked up in a set kept
  /// per element, and the element's range grows as `grow` says (ranges
  /// other elements or tokens share are never written).
  public func addMissingAttributes(_ n: NodeID, _ extra: [Attribute]) {
    addMissingAttributes(n, stored: extra.map(store))
  }

  /// `addMissingAttributes` for attributes already stored (a later tag's).
  func addMissingAttributes(_ n: NodeID, stored extra: [StoredAttribute]) {
    guard !extra.isEmpty else { return }
    let i = Int(n.raw)
    if addedAttributeKeys[n.raw] == nil {
      let r = nodes[i]
      let start = Int(r.attributeStart)
      addedAttributeKeys[n.raw] = Set(attributes[start..<start + Int(r.attributeCount)].map(AttributeKey.init))
    }
    var added: [StoredAttribute] = []
    // Inserted in place (a copy taken out of the dictionary would be copied again).
    for a in extra where addedAttributeKeys[n.raw]!.insert(AttributeKey(a)).inserted { added.append(a) }
    guard !added.isEmpty else { return }
    // The element index copies attribute ranges (see `ElementOrder.Entry`).
    treeVersion &+= 1
    let count = nodes[i].attributeCount
    nodes[i].attributeStart = Self.grow(
      &attributes, start: nodes[i].attributeStart, count: count, by: added, room: &attributeRoom[n.raw],
      filler: .empty)
    nodes[i].attributeCount = count + Int32(added.count)
  }

  /// Detaches `n` from its parent (no-op when detached).
  public func remove(_ n: NodeID) {
    let i = Int(n.raw)
    precondition(i >= 0 && i < nodes.count, "node id out of range")
    treeVersion &+= 1
    nodes.withUnsafeMutableBufferPointer { p in Self.unlink(p, i) }
  }

  /// Unlinks node `i` from its parent and siblings, if it has a parent.
  /// One pass over the arena's buffer: no per-field uniqueness checks.
  @inline(__always)
  private static func unlink(_ p: UnsafeMutableBufferPointer<NodeRecord>, _ i: Int) {
    let r = p[i]
    guard r.parent >= 0 else { return }
    if r.previousSibling >= 0 { p[Int(r.previousSibling)].nextSibling = r.nextSibling }
    else { p[Int(r.parent)].firstChild = r.nextSibling }
    if r.nextSibling >= 0 { p[Int(r.nextSibling)].previousSibling = r.previousSibling }
    else { p[Int(r.parent)].lastChild = r.previousSibling }
    p[i].parent = -1
    p[i].nextSibling = -1
    p[i].previousSibling = -1
  }

  /// Appends `child` as the last child of `parent`, detaching it first.
  public func append(_ child: NodeID, to parent: NodeID) {
    let c = Int(child.raw), pa = Int(parent.raw)
    precondition(c >= 0 && c < nodes.count && pa >= 0 && pa < nodes.count, "node id out of range")
    treeVersion &+= 1
    nodes.withUnsafeMutableBufferPointer { p in
      Self.unlink(p, c)
      let last = p[pa].lastChild
      p[c].parent = parent.raw
      p[c].previousSibling = last
      if last >= 0 { p[Int(last)].nextSibling = child.raw } else { p[pa].firstChild = child.raw }
      p[pa].lastChild = child.raw
    }
  }

  /// Inserts `child` into `parent` before `reference` (or last when nil).
  public func insert(_ child: NodeID, into parent: NodeID, before reference: NodeID?) {
    guard let reference else { return append(child, to: parent) }
    remove(child)
    let prev = nodes[Int(reference.raw)].previousSibling
    nodes[Int(child.raw)].parent = parent.raw
    nodes[Int(child.raw)].previousSibling = prev
    nodes[Int(child.raw)].nextSibling = reference.raw
    nodes[Int(reference.raw)].previousSibling = child.raw
    if prev >= 0 { nodes[Int(prev)].nextSibling = child.raw } else { nodes[Int(parent.raw)].firstChild = child.raw }
  }
}

/// An attribute's identity for "add the attribute if missing": its name in
/// its namespace.
struct AttributeKey: Hashable {
  let name: Int32
  let namespace: AttributeNamespace

  init(_ a: StoredAttribute) {
    name = a.name
    namespace = a.namespace
  }
}
