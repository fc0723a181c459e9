/// The state machine: each call of `step()` runs states until one queues
/// a token.
///
/// - SeeAlso: <https://html.spec.whatwg.org/#tokenization>
extension Tokenizer {
  static let lt = UInt8(ascii: "<"), gt = UInt8(ascii: ">"), amp = UInt8(ascii: "&")
  static let slash = UInt8(ascii: "/"), bang = UInt8(ascii: "!"), dash = UInt8(ascii: "-")
  static let dq = UInt8(ascii: "\""), sq = UInt8(ascii: "'"), eq = UInt8(ascii: "=")

  func step() {
    // Character data of this step starts at the end of the text buffer
    // (the tree builder may have written it since the last step).
    textStart = document.textBytes.count
    // One call runs through several states (tag open, tag name, attribute
    // states…), so a tag costs one call, not one per state.
    repeat { runState() } while pending.isEmpty
  }

  /// Runs the current state until it changes state or queues a token.
  @inline(__always)
  func runState() {
    switch state {
    case .data: dataState()
    case .rcdata: textState(rcdata: true, lessThan: .rcdataLessThanSign)
    case .rawtext: textState(rcdata: false, lessThan: .rawtextLessThanSign)
    case .scriptData: textState(rcdata: false, lessThan: .scriptDataLessThanSign)
    case .plaintext: plaintextState()

    case .tagOpen:
      // https://html.spec.whatwg.org/#tag-open-state
      guard pos < end else { error("eof-before-tag-name"); emitChar(Self.lt); emitEOF(); return }
      let c = base[pos]
      if c == Self.bang { pos += 1; state = .markupDeclarationOpen }
      else if c == Self.slash { pos += 1; state = .endTagOpen }
      else if isAlpha(c) { startTag(end: false); state = .tagName }
      else if c == UInt8(ascii: "?") {
        error("unexpected-question-mark-instead-of-tag-name")
        commentData.removeAll(keepingCapacity: true)
        state = .bogusComment
      } else {
        error("invalid-first-character-of-tag-name")
        emitChar(Self.lt)
        state = .data
      }

    case .endTagOpen:
      // https://html.spec.whatwg.org/#end-tag-open-state
      guard pos < end else { error("eof-before-tag-name"); emitString("</"); emitEOF(); return }
      let c = base[pos]
      if isAlpha(c) { startTag(end: true); state = .tagName }
      else if c == Self.gt { pos += 1; error("missing-end-tag-name"); state = .data }
      else {
        error("invalid-first-character-of-tag-name")
        commentData.removeAll(keepingCapacity: true)
        state = .bogusComment
      }

    case .tagName: tagNameState()

    case .rcdataLessThanSign: textLessThanSign(returnState: .rcdata, endTagOpen: .rcdataEndTagOpen)
    case .rcdataEndTagOpen: textEndTagOpen(returnState: .rcdata, name: .rcdataEndTagName)
    case .rcdataEndTagName: textEndTagName(returnState: .rcdata)
    case .rawtextLessThanSign: textLessThanSign(returnState: .rawtext, endTagOpen: .rawtextEndTagOpen)
    case .rawtextEndTagOpen: textEndTagOpen(returnState: .rawtext, name: .rawtextEndTagName)
    case .rawtextEndTagName: textEndTagName(returnState: .rawtext)

    case .scriptDataLessThanSign:
      // https://html.spec.whatwg.org/#script-data-less-than-sign-state
      if pos < end && base[pos] == Self.slash {
        pos += 1
        tempBuffer.removeAll(keepingCapacity: true)
        state = .scriptDataEndTagOpen
      } else if pos < end && base[pos] == Self.bang {
        pos += 1
        emitString("<!")
        state = .scriptDataEscapeStart
      } else {
        emitChar(Self.lt)
        state = .scriptData
      }
    case .scriptDataEndTagOpen: textEndTagOpen(returnState: .scriptData, name: .scriptDataEndTagName)
    case .scriptDataEndTagName: textEndTagName(returnState: .scriptData)
    case .scriptDataEscapeStart:
      if pos < end && base[pos] == Self.dash { pos += 1; emitChar(Self.dash); state = .scriptDataEscapeStartDash }
      else { state = .scriptData }
    case .scriptDataEscapeStartDash:
      if pos < end && base[pos] == Self.dash { pos += 1; emitChar(Self.dash); state = .scriptDataEscapedDashDash }
      else { state = .scriptData }
    case .scriptDataEscaped:
      // https://html.spec.whatwg.org/#script-data-escaped-state
      while pos < end {
        let c = base[pos]
        pos += 1
        if c == Self.dash { emitChar(c); state = .scriptDataEscapedDash; return }
        if c == Self.lt { state = .scriptDataEscapedLessThanSign; return }
        if c == 0 { error("unexpected-null-character"); emitReplacement(into: &text) } else { emitChar(c) }
      }
      error("eof-in-script-html-comment-like-text"); emitEOF()
    case .scriptDataEscapedDash, .scriptDataEscapedDashDash:
      guard pos < end else { error("eof-in-script-html-comment-like-text"); emitEOF(); return }
      let c = base[pos]
      pos += 1
      if c == Self.dash {
        emitChar(c)
        state = .scriptDataEscapedDashDash
      } else if c == Self.lt {
        state = .scriptDataEscapedLessThanSign
      } else if c == Self.gt && state == .scriptDataEscapedDashDash {
        emitChar(c)
        state = .scriptData
      } else if c == 0 {
        error("unexpected-null-character"); emitReplacement(into: &text); state = .scriptDataEscaped
      } else {
        emitChar(c); state = .scriptDataEscaped
      }
    case .scriptDataEscapedLessThanSign:
      if pos < end && base[pos] == Self.slash {
        pos += 1
        tempBuffer.removeAll(keepingCapacity: true)
        state = .scriptDataEscapedEndTagOpen
      } else if pos < end && isAlpha(base[pos]) {
        tempBuffer.removeAll(keepingCapacity: true)
        emitChar(Self.lt)
        state = .scriptDataDoubleEscapeStart
      } else {
        emitChar(Self.lt)
        state = .scriptDataEscaped
      }
    case .scriptDataEscapedEndTagOpen: textEndTagOpen(returnState: .scriptDataEscaped, name: .scriptDataEscapedEndTagName)
    case .scriptDataEscapedEndTagName: textEndTagName(returnState: .scriptDataEscaped)
    case .scriptDataDoubleEscapeStart, .scriptDataDoubleEscapeEnd:
      // https://html.spec.whatwg.org/#script-data-double-escape-start-state
      let starting = state == .scriptDataDoubleEscapeStart
      let other: TokenizerState = starting ? .scriptDataEscaped : .scriptDataDoubleEscaped
      guard pos < end else { state = other; return }
      let c = base[pos]
      if isHTMLWhitespace(c) || c == Self.slash || c == Self.gt {
        pos += 1
        let isScript = tempBuffer.equals("script")
        state = starting ? (isScript ? .scriptDataDoubleEscaped : .scriptDataEscaped)
                         : (isScript ? .scriptDataEscaped : .scriptDataDoubleEscaped)
        emitChar(c)
      } else if isAlpha(c) {
        pos += 1
        tempBuffer.append(toLower(c))
        emitChar(c)
      } else {
        state = other
      }
    case .scriptDataDoubleEscaped:
      while pos < end {
        let c = base[pos]
        pos += 1
        if c == Self.dash { emitChar(c); state = .scriptDataDoubleEscapedDash; return }
        if c == Self.lt { emitChar(c); state = .scriptDataDoubleEscapedLessThanSign; return }
        if c == 0 { error("unexpected-null-character"); emitReplacement(into: &text) } else { emitChar(c) }
      }
      error("eof-in-script-html-comment-like-text"); emitEOF()
    case .scriptDataDoubleEscapedDash, .scriptDataDoubleEscapedDashDash:
      guard pos < end else { error("eof-in-script-html-comment-like-text"); emitEOF(); return }
      let c = base[pos]
      pos += 1
      if c == Self.dash {
        emitChar(c); state = .scriptDataDoubleEscapedDashDash
      } else if c == Self.lt {
        emitChar(c); state = .scriptDataDoubleEscapedLessThanSign
      } else if c == Self.gt && state == .scriptDataDoubleEscapedDashDash {
        emitChar(c); state = .scriptData
      } else if c == 0 {
        error("unexpected-null-character"); emitReplacement(into: &text); state = .scriptDataDoubleEscaped
      } else {
        emitChar(c); state = .scriptDataDoubleEscaped
      }
    case .scriptDataDoubleEscapedLessThanSign:
      if pos < end && base[pos] == Self.slash {
        pos += 1
        tempBuffer.removeAll(keepingCapacity: true)
        emitChar(Self.slash)
        state = .scriptDataDoubleEscapeEnd
      } else {
        state = .scriptDataDoubleEscaped
      }

    case .beforeAttributeName: beforeAttributeNameState()
    case .attributeName: attributeNameState()
    case .afterAttributeName:
      // https://html.spec.whatwg.org/#after-attribute-name-state
      while pos < end && isHTMLWhitespace(base[pos]) { pos += 1 }
      guard pos < end else { error("eof-in-tag"); emitEOF(); return }
      let c = base[pos]
      if c == Self.slash { pos += 1; state = .selfClosingStartTag }
      else if c == Self.eq { pos += 1; state = .beforeAttributeValue }
      else if c == Self.gt { pos += 1; emitTag() }
      else { startAttribute(); state = .attributeName }
    case .beforeAttributeValue:
      while pos < end && isHTMLWhitespace(base[pos]) { pos += 1 }
      guard pos < end else { state = .attributeValueUnquoted; return }
      let c = base[pos]
      if c == Self.dq { pos += 1; state = .attributeValueDoubleQuoted }
      else if c == Self.sq { pos += 1; state = .attributeValueSingleQuoted }
      else if c == Self.gt { pos += 1; error("missing-attribute-value"); emitTag() }
      else { state = .attributeValueUnquoted }
    case .attributeValueDoubleQuoted: quotedValueState(Self.dq)
    case .attributeValueSingleQuoted: quotedValueState(Self.sq)
    case .attributeValueUnquoted: unquotedValueState()
    case .afterAttributeValueQuoted:
      guard pos < end else { error("eof-in-tag"); emitEOF(); return }
      let c = base[pos]
      if isHTMLWhitespace(c) { pos += 1; state = .beforeAttributeName }
      else if c == Self.slash { pos += 1; state = .selfClosingStartTag }
      else if c == Self.gt { pos += 1; emitTag() }
      else { error("missing-whitespace-between-attributes"); state = .beforeAttributeName }
    case .selfClosingStartTag:
      guard pos < end else { error("eof-in-tag"); emitEOF(); return }
      if base[pos] == Self.gt { pos += 1; selfClosing = true; emitTag() }
      else { error("unexpected-solidus-in-tag"); state = .beforeAttributeName }

    case .bogusComment:
      // https://html.spec.whatwg.org/#bogus-comment-state
      while pos < end {
        let c = base[pos]
        pos += 1
        if c == Self.gt { emitComment(); state = .data; return }
        if c == 0 { error("unexpected-null-character"); emitReplacement(into: &commentData) } else { commentData.append(c) }
      }
      emitComment(); emitEOF()
    case .markupDeclarationOpen: markupDeclarationOpenState()
    case .commentStart:
      if pos < end && base[pos] == Self.dash { pos += 1; state = .commentStartDash }
      else if pos < end && base[pos] == Self.gt { pos += 1; error("abrupt-closing-of-empty-comment"); emitComment(); state = .data }
      else { state = .comment }
    case .commentStartDash:
      guard pos < end else { error("eof-in-comment"); emitComment(); emitEOF(); return }
      let c = base[pos]
      if c == Self.dash { pos += 1; state = .commentEnd }
      else if c == Self.gt { pos += 1; error("abrupt-closing-of-empty-comment"); emitComment(); state = .data }
      else { commentData.append(Self.dash); state = .comment }
    case .comment:
      // https://html.spec.whatwg.org/#comment-state
      let run = scan(from: pos, Self.lt, Self.dash, 0)
      if run > pos {
        commentData.append(contentsOf: UnsafeBufferPointer(start: base + pos, count: run - pos))
        pos = run
      }
      while pos < end {
        let c = base[pos]
        pos += 1
        if c == Self.lt { commentData.append(c); state = .commentLessThanSign; return }
        if c == Self.dash { state = .commentEndDash; return }
        if c == 0 { error("unexpected-null-character"); emitReplacement(into: &commentData) } else { commentData.append(c) }
      }
      error("eof-in-comment"); emitComment(); emitEOF()
    case .commentLessThanSign:
      if pos < end && base[pos] == Self.bang { pos += 1; commentData.append(Self.bang); state = .commentLessThanSignBang }
      else if pos < end && base[pos] == Self.lt { pos += 1; commentData.append(Self.lt) }
      else { state = .comment }
    case .commentLessThanSignBang:
      if pos < end && base[pos] == Self.dash { pos += 1; state = .commentLessThanSignBangDash } else { state = .comment }
    case .commentLessThanSignBangDash:
      if pos < end && base[pos] == Self.dash { pos += 1; state = .commentLessThanSignBangDashDash } else { state = .commentEndDash }
    case .commentLessThanSignBangDashDash:
      if pos < end && base[pos] != Self.gt { error("nested-comment") }
      state = .commentEnd
    case .commentEndDash:
      guard pos < end else { error("eof-in-comment"); emitComment(); emitEOF(); return }
      if base[pos] == Self.dash { pos += 1; state = .commentEnd }
      else { commentData.append(Self.dash); state = .comment }
    case .commentEnd:
      guard pos < end else { error("eof-in-comment"); emitComment(); emitEOF(); return }
      let c = base[pos]
      if c == Self.gt { pos += 1; emitComment(); state = .data }
      else if c == Self.bang { pos += 1; state = .commentEndBang }
      else if c == Self.dash { pos += 1; commentData.append(Self.dash) }
      else { commentData.append(Self.dash); commentData.append(Self.dash); state = .comment }
    case .commentEndBang:
      guard pos < end else { error("eof-in-comment"); emitComment(); emitEOF(); return }
      let c = base[pos]
      if c == Self.dash { pos += 1; commentData.append(contentsOf: [Self.dash, Self.dash, Self.bang]); state = .commentEndDash }
      else if c == Self.gt { pos += 1; error("incorrectly-closed-comment"); emitComment(); state = .data }
      else { commentData.append(contentsOf: [Self.dash, Self.dash, Self.bang]); state = .comment }

    default: doctypeStep()
    }
  }

