/// A start or end tag as the tree builder sees it: the name as its code
/// in the document's interned names (`Document.names`) and the attributes
/// as a range of `Document.attributes`, so copying a token copies no
/// strings or arrays.
struct TagToken: BitwiseCopyable {
  var code: Int32
  var attributes: AttributeRange
  var selfClosing: Bool
}

/// The tokens the tree builder's modes handle.
///
/// Plain values only (`BitwiseCopyable`): the DOCTYPE and the comment are
/// already stored in the document and named by index, so moving, copying
/// and dropping a token costs no reference counting or outlined copies,
/// which every token paid while comments carried a `String`.
enum BuilderToken: BitwiseCopyable {
  /// The DOCTYPE `Document.doctypes[i]` (stored there when emitted; only
  /// the initial mode makes a node of it).
  case doctype(Int32)
  case start(TagToken)
  case end(TagToken)
  /// The comment data `Document.texts[i]`.
  case comment(Int32)
  /// A run of `Document.textBytes`.
  case chars(TextRun)
  case eof
}

/// An entry of the stack of open elements.
struct OpenElement: BitwiseCopyable {
  var node: Int32
  var code: Int32
  var ns: Namespace
  @inline(__always) func isHTML(_ c: Int32) -> Bool { ns == .html && code == c }
  @inline(__always) func isHTML(in set: TagSet) -> Bool { ns == .html && set.contains(code) }
}

/// An entry of the list of active formatting elements; `node == -1` is a
/// marker. `attributes` is the token's range of `Document.attributes`,
/// which stays unchanged once written.
struct FormattingEntry: BitwiseCopyable {
  var node: Int32
  var code: Int32
  var attributes: AttributeRange
  var isMarker: Bool { node < 0 }
  static let marker = FormattingEntry(node: -1, code: -1, attributes: .empty)
}

/// Where to insert a node: into `parent`, before `before` (or last when -1).
struct InsertionLocation {
  var parent: Int32
  var before: Int32
}

/// The HTML tree builder: consumes tokens and builds a `Document`.
///
/// Each insertion mode is a method returning the token to reprocess (in the
/// mode that is current by then), or nil when done. Nothing recurses per
/// nesting level: the stack of open elements is an array.
///
/// - SeeAlso: <https://html.spec.whatwg.org/#tree-construction>
final class TreeBuilder {
  let doc: Document
  let tokenizer: Tokenizer
  let scripting: Bool
  /// `ParserOptions.maximumDepth` (at least 4): the stack of open elements
  /// grows past it only by elements that cannot be closed early.
  let maximumDepth: Int
  /// `ParserOptions.shouldStop`, asked every `stopCheckInterval` tokens.
  let shouldStop: (@Sendable () -> Bool)?
  /// Tokens left before `shouldStop` is asked again.
  @exclusivity(unchecked) var tokensBeforeStopCheck = TreeBuilder.stopCheckInterval
  /// True once `shouldStop` answered true: the parse ended there.
  @exclusivity(unchecked) var interrupted = false
  static let stopCheckInterval = 4096
  /// Per node id, 1 while the node is an HTML element on the stack of open
  /// elements: the list of active formatting elements asks this of each of
  /// its entries, which a scan of the stack would answer in time linear in
  /// the depth.
  @exclusivity(unchecked) var onStack = PodBuffer<UInt8>(repeating: 0, count: 256)
  /// Steps taken by the walks over the stack of open elements and the list
  /// of active formatting elements (scope checks, searches, Noah's Ark):
  /// what the tests count to see that a page's shape cannot make parsing
  /// quadratic. Counted only in debug builds.
  @exclusivity(unchecked) var walkSteps = 0

