/// The HTML tokenizer: turns preprocessed UTF-8 bytes into tokens.
///
/// It runs over the input through an unsafe pointer (borrowed from the
/// parser's buffer, or a private copy), scans runs of plain text eight bytes
/// at a time, collects bytes in `ByteBuffer`s and hands out one token per
/// `next()` call, so the tree builder can switch its state (RCDATA after
/// `<title>`, and so on) between tokens. Character data comes as runs, never one token
/// per character.
///
/// The input must be valid UTF-8 with newlines normalized (see
/// `InputDecoder`); bytes at or above 0x80 never affect the state
/// machine and pass through unchanged.
///
/// - SeeAlso: <https://html.spec.whatwg.org/#tokenization>
final class Tokenizer {
  let base: UnsafeMutablePointer<UInt8>
  let end: Int
  @exclusivity(unchecked) var pos = 0

  /// The current state; the tree builder sets it for RCDATA, RAWTEXT, etc.
  @exclusivity(unchecked) var state: TokenizerState = .data
  /// True when the adjusted current node is not an HTML element, which lets
  /// `<![CDATA[` open a CDATA section.
  @exclusivity(unchecked) var allowCDATA = false

  /// Errors seen so far, and the list when collecting.
  @exclusivity(unchecked) var errorCount = 0
  @exclusivity(unchecked) var errors: [ParseError]? = nil

  // Output queue.
  @exclusivity(unchecked) var pending: [Token] = []
  @exclusivity(unchecked) var pendingHead = 0
  @exclusivity(unchecked) var emittedEOF = false

  // Character data not yet emitted.
  @exclusivity(unchecked) var text = ByteBuffer(capacity: 1024)
  /// True when `text` holds a U+0000 (only the data and CDATA states emit
  /// it raw); copied to `lastCharactersHadNUL` when the run is emitted.
  @exclusivity(unchecked) var textHasNUL = false
  @exclusivity(unchecked) var lastCharactersHadNUL = false

  // The tag being built.
  @exclusivity(unchecked) var tagName = ByteBuffer(capacity: 32)
  @exclusivity(unchecked) var tagIsEnd = false
  @exclusivity(unchecked) var selfClosing = false
  @exclusivity(unchecked) var attrs: [Attribute] = []
  @exclusivity(unchecked) var attrNames: Set<String> = []
  @exclusivity(unchecked) var hasAttr = false
  @exclusivity(unchecked) var attrName = ByteBuffer(capacity: 32)
  @exclusivity(unchecked) var attrValue = ByteBuffer(capacity: 256)
  /// The name of the last start tag emitted, for "appropriate end tag".
  @exclusivity(unchecked) var lastStartTag = ByteBuffer(capacity: 32)
  @exclusivity(unchecked) var tempBuffer = ByteBuffer(capacity: 32)

  // The comment being built.
  @exclusivity(unchecked) var commentData = ByteBuffer(capacity: 256)

  // The DOCTYPE being built.
  @exclusivity(unchecked) var dtName: [UInt8]? = nil
  @exclusivity(unchecked) var dtPublic: [UInt8]? = nil
  @exclusivity(unchecked) var dtSystem: [UInt8]? = nil
  @exclusivity(unchecked) var dtForceQuirks = false

  /// True when `base` is a private copy to free.
  let ownsInput: Bool