  /// The index of the first byte at or after `from` equal to `a`, `b` or
  /// `c` (or `end`), testing eight bytes at a time.
  @inline(__always)
  func scan(from: Int, _ a: UInt8, _ b: UInt8, _ c: UInt8) -> Int {
    var i = from
    let raw = UnsafeRawPointer(base)
    let ones: UInt64 = 0x0101_0101_0101_0101
    let high: UInt64 = 0x8080_8080_8080_8080
    let pa = ones &* UInt64(a), pb = ones &* UInt64(b), pc = ones &* UInt64(c)
    while i &+ 8 <= end {
      // Little-endian, so the word's first byte is its lowest.
      let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
      let xa = w ^ pa, xb = w ^ pb, xc = w ^ pc
      let t = (((xa &- ones) & ~xa) | ((xb &- ones) & ~xb) | ((xc &- ones) & ~xc)) & high
      // The lowest flag marks the first matching byte exactly (a borrow
      // only flags bytes above a match), so no byte-by-byte search of the
      // word is needed.
      if t != 0 { return i &+ (t.trailingZeroBitCount &>> 3) }
      i &+= 8
    }
    while i < end {
      let ch = base[i]
      if ch == a || ch == b || ch == c { break }
      i &+= 1
    }
    return i
  }

  // MARK: Text states