  @exclusivity(unchecked) var mode: InsertionMode = .initial
  @exclusivity(unchecked) var originalMode: InsertionMode = .initial
  @exclusivity(unchecked) var templateModes: [InsertionMode] = []
  // The stacks are `PodBuffer`s (freed in deinit): they change for nearly
  // every token, and an array's uniqueness checks cost more than the writes.
  @exclusivity(unchecked) var stack = PodBuffer<OpenElement>(capacity: 64)
  @exclusivity(unchecked) var openCount = PodBuffer<Int32>(repeating: 0, count: 256)
  /// True once a `<selectedcontent>` element was inserted; only then do
  /// popped options need the selectedcontent step.
  @exclusivity(unchecked) var sawSelectedContent = false
  @exclusivity(unchecked) var formatting = PodBuffer<FormattingEntry>(capacity: 16)
  @exclusivity(unchecked) var headElement: Int32 = -1
  @exclusivity(unchecked) var formElement: Int32 = -1
  @exclusivity(unchecked) var framesetOK = true
  @exclusivity(unchecked) var fosterParenting = false
  @exclusivity(unchecked) var ignoreNextLF = false
  /// False when the current character token cannot hold U+0000, which
  /// spares the modes a scan.
  @exclusivity(unchecked) var charsMayHaveNUL = false
  @exclusivity(unchecked) var pendingTableText: [TextRun] = []
  @exclusivity(unchecked) var pendingTableTextHasNonWhitespace = false
  /// The context element of fragment parsing.
  @exclusivity(unchecked) var context: OpenElement? = nil
  @exclusivity(unchecked) var errorCount = 0
  @exclusivity(unchecked) var errors: [ParseError]? = nil

  init(document: Document, tokenizer: Tokenizer, options: ParserOptions) {
    doc = document
    self.tokenizer = tokenizer
    self.scripting = options.scripting
    self.maximumDepth = options.effectiveMaximumDepth
    self.shouldStop = options.shouldStop
    if options.collectErrors { errors = [] }
  }

  deinit {
    stack.free()
    openCount.free()
    formatting.free()
    onStack.free()
  }

  /// Counts `n` steps of a walk (see `walkSteps`); nothing in release builds.
  @inline(__always) func countSteps(_ n: Int = 1) {
    #if DEBUG
      walkSteps &+= n
    #endif
  }

  @inline(never)
  func error(_ what: StaticString) {
    errorCount += 1
    if errors != nil { errors!.append(ParseError(code: "\(what)", offset: tokenizer.pos)) }
  }

  // MARK: Running

  /// Runs the tokenizer to the end, building the document.
  func run() {
    while true {
      if let adjusted = adjustedCurrentNode { tokenizer.allowCDATA = adjusted.ns != .html } else { tokenizer.allowCDATA = false }
      var token = tokenizer.nextToken()
      if shouldStop != nil {
        tokensBeforeStopCheck -= 1
        if tokensBeforeStopCheck == 0 {
          tokensBeforeStopCheck = Self.stopCheckInterval
          if shouldStop!() {
            // As if the input ended here.
            interrupted = true
            token = .eof
          }
        }
      }
      switch token {
      case .chars(let s):
        charsMayHaveNUL = tokenizer.lastCharactersHadNUL
        if ignoreNextLF {
          ignoreNextLF = false
          if !s.isEmpty && doc.textBytes[Int(s.start)] == 0x0A {
            let rest = s.dropFirst(1)
            if !rest.isEmpty { process(.chars(rest)) }
            continue
          }
        }
      case .eof:
        process(token)
        // https://html.spec.whatwg.org/#stop-parsing: pop everything.
        truncateStack(to: 0)
        return
      default:
        ignoreNextLF = false
      }
      process(token)
    }
  }

  /// The tree construction dispatcher.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#tree-construction-dispatcher>
  @inline(__always)
  func process(_ token: BuilderToken) {
    // The first round borrows `token` (no copy); a token to reprocess is
    // rare and owned.
    var next = dispatch(token)
    while let n = next { next = dispatch(n) }
  }

  @inline(__always)
  func dispatch(_ token: BuilderToken) -> BuilderToken? {
    // The usual case first: the adjusted current node is an HTML element
    // (or there is none), so the insertion mode applies whatever the
    // token, and in body is the usual mode.
    let n = stack.count
    if n == 0 || (stack.base[n - 1].ns == .html && (n > 1 || context == nil)) {
      return mode == .inBody ? inBodyRules(token) : processInMode(token)
    }
    return useInsertionMode(for: token) ? processInMode(token) : processForeign(token)
  }

  func useInsertionMode(for token: BuilderToken) -> Bool {
    guard let a = adjustedCurrentNode, a.ns != .html else { return true }
    switch token {
    case .eof: return true
    case .start(let t):
      if isMathMLTextIntegrationPoint(a) && t.code != T.mglyph && t.code != T.malignmark { return true }
      if a.ns == .mathml && a.code == T.annotationXml && t.code == T.svg { return true }
      return isHTMLIntegrationPoint(a)
    case .chars:
      return isMathMLTextIntegrationPoint(a) || isHTMLIntegrationPoint(a)
    default:
      return false
    }
  }