  /// Creates a tokenizer over a private copy of preprocessed UTF-8 `input`.
  init(_ input: [UInt8], collectErrors: Bool = false) {
    let n = input.count
    let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(n, 1))
    input.withUnsafeBufferPointer { src in
      if let a = src.baseAddress { copy.initialize(from: a, count: n) }
    }
    end = n
    base = copy
    ownsInput = true
    if collectErrors { errors = [] }
    attrs.reserveCapacity(8)
  }

  /// Creates a tokenizer over borrowed bytes that stay valid and unchanged
  /// for the tokenizer's whole life (the parser runs inside
  /// `withUnsafeBufferPointer` of its input).
  init(borrowing input: UnsafeBufferPointer<UInt8>, collectErrors: Bool = false) {
    end = input.count
    if let a = input.baseAddress {
      base = UnsafeMutablePointer(mutating: a)
      ownsInput = false
    } else {
      base = .allocate(capacity: 1)
      ownsInput = true
    }
    if collectErrors { errors = [] }
    attrs.reserveCapacity(8)
  }

  deinit {
    if ownsInput { base.deallocate() }
    for b in [text, tagName, attrName, attrValue, lastStartTag, tempBuffer, commentData] { b.free() }
  }

  /// Reports a parse error.
  @inline(never)
  func error(_ code: StaticString) {
    errorCount += 1
    if errors != nil { errors!.append(ParseError(code: "\(code)", offset: pos)) }
  }

  /// The next token; `.endOfFile` forever once the input is consumed.
  func next() -> Token {
    if pendingHead < pending.count {
      let t = pending[pendingHead]
      pendingHead += 1
      return t
    }
    pending.removeAll(keepingCapacity: true)
    pendingHead = 0
    if emittedEOF { return .endOfFile }
    while pending.isEmpty { step() }
    pendingHead = 1
    return pending[0]
  }

  // MARK: Emitting

  @inline(__always) func emitChar(_ c: UInt8) { text.append(c) }

  @inline(__always) func emitReplacement(into buf: inout ByteBuffer) {
    buf.append(0xEF); buf.append(0xBF); buf.append(0xBD)
  }

  @inline(__always) func emitReplacement(into buf: inout [UInt8]) {
    buf.append(0xEF); buf.append(0xBF); buf.append(0xBD)
  }

  func emitString(_ s: StaticString) {
    text.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
  }

  @inline(__always) func enqueue(_ t: Token) { pending.append(t) }

  func flushText() {
    guard !text.isEmpty else { return }
    enqueue(.characters(text.string()))
    text.removeAll(keepingCapacity: true)
    lastCharactersHadNUL = textHasNUL
    textHasNUL = false
  }

  func emit(_ t: Token) {
    flushText()
    enqueue(t)
  }

  func emitEOF() {
    flushText()
    enqueue(.endOfFile)
    emittedEOF = true
  }

  // MARK: Tags

  func startTag(end isEnd: Bool) {
    if !tagName.isEmpty { tagName.removeAll(keepingCapacity: true) }
    tagIsEnd = isEnd
    selfClosing = false
    if !attrs.isEmpty { attrs.removeAll(keepingCapacity: true) }
    hasAttr = false
  }

  func startAttribute() {
    finishAttribute()
    hasAttr = true
    if !attrName.isEmpty { attrName.removeAll(keepingCapacity: true) }
    if !attrValue.isEmpty { attrValue.removeAll(keepingCapacity: true) }
  }

  /// Adds the attribute being built, unless its name is a duplicate.
  func finishAttribute() {
    guard hasAttr else { return }
    hasAttr = false
    let name = attrName.string()
    var duplicate = false
    if attrs.count < 12 {
      for a in attrs where a.name == name { duplicate = true; break }
    } else {
      if attrNames.isEmpty { for a in attrs { attrNames.insert(a.name) } }
      duplicate = attrNames.contains(name)
      if !duplicate { attrNames.insert(name) }
    }
    if duplicate {
      error("duplicate-attribute")
      return
    }
    attrs.append(Attribute(name: name, value: attrValue.string()))
  }

  func emitTag() {
    finishAttribute()
    if !attrNames.isEmpty { attrNames.removeAll(keepingCapacity: true) }
    let code = T.code(tagName.base, tagName.count)
    var tag = Tag(name: code >= 0 ? T.names[Int(code)] : tagName.string(), attributes: attrs, selfClosing: selfClosing)
    tag.code = code
    if tagIsEnd {
      if !attrs.isEmpty { error("end-tag-with-attributes") }
      if selfClosing { error("end-tag-with-trailing-solidus") }
      emit(.endTag(tag))
    } else {
      // Copy the bytes (not the buffer) so `tagName` stays uniquely owned.
      lastStartTag.removeAll(keepingCapacity: true)
      lastStartTag.append(contentsOf: tagName)
      emit(.startTag(tag))
    }
    state = .data
  }

  @inline(__always) var isAppropriateEndTag: Bool { tagName.equals(lastStartTag) }

  // MARK: Comments and DOCTYPEs

  func emitComment() {
    emit(.comment(commentData.string()))
  }

  func startDoctype() {
    dtName = nil
    dtPublic = nil
    dtSystem = nil
    dtForceQuirks = false
  }

  func emitDoctype() {
    func s(_ b: [UInt8]?) -> String? { b.map { String(decoding: $0, as: UTF8.self) } }
    emit(.doctype(Doctype(name: s(dtName), publicIdentifier: s(dtPublic), systemIdentifier: s(dtSystem), forceQuirks: dtForceQuirks)))
  }

  // MARK: Character references

  /// Consumes a character reference after a '&' (already consumed) and
  /// appends its text to the attribute value or the character data.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#character-reference-state>
  func consumeCharacterReference(inAttribute: Bool) {
    guard pos < end else { appendOut("&", inAttribute); return }
    let c = base[pos]
    if isAlnum(c) {
      namedReference(inAttribute: inAttribute)
    } else if c == UInt8(ascii: "#") {
      numericReference(inAttribute: inAttribute)
    } else {
      appendOut("&", inAttribute)
    }
  }

  @inline(__always) func appendOut(_ s: StaticString, _ inAttribute: Bool) {
    let b = UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
    if inAttribute { attrValue.append(contentsOf: b) } else { text.append(contentsOf: b) }
  }

  @inline(__always) func appendScalar(_ v: UInt32, _ inAttribute: Bool) {
    if inAttribute { appendUTF8(v, to: &attrValue) } else { appendUTF8(v, to: &text) }
  }

  /// https://html.spec.whatwg.org/#named-character-reference-state
  func namedReference(inAttribute: Bool) {
    let table = NamedCharacterReferences.decoded
    var n = 0
    while pos + n < end && n < table.longest && isAlnum(base[pos + n]) { n += 1 }
    if pos + n < end && base[pos + n] == UInt8(ascii: ";") { n += 1 }
    let found = NamedCharacterReferences.longestMatch(base + pos, n)
    let length = found.map { Int(table.starts[$0 + 1] - table.starts[$0]) } ?? 0
    guard let i = found else {
      // https://html.spec.whatwg.org/#ambiguous-ampersand-state
      appendOut("&", inAttribute)
      var j = pos
      while j < end && isAlnum(base[j]) { j += 1 }
      if j < end && base[j] == UInt8(ascii: ";") && j > pos { error("unknown-named-character-reference") }
      return
    }
    let endsWithSemicolon = base[pos + length - 1] == UInt8(ascii: ";")
    if inAttribute && !endsWithSemicolon && pos + length < end {
      let next = base[pos + length]
      if next == UInt8(ascii: "=") || isAlnum(next) {
        attrValue.append(UInt8(ascii: "&"))
        attrValue.append(contentsOf: UnsafeBufferPointer(start: base + pos, count: length))
        pos += length
        return
      }
    }
    if !endsWithSemicolon { error("missing-semicolon-after-character-reference") }
    pos += length
    appendScalar(table.first[i], inAttribute)
    if table.second[i] != 0 { appendScalar(table.second[i], inAttribute) }
  }

  /// https://html.spec.whatwg.org/#numeric-character-reference-state
  func numericReference(inAttribute: Bool) {
    let start = pos
    pos += 1  // '#'
    var hex = false
    if pos < end && (base[pos] == UInt8(ascii: "x") || base[pos] == UInt8(ascii: "X")) {
      hex = true
      pos += 1
    }
    var value: UInt32 = 0
    var digits = 0
    while pos < end {
      let c = base[pos]
      var d: UInt32
      if c >= 0x30 && c <= 0x39 { d = UInt32(c - 0x30) }
      else if hex && c >= 0x61 && c <= 0x66 { d = UInt32(c - 0x61 + 10) }
      else if hex && c >= 0x41 && c <= 0x46 { d = UInt32(c - 0x41 + 10) }
      else { break }
      value = min(value * (hex ? 16 : 10) + d, 0x110000)
      digits += 1
      pos += 1
    }
    if digits == 0 {
      error("absence-of-digits-in-numeric-character-reference")
      pos = start
      appendOut("&", inAttribute)
      return
    }
    if pos < end && base[pos] == UInt8(ascii: ";") {
      pos += 1
    } else {
      error("missing-semicolon-after-character-reference")
    }
    // https://html.spec.whatwg.org/#numeric-character-reference-end-state
    if value == 0 {
      error("null-character-reference")
      value = 0xFFFD
    } else if value > 0x10FFFF {
      error("character-reference-outside-unicode-range")
      value = 0xFFFD
    } else if value >= 0xD800 && value <= 0xDFFF {
      error("surrogate-character-reference")
      value = 0xFFFD
    } else if (value >= 0xFDD0 && value <= 0xFDEF) || (value & 0xFFFE) == 0xFFFE {
      error("noncharacter-character-reference")
    } else if value == 0x0D || (value < 0x20 && value != 0x09 && value != 0x0A && value != 0x0C) || (value >= 0x7F && value <= 0x9F) {
      error("control-character-reference")
      if value >= 0x80 && value <= 0x9F {
        let r = c1Replacements[Int(value - 0x80)]
        if r != 0 { value = r }
      }
    }
    appendScalar(value, inAttribute)
  }
}

@inline(__always) func isAlpha(_ c: UInt8) -> Bool { (c | 0x20) &- 0x61 < 26 }
@inline(__always) func isUpper(_ c: UInt8) -> Bool { c &- 0x41 < 26 }
@inline(__always) func isAlnum(_ c: UInt8) -> Bool { isAlpha(c) || c &- 0x30 < 10 }
@inline(__always) func isHTMLWhitespace(_ c: UInt8) -> Bool {
  c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0C || c == 0x0D
}
@inline(__always) func toLower(_ c: UInt8) -> UInt8 { isUpper(c) ? c | 0x20 : c }
