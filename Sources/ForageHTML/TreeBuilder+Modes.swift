/// The insertion modes around the body: before it, in the head, text, after
/// the body, framesets and templates.
extension TreeBuilder {
  // MARK: § initial

  /// https://html.spec.whatwg.org/#the-initial-insertion-mode
  func initialMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars(let s):
      let (_, rest) = splitLeadingWhitespace(s)
      if rest.isEmpty { return nil }
      return initialAnythingElse(.chars(rest))
    case .comment(let s):
      insertComment(s, at: InsertionLocation(parent: 0, before: -1))
      return nil
    case .doctype(let i):
      let d = doc.doctypes[Int(i)]
      if d.name != "html" || d.publicIdentifier != nil || (d.systemIdentifier != nil && d.systemIdentifier != "about:legacy-compat") {
        error("bad-doctype")
      }
      let n = doc.createDoctype(index: i)
      doc.append(n, to: doc.rootID)
      doc.quirksMode = Self.quirksMode(for: d)
      mode = .beforeHTML
      return nil
    default:
      return initialAnythingElse(token)
    }
  }

  func initialAnythingElse(_ token: BuilderToken) -> BuilderToken? {
    error("missing-doctype")
    doc.quirksMode = .quirks
    mode = .beforeHTML
    return token
  }

  static let quirkyPublicPrefixes: [String] = [
    "+//silmaril//dtd html pro v0r11 19970101//", "-//as//dtd html 3.0 aswedit + extensions//",
    "-//advasoft ltd//dtd html 3.0 aswedit + extensions//", "-//ietf//dtd html 2.0 level 1//",
    "-//ietf//dtd html 2.0 level 2//", "-//ietf//dtd html 2.0 strict level 1//",
    "-//ietf//dtd html 2.0 strict level 2//", "-//ietf//dtd html 2.0 strict//", "-//ietf//dtd html 2.0//",
    "-//ietf//dtd html 2.1e//", "-//ietf//dtd html 3.0//", "-//ietf//dtd html 3.2 final//",
    "-//ietf//dtd html 3.2//", "-//ietf//dtd html 3//", "-//ietf//dtd html level 0//",
    "-//ietf//dtd html level 1//", "-//ietf//dtd html level 2//", "-//ietf//dtd html level 3//",
    "-//ietf//dtd html strict level 0//", "-//ietf//dtd html strict level 1//",
    "-//ietf//dtd html strict level 2//", "-//ietf//dtd html strict level 3//", "-//ietf//dtd html strict//",
    "-//ietf//dtd html//", "-//metrius//dtd metrius presentational//",
    "-//microsoft//dtd internet explorer 2.0 html strict//", "-//microsoft//dtd internet explorer 2.0 html//",
    "-//microsoft//dtd internet explorer 2.0 tables//", "-//microsoft//dtd internet explorer 3.0 html strict//",
    "-//microsoft//dtd internet explorer 3.0 html//", "-//microsoft//dtd internet explorer 3.0 tables//",
    "-//netscape comm. corp.//dtd html//", "-//netscape comm. corp.//dtd strict html//",
    "-//o'reilly and associates//dtd html 2.0//", "-//o'reilly and associates//dtd html extended 1.0//",
    "-//o'reilly and associates//dtd html extended relaxed 1.0//",
    "-//sq//dtd html 2.0 hotmetal + extensions//",
    "-//softquad software//dtd hotmetal pro 6.0::19990601::extensions to html 4.0//",
    "-//softquad//dtd hotmetal pro 4.0::19971010::extensions to html 4.0//",
    "-//spyglass//dtd html 2.0 extended//", "-//sun microsystems corp.//dtd hotjava html//",
    "-//sun microsystems corp.//dtd hotjava strict html//", "-//w3c//dtd html 3 1995-03-24//",
    "-//w3c//dtd html 3.2 draft//", "-//w3c//dtd html 3.2 final//", "-//w3c//dtd html 3.2//",
    "-//w3c//dtd html 3.2s draft//", "-//w3c//dtd html 4.0 frameset//", "-//w3c//dtd html 4.0 transitional//",
    "-//w3c//dtd html experimental 19960712//", "-//w3c//dtd html experimental 970421//",
    "-//w3c//dtd w3 html//", "-//w3o//dtd w3 html 3.0//", "-//webtechs//dtd mozilla html 2.0//",
    "-//webtechs//dtd mozilla html//",
  ]

  /// https://html.spec.whatwg.org/#the-initial-insertion-mode (quirks tables)
  static func quirksMode(for d: Doctype) -> QuirksMode {
    if d.forceQuirks || d.name != "html" { return .quirks }
    let pub = d.publicIdentifier?.lowercased()
    let sys = d.systemIdentifier?.lowercased()
    if let pub {
      if pub == "-//w3o//dtd w3 html strict 3.0//en//" || pub == "-/w3c/dtd html 4.0 transitional/en" || pub == "html" { return .quirks }
      for p in quirkyPublicPrefixes where pub.hasPrefix(p) { return .quirks }
      if sys == nil && (pub.hasPrefix("-//w3c//dtd html 4.01 frameset//") || pub.hasPrefix("-//w3c//dtd html 4.01 transitional//")) { return .quirks }
      if pub.hasPrefix("-//w3c//dtd xhtml 1.0 frameset//") || pub.hasPrefix("-//w3c//dtd xhtml 1.0 transitional//") { return .limitedQuirks }
      if sys != nil && (pub.hasPrefix("-//w3c//dtd html 4.01 frameset//") || pub.hasPrefix("-//w3c//dtd html 4.01 transitional//")) { return .limitedQuirks }
    }
    if sys == "http://www.ibm.com/data/dtd/v11/ibmxhtml1-transitional.dtd" { return .quirks }
    return .noQuirks
  }

  // MARK: § before html

  /// https://html.spec.whatwg.org/#the-before-html-insertion-mode
  func beforeHTMLMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .doctype: error("unexpected-doctype"); return nil
    case .comment(let s): insertComment(s, at: InsertionLocation(parent: 0, before: -1)); return nil
    case .chars(let s):
      let (_, rest) = splitLeadingWhitespace(s)
      if rest.isEmpty { return nil }
      return beforeHTMLAnythingElse(.chars(rest))
    case .start(let t) where t.code == T.html:
      let n = createElement(t, .html)
      doc.append(NodeID(raw: n), to: doc.rootID)
      push(OpenElement(node: n, code: T.html, ns: .html))
      mode = .beforeHead
      return nil
    case .end(let t) where !(t.code == T.head || t.code == T.body || t.code == T.html || t.code == T.br):
      error("unexpected-end-tag")
      return nil
    default:
      return beforeHTMLAnythingElse(token)
    }
  }

  func beforeHTMLAnythingElse(_ token: BuilderToken) -> BuilderToken? {
    let n = doc.createElement(code: T.html, namespace: .html, attributes: [])
    doc.append(NodeID(raw: n), to: doc.rootID)
    push(OpenElement(node: n, code: T.html, ns: .html))
    mode = .beforeHead
    return token
  }

  // MARK: § before head

  /// https://html.spec.whatwg.org/#the-before-head-insertion-mode
  func beforeHeadMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars(let s):
      let (_, rest) = splitLeadingWhitespace(s)
      if rest.isEmpty { return nil }
      headElement = insertSynthetic(T.head)
      mode = .inHead
      return .chars(rest)
    case .comment(let s): insertComment(s); return nil
    case .doctype: error("unexpected-doctype"); return nil
    case .start(let t) where t.code == T.html: return inBodyMode(token)
    case .start(let t) where t.code == T.head:
      headElement = insertElement(t)
      mode = .inHead
      return nil
    case .end(let t) where !(t.code == T.head || t.code == T.body || t.code == T.html || t.code == T.br):
      error("unexpected-end-tag")
      return nil
    default:
      headElement = insertSynthetic(T.head)
      mode = .inHead
      return token
    }
  }

  // MARK: § in head

  /// https://html.spec.whatwg.org/#parsing-main-inhead
  func inHeadMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars(let s):
      let (ws, rest) = splitLeadingWhitespace(s)
      insertCharacters(ws)
      if rest.isEmpty { return nil }
      return inHeadAnythingElse(.chars(rest))
    case .comment(let s): insertComment(s); return nil
    case .doctype: error("unexpected-doctype"); return nil
    case .start(let t):
      switch t.code {
      case T.html: return inBodyMode(token)
      case T.base, T.basefont, T.bgsound, T.link, T.meta:
        insertElement(t)
        pop()
        return nil
      case T.title: genericText(t, rcdata: true); return nil
      case T.noscript where scripting: genericText(t, rcdata: false); return nil
      case T.noframes, T.style: genericText(t, rcdata: false); return nil
      case T.noscript:
        insertElement(t)
        mode = .inHeadNoscript
        return nil
      case T.script:
        insertElement(t)
        tokenizer.state = .scriptData
        originalMode = mode
        mode = .text
        return nil
      case T.template:
        insertElement(t)
        formatting.append(.marker)
        framesetOK = false
        mode = .inTemplate
        templateModes.append(.inTemplate)
        return nil
      case T.head:
        error("unexpected-start-tag")
        return nil
      default:
        return inHeadAnythingElse(token)
      }
    case .end(let t):
      switch t.code {
      case T.head:
        pop()
        mode = .afterHead
        return nil
      case T.body, T.html, T.br:
        return inHeadAnythingElse(token)
      case T.template:
        if !hasOnStack(T.template) { error("unexpected-end-tag"); return nil }
        generateImpliedEndTagsThoroughly()
        if !current.isHTML(T.template) { error("unexpected-end-tag") }
        popUntil(T.template)
        clearFormattingToMarker()
        templateModes.removeLast()
        resetInsertionMode()
        return nil
      default:
        error("unexpected-end-tag")
        return nil
      }
    case .eof:
      return inHeadAnythingElse(token)
    }
  }

  func inHeadAnythingElse(_ token: BuilderToken) -> BuilderToken? {
    pop()
    mode = .afterHead
    return token
  }

  // MARK: § in head noscript

  /// https://html.spec.whatwg.org/#parsing-main-inheadnoscript
  func inHeadNoscriptMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .doctype: error("unexpected-doctype"); return nil
    case .start(let t) where t.code == T.html: return inBodyMode(token)
    case .end(let t) where t.code == T.noscript:
      pop()
      mode = .inHead
      return nil
    case .chars(let s):
      let (ws, rest) = splitLeadingWhitespace(s)
      if !ws.isEmpty { _ = inHeadMode(.chars(ws)) }
      if rest.isEmpty { return nil }
      return inHeadNoscriptAnythingElse(.chars(rest))
    case .comment: return inHeadMode(token)
    case .start(let t) where t.code == T.basefont || t.code == T.bgsound || t.code == T.link
      || t.code == T.meta || t.code == T.noframes || t.code == T.style:
      return inHeadMode(token)
    case .start(let t) where t.code == T.head || t.code == T.noscript:
      error("unexpected-start-tag")
      return nil
    case .end(let t) where t.code != T.br:
      error("unexpected-end-tag")
      return nil
    default:
      return inHeadNoscriptAnythingElse(token)
    }
  }

  func inHeadNoscriptAnythingElse(_ token: BuilderToken) -> BuilderToken? {
    error("unexpected-token-in-head-noscript")
    pop()
    mode = .inHead
    return token
  }

  // MARK: § after head

  /// https://html.spec.whatwg.org/#the-after-head-insertion-mode
  func afterHeadMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars(let s):
      let (ws, rest) = splitLeadingWhitespace(s)
      insertCharacters(ws)
      if rest.isEmpty { return nil }
      return afterHeadAnythingElse(.chars(rest))
    case .comment(let s): insertComment(s); return nil
    case .doctype: error("unexpected-doctype"); return nil
    case .start(let t):
      switch t.code {
      case T.html: return inBodyMode(token)
      case T.body:
        insertElement(t)
        framesetOK = false
        mode = .inBody
        return nil
      case T.frameset:
        insertElement(t)
        mode = .inFrameset
        return nil
      case T.base, T.basefont, T.bgsound, T.link, T.meta, T.noframes, T.script, T.style, T.template, T.title:
        error("unexpected-start-tag")
        let head = headElement
        push(entry(head))
        let r = inHeadMode(token)
        removeFromStack(head)
        return r
      case T.head:
        error("unexpected-start-tag")
        return nil
      default:
        return afterHeadAnythingElse(token)
      }
    case .end(let t):
      switch t.code {
      case T.template: return inHeadMode(token)
      case T.body, T.html, T.br: return afterHeadAnythingElse(token)
      default:
        error("unexpected-end-tag")
        return nil
      }
    case .eof:
      return afterHeadAnythingElse(token)
    }
  }

  func afterHeadAnythingElse(_ token: BuilderToken) -> BuilderToken? {
    insertSynthetic(T.body)
    mode = .inBody
    return token
  }

  // MARK: § text

  /// https://html.spec.whatwg.org/#parsing-main-incdata
  func textMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars(let s):
      insertCharacters(s)
      return nil
    case .eof:
      error("eof-in-text")
      pop()
      mode = originalMode
      return token
    case .end:
      pop()
      mode = originalMode
      return nil
    default:
      return nil
    }
  }

  // MARK: § in template

  /// https://html.spec.whatwg.org/#parsing-main-intemplate
  func inTemplateMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars, .comment, .doctype:
      return inBodyMode(token)
    case .start(let t):
      let next: InsertionMode
      switch t.code {
      case T.base, T.basefont, T.bgsound, T.link, T.meta, T.noframes, T.script, T.style, T.template, T.title:
        return inHeadMode(token)
      case T.caption, T.colgroup, T.tbody, T.tfoot, T.thead: next = .inTable
      case T.col: next = .inColumnGroup
      case T.tr: next = .inTableBody
      case T.td, T.th: next = .inRow
      default: next = .inBody
      }
      templateModes.removeLast()
      templateModes.append(next)
      mode = next
      return token
    case .end(let t):
      if t.code == T.template { return inHeadMode(token) }
      error("unexpected-end-tag")
      return nil
    case .eof:
      if !hasOnStack(T.template) { return nil }
      error("eof-in-template")
      popUntil(T.template)
      clearFormattingToMarker()
      templateModes.removeLast()
      resetInsertionMode()
      return token
    }
  }

  // MARK: § after body

  /// https://html.spec.whatwg.org/#parsing-main-afterbody
  func afterBodyMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars(let s):
      let (ws, rest) = splitLeadingWhitespace(s)
      if !ws.isEmpty { _ = inBodyMode(.chars(ws)) }
      if rest.isEmpty { return nil }
      error("unexpected-characters-after-body")
      mode = .inBody
      return .chars(rest)
    case .comment(let s):
      insertComment(s, at: InsertionLocation(parent: stack[0].node, before: -1))
      return nil
    case .doctype: error("unexpected-doctype"); return nil
    case .start(let t) where t.code == T.html: return inBodyMode(token)
    case .end(let t) where t.code == T.html:
      if context != nil { error("unexpected-end-tag"); return nil }
      mode = .afterAfterBody
      return nil
    case .eof: return nil
    default:
      error("unexpected-token-after-body")
      mode = .inBody
      return token
    }
  }

  // MARK: § in frameset

  /// https://html.spec.whatwg.org/#parsing-main-inframeset
  func inFramesetMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars(let s):
      let ws = onlyWhitespace(s)
      if ws.count != s.count { error("unexpected-characters-in-frameset") }
      insertCharacters(ws)
      return nil
    case .comment(let s): insertComment(s); return nil
    case .doctype: error("unexpected-doctype"); return nil
    case .start(let t):
      switch t.code {
      case T.html: return inBodyMode(token)
      case T.frameset: insertElement(t); return nil
      case T.frame: insertElement(t); pop(); return nil
      case T.noframes: return inHeadMode(token)
      default: error("unexpected-start-tag"); return nil
      }
    case .end(let t) where t.code == T.frameset:
      if stack.count == 1 && current.isHTML(T.html) { error("unexpected-end-tag"); return nil }
      pop()
      if context == nil && !current.isHTML(T.frameset) { mode = .afterFrameset }
      return nil
    case .eof:
      if stack.count > 1 { error("eof-in-frameset") }
      return nil
    default:
      error("unexpected-token-in-frameset")
      return nil
    }
  }

  // MARK: § after frameset

  /// https://html.spec.whatwg.org/#parsing-main-afterframeset
  func afterFramesetMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars(let s):
      let ws = onlyWhitespace(s)
      if ws.count != s.count { error("unexpected-characters-after-frameset") }
      insertCharacters(ws)
      return nil
    case .comment(let s): insertComment(s); return nil
    case .doctype: error("unexpected-doctype"); return nil
    case .start(let t) where t.code == T.html: return inBodyMode(token)
    case .end(let t) where t.code == T.html: mode = .afterAfterFrameset; return nil
    case .start(let t) where t.code == T.noframes: return inHeadMode(token)
    case .eof: return nil
    default: error("unexpected-token-after-frameset"); return nil
    }
  }

  // MARK: § after after body

  /// https://html.spec.whatwg.org/#the-after-after-body-insertion-mode
  func afterAfterBodyMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .comment(let s):
      insertComment(s, at: InsertionLocation(parent: 0, before: -1))
      return nil
    case .doctype: return inBodyMode(token)
    case .chars(let s):
      let (ws, rest) = splitLeadingWhitespace(s)
      if !ws.isEmpty { _ = inBodyMode(.chars(ws)) }
      if rest.isEmpty { return nil }
      error("unexpected-characters-after-body")
      mode = .inBody
      return .chars(rest)
    case .start(let t) where t.code == T.html: return inBodyMode(token)
    case .eof: return nil
    default:
      error("unexpected-token-after-body")
      mode = .inBody
      return token
    }
  }

  // MARK: § after after frameset

  /// https://html.spec.whatwg.org/#the-after-after-frameset-insertion-mode
  func afterAfterFramesetMode(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .comment(let s):
      insertComment(s, at: InsertionLocation(parent: 0, before: -1))
      return nil
    case .doctype: return inBodyMode(token)
    case .chars(let s):
      let ws = onlyWhitespace(s)
      if !ws.isEmpty { _ = inBodyMode(.chars(ws)) }
      if ws.count != s.count { error("unexpected-characters-after-frameset") }
      return nil
    case .start(let t) where t.code == T.html: return inBodyMode(token)
    case .start(let t) where t.code == T.noframes: return inHeadMode(token)
    case .eof: return nil
    default: error("unexpected-token-after-frameset"); return nil
    }
  }
}