  func processInMode(_ token: BuilderToken) -> BuilderToken? {
    switch mode {
    case .initial: return initialMode(token)
    case .beforeHTML: return beforeHTMLMode(token)
    case .beforeHead: return beforeHeadMode(token)
    case .inHead: return inHeadMode(token)
    case .inHeadNoscript: return inHeadNoscriptMode(token)
    case .afterHead: return afterHeadMode(token)
    case .inBody: return inBodyMode(token)
    case .text: return textMode(token)
    case .inTable: return inTableMode(token)
    case .inTableText: return inTableTextMode(token)
    case .inCaption: return inCaptionMode(token)
    case .inColumnGroup: return inColumnGroupMode(token)
    case .inTableBody: return inTableBodyMode(token)
    case .inRow: return inRowMode(token)
    case .inCell: return inCellMode(token)
    case .inTemplate: return inTemplateMode(token)
    case .afterBody: return afterBodyMode(token)
    case .inFrameset: return inFramesetMode(token)
    case .afterFrameset: return afterFramesetMode(token)
    case .afterAfterBody: return afterAfterBodyMode(token)
    case .afterAfterFrameset: return afterAfterFramesetMode(token)
    }
  }

  // MARK: The stack of open elements
  //
  // Every change goes through these helpers, which keep `openCount` (HTML
  // elements on the stack per name code). Scope checks and "any other end
  // tag" answer at once when no element of the name is open, so deeply
  // nested input stays linear.

  @inline(__always) func adjustOpenCount(_ e: OpenElement, _ delta: Int32) {
    guard e.ns == .html else { return }
    if delta < 0 && e.code == T.option && sawSelectedContent { maybeCloneOptionIntoSelectedContent(e.node) }
    let c = Int(e.code)
    precondition(c >= 0, "element without a name code")
    if c >= openCount.count { openCount.append(repeating: 0, count: c + 64 - openCount.count) }
    // In range: checked or grown just above.
    openCount.base[c] += delta
    markOnStack(e.node, delta > 0)
  }

  @inline(__always) func markOnStack(_ node: Int32, _ on: Bool) {
    let i = Int(node)
    if i >= onStack.count { onStack.append(repeating: 0, count: max(i + 1 - onStack.count, onStack.count)) }
    onStack.base[i] = on ? 1 : 0
  }

  @inline(__always) func isOpen(_ code: Int32) -> Bool {
    Int(code) < openCount.count && openCount[Int(code)] > 0
  }

  @inline(__always)
  func push(_ e: OpenElement) {
    stack.append(e)
    adjustOpenCount(e, 1)
  }

  func pop() {
    let e = stack.removeLast()
    adjustOpenCount(e, -1)
  }

  func popEntry() -> OpenElement? {
    guard let e = stack.popLast() else { return nil }
    adjustOpenCount(e, -1)
    return e
  }

  func removeStack(at i: Int) {
    adjustOpenCount(stack.remove(at: i), -1)
  }

  func insertStack(_ e: OpenElement, at i: Int) {
    stack.insert(e, at: i)
    adjustOpenCount(e, 1)
  }

  func truncateStack(to n: Int) {
    while stack.count > n { pop() }
  }

  var current: OpenElement { stack[stack.count - 1] }

  /// https://html.spec.whatwg.org/#adjusted-current-node
  var adjustedCurrentNode: OpenElement? {
    // The count first: it is cheaper to test than the optional context.
    if stack.count == 1, let context { return context }
    return stack.last
  }

  func entry(_ node: Int32) -> OpenElement {
    OpenElement(node: node, code: doc.nodes[Int(node)].name, ns: doc.nodes[Int(node)].namespace)
  }

  func stackIndex(of node: Int32) -> Int? {
    var i = stack.count - 1
    while i >= 0 {
      countSteps()
      if stack[i].node == node { return i }
      i -= 1
    }
    return nil
  }

  /// True when HTML element `node` is on the stack of open elements (the
  /// entries of the list of active formatting elements are HTML elements).
  @inline(__always) func isOnStack(_ node: Int32) -> Bool {
    Int(node) < onStack.count && onStack[Int(node)] != 0
  }