  /// https://html.spec.whatwg.org/#data-state
  @inline(__always)
  func dataState() {
    var p = pos
    let b = base
    let e = end
    while true {
      let start = p
      p = scan(from: p, Self.lt, Self.amp, 0)
      if p > start { text.append(contentsOf: UnsafeBufferPointer(start: b + start, count: p - start)) }
      guard p < e else { pos = p; emitEOF(); return }
      let c = b[p]
      p += 1
      if c == Self.lt {
        pos = p
        // The usual tags go straight to the tag name state (the tag open
        // and end tag open states' steps for a letter), not through the
        // dispatcher once per state.
        if p < e && isAlpha(b[p]) {
          startTag(end: false)
          state = .tagName
          tagNameState()
          return
        }
        if p + 1 < e && b[p] == Self.slash && isAlpha(b[p + 1]) {
          pos = p + 1
          startTag(end: true)
          state = .tagName
          tagNameState()
          return
        }
        state = .tagOpen
        return
      }
      if c == Self.amp { pos = p; consumeCharacterReference(inAttribute: false); p = pos; continue }
      pos = p
      error("unexpected-null-character")
      text.append(0)
      textHasNUL = true
    }
  }

  /// https://html.spec.whatwg.org/#rcdata-state (and RAWTEXT, script data)
  func textState(rcdata: Bool, lessThan: TokenizerState) {
    var p = pos
    while true {
      let start = p
      p = scan(from: p, Self.lt, 0, rcdata ? Self.amp : 0)
      if p > start { text.append(contentsOf: UnsafeBufferPointer(start: base + start, count: p - start)) }
      guard p < end else { pos = p; emitEOF(); return }
      let c = base[p]
      p += 1
      pos = p
      if c == Self.lt { state = lessThan; return }
      if c == Self.amp { consumeCharacterReference(inAttribute: false); p = pos; continue }
      error("unexpected-null-character")
      emitReplacement(into: &text)
    }
  }

