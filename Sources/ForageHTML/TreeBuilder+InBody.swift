/// § in body: the mode that handles almost all of a page.
extension TreeBuilder {
  /// https://html.spec.whatwg.org/#parsing-main-inbody
  func inBodyMode(_ token: BuilderToken) -> BuilderToken? { inBodyRules(token) }

  /// The rules of `inBodyMode`, inlined into the tree builder's main loop
  /// (its usual caller) to save a call per token; other modes call
  /// `inBodyMode`.
  @inline(__always)
  func inBodyRules(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars(var s):
      if charsMayHaveNUL && containsNUL(s) {
        error("unexpected-null-character")
        s = removingNUL(s)
        if s.isEmpty { return nil }
      }
      reconstructFormatting()
      insertCharacters(s)
      if framesetOK && !isAllWhitespace(s) { framesetOK = false }
      return nil
    case .comment(let s):
      insertComment(s)
      return nil
    case .doctype:
      error("unexpected-doctype")
      return nil
    case .start(let t):
      return inBodyStartTag(t, token)
    case .end(let t):
      return inBodyEndTag(t, token)
    case .eof:
      if !templateModes.isEmpty { return inTemplateMode(token) }
      for e in stack where !e.isHTML(in: T.bodyEndOK) { error("eof-with-open-elements"); break }
      return nil
    }
  }

  func inBodyStartTag(_ t: TagToken, _ token: BuilderToken) -> BuilderToken? {
    if t.code >= T.knownCount {
      reconstructFormatting()
      insertElement(t)
      return nil
    }
    switch t.code {
    case T.html:
      error("unexpected-start-tag")
      if hasOnStack(T.template) { return nil }
      doc.addMissingAttributes(NodeID(raw: stack[0].node), stored: Array(doc.attributes(in: t.attributes)))
    case T.base, T.basefont, T.bgsound, T.link, T.meta, T.noframes, T.script, T.style, T.template, T.title:
      return inHeadMode(token)
    case T.body:
      error("unexpected-start-tag")
      if stack.count < 2 || !stack[1].isHTML(T.body) || hasOnStack(T.template) { return nil }
      framesetOK = false
      doc.addMissingAttributes(NodeID(raw: stack[1].node), stored: Array(doc.attributes(in: t.attributes)))
    case T.frameset:
      error("unexpected-start-tag")
      if stack.count < 2 || !stack[1].isHTML(T.body) || !framesetOK { return nil }
      doc.remove(NodeID(raw: stack[1].node))
      truncateStack(to: 1)
      insertElement(t)
      mode = .inFrameset
    case T.address, T.article, T.aside, T.blockquote, T.center, T.details, T.dialog, T.dir, T.div,
         T.dl, T.fieldset, T.figcaption, T.figure, T.footer, T.header, T.hgroup, T.main, T.menu,
         T.nav, T.ol, T.p, T.search, T.section, T.summary, T.ul:
      closePIfInButtonScope()
      insertElement(t)
    case T.h1, T.h2, T.h3, T.h4, T.h5, T.h6:
      closePIfInButtonScope()
      if current.isHTML(in: T.headings) {
        error("unexpected-start-tag")
        pop()
      }
      insertElement(t)
    case T.pre, T.listing:
      closePIfInButtonScope()
      insertElement(t)
      ignoreNextLF = true
      framesetOK = false
    case T.form:
      let inTemplate = hasOnStack(T.template)
      if formElement >= 0 && !inTemplate { error("unexpected-start-tag"); return nil }
      closePIfInButtonScope()
      let n = insertElement(t)
      if !inTemplate { formElement = n }
    case T.li, T.dd, T.dt:
      framesetOK = false
      var i = stack.count - 1
      while i >= 0 {
        countSteps()
        let node = stack[i]
        if t.code == T.li ? node.isHTML(T.li) : (node.isHTML(T.dd) || node.isHTML(T.dt)) {
          generateImpliedEndTags(except: node.code)
          if !current.isHTML(node.code) { error("unexpected-start-tag") }
          popUntil(node.code)
          break
        }
        if Self.isSpecial(node) && !(node.isHTML(T.address) || node.isHTML(T.div) || node.isHTML(T.p)) { break }
        i -= 1
      }
      closePIfInButtonScope()
      insertElement(t)
    case T.plaintext:
      closePIfInButtonScope()
      insertElement(t)
      tokenizer.state = .plaintext
    case T.button:
      if inScope(T.button) {
        error("unexpected-start-tag")
        generateImpliedEndTags()
        popUntil(T.button)
      }
      reconstructFormatting()
      insertElement(t)
      framesetOK = false
    case T.a:
      var i = formatting.count - 1
      while i >= 0 && !formatting[i].isMarker {
        if formatting[i].code == T.a {
          error("unexpected-start-tag")
          let node = formatting[i].node
          if !adoptionAgency(t) { anyOtherEndTag(t) }
          if let k = formattingIndex(of: node) { formatting.remove(at: k) }
          removeFromStack(node)
          break
        }
        i -= 1
      }
      reconstructFormatting()
      let n = insertElement(t)
      pushFormatting(n, t)
    case T.b, T.big, T.code, T.em, T.font, T.i, T.s, T.small, T.strike, T.strong, T.tt, T.u:
      reconstructFormatting()
      let n = insertElement(t)
      pushFormatting(n, t)
    case T.nobr:
      reconstructFormatting()
      if inScope(T.nobr) {
        error("unexpected-start-tag")
        if !adoptionAgency(t) { anyOtherEndTag(t) }
        reconstructFormatting()
      }
      let n = insertElement(t)
      pushFormatting(n, t)
    case T.applet, T.marquee, T.object:
      reconstructFormatting()
      insertElement(t)
      formatting.append(.marker)
      framesetOK = false
    case T.table:
      if doc.quirksMode != .quirks { closePIfInButtonScope() }
      insertElement(t)
      framesetOK = false
      mode = .inTable
    case T.area, T.br, T.embed, T.img, T.keygen, T.wbr:
      reconstructFormatting()
      insertElement(t)
      pop()
      framesetOK = false
    case T.input:
      if let context, context.isHTML(T.select) {
        error("unexpected-start-tag")
        return nil
      }
      if inScope(T.select) {
        error("unexpected-start-tag")
        popUntil(T.select)
      }
      reconstructFormatting()
      insertElement(t)
      pop()
      if !isHiddenInput(t) { framesetOK = false }
    case T.param, T.source, T.track:
      insertElement(t)
      pop()
    case T.hr:
      closePIfInButtonScope()
      if inScope(T.select) {
        generateImpliedEndTags()
        if inScope(T.option) || inScope(T.optgroup) { error("unexpected-start-tag") }
      }
      insertElement(t)
      pop()
      framesetOK = false
    case T.image:
      error("unexpected-start-tag")
      var img = t
      img.code = T.img
      return .start(img)
    case T.textarea:
      insertElement(t)
      ignoreNextLF = true
      tokenizer.state = .rcdata
      originalMode = mode
      framesetOK = false
      mode = .text
    case T.xmp:
      closePIfInButtonScope()
      reconstructFormatting()
      framesetOK = false
      genericText(t, rcdata: false)
    case T.iframe:
      framesetOK = false
      genericText(t, rcdata: false)
    case T.noembed:
      genericText(t, rcdata: false)
    case T.noscript where scripting:
      genericText(t, rcdata: false)
    case T.select:
      // Customizable select: a nested <select> closes the open one.
      if inScope(T.select) {
        error("unexpected-start-tag")
        popUntil(T.select)
        return nil
      }
      reconstructFormatting()
      insertElement(t)
      framesetOK = false
    case T.option:
      if inScope(T.select) {
        generateImpliedEndTags(except: T.optgroup)
        if inScope(T.option) { error("unexpected-start-tag") }
      } else if current.isHTML(T.option) {
        pop()
      }
      reconstructFormatting()
      insertElement(t)
    case T.optgroup:
      if inScope(T.select) {
        generateImpliedEndTags()
        if inScope(T.option) || inScope(T.optgroup) { error("unexpected-start-tag") }
      } else if current.isHTML(T.option) {
        pop()
      }
      reconstructFormatting()
      insertElement(t)
    case T.rb, T.rtc:
      if inScope(T.ruby) {
        generateImpliedEndTags()
        if !current.isHTML(T.ruby) { error("unexpected-start-tag") }
      }
      insertElement(t)
    case T.rp, T.rt:
      if inScope(T.ruby) {
        generateImpliedEndTags(except: T.rtc)
        if !(current.isHTML(T.ruby) || current.isHTML(T.rtc)) { error("unexpected-start-tag") }
      }
      insertElement(t)
    case T.math, T.svg:
      reconstructFormatting()
      var f = t
      let ns: Namespace = t.code == T.math ? .mathml : .svg
      adjustForeignAttributes(&f, ns)
      insertElement(f, ns)
      if t.selfClosing { pop() }
    case T.caption, T.col, T.colgroup, T.frame, T.head, T.tbody, T.td, T.tfoot, T.th, T.thead, T.tr:
      error("unexpected-start-tag")
    default:
      reconstructFormatting()
      insertElement(t)
    }
    return nil
  }

  func isHiddenInput(_ t: TagToken) -> Bool {
    for a in doc.attributes(in: t.attributes) where a.name == A.type {
      return doc.value(a).lowercased() == "hidden"
    }
    return false
  }

  @inline(__always)
  func inBodyEndTag(_ t: TagToken, _ token: BuilderToken) -> BuilderToken? {
    // The usual case: the tag closes the current node. For every end tag
    // outside `T.endTagNotJustPop` the steps below then find it in scope,
    // generate no implied end tags (the current node is the one to close,
    // or not one of those), report no error and pop exactly that node.
    if let top = stack.last, top.ns == .html && top.code == t.code && !T.endTagNotJustPop.contains(t.code) {
      pop()
      return nil
    }
    switch t.code {
    case T.template:
      return inHeadMode(token)
    case T.body, T.html:
      if !inScope(T.body) { error("unexpected-end-tag"); return nil }
      for e in stack where !e.isHTML(in: T.bodyEndOK) { error("end-body-with-open-elements"); break }
      mode = .afterBody
      return t.code == T.html ? token : nil
    case T.address, T.article, T.aside, T.blockquote, T.button, T.center, T.details, T.dialog, T.dir,
         T.div, T.dl, T.fieldset, T.figcaption, T.figure, T.footer, T.header, T.hgroup, T.listing,
         T.main, T.menu, T.nav, T.ol, T.pre, T.search, T.section, T.summary, T.ul:
      if !inScope(t.code) { error("unexpected-end-tag"); return nil }
      generateImpliedEndTags()
      if !current.isHTML(t.code) { error("unexpected-end-tag") }
      popUntil(t.code)
    case T.form:
      if !hasOnStack(T.template) {
        let node = formElement
        formElement = -1
        if node < 0 || !nodeInScope(node) { error("unexpected-end-tag"); return nil }
        generateImpliedEndTags()
        if current.node != node { error("unexpected-end-tag") }
        removeFromStack(node)
      } else {
        if !inScope(T.form) { error("unexpected-end-tag"); return nil }
        generateImpliedEndTags()
        if !current.isHTML(T.form) { error("unexpected-end-tag") }
        popUntil(T.form)
      }
    case T.p:
      if !inScope(T.p, .button) {
        error("unexpected-end-tag")
        insertSynthetic(T.p)
      }
      closeP()
    case T.li:
      if !inScope(T.li, .listItem) { error("unexpected-end-tag"); return nil }
      generateImpliedEndTags(except: T.li)
      if !current.isHTML(T.li) { error("unexpected-end-tag") }
      popUntil(T.li)
    case T.dd, T.dt:
      if !inScope(t.code) { error("unexpected-end-tag"); return nil }
      generateImpliedEndTags(except: t.code)
      if !current.isHTML(t.code) { error("unexpected-end-tag") }
      popUntil(t.code)
    case T.h1, T.h2, T.h3, T.h4, T.h5, T.h6:
      if !inScope(in: T.headings) { error("unexpected-end-tag"); return nil }
      generateImpliedEndTags()
      if !current.isHTML(t.code) { error("unexpected-end-tag") }
      popUntil(in: T.headings)
    case T.a, T.b, T.big, T.code, T.em, T.font, T.i, T.nobr, T.s, T.small, T.strike, T.strong, T.tt, T.u:
      if !adoptionAgency(t) { anyOtherEndTag(t) }
    case T.applet, T.marquee, T.object:
      if !inScope(t.code) { error("unexpected-end-tag"); return nil }
      generateImpliedEndTags()
      if !current.isHTML(t.code) { error("unexpected-end-tag") }
      popUntil(t.code)
      clearFormattingToMarker()
    case T.select:
      if !inScope(T.select) { error("unexpected-end-tag"); return nil }
      popUntil(T.select)
    case T.br:
      error("unexpected-end-tag")
      return .start(TagToken(code: T.br, attributes: .empty, selfClosing: false))
    default:
      anyOtherEndTag(t)
    }
    return nil
  }

  /// The "any other end tag" steps of § in body.
  func anyOtherEndTag(_ t: TagToken) {
    // With no such element open, the loop below could only end at a special
    // element or the bottom, ignoring the token either way.
    guard isOpen(t.code) else { error("unexpected-end-tag"); return }
    var i = stack.count - 1
    while i >= 0 {
      countSteps()
      let node = stack[i]
      if node.isHTML(t.code) {
        generateImpliedEndTags(except: t.code)
        if current.node != node.node { error("unexpected-end-tag") }
        while stack.count > i { pop() }
        return
      }
      if Self.isSpecial(node) {
        error("unexpected-end-tag")
        return
      }
      i -= 1
    }
  }
}