  func hasOnStack(_ code: Int32) -> Bool { isOpen(code) }

  func popUntil(_ code: Int32) {
    while let e = popEntry() { if e.isHTML(code) { return } }
  }

  func popUntil(in set: TagSet) {
    while let e = popEntry() { if e.isHTML(in: set) { return } }
  }

  func popUntilNode(_ node: Int32) {
    while let e = popEntry() { if e.node == node { return } }
  }

  func removeFromStack(_ node: Int32) {
    if let i = stackIndex(of: node) { removeStack(at: i) }
  }

  static func isSpecial(_ e: OpenElement) -> Bool {
    switch e.ns {
    case .html: return T.special.contains(e.code)
    case .mathml: return e.code == T.mi || e.code == T.mo || e.code == T.mn || e.code == T.ms || e.code == T.mtext || e.code == T.annotationXml
    case .svg: return e.code == T.foreignObject || e.code == T.desc || e.code == T.title
    }
  }

  enum Scope { case normal, listItem, button, table }

  @inline(__always)
  func isScopeBoundary(_ e: OpenElement, _ scope: Scope) -> Bool {
    switch scope {
    case .table: return e.isHTML(in: T.tableScope)
    case .normal, .listItem, .button:
      switch e.ns {
      case .html:
        if T.defaultScope.contains(e.code) { return true }
        if scope == .listItem { return e.code == T.ol || e.code == T.ul }
        if scope == .button { return e.code == T.button }
        return false
      case .mathml: return e.code == T.mi || e.code == T.mo || e.code == T.mn || e.code == T.ms || e.code == T.mtext || e.code == T.annotationXml
      case .svg: return e.code == T.foreignObject || e.code == T.desc || e.code == T.title
      }
    }
  }

  /// https://html.spec.whatwg.org/#has-an-element-in-the-specific-scope
  func inScope(_ code: Int32, _ scope: Scope = .normal) -> Bool {
    guard isOpen(code) else { return false }
    var i = stack.count - 1
    while i >= 0 {
      countSteps()
      let e = stack[i]
      if e.isHTML(code) { return true }
      if isScopeBoundary(e, scope) { return false }
      i -= 1
    }
    return false
  }

  func inScope(in set: TagSet, _ scope: Scope = .normal) -> Bool {
    var i = stack.count - 1
    while i >= 0 {
      countSteps()
      let e = stack[i]
      if e.isHTML(in: set) { return true }
      if isScopeBoundary(e, scope) { return false }
      i -= 1
    }
    return false
  }

  func nodeInScope(_ node: Int32) -> Bool {
    var i = stack.count - 1
    while i >= 0 {
      countSteps()
      let e = stack[i]
      if e.node == node { return true }
      if isScopeBoundary(e, .normal) { return false }
      i -= 1
    }
    return false
  }

  /// https://html.spec.whatwg.org/#generate-implied-end-tags
  func generateImpliedEndTags(except code: Int32 = -1) {
    while let e = stack.last, e.ns == .html, T.impliedEndTags.contains(e.code), e.code != code { pop() }
  }

  func generateImpliedEndTagsThoroughly() {
    while let e = stack.last, e.isHTML(in: T.impliedEndTagsThorough) { pop() }
  }

  /// Closes a `p` element.
  func closeP() {
    generateImpliedEndTags(except: T.p)
    if !current.isHTML(T.p) { error("unexpected-open-element-closing-p") }
    popUntil(T.p)
  }

  func closePIfInButtonScope() {
    if inScope(T.p, .button) { closeP() }
  }

  // MARK: Inserting nodes

  /// Whether inserting into `target` could need foster parenting or the
  /// template contents step; when not, the appropriate place is the end
  /// of `target` itself.
  @inline(__always)
  func needsPlaceSteps(_ target: OpenElement) -> Bool {
    target.ns == .html
      && (target.code == T.template
        || (fosterParenting && (target.code == T.table || T.tableSections.contains(target.code) || target.code == T.tr)))
  }

  /// https://html.spec.whatwg.org/#appropriate-place-for-inserting-a-node
  @inline(__always)
  func appropriatePlace(overrideTarget: OpenElement? = nil) -> InsertionLocation {
    let target = overrideTarget ?? current
    // Stack entries are elements whose code and namespace are those of
    // their node, so the usual case needs no look at the node itself.
    if !needsPlaceSteps(target) { return InsertionLocation(parent: target.node, before: -1) }
    return appropriatePlaceSteps(target)
  }