  /// https://html.spec.whatwg.org/#plaintext-state
  func plaintextState() {
    while pos < end {
      let c = base[pos]
      pos += 1
      if c == 0 { error("unexpected-null-character"); emitReplacement(into: &text) } else { text.append(c) }
    }
    emitEOF()
  }

  /// https://html.spec.whatwg.org/#rcdata-less-than-sign-state
  func textLessThanSign(returnState: TokenizerState, endTagOpen: TokenizerState) {
    if pos < end && base[pos] == Self.slash {
      pos += 1
      tempBuffer.removeAll(keepingCapacity: true)
      state = endTagOpen
    } else {
      emitChar(Self.lt)
      state = returnState
    }
  }

  /// https://html.spec.whatwg.org/#rcdata-end-tag-open-state
  func textEndTagOpen(returnState: TokenizerState, name: TokenizerState) {
    if pos < end && isAlpha(base[pos]) {
      startTag(end: true)
      state = name
    } else {
      emitString("</")
      state = returnState
    }
  }

  /// https://html.spec.whatwg.org/#rcdata-end-tag-name-state
  func textEndTagName(returnState: TokenizerState) {
    while pos < end {
      let c = base[pos]
      if isAlpha(c) {
        tagName.append(toLower(c))
        tempBuffer.append(c)
        pos += 1
        continue
      }
      if isAppropriateEndTag {
        if isHTMLWhitespace(c) { pos += 1; state = .beforeAttributeName; return }
        if c == Self.slash { pos += 1; state = .selfClosingStartTag; return }
        if c == Self.gt { pos += 1; emitTag(); return }
      }
      break
    }
    emitString("</")
    text.append(contentsOf: tempBuffer)
    state = returnState
  }

