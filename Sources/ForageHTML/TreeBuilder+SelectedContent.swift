/// Customizable `<select>`: mirroring the selected `<option>` into the
/// select's `<selectedcontent>` element as the parser pops options.
extension TreeBuilder {
  /// Runs "maybe clone an option into selectedcontent" for an option popped
  /// off the stack of open elements.
  ///
  /// The option's selectedness follows the select's selectedness setting
  /// for a single-choice select: the last option with a `selected`
  /// attribute, else the first option, in tree order.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#maybe-clone-an-option-into-selectedcontent>
  func maybeCloneOptionIntoSelectedContent(_ option: Int32) {
    let optionID = NodeID(raw: option)
    var select: NodeID? = doc.parent(optionID)
    while let s = select, !(doc.kind(s) == .element && doc.namespace(s) == .html && doc.nameCode(s) == T.select) {
      select = doc.parent(s)
    }
    guard let select, doc.attribute(select, "multiple") == nil else { return }
    var selectedContent: NodeID? = nil
    var first: NodeID? = nil
    var lastSelected: NodeID? = nil
    var n = doc.following(select, within: select)
    while let c = n {
      if doc.kind(c) == .element && doc.namespace(c) == .html {
        let code = doc.nameCode(c)
        if code == T.selectedcontent && selectedContent == nil { selectedContent = c }
        if code == T.option {
          if first == nil { first = c }
          if doc.attribute(c, "selected") != nil { lastSelected = c }
        }
      }
      n = doc.following(c, within: select)
    }
    guard let target = selectedContent, (lastSelected ?? first) == optionID else { return }
    // Clone first, then replace: the selectedcontent may sit inside the
    // option itself, and cloning straight into it would copy the copies
    // without end. Deep clone without recursion: each pending pair is
    // (source node, parent of its clone, nil for a top-level clone); clones
    // stay detached from the document until the replacement.
    var clones: [NodeID] = []
    var pending: [(NodeID, NodeID?)] = doc.children(optionID).reversed().map { ($0, nil) }
    while let (source, parent) = pending.popLast() {
      let copy: NodeID
      switch doc.kind(source) {
      case .element:
        copy = NodeID(raw: doc.createElement(code: doc.nameCode(source), namespace: doc.namespace(source),
                                             attributes: doc.attributes(source)))
        for c in doc.children(source).reversed() { pending.append((c, copy)) }
      case .text: copy = NodeID(raw: doc.createText(run: doc.nodes[Int(source.raw)].textRun))
      case .comment: copy = doc.createComment(doc.data(source))
      default: continue
      }
      if let parent { doc.append(copy, to: parent) } else { clones.append(copy) }
    }
    while let child = doc.firstChild(target) { doc.remove(child) }
    for copy in clones { doc.append(copy, to: target) }
  }
}
