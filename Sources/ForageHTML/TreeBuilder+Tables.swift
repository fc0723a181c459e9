/// The table and select insertion modes.
extension TreeBuilder {
  func clearStackBackToTableContext() {
    while !(current.isHTML(T.table) || current.isHTML(T.template) || current.isHTML(T.html)) { pop() }
  }

  func clearStackBackToTableBodyContext() {
    while !(current.isHTML(in: T.tableSections) || current.isHTML(T.template) || current.isHTML(T.html)) { pop() }
  }

  func clearStackBackToTableRowContext() {
    while !(current.isHTML(T.tr) || current.isHTML(T.template) || current.isHTML(T.html)) { pop() }
  }

  // MARK: § in table

  /// https://html.spec.whatwg.org/#parsing-main-intable
  func inTableMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars:
      let c = current
      if c.ns == .html && (c.code == T.table || c.code == T.tbody || c.code == T.template || c.code == T.tfoot || c.code == T.thead || c.code == T.tr) {
        pendingTableText.removeAll()
        pendingTableTextHasNonWhitespace = false
        originalMode = mode
        mode = .inTableText
        return token
      }
      return inTableAnythingElse(token)
    case .comment(let s): insertComment(s); return nil
    case .doctype: error("unexpected-doctype"); return nil
    case .start(let t):
      switch t.code {
      case T.caption:
        clearStackBackToTableContext()
        formatting.append(.marker)
        insertElement(t)
        mode = .inCaption
      case T.colgroup:
        clearStackBackToTableContext()
        insertElement(t)
        mode = .inColumnGroup
      case T.col:
        clearStackBackToTableContext()
        insertSynthetic(T.colgroup)
        mode = .inColumnGroup
        return token
      case T.tbody, T.tfoot, T.thead:
        clearStackBackToTableContext()
        insertElement(t)
        mode = .inTableBody
      case T.td, T.th, T.tr:
        clearStackBackToTableContext()
        insertSynthetic(T.tbody)
        mode = .inTableBody
        return token
      case T.table:
        error("unexpected-start-tag")
        if !inScope(T.table, .table) { return nil }
        popUntil(T.table)
        resetInsertionMode()
        return token
      case T.style, T.script, T.template:
        return inHeadMode(token)
      case T.input:
        if !isHiddenInput(t) { return inTableAnythingElse(token) }
        error("unexpected-start-tag")
        insertElement(t)
        pop()
      case T.form:
        error("unexpected-start-tag")
        if hasOnStack(T.template) || formElement >= 0 { return nil }
        formElement = insertElement(t)
        pop()
      default:
        return inTableAnythingElse(token)
      }
      return nil
    case .end(let t):
      switch t.code {
      case T.table:
        if !inScope(T.table, .table) { error("unexpected-end-tag"); return nil }
        popUntil(T.table)
        resetInsertionMode()
      case T.body, T.caption, T.col, T.colgroup, T.html, T.tbody, T.td, T.tfoot, T.th, T.thead, T.tr:
        error("unexpected-end-tag")
      case T.template:
        return inHeadMode(token)
      default:
        return inTableAnythingElse(token)
      }
      return nil
    case .eof:
      return inBodyMode(token)
    }
  }

  func inTableAnythingElse(_ token: BuilderToken) -> BuilderToken? {
    error("unexpected-token-in-table")
    fosterParenting = true
    let r = inBodyMode(token)
    fosterParenting = false
    return r
  }

  // MARK: § in table text

  /// https://html.spec.whatwg.org/#parsing-main-intabletext
  func inTableTextMode(_ token: BuilderToken) -> BuilderToken? {
    if case .chars(var s) = token {
      if charsMayHaveNUL && containsNUL(s) {
        error("unexpected-null-character")
        s = removingNUL(s)
      }
      if !s.isEmpty {
        if !pendingTableTextHasNonWhitespace && !isAllWhitespace(s) { pendingTableTextHasNonWhitespace = true }
        pendingTableText.append(s)
      }
      return nil
    }
    let text = concatenated(pendingTableText)
    pendingTableText.removeAll()
    if pendingTableTextHasNonWhitespace {
      _ = inTableAnythingElse(.chars(text))
    } else {
      insertCharacters(text)
    }
    mode = originalMode
    return token
  }

  // MARK: § in caption

  /// https://html.spec.whatwg.org/#parsing-main-incaption
  func inCaptionMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .end(let t) where t.code == T.caption:
      _ = closeCaption()
      return nil
    case .start(let t) where [T.caption, T.col, T.colgroup, T.tbody, T.td, T.tfoot, T.th, T.thead, T.tr].contains(t.code):
      return closeCaption() ? token : nil
    case .end(let t) where t.code == T.table:
      return closeCaption() ? token : nil
    case .end(let t) where [T.body, T.col, T.colgroup, T.html, T.tbody, T.td, T.tfoot, T.th, T.thead, T.tr].contains(t.code):
      error("unexpected-end-tag")
      return nil
    default:
      return inBodyMode(token)
    }
  }

  /// Closes the caption; false when there is none in table scope.
  func closeCaption() -> Bool {
    if !inScope(T.caption, .table) { error("unexpected-token-in-caption"); return false }
    generateImpliedEndTags()
    if !current.isHTML(T.caption) { error("unexpected-token-in-caption") }
    popUntil(T.caption)
    clearFormattingToMarker()
    mode = .inTable
    return true
  }

  // MARK: § in column group

  /// https://html.spec.whatwg.org/#parsing-main-incolgroup
  func inColumnGroupMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars(let s):
      let (ws, rest) = splitLeadingWhitespace(s)
      insertCharacters(ws)
      if rest.isEmpty { return nil }
      return inColumnGroupAnythingElse(.chars(rest))
    case .comment(let s): insertComment(s); return nil
    case .doctype: error("unexpected-doctype"); return nil
    case .start(let t) where t.code == T.html: return inBodyMode(token)
    case .start(let t) where t.code == T.col:
      insertElement(t)
      pop()
      return nil
    case .end(let t) where t.code == T.colgroup:
      if !current.isHTML(T.colgroup) { error("unexpected-end-tag"); return nil }
      pop()
      mode = .inTable
      return nil
    case .end(let t) where t.code == T.col:
      error("unexpected-end-tag")
      return nil
    case .start(let t) where t.code == T.template: return inHeadMode(token)
    case .end(let t) where t.code == T.template: return inHeadMode(token)
    case .eof: return inBodyMode(token)
    default: return inColumnGroupAnythingElse(token)
    }
  }

  func inColumnGroupAnythingElse(_ token: BuilderToken) -> BuilderToken? {
    if !current.isHTML(T.colgroup) { error("unexpected-token-in-colgroup"); return nil }
    pop()
    mode = .inTable
    return token
  }

  // MARK: § in table body

  /// https://html.spec.whatwg.org/#parsing-main-intbody
  func inTableBodyMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .start(let t) where t.code == T.tr:
      clearStackBackToTableBodyContext()
      insertElement(t)
      mode = .inRow
      return nil
    case .start(let t) where t.code == T.th || t.code == T.td:
      error("unexpected-start-tag")
      clearStackBackToTableBodyContext()
      insertSynthetic(T.tr)
      mode = .inRow
      return token
    case .end(let t) where T.tableSections.contains(t.code):
      if !inScope(t.code, .table) { error("unexpected-end-tag"); return nil }
      clearStackBackToTableBodyContext()
      pop()
      mode = .inTable
      return nil
    case .start(let t) where [T.caption, T.col, T.colgroup, T.tbody, T.tfoot, T.thead].contains(t.code):
      return leaveTableBody(token)
    case .end(let t) where t.code == T.table:
      return leaveTableBody(token)
    case .end(let t) where [T.body, T.caption, T.col, T.colgroup, T.html, T.td, T.th, T.tr].contains(t.code):
      error("unexpected-end-tag")
      return nil
    default:
      return inTableMode(token)
    }
  }

  func leaveTableBody(_ token: BuilderToken) -> BuilderToken? {
    if !inScope(in: T.tableSections, .table) { error("unexpected-token-in-table-body"); return nil }
    clearStackBackToTableBodyContext()
    pop()
    mode = .inTable
    return token
  }

  // MARK: § in row

  /// https://html.spec.whatwg.org/#parsing-main-intr
  func inRowMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .start(let t) where t.code == T.th || t.code == T.td:
      clearStackBackToTableRowContext()
      insertElement(t)
      mode = .inCell
      formatting.append(.marker)
      return nil
    case .end(let t) where t.code == T.tr:
      _ = closeRow()
      return nil
    case .start(let t) where [T.caption, T.col, T.colgroup, T.tbody, T.tfoot, T.thead, T.tr].contains(t.code):
      return closeRow() ? token : nil
    case .end(let t) where t.code == T.table:
      return closeRow() ? token : nil
    case .end(let t) where T.tableSections.contains(t.code):
      if !inScope(t.code, .table) { error("unexpected-end-tag"); return nil }
      if !inScope(T.tr, .table) { return nil }
      _ = closeRow()
      return token
    case .end(let t) where [T.body, T.caption, T.col, T.colgroup, T.html, T.td, T.th].contains(t.code):
      error("unexpected-end-tag")
      return nil
    default:
      return inTableMode(token)
    }
  }

  func closeRow() -> Bool {
    if !inScope(T.tr, .table) { error("unexpected-token-in-row"); return false }
    clearStackBackToTableRowContext()
    pop()
    mode = .inTableBody
    return true
  }

  // MARK: § in cell

  /// https://html.spec.whatwg.org/#parsing-main-intd
  func inCellMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .end(let t) where t.code == T.td || t.code == T.th:
      if !inScope(t.code, .table) { error("unexpected-end-tag"); return nil }
      generateImpliedEndTags()
      if !current.isHTML(t.code) { error("unexpected-end-tag") }
      popUntil(t.code)
      clearFormattingToMarker()
      mode = .inRow
      return nil
    case .start(let t) where [T.caption, T.col, T.colgroup, T.tbody, T.td, T.tfoot, T.th, T.thead, T.tr].contains(t.code):
      if !inScope(in: T.cells, .table) { error("unexpected-start-tag"); return nil }
      closeCell()
      return token
    case .end(let t) where [T.body, T.caption, T.col, T.colgroup, T.html].contains(t.code):
      error("unexpected-end-tag")
      return nil
    case .end(let t) where [T.table, T.tbody, T.tfoot, T.thead, T.tr].contains(t.code):
      if !inScope(t.code, .table) { error("unexpected-end-tag"); return nil }
      closeCell()
      return token
    default:
      return inBodyMode(token)
    }
  }

  /// https://html.spec.whatwg.org/#close-the-cell
  func closeCell() {
    generateImpliedEndTags()
    if !current.isHTML(in: T.cells) { error("unexpected-cell-end") }
    popUntil(in: T.cells)
    clearFormattingToMarker()
    mode = .inRow
  }
}