  // MARK: Tags and attributes

  /// https://html.spec.whatwg.org/#tag-name-state
  func tagNameState() {
    // Fast path: a run of lower-case letters, digits and '-', hashed as
    // it is scanned.
    let start = pos
    var p = pos
    var h = T.hashSeed
    while p < end {
      let c = base[p]
      if (c &- 0x61 < 26) || (c &- 0x30 < 10) || c == Self.dash { h = T.hashStep(h, c); p += 1 } else { break }
    }
    if p > start {
      if p < end {
        // The name ends here (the usual case): a known one is looked up in
        // place, not copied, and the delimiter is acted on at once.
        let c = base[p]
        let ws = isHTMLWhitespace(c)
        if ws || c == Self.slash || c == Self.gt {
          tagCode = tagNames.code(base + start, p - start, hash: h)
          if tagCode < 0 { tagName.append(contentsOf: UnsafeBufferPointer(start: base + start, count: p - start)) }
          pos = p + 1
          if c == Self.gt { emitTag() }
          else if ws { state = .beforeAttributeName; beforeAttributeNameState() }
          else { state = .selfClosingStartTag }
          return
        }
      }
      tagName.append(contentsOf: UnsafeBufferPointer(start: base + start, count: p - start))
      pos = p
    }
    while pos < end {
      let c = base[pos]
      pos += 1
      if isHTMLWhitespace(c) { state = .beforeAttributeName; beforeAttributeNameState(); return }
      if c == Self.slash { state = .selfClosingStartTag; return }
      if c == Self.gt { emitTag(); return }
      if c == 0 { error("unexpected-null-character"); emitReplacement(into: &tagName) }
      else { tagName.append(toLower(c)) }
    }
    error("eof-in-tag")
    emitEOF()
  }

  /// https://html.spec.whatwg.org/#before-attribute-name-state
  ///
  /// Runs on through the usual shapes of an attribute (`name`,
  /// `name="value"`) and the tag's end, taking the spec's states in turn
  /// without going back to the dispatcher between them; anything else is
  /// left to the dispatcher in the state reached.
  func beforeAttributeNameState() {
    while true {
      while pos < end && isHTMLWhitespace(base[pos]) { pos += 1 }
      guard pos < end else { state = .afterAttributeName; return }
      let c = base[pos]
      // '>' is reconsumed in the after attribute name state, which emits.
      if c == Self.gt { pos += 1; emitTag(); return }
      if c == Self.slash { state = .afterAttributeName; return }
      startAttribute()
      if c == Self.eq {
        error("unexpected-equals-sign-before-attribute-name")
        attrName.append(c)
        pos += 1
      }
      state = .attributeName
      attributeNameState()
      if state == .afterAttributeName {
        if pos < end && base[pos] == Self.gt { pos += 1; emitTag() }
        return
      }
      // The before attribute value state, when the value follows at once.
      guard state == .beforeAttributeValue, pos < end else { return }
      let q = base[pos]
      guard q == Self.dq || q == Self.sq else {
        if isHTMLWhitespace(q) || q == Self.gt { return }
        state = .attributeValueUnquoted
        unquotedValueState()
        if state == .beforeAttributeName { continue }
        return
      }
      pos += 1
      state = q == Self.dq ? .attributeValueDoubleQuoted : .attributeValueSingleQuoted
      quotedValueState(q)
      // The after attribute value (quoted) state.
      guard state == .afterAttributeValueQuoted, pos < end else { return }
      let d = base[pos]
      if d == Self.gt { pos += 1; emitTag(); return }
      guard isHTMLWhitespace(d) else { return }
      pos += 1
      state = .beforeAttributeName
    }
  }