  /// `appropriatePlace` with foster parenting and template contents.
  @inline(never)
  func appropriatePlaceSteps(_ target: OpenElement) -> InsertionLocation {
    var loc: InsertionLocation
    if fosterParenting && target.ns == .html
        && (target.code == T.table || T.tableSections.contains(target.code) || target.code == T.tr) {
      var lastTemplate = -1, lastTable = -1
      var i = stack.count - 1
      while i >= 0 && (lastTemplate < 0 || lastTable < 0) {
        if lastTemplate < 0 && stack[i].isHTML(T.template) { lastTemplate = i }
        if lastTable < 0 && stack[i].isHTML(T.table) { lastTable = i }
        i -= 1
      }
      if lastTemplate >= 0 && (lastTable < 0 || lastTemplate > lastTable) {
        loc = InsertionLocation(parent: stack[lastTemplate].node, before: -1)
      } else if lastTable < 0 {
        loc = InsertionLocation(parent: stack[0].node, before: -1)
      } else {
        let table = stack[lastTable].node
        let parent = doc.nodes[Int(table)].parent
        if parent >= 0 {
          loc = InsertionLocation(parent: parent, before: table)
        } else {
          loc = InsertionLocation(parent: stack[lastTable - 1].node, before: -1)
        }
      }
    } else {
      loc = InsertionLocation(parent: target.node, before: -1)
    }
    let r = doc.nodes[Int(loc.parent)]
    if r.kind == .element && r.namespace == .html && r.name == T.template && r.payload >= 0 {
      loc = InsertionLocation(parent: r.payload, before: loc.before >= 0 && doc.nodes[Int(loc.before)].parent == r.payload ? loc.before : -1)
    }
    return loc
  }

  func insert(_ node: Int32, at loc: InsertionLocation) {
    if loc.before >= 0 {
      doc.insert(NodeID(raw: node), into: NodeID(raw: loc.parent), before: NodeID(raw: loc.before))
    } else {
      doc.append(NodeID(raw: node), to: NodeID(raw: loc.parent))
    }
  }

  /// Creates an element for a token (no insertion).
  func createElement(_ tag: TagToken, _ ns: Namespace) -> Int32 {
    doc.createElement(code: tag.code, namespace: ns, attributes: tag.attributes)
  }

  /// https://html.spec.whatwg.org/#insert-a-foreign-element
  @discardableResult
  func insertElement(_ tag: TagToken, _ ns: Namespace = .html) -> Int32 {
    if stack.count >= maximumDepth { return insertElementPastDepthLimit(tag, ns) }
    let loc = appropriatePlace()
    let n: Int32
    if loc.before < 0 {
      // Created already linked as the last child: one pass over the arena.
      n = doc.createElement(code: tag.code, namespace: ns, attributes: tag.attributes, appendingTo: loc.parent)
    } else {
      n = createElement(tag, ns)
      insert(n, at: loc)
    }
    if tag.code == T.selectedcontent && ns == .html { sawSelectedContent = true }
    push(OpenElement(node: n, code: tag.code, ns: ns))
    return n
  }

  /// `insertElement` when the stack of open elements holds
  /// `maximumDepth` elements (`ParserOptions.maximumDepth`): the deepest
  /// open elements that can be closed early are closed, so the new element
  /// becomes the next sibling of the deepest one; when it cannot be closed
  /// (see `keptOpenPastDepthLimit`), the new element is still inserted as
  /// its sibling, as Blink and WebKit do past 512 levels, and the stack
  /// grows by one.
  ///
  /// The HTML standard lets a user agent impose implementation-specific
  /// limits on otherwise unconstrained input: this one keeps every walk
  /// over the stack and every ancestor walk of the tree bounded.
  @inline(never)
  func insertElementPastDepthLimit(_ tag: TagToken, _ ns: Namespace) -> Int32 {
    while stack.count >= maximumDepth, !Self.keptOpenPastDepthLimit(current) {
      let closed = popEntry()!
      // Their end tag would clear the markers they pushed.
      if closed.ns == .html && (closed.code == T.applet || closed.code == T.marquee || closed.code == T.object) {
        clearFormattingToMarker()
      }
    }
    var loc = appropriatePlace()
    if stack.count >= maximumDepth && loc.before < 0 && loc.parent == current.node {
      let parent = doc.nodes[Int(loc.parent)].parent
      if parent >= 0 && doc.nodes[Int(parent)].kind == .element { loc.parent = parent }
    }
    let n = createElement(tag, ns)
    insert(n, at: loc)
    if tag.code == T.selectedcontent && ns == .html { sawSelectedContent = true }
    push(OpenElement(node: n, code: tag.code, ns: ns))
    return n
  }

