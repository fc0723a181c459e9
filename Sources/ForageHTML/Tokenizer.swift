/// The HTML tokenizer: turns preprocessed UTF-8 bytes into tokens.
///
/// It runs over the input through an unsafe pointer (borrowed from the
/// parser's buffer, or a private copy), scans runs of plain text eight bytes
/// at a time, writes character data straight into the document's text
/// buffer, looks usual names up and copies usual attribute values from the
/// input in place (other names and values are collected in `ByteBuffer`s)
/// and hands out one token per `next()` call, so the tree builder can
/// switch its state (RCDATA after `<title>`, and so on) between tokens. Character data comes as runs, never one token
/// per character. Tokens come out as the tree builder's `BuilderToken`s,
/// tag names already interned in the document being built (`nextToken()`);
/// `next()` gives the public `Token` form.
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

  /// Where tag names the parser does not know are interned (the document
  /// being built), so a tag token carries a code and no string.
  let document: Document
  /// The known tag names' lookup table (`T.nameTable`), held so each lookup
  /// skips the lazy-global check.
  let tagNames = T.nameTable
  /// The named character references, held for the same reason.
  let namedReferences = NamedReferenceTable.shared

  // Output queue.
  @exclusivity(unchecked) var pending = TokenQueue()
  @exclusivity(unchecked) var emittedEOF = false

  /// Character data not yet emitted: `document.textBytes` from
  /// `textStart` on. It is written there directly (a run of plain text is
  /// copied once, from the input), and becomes a token's run when flushed.
  /// Only the tokenizer writes the buffer during a step, and a step ends
  /// with the data flushed, so `step()` sets `textStart` at its start.
  @exclusivity(unchecked) var textStart = 0
  /// The buffer character data is appended to (the document's).
  var text: ByteBuffer {
    @inline(__always) _read { yield document.textBytes }
    @inline(__always) _modify { yield &document.textBytes }
  }
  /// True when `text` holds a U+0000 (only the data and CDATA states emit
  /// it raw); copied to `lastCharactersHadNUL` when the run is emitted.
  @exclusivity(unchecked) var textHasNUL = false
  @exclusivity(unchecked) var lastCharactersHadNUL = false

  // The tag being built. Its attributes go straight to the end of
  // `document.attributes`, from `attrStart` on, so a tag token carries a
  // range and the element created from it shares that storage.
  @exclusivity(unchecked) var tagName = ByteBuffer()
  /// The tag name's code when it was looked up in place in the input
  /// (a known name, lower case); -1 when the name is in `tagName`.
  @exclusivity(unchecked) var tagCode: Int32 = -1
  @exclusivity(unchecked) var tagIsEnd = false
  @exclusivity(unchecked) var selfClosing = false
  @exclusivity(unchecked) var attrStart = 0
  @exclusivity(unchecked) var attrBytesStart = 0
  @exclusivity(unchecked) var attrNames: Set<Int32> = []
  @exclusivity(unchecked) var hasAttr = false
  @exclusivity(unchecked) var attrName = ByteBuffer()
  /// The attribute name's code when it was looked up in place in the
  /// input (a known name, lower case); -1 when the name is in `attrName`.
  @exclusivity(unchecked) var attrCode: Int32 = -1
  @exclusivity(unchecked) var attrValue = ByteBuffer()
  /// A quoted value that is one plain run of the input (no character
  /// reference, no NUL) is left there: `base[attrValueStart ..<
  /// attrValueStart + attrValueCount]`, copied once when the attribute is
  /// stored. `attrValueCount` is 0 otherwise (the value is in `attrValue`).
  @exclusivity(unchecked) var attrValueStart = 0
  @exclusivity(unchecked) var attrValueCount = 0
  /// The interned name code of the last start tag emitted (-1: none), for
  /// "appropriate end tag": a code, so emitting a start tag copies no name.
  @exclusivity(unchecked) var lastStartCode: Int32 = -1
  @exclusivity(unchecked) var tempBuffer = ByteBuffer()

  // The buffers above and below start unallocated: the usual names and
  // values are looked up or copied in place, and many pages have no
  // comment or script escape.

  // The comment being built.
  @exclusivity(unchecked) var commentData = ByteBuffer()

  // The DOCTYPE being built.
  @exclusivity(unchecked) var dtName: [UInt8]? = nil
  @exclusivity(unchecked) var dtPublic: [UInt8]? = nil
  @exclusivity(unchecked) var dtSystem: [UInt8]? = nil
  @exclusivity(unchecked) var dtForceQuirks = false

  /// True when `base` is a private copy to free.
  let ownsInput: Bool

  /// Creates a tokenizer over a private copy of preprocessed UTF-8 `input`,
  /// interning unknown tag names in `document`.
  init(_ input: [UInt8], collectErrors: Bool = false, document: Document = Document()) {
    self.document = document
    let n = input.count
    let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(n, 1))
    input.withUnsafeBufferPointer { src in
      if let a = src.baseAddress { copy.initialize(from: a, count: n) }
    }
    end = n
    base = copy
    ownsInput = true
    if collectErrors { errors = [] }
  }

  /// Creates a tokenizer over borrowed bytes that stay valid and unchanged
  /// for the tokenizer's whole life (the parser runs inside
  /// `withUnsafeBufferPointer` of its input).
  init(borrowing input: UnsafeBufferPointer<UInt8>, collectErrors: Bool = false, document: Document) {
    self.document = document
    end = input.count
    if let a = input.baseAddress {
      base = UnsafeMutablePointer(mutating: a)
      ownsInput = false
    } else {
      base = .allocate(capacity: 1)
      ownsInput = true
    }
    if collectErrors { errors = [] }
  }

  deinit {
    if ownsInput { base.deallocate() }
    // One by one: a loop over an array literal allocated the array.
    tagName.free()
    attrName.free()
    attrValue.free()
    tempBuffer.free()
    commentData.free()
    pending.free()
  }

  /// Reports a parse error.
  @inline(never)
  func error(_ code: StaticString) {
    errorCount += 1
    if errors != nil { errors!.append(ParseError(code: "\(code)", offset: pos)) }
  }

  /// The next token for the tree builder; `.eof` forever once the input is
  /// consumed.
  @inline(__always)
  func nextToken() -> BuilderToken {
    if pending.isEmpty {
      if emittedEOF { return .eof }
      step()
    }
    return pending.pop()
  }

  /// The next token in its public form; `.endOfFile` forever once the input
  /// is consumed.
  func next() -> Token {
    switch nextToken() {
    case .doctype(let i): return .doctype(document.doctypes[Int(i)])
    case .start(let t):
      let attributes = document.attributes(in: t.attributes).map(document.attribute)
      var tag = Tag(name: document.names[Int(t.code)], attributes: attributes, selfClosing: t.selfClosing)
      tag.code = Self.knownCode(t.code)
      return .startTag(tag)
    case .end(let t):
      var tag = Tag(name: document.names[Int(t.code)])
      tag.code = Self.knownCode(t.code)
      return .endTag(tag)
    case .comment(let i): return .comment(document.texts[Int(i)])
    case .chars(let run): return .characters(document.string(run))
    case .eof: return .endOfFile
    }
  }

  // MARK: Emitting

  /// `Tag.code` for an interned name code: itself for the known tag
  /// names of `T`, else -1.
  static func knownCode(_ code: Int32) -> Int32 { code < Int32(T.names.count) ? code : -1 }

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

  @inline(__always) func enqueue(_ t: consuming BuilderToken) { pending.push(t) }

  // Inlined: `emit` runs it for every tag, nearly always with text.
  @inline(__always)
  func flushText() {
    let end = document.textBytes.count
    guard end > textStart else { return }
    // The bytes are in the document's text buffer already.
    enqueue(.chars(TextRun(start: Int32(textStart), count: Int32(end - textStart))))
    textStart = end
    lastCharactersHadNUL = textHasNUL
    textHasNUL = false
  }

  // Inlined into its few callers: every tag goes through it.
  @inline(__always)
  func emit(_ t: consuming BuilderToken) {
    flushText()
    enqueue(t)
  }

  func emitEOF() {
    flushText()
    enqueue(.eof)
    emittedEOF = true
  }

  // MARK: Tags

  func startTag(end isEnd: Bool) {
    if !tagName.isEmpty { tagName.removeAll(keepingCapacity: true) }
    tagCode = -1
    tagIsEnd = isEnd
    selfClosing = false
    attrStart = document.attributes.count
    attrBytesStart = document.attributeBytes.count
    hasAttr = false
  }

  func startAttribute() {
    if hasAttr { finishAttribute() }
    hasAttr = true
    if !attrName.isEmpty { attrName.removeAll(keepingCapacity: true) }
    attrCode = -1
    if !attrValue.isEmpty { attrValue.removeAll(keepingCapacity: true) }
    attrValueCount = 0
  }

  /// Adds the attribute being built (callers test `hasAttr`), unless its
  /// name is a duplicate.
  func finishAttribute() {
    hasAttr = false
    let name = attributeNameCode()
    var duplicate = false
    let count = document.attributes.count - attrStart
    if count < 12 {
      var i = attrStart
      while i < document.attributes.count {
        if document.attributes[i].name == name { duplicate = true; break }
        i += 1
      }
    } else {
      if attrNames.isEmpty { for a in document.attributes[attrStart...] { attrNames.insert(a.name) } }
      duplicate = attrNames.contains(name)
      if !duplicate { attrNames.insert(name) }
    }
    if duplicate {
      error("duplicate-attribute")
      return
    }
    let start = Int32(document.attributeBytes.count)
    var valueCount = attrValue.count
    if attrValueCount > 0 {
      valueCount = attrValueCount
      document.attributeBytes.append(contentsOf: UnsafeBufferPointer(start: base + attrValueStart, count: valueCount))
    } else if valueCount > 0 {
      document.attributeBytes.append(contentsOf: attrValue)
    }
    document.attributes.append(
      StoredAttribute(name: name, valueStart: start, valueCount: Int32(valueCount), namespace: .none, prefix: .none))
  }

  /// The code of the name in `attrName`; common names come from a table
  /// rather than being hashed.
  @inline(__always)
  func attributeNameCode() -> Int32 {
    if attrCode >= 0 { return attrCode }
    let code = attrName.isEmpty ? -1 : A.code(attrName.base, attrName.count)
    return code >= 0 ? code : document.internAttributeName(attrName.string())
  }

  func emitTag() {
    // Tested here: most tags have no attribute to finish, and the call
    // cost more than the test.
    if hasAttr { finishAttribute() }
    if !attrNames.isEmpty { attrNames.removeAll(keepingCapacity: true) }
    var code = tagCode
    if code < 0 {
      code = tagNames.code(tagName.base, tagName.count)
      if code < 0 { code = document.intern(tagName.string()) }
    }
    let count = document.attributes.count - attrStart
    if tagIsEnd {
      if count > 0 {
        error("end-tag-with-attributes")
        document.attributes.removeLast(count)
        document.attributeBytes.truncate(to: attrBytesStart)
      }
      if selfClosing { error("end-tag-with-trailing-solidus") }
      emit(.end(TagToken(code: code, attributes: .empty, selfClosing: false)))
    } else {
      lastStartCode = code
      let range = count > 0 ? AttributeRange(start: Int32(attrStart), count: Int32(count)) : .empty
      emit(.start(TagToken(code: code, attributes: range, selfClosing: selfClosing)))
    }
    state = .data
  }

  /// True when the end tag's name (in `tagName`) is the last start tag's.
  /// That name was interned when emitted, so the names are equal exactly
  /// when the end tag's name has the same code; it is looked up without
  /// being interned.
  var isAppropriateEndTag: Bool {
    guard lastStartCode >= 0 else { return false }
    var code = tagNames.code(tagName.base, tagName.count)
    if code < 0 { code = document.nameIndex[tagName.string()] ?? -1 }
    return code == lastStartCode
  }

  /// Sets the last start tag's name (the tokenizer tests' initial state).
  func setLastStartTag(_ name: String) {
    lastStartCode = document.intern(name)
  }

  // MARK: Comments and DOCTYPEs

  func emitComment() {
    emit(.comment(document.storeComment(commentData.string())))
  }

  func startDoctype() {
    dtName = nil
    dtPublic = nil
    dtSystem = nil
    dtForceQuirks = false
  }

  func emitDoctype() {
    func s(_ b: [UInt8]?) -> String? { b.map { String(decoding: $0, as: UTF8.self) } }
    let d = Doctype(name: s(dtName), publicIdentifier: s(dtPublic), systemIdentifier: s(dtSystem), forceQuirks: dtForceQuirks)
    emit(.doctype(document.storeDoctype(d)))
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
    let table = namedReferences
    var n = 0
    while pos + n < end && n < table.longest && isAlnum(base[pos + n]) { n += 1 }
    if pos + n < end && base[pos + n] == UInt8(ascii: ";") { n += 1 }
    let found = table.longestMatch(base + pos, n)
    let length = found.map { table.length($0) } ?? 0
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