  /// https://html.spec.whatwg.org/#attribute-name-state
  func attributeNameState() {
    let start = pos
    var p = pos
    while p < end {
      let c = base[p]
      if (c &- 0x61 < 26) || c == Self.dash || c == UInt8(ascii: ":") || c == UInt8(ascii: "_") { p += 1 } else { break }
    }
    if p > start {
      if attrName.isEmpty && p < end {
        // The name (not begun by a '=') ends here, the usual case: a known
        // one is looked up in place, not copied, and the delimiter is acted
        // on at once ('=' consumed; the others are reconsumed in the after
        // attribute name state).
        let c = base[p]
        let eq = c == Self.eq
        if eq || isHTMLWhitespace(c) || c == Self.slash || c == Self.gt {
          attrCode = A.code(base + start, p - start)
          if attrCode < 0 { attrName.append(contentsOf: UnsafeBufferPointer(start: base + start, count: p - start)) }
          if eq { pos = p + 1; state = .beforeAttributeValue } else { pos = p; state = .afterAttributeName }
          return
        }
      }
      attrName.append(contentsOf: UnsafeBufferPointer(start: base + start, count: p - start))
      pos = p
    }
    while pos < end {
      let c = base[pos]
      if isHTMLWhitespace(c) || c == Self.slash || c == Self.gt { state = .afterAttributeName; return }
      pos += 1
      if c == Self.eq { state = .beforeAttributeValue; return }
      if c == 0 { error("unexpected-null-character"); emitReplacement(into: &attrName); continue }
      if c == Self.dq || c == Self.sq || c == Self.lt { error("unexpected-character-in-attribute-name") }
      attrName.append(toLower(c))
    }
    state = .afterAttributeName
  }

  /// https://html.spec.whatwg.org/#attribute-value-(double-quoted)-state
  func quotedValueState(_ quote: UInt8) {
    var p = pos
    // The usual value, plain text up to the quote, stays in the input.
    if attrValue.isEmpty && attrValueCount == 0 {
      let stop = scan(from: p, quote, Self.amp, 0)
      if stop < end && base[stop] == quote {
        attrValueStart = p
        attrValueCount = stop - p
        pos = stop + 1
        state = .afterAttributeValueQuoted
        return
      }
    }
    while true {
      let start = p
      p = scan(from: p, quote, Self.amp, 0)
      if p > start { attrValue.append(contentsOf: UnsafeBufferPointer(start: base + start, count: p - start)) }
      guard p < end else { pos = p; error("eof-in-tag"); emitEOF(); return }
      let c = base[p]
      p += 1
      pos = p
      if c == quote { state = .afterAttributeValueQuoted; return }
      if c == Self.amp { consumeCharacterReference(inAttribute: true); p = pos; continue }
      error("unexpected-null-character")
      emitReplacement(into: &attrValue)
    }
  }

  /// https://html.spec.whatwg.org/#attribute-value-(unquoted)-state
  func unquotedValueState() {
    // The usual value, a run of plain bytes ended by whitespace or '>',
    // stays in the input.
    if attrValue.isEmpty && attrValueCount == 0 {
      var p = pos
      while p < end && !Self.endsUnquotedRun(base[p]) { p += 1 }
      if p > pos && p < end {
        let c = base[p]
        if isHTMLWhitespace(c) || c == Self.gt {
          attrValueStart = pos
          attrValueCount = p - pos
          pos = p + 1
          if c == Self.gt { emitTag() } else { state = .beforeAttributeName }
          return
        }
      }
    }
    while pos < end {
      let c = base[pos]
      pos += 1
      if isHTMLWhitespace(c) { state = .beforeAttributeName; return }
      if c == Self.amp { consumeCharacterReference(inAttribute: true); continue }
      if c == Self.gt { emitTag(); return }
      if c == 0 { error("unexpected-null-character"); emitReplacement(into: &attrValue); continue }
      if c == Self.dq || c == Self.sq || c == Self.lt || c == Self.eq || c == UInt8(ascii: "`") {
        error("unexpected-character-in-unquoted-attribute-value")
      }
      attrValue.append(c)
    }
    error("eof-in-tag")
    emitEOF()
  }

  /// True for the bytes the unquoted value state does more with than
  /// append: whitespace, '&', '>', NUL, and the ones that are errors
  /// ('"', "'", '<', '=', '`'). One shift and test for bytes below 64.
  @inline(__always)
  static func endsUnquotedRun(_ c: UInt8) -> Bool {
    if c >= 64 { return c == UInt8(ascii: "`") }
    let special: UInt64 = 1 << 0 | 1 << 0x09 | 1 << 0x0A | 1 << 0x0C | 1 << 0x0D | 1 << 0x20
      | 1 << 0x22 | 1 << 0x26 | 1 << 0x27 | 1 << 0x3C | 1 << 0x3D | 1 << 0x3E
    return (special >> UInt64(c)) & 1 != 0
  }