  /// Elements the depth limit never closes early: the insertion modes and
  /// the template insertion modes rely on them being open.
  static func keptOpenPastDepthLimit(_ e: OpenElement) -> Bool {
    e.ns == .html && T.structural.contains(e.code)
  }

  /// Inserts an HTML element for a tag the parser makes up (`<html>`, `<tbody>`…).
  @discardableResult
  func insertSynthetic(_ code: Int32) -> Int32 {
    insertElement(TagToken(code: code, attributes: .empty, selfClosing: false))
  }

  /// https://html.spec.whatwg.org/#insert-a-comment
  func insertComment(_ data: Int32, at loc: InsertionLocation? = nil) {
    let n = doc.createComment(textIndex: data)
    insert(n, at: loc ?? appropriatePlace())
  }

  /// https://html.spec.whatwg.org/#insert-a-character
  func insertCharacters(_ s: TextRun) {
    guard !s.isEmpty else { return }
    let target = current
    if !needsPlaceSteps(target) {
      // The usual case: the end of the current node, an element.
      doc.appendText(run: s, to: target.node)
      return
    }
    let loc = appropriatePlaceSteps(target)
    if doc.nodes[Int(loc.parent)].kind == .document { return }
    let prev = loc.before >= 0 ? doc.nodes[Int(loc.before)].previousSibling : doc.nodes[Int(loc.parent)].lastChild
    if prev >= 0 && doc.nodes[Int(prev)].kind == .text {
      doc.appendData(prev, run: s)
      return
    }
    let n = doc.createText(run: s)
    insert(n, at: loc)
  }

  /// Parses the raw text or RCDATA element for `tag`.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#generic-raw-text-element-parsing-algorithm>
  func genericText(_ tag: TagToken, rcdata: Bool) {
    insertElement(tag)
    tokenizer.state = rcdata ? .rcdata : .rawtext
    originalMode = mode
    mode = .text
  }

  // MARK: Active formatting elements

  /// The index of `node`'s entry in the list of active formatting elements,
  /// looked for after the last marker: the callers ask about elements
  /// opened after that marker's element (so their entries were added after
  /// it), and the search stays within one bounded part of the list.
  func formattingIndex(of node: Int32) -> Int? {
    var i = formatting.count - 1
    while i >= 0 {
      countSteps()
      let f = formatting[i]
      if f.node == node { return i }
      if f.isMarker { return nil }
      i -= 1
    }
    return nil
  }

  /// https://html.spec.whatwg.org/#push-onto-the-list-of-active-formatting-elements
  ///
  /// Past `ParserOptions.formattingElementLimit` entries after the last
  /// marker the earliest of them is dropped as well, so the list (which
  /// reconstruction copies into the tree) stays bounded whatever the page.
  func pushFormatting(_ node: Int32, _ tag: TagToken) {
    var count = 0
    var earliest = -1
    var i = formatting.count - 1
    while i >= 0 {
      countSteps()
      let f = formatting[i]
      if f.isMarker { break }
      if count < 3 && f.code == tag.code && sameAttributes(f.attributes, tag.attributes) {
        count += 1
        earliest = i
      }
      i -= 1
    }
    // `i` is the last marker's index (or -1): the entries after it number
    // `formatting.count - 1 - i`.
    if count >= 3 {
      formatting.remove(at: earliest)
    } else if formatting.count - 1 - i >= ParserOptions.formattingElementLimit {
      formatting.remove(at: i + 1)
    }
    formatting.append(FormattingEntry(node: node, code: tag.code, attributes: tag.attributes))
  }

  func sameAttributes(_ ra: AttributeRange, _ rb: AttributeRange) -> Bool {
    guard ra.count == rb.count else { return false }
    if ra.count == 0 || ra.start == rb.start { return true }
    let b = doc.attributes(in: rb)
    for x in doc.attributes(in: ra) where !b.contains(where: { doc.sameAttribute(x, $0) }) { return false }
    return true
  }