  // MARK: Markup declarations

  /// True (and consumes) when the input continues with `word`, ASCII
  /// case-insensitively when `caseInsensitive`.
  func consumeIf(_ word: StaticString, caseInsensitive: Bool) -> Bool {
    let n = word.utf8CodeUnitCount
    guard pos + n <= end else { return false }
    let w = word.utf8Start
    for i in 0..<n {
      let a = base[pos + i]
      if caseInsensitive ? toLower(a) != w[i] : a != w[i] { return false }
    }
    pos += n
    return true
  }

  /// https://html.spec.whatwg.org/#markup-declaration-open-state
  func markupDeclarationOpenState() {
    if consumeIf("--", caseInsensitive: false) {
      commentData.removeAll(keepingCapacity: true)
      state = .commentStart
    } else if consumeIf("doctype", caseInsensitive: true) {
      state = .doctype
    } else if consumeIf("[CDATA[", caseInsensitive: false) {
      if allowCDATA {
        state = .cdataSection
      } else {
        error("cdata-in-html-content")
        commentData.removeAll(keepingCapacity: true)
        commentData.append(contentsOf: "[CDATA[".utf8)
        state = .bogusComment
      }
    } else {
      error("incorrectly-opened-comment")
      commentData.removeAll(keepingCapacity: true)
      state = .bogusComment
    }
  }

  // MARK: DOCTYPE and CDATA

  func doctypeStep() {
    switch state {
    case .doctype:
      // https://html.spec.whatwg.org/#doctype-state
      guard pos < end else { error("eof-in-doctype"); startDoctype(); dtForceQuirks = true; emitDoctype(); emitEOF(); return }
      let c = base[pos]
      if isHTMLWhitespace(c) { pos += 1 }
      else if c != Self.gt { error("missing-whitespace-before-doctype-name") }
      state = .beforeDoctypeName
    case .beforeDoctypeName:
      while pos < end && isHTMLWhitespace(base[pos]) { pos += 1 }
      startDoctype()
      guard pos < end else { error("eof-in-doctype"); dtForceQuirks = true; emitDoctype(); emitEOF(); return }
      let c = base[pos]
      pos += 1
      if c == Self.gt { error("missing-doctype-name"); dtForceQuirks = true; emitDoctype(); state = .data; return }
      var name: [UInt8] = []
      if c == 0 { error("unexpected-null-character"); emitReplacement(into: &name) } else { name.append(toLower(c)) }
      dtName = name
      state = .doctypeName
    case .doctypeName:
      while pos < end {
        let c = base[pos]
        pos += 1
        if isHTMLWhitespace(c) { state = .afterDoctypeName; return }
        if c == Self.gt { emitDoctype(); state = .data; return }
        if c == 0 { error("unexpected-null-character"); emitReplacement(into: &dtName!) } else { dtName!.append(toLower(c)) }
      }
      error("eof-in-doctype"); dtForceQuirks = true; emitDoctype(); emitEOF()
    case .afterDoctypeName:
      while pos < end && isHTMLWhitespace(base[pos]) { pos += 1 }
      guard pos < end else { error("eof-in-doctype"); dtForceQuirks = true; emitDoctype(); emitEOF(); return }
      if base[pos] == Self.gt { pos += 1; emitDoctype(); state = .data }
      else if consumeIf("public", caseInsensitive: true) { state = .afterDoctypePublicKeyword }
      else if consumeIf("system", caseInsensitive: true) { state = .afterDoctypeSystemKeyword }
      else { error("invalid-character-sequence-after-doctype-name"); dtForceQuirks = true; state = .bogusDoctype }
    case .afterDoctypePublicKeyword, .beforeDoctypePublicIdentifier,
         .afterDoctypeSystemKeyword, .beforeDoctypeSystemIdentifier:
      let isPublic = state == .afterDoctypePublicKeyword || state == .beforeDoctypePublicIdentifier
      let afterKeyword = state == .afterDoctypePublicKeyword || state == .afterDoctypeSystemKeyword
      guard pos < end else { error("eof-in-doctype"); dtForceQuirks = true; emitDoctype(); emitEOF(); return }
      let c = base[pos]
      if isHTMLWhitespace(c) {
        pos += 1
        if afterKeyword { state = isPublic ? .beforeDoctypePublicIdentifier : .beforeDoctypeSystemIdentifier }
      } else if c == Self.dq || c == Self.sq {
        pos += 1
        if afterKeyword { error("missing-whitespace-after-doctype-keyword") }
        if isPublic {
          dtPublic = []
          state = c == Self.dq ? .doctypePublicIdentifierDoubleQuoted : .doctypePublicIdentifierSingleQuoted
        } else {
          dtSystem = []
          state = c == Self.dq ? .doctypeSystemIdentifierDoubleQuoted : .doctypeSystemIdentifierSingleQuoted
        }
      } else if c == Self.gt {
        pos += 1
        error("missing-doctype-identifier")
        dtForceQuirks = true
        emitDoctype()
        state = .data
      } else {
        error("missing-quote-before-doctype-identifier")
        dtForceQuirks = true
        state = .bogusDoctype
      }
    case .doctypePublicIdentifierDoubleQuoted, .doctypePublicIdentifierSingleQuoted,
         .doctypeSystemIdentifierDoubleQuoted, .doctypeSystemIdentifierSingleQuoted:
      let isPublic = state == .doctypePublicIdentifierDoubleQuoted || state == .doctypePublicIdentifierSingleQuoted
      let quote = (state == .doctypePublicIdentifierDoubleQuoted || state == .doctypeSystemIdentifierDoubleQuoted) ? Self.dq : Self.sq
      var buf = (isPublic ? dtPublic : dtSystem) ?? []
      defer { if isPublic { dtPublic = buf } else { dtSystem = buf } }
      while pos < end {
        let c = base[pos]
        pos += 1
        if c == quote { state = isPublic ? .afterDoctypePublicIdentifier : .afterDoctypeSystemIdentifier; return }
        if c == Self.gt { error("abrupt-doctype-identifier"); dtForceQuirks = true; state = .data
          if isPublic { dtPublic = buf } else { dtSystem = buf }
          emitDoctype(); return }
        if c == 0 { error("unexpected-null-character"); emitReplacement(into: &buf) } else { buf.append(c) }
      }
      error("eof-in-doctype"); dtForceQuirks = true
      if isPublic { dtPublic = buf } else { dtSystem = buf }
      emitDoctype(); emitEOF()
    case .afterDoctypePublicIdentifier, .betweenDoctypePublicAndSystemIdentifiers:
      let after = state == .afterDoctypePublicIdentifier
      guard pos < end else { error("eof-in-doctype"); dtForceQuirks = true; emitDoctype(); emitEOF(); return }
      let c = base[pos]
      pos += 1
      if isHTMLWhitespace(c) {
        state = .betweenDoctypePublicAndSystemIdentifiers
      } else if c == Self.gt {
        emitDoctype(); state = .data
      } else if c == Self.dq || c == Self.sq {
        if after { error("missing-whitespace-between-doctype-public-and-system-identifiers") }
        dtSystem = []
        state = c == Self.dq ? .doctypeSystemIdentifierDoubleQuoted : .doctypeSystemIdentifierSingleQuoted
      } else {
        pos -= 1
        error("missing-quote-before-doctype-system-identifier")
        dtForceQuirks = true
        state = .bogusDoctype
      }
    case .afterDoctypeSystemIdentifier:
      while pos < end && isHTMLWhitespace(base[pos]) { pos += 1 }
      guard pos < end else { error("eof-in-doctype"); dtForceQuirks = true; emitDoctype(); emitEOF(); return }
      if base[pos] == Self.gt { pos += 1; emitDoctype(); state = .data }
      else { error("unexpected-character-after-doctype-system-identifier"); state = .bogusDoctype }
    case .bogusDoctype:
      while pos < end {
        let c = base[pos]
        pos += 1
        if c == Self.gt { emitDoctype(); state = .data; return }
        if c == 0 { error("unexpected-null-character") }
      }
      emitDoctype(); emitEOF()
    case .cdataSection:
      // https://html.spec.whatwg.org/#cdata-section-state
      while pos < end {
        let c = base[pos]
        pos += 1
        if c == UInt8(ascii: "]") { state = .cdataSectionBracket; return }
        if c == 0 { textHasNUL = true }
        text.append(c)
      }
      error("eof-in-cdata"); emitEOF()
    case .cdataSectionBracket:
      if pos < end && base[pos] == UInt8(ascii: "]") { pos += 1; state = .cdataSectionEnd }
      else { text.append(UInt8(ascii: "]")); state = .cdataSection }
    case .cdataSectionEnd:
      if pos < end && base[pos] == UInt8(ascii: "]") { pos += 1; text.append(UInt8(ascii: "]")) }
      else if pos < end && base[pos] == Self.gt { pos += 1; state = .data }
      else { text.append(contentsOf: [UInt8(ascii: "]"), UInt8(ascii: "]")]); state = .cdataSection }
    default:
      preconditionFailure("unhandled tokenizer state \(state)")
    }
  }
}