  /// https://html.spec.whatwg.org/#reconstruct-the-active-formatting-elements
  @inline(__always)
  func reconstructFormatting() {
    // Usually the list is empty, ends with a marker, or ends with the
    // current node (text inside `<a>`): nothing to do.
    guard let last = formatting.last, !last.isMarker, last.node != stack.last?.node else { return }
    reconstructFormattingSteps(last)
  }

  @inline(never)
  func reconstructFormattingSteps(_ last: FormattingEntry) {
    guard !isOnStack(last.node) else { return }
    var i = formatting.count - 1
    while i > 0 {
      countSteps()
      let e = formatting[i - 1]
      if e.isMarker || isOnStack(e.node) { break }
      i -= 1
    }
    while i < formatting.count {
      let e = formatting[i]
      let tag = TagToken(code: e.code, attributes: e.attributes, selfClosing: false)
      let n = insertElement(tag)
      formatting[i].node = n
      i += 1
    }
  }

  func clearFormattingToMarker() {
    while let e = formatting.popLast() { if e.isMarker { return } }
  }

  /// https://html.spec.whatwg.org/#adoption-agency-algorithm
  ///
  /// - Returns: false when the caller must act as for "any other end tag".
  func adoptionAgency(_ tag: TagToken) -> Bool {
    let subject = tag.code
    // The usual case (`<a>…</a>`): the formatting element is the current
    // node. The first step below then does not apply (the current node is
    // in the list), and the algorithm finds no furthest block, pops the
    // node and drops its entry.
    var k = formatting.count - 1
    while k >= 0 && !formatting[k].isMarker {
      if formatting[k].code == subject {
        if formatting[k].node == current.node {
          pop()
          if k == formatting.count - 1 { formatting.removeLast() } else { formatting.remove(at: k) }
          return true
        }
        break
      }
      k -= 1
    }
    if current.isHTML(subject) && formattingIndex(of: current.node) == nil {
      pop()
      return true
    }
    var outer = 0
    while outer < 8 {
      outer += 1
      // The formatting element.
      var fIdx = -1
      var i = formatting.count - 1
      while i >= 0 {
        if formatting[i].isMarker { break }
        if formatting[i].code == subject { fIdx = i; break }
        i -= 1
      }
      if fIdx < 0 { return false }
      let fNode = formatting[fIdx].node
      guard let fStack = stackIndex(of: fNode) else {
        error("adoption-agency-not-open")
        formatting.remove(at: fIdx)
        return true
      }
      if !nodeInScope(fNode) {
        error("adoption-agency-not-in-scope")
        return true
      }
      if fNode != current.node { error("adoption-agency-not-current") }
      // The furthest block.
      var fbIdx = -1
      var j = fStack + 1
      while j < stack.count {
        countSteps()
        if Self.isSpecial(stack[j]) { fbIdx = j; break }
        j += 1
      }
      if fbIdx < 0 {
        while stack.count > fStack { pop() }
        formatting.remove(at: fIdx)
        return true
      }
      let commonAncestor = stack[fStack - 1]
      let furthestBlock = stack[fbIdx].node
      var bookmark = fIdx
      var nodeIdx = fbIdx
      var lastNode = furthestBlock
      var inner = 0
      while true {
        inner += 1
        nodeIdx -= 1
        let node = stack[nodeIdx].node
        if node == fNode { break }
        var nodeF = formattingIndex(of: node)
        if inner > 3, let k = nodeF {
          formatting.remove(at: k)
          if k < bookmark { bookmark -= 1 }
          nodeF = nil
        }
        guard let k = nodeF else {
          removeStack(at: nodeIdx)
          continue
        }
        let f = formatting[k]
        let newNode = doc.createElement(code: f.code, namespace: .html, attributes: f.attributes)
        formatting[k].node = newNode
        markOnStack(node, false)
        markOnStack(newNode, true)
        stack[nodeIdx].node = newNode
        if lastNode == furthestBlock { bookmark = k + 1 }
        doc.append(NodeID(raw: lastNode), to: NodeID(raw: newNode))
        lastNode = newNode
      }
      insert(lastNode, at: appropriatePlace(overrideTarget: commonAncestor))
      let fe = formatting[fIdx]
      let newElement = doc.createElement(code: fe.code, namespace: .html, attributes: fe.attributes)
      while let child = doc.firstChild(NodeID(raw: furthestBlock)) {
        doc.append(child, to: NodeID(raw: newElement))
      }
      doc.append(NodeID(raw: newElement), to: NodeID(raw: furthestBlock))
      if let k = formattingIndex(of: fNode) {
        formatting.remove(at: k)
        if k < bookmark { bookmark -= 1 }
      }
      formatting.insert(FormattingEntry(node: newElement, code: fe.code, attributes: fe.attributes), at: min(bookmark, formatting.count))
      removeFromStack(fNode)
      if let fb = stackIndex(of: furthestBlock) {
        insertStack(OpenElement(node: newElement, code: fe.code, ns: .html), at: fb + 1)
      }
    }
    return true
  }

  // MARK: Modes

  /// https://html.spec.whatwg.org/#reset-the-insertion-mode-appropriately
  func resetInsertionMode() {
    var i = stack.count - 1
    while i >= 0 {
      var node = stack[i]
      let last = i == 0
      if last, let context { node = context }
      if node.ns == .html {
        switch node.code {
        case T.td, T.th:
          if !last { mode = .inCell; return }
        case T.tr: mode = .inRow; return
        case T.tbody, T.thead, T.tfoot: mode = .inTableBody; return
        case T.caption: mode = .inCaption; return
        case T.colgroup: mode = .inColumnGroup; return
        case T.table: mode = .inTable; return
        case T.template: mode = templateModes.last ?? .inTemplate; return
        case T.head: if !last { mode = .inHead; return }
        case T.body: mode = .inBody; return
        case T.frameset: mode = .inFrameset; return
        case T.html: mode = headElement < 0 ? .beforeHead : .afterHead; return
        default: break
        }
      }
      if last { mode = .inBody; return }
      i -= 1
    }
    mode = .inBody
  }

  // MARK: Character helpers

  /// Splits `s` into its leading run of ASCII whitespace and the rest.
  func splitLeadingWhitespace(_ s: TextRun) -> (TextRun, TextRun) {
    let k = doc.withTextBytes(of: s) { b in
      var i = 0
      while i < b.count && isHTMLWhitespace(b[i]) { i += 1 }
      return Int32(i)
    }
    return (s.prefix(k), s.dropFirst(k))
  }

  func isAllWhitespace(_ s: TextRun) -> Bool {
    doc.withTextBytes(of: s) { b in
      for c in b where !isHTMLWhitespace(c) { return false }
      return true
    }
  }

  func containsNUL(_ s: TextRun) -> Bool {
    doc.withTextBytes(of: s) { $0.contains(0) }
  }

  /// True when `s` has a character other than whitespace and NUL.
  func hasVisibleCharacter(_ s: TextRun) -> Bool {
    doc.withTextBytes(of: s) { b in b.contains { $0 != 0 && !isHTMLWhitespace($0) } }
  }

  /// `s` without its NUL characters (a new run).
  func removingNUL(_ s: TextRun) -> TextRun {
    doc.filteredText(s, replacingNUL: nil) { $0 != 0 }
  }

  /// `s` with each NUL replaced by U+FFFD (a new run).
  func replacingNUL(_ s: TextRun) -> TextRun {
    doc.filteredText(s, replacingNUL: [0xEF, 0xBF, 0xBD]) { _ in true }
  }

  /// The whitespace characters of `s` (a new run).
  func onlyWhitespace(_ s: TextRun) -> TextRun {
    doc.filteredText(s, replacingNUL: nil) { isHTMLWhitespace($0) }
  }

  /// The runs of `runs` one after the other: the same bytes when they are
  /// adjacent in `textBytes` (the usual case), else a copy.
  func concatenated(_ runs: [TextRun]) -> TextRun {
    guard var whole = runs.first else { return .empty }
    var adjacent = true
    for r in runs.dropFirst() {
      if whole.start + whole.count != r.start { adjacent = false; break }
      whole.count += r.count
    }
    if adjacent { return whole }
    let start = Int32(doc.textBytes.count)
    var count: Int32 = 0
    for r in runs {
      _ = doc.copyText(r)
      count += r.count
    }
    return TextRun(start: start, count: count)
  }
}
