/// Parses the supported subset of Selectors Level 4 into a `SelectorList`.
///
/// A hand-written recursive-descent parser over Unicode scalars; it follows
/// CSS Syntax for identifiers, strings and escapes, and the Selectors grammar
/// for the rest. Recursion is bounded: functional pseudo-classes may nest at
/// most `maxNesting` levels and a complex selector may hold at most
/// `maxCompounds` compound selectors, so hostile input fails with an error
/// instead of exhausting the stack.
///
/// - SeeAlso: <https://www.w3.org/TR/selectors-4/#grammar>,
///   <https://www.w3.org/TR/css-syntax-3/#tokenization>
struct SelectorParser {
  /// The deepest nesting of `:not()`, `:is()`, `:where()`, `:has()` and
  /// `:nth-*(… of S)` accepted.
  static let maxNesting = 32
  /// The most compound selectors accepted in one complex selector.
  static let maxCompounds = 128

  let source: String
  let chars: [Unicode.Scalar]
  var pos = 0
  var depth = 0
  /// The type selectors met so far; `CompoundSelector.typeOrdinal` indexes it.
  var typeNames: [TypeName] = []

  init(_ source: String) {
    self.source = source
    self.chars = Array(source.unicodeScalars)
  }

  // MARK: - Errors

  func fail(_ message: String, at position: Int? = nil) -> SelectorError {
    .syntax(message, at: position ?? pos, in: source)
  }

  /// `unexpected 'x'` or `unexpected end of selector`, at the current position.
  func unexpected(_ expectation: String? = nil) -> SelectorError {
    let found = pos < chars.count ? "'\(Character(chars[pos]))'" : "end of selector"
    if let expectation { return fail("expected \(expectation), found \(found)") }
    return fail("unexpected \(found)")
  }

  // MARK: - Characters

  var atEnd: Bool { pos >= chars.count }

  var peek: Unicode.Scalar? { pos < chars.count ? chars[pos] : nil }

  func peek(_ offset: Int) -> Unicode.Scalar? {
    pos + offset < chars.count ? chars[pos + offset] : nil
  }

  static func isWhitespace(_ c: Unicode.Scalar?) -> Bool {
    guard let c else { return false }
    return c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\u{0C}"
  }

  /// https://www.w3.org/TR/css-syntax-3/#ident-start-code-point
  static func isNameStart(_ c: Unicode.Scalar?) -> Bool {
    guard let c else { return false }
    let v = c.value
    return (v >= 0x61 && v <= 0x7A) || (v >= 0x41 && v <= 0x5A) || v == 0x5F || v >= 0x80
  }

  /// https://www.w3.org/TR/css-syntax-3/#ident-code-point
  static func isName(_ c: Unicode.Scalar?) -> Bool {
    guard let c else { return false }
    return isNameStart(c) || (c.value >= 0x30 && c.value <= 0x39) || c == "-"
  }

  static func isDigit(_ c: Unicode.Scalar?) -> Bool {
    guard let c else { return false }
    return c.value >= 0x30 && c.value <= 0x39
  }

  static func hexValue(_ c: Unicode.Scalar?) -> UInt32? {
    guard let c else { return nil }
    switch c.value {
    case 0x30...0x39: return c.value - 0x30
    case 0x41...0x46: return c.value - 0x41 + 10
    case 0x61...0x66: return c.value - 0x61 + 10
    default: return nil
    }
  }

  /// Skips whitespace; returns true when there was some.
  @discardableResult
  mutating func skipWhitespace() -> Bool {
    let start = pos
    while pos < chars.count, Self.isWhitespace(chars[pos]) { pos += 1 }
    return pos > start
  }

  /// https://www.w3.org/TR/css-syntax-3/#starts-with-a-valid-escape
  func isValidEscape(at i: Int) -> Bool {
    guard i < chars.count, chars[i] == "\\" else { return false }
    guard i + 1 < chars.count else { return true }  // EOF: U+FFFD
    return chars[i + 1] != "\n" && chars[i + 1] != "\r" && chars[i + 1] != "\u{0C}"
  }

  /// https://www.w3.org/TR/css-syntax-3/#would-start-an-identifier
  func startsIdentifier(at i: Int) -> Bool {
    guard i < chars.count else { return false }
    let c = chars[i]
    if c == "-" {
      let next = i + 1 < chars.count ? chars[i + 1] : nil
      return Self.isNameStart(next) || next == "-" || isValidEscape(at: i + 1)
    }
    return Self.isNameStart(c) || isValidEscape(at: i)
  }

  /// Consumes an escape; `pos` is just after the backslash.
  /// https://www.w3.org/TR/css-syntax-3/#consume-escaped-code-point
  mutating func consumeEscape() -> Unicode.Scalar {
    guard pos < chars.count else { return "\u{FFFD}" }
    if Self.hexValue(chars[pos]) != nil {
      var value: UInt32 = 0
      var count = 0
      while count < 6, let h = Self.hexValue(peek) {
        value = value * 16 + h
        pos += 1
        count += 1
      }
      if Self.isWhitespace(peek) {
        if peek == "\r" && peek(1) == "\n" { pos += 1 }
        pos += 1
      }
      if value == 0 || (value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF {
        return "\u{FFFD}"
      }
      return Unicode.Scalar(value) ?? "\u{FFFD}"
    }
    let c = chars[pos]
    pos += 1
    return c
  }

  /// Consumes an identifier; the caller checked `startsIdentifier`.
  /// https://www.w3.org/TR/css-syntax-3/#consume-name
  mutating func consumeIdentifier() -> String {
    var out = String.UnicodeScalarView()
    while pos < chars.count {
      let c = chars[pos]
      if Self.isName(c) {
        out.append(c)
        pos += 1
      } else if isValidEscape(at: pos) {
        pos += 1
        out.append(consumeEscape())
      } else {
        break
      }
    }
    return String(out)
  }

  /// Consumes an identifier or fails with `expected <what>`.
  mutating func identifier(_ what: String) throws(SelectorError) -> String {
    guard startsIdentifier(at: pos) else { throw unexpected(what) }
    return consumeIdentifier()
  }

  /// Consumes a quoted string; `pos` is on the opening quote.
  /// https://www.w3.org/TR/css-syntax-3/#consume-string-token
  mutating func consumeString() throws(SelectorError) -> String {
    let start = pos
    let quote = chars[pos]
    pos += 1
    var out = String.UnicodeScalarView()
    while true {
      guard pos < chars.count else { throw fail("unterminated string", at: start) }
      let c = chars[pos]
      if c == quote {
        pos += 1
        return String(out)
      }
      if c == "\n" || c == "\r" || c == "\u{0C}" {
        throw fail("unterminated string (newline in string)", at: start)
      }
      pos += 1
      if c == "\\" {
        guard pos < chars.count else { continue }
        if chars[pos] == "\n" || chars[pos] == "\u{0C}" {
          pos += 1
        } else if chars[pos] == "\r" {
          pos += 1
          if peek == "\n" { pos += 1 }
        } else {
          out.append(consumeEscape())
        }
      } else {
        out.append(c)
      }
    }
  }

  // MARK: - Grammar

  /// Parses the whole input as a selector list.
  mutating func parseTopLevel() throws(SelectorError) -> SelectorList {
    skipWhitespace()
    if atEnd { throw fail("empty selector") }
    let list = try parseSelectorList(nested: false)
    if !atEnd {
      if peek == ")" { throw fail("unbalanced ')'") }
      throw unexpected()
    }
    return list
  }

  /// `<complex-selector-list>`: stops before `)` (when nested) or at the end.
  mutating func parseSelectorList(nested: Bool) throws(SelectorError) -> SelectorList {
    var selectors: [ComplexSelector] = []
    while true {
      skipWhitespace()
      if atEnd || (nested && peek == ")") || peek == "," {
        throw fail(selectors.isEmpty ? "expected a selector" : "expected a selector after ','")
      }
      selectors.append(try parseComplex())
      if peek == "," {
        pos += 1
        continue
      }
      return SelectorList(selectors: selectors)
    }
  }

  /// Reads a combinator after a compound; returns nil at the end of the
  /// complex selector (end of input, `,` or `)`), leaving `pos` there.
  mutating func parseCombinator() throws(SelectorError) -> Combinator? {
    let hadWhitespace = skipWhitespace()
    guard let c = peek, c != ",", c != ")" else { return nil }
    let combinator: Combinator
    switch c {
    case ">": combinator = .child
    case "+": combinator = .nextSibling
    case "~": combinator = .subsequentSibling
    default:
      guard hadWhitespace else { throw unexpected() }
      return .descendant
    }
    pos += 1
    skipWhitespace()
    if atEnd || peek == "," || peek == ")" {
      throw fail("expected a selector after '\(Character(c))'")
    }
    return combinator
  }

  /// `<complex-selector>`, returned right to left.
  mutating func parseComplex() throws(SelectorError) -> ComplexSelector {
    if let c = peek, c == ">" || c == "+" || c == "~" {
      throw fail("a selector cannot start with '\(Character(c))' (use ':scope \(Character(c)) …')")
    }
    var compounds = [try parseCompound()]
    var combinators: [Combinator] = []
    while let combinator = try parseCombinator() {
      if compounds.count >= Self.maxCompounds {
        throw fail("too many combinators (more than \(Self.maxCompounds - 1)) in one selector")
      }
      combinators.append(combinator)
      compounds.append(try parseCompound())
    }
    return ComplexSelector(compounds: compounds.reversed(), combinators: combinators.reversed())
  }

  mutating func registerType(_ name: String) -> Int32 {
    if let i = typeNames.firstIndex(where: { $0.exact == name }) { return Int32(i) }
    typeNames.append(TypeName(exact: name, lower: asciiLowercased(name)))
    return Int32(typeNames.count - 1)
  }

  func namespaceUnsupported() -> SelectorError {
    .unsupported("namespace prefixes ('ns|name') are not supported", at: pos, in: source)
  }

  /// `<compound-selector>`.
  mutating func parseCompound() throws(SelectorError) -> CompoundSelector {
    var compound = CompoundSelector()
    var empty = true
    if peek == "*" {
      pos += 1
      empty = false
      if peek == "|" { throw namespaceUnsupported() }
    } else if peek == "|" {
      throw namespaceUnsupported()
    } else if startsIdentifier(at: pos) {
      let name = consumeIdentifier()
      if peek == "|" { throw namespaceUnsupported() }
      compound.typeOrdinal = registerType(name)
      empty = false
    }
    loop: while let c = peek {
      switch c {
      case "#":
        pos += 1
        compound.simples.append(.id(try identifier("an identifier after '#'")))
      case ".":
        pos += 1
        compound.simples.append(.className(try identifier("a class name after '.'")))
      case "[":
        compound.simples.append(.attribute(try parseAttribute()))
      case ":":
        compound.simples.append(try parsePseudoClass())
      case "*":
        throw fail("'*' must come first in a compound selector")
      default:
        if startsIdentifier(at: pos) && !empty {
          throw fail("a type selector must come first in a compound selector")
        }
        break loop
      }
      empty = false
    }
    if empty {
      if atEnd { throw fail("expected a selector") }
      throw unexpected()
    }
    // Cheap tests first: attribute-like simples before structural and
    // relational pseudo-classes, `:has()` last.
    compound.simples = sortedByCost(compound.simples)
    return compound
  }

  func sortedByCost(_ simples: [SimpleSelector]) -> [SimpleSelector] {
    func cost(_ s: SimpleSelector) -> Int {
      switch s {
      case .id, .className, .attribute, .root, .scope, .hasAnchor, .link, .checked: return 0
      case .empty, .disabled, .enabled, .onlyChild, .onlyOfType, .nth: return 1
      case .not, .isAny: return 2
      case .has: return 3
      }
    }
    guard simples.count > 1 else { return simples }
    return simples.enumerated().sorted { (cost($0.element), $0.offset) < (cost($1.element), $1.offset) }.map(\.element)
  }

  /// `[name]`, `[name op value flag]`; `pos` is on `[`.
  mutating func parseAttribute() throws(SelectorError) -> AttributeSelector {
    pos += 1
    skipWhitespace()
    if peek == "|" || (peek == "*" && peek(1) == "|") { throw namespaceUnsupported() }
    let name = try identifier("an attribute name")
    if peek == "|" && peek(1) != "=" { throw namespaceUnsupported() }
    skipWhitespace()
    let typeName = TypeName(exact: name, lower: asciiLowercased(name))
    let op: AttributeSelector.Operator
    switch peek {
    case "]":
      pos += 1
      return AttributeSelector(
        name: typeName, op: .exists, value: "", flag: .none, lowerValue: "",
        htmlCaseInsensitive: false)
    case "=": op = .equals
    case "~": op = .includes
    case "|": op = .dashMatch
    case "^": op = .prefix
    case "$": op = .suffix
    case "*": op = .substring
    default: throw unexpected("']' or an operator (=, ~=, |=, ^=, $=, *=)")
    }
    pos += 1
    if op != .equals {
      guard peek == "=" else { throw unexpected("'='") }
      pos += 1
    }
    skipWhitespace()
    let value: String
    if peek == "\"" || peek == "'" {
      value = try consumeString()
    } else if startsIdentifier(at: pos) {
      value = consumeIdentifier()
    } else {
      throw unexpected("an identifier or a quoted string as the attribute value (quote values such as '10')")
    }
    skipWhitespace()
    var flag = AttributeSelector.CaseFlag.none
    if startsIdentifier(at: pos) {
      let flagStart = pos
      switch asciiLowercased(consumeIdentifier()) {
      case "i": flag = .insensitive
      case "s": flag = .sensitive
      default: throw fail("unknown attribute selector flag (use 'i' or 's')", at: flagStart)
      }
      skipWhitespace()
    }
    guard peek == "]" else { throw unexpected("']'") }
    pos += 1
    return AttributeSelector(
      name: typeName, op: op, value: value, flag: flag, lowerValue: asciiLowercased(value),
      htmlCaseInsensitive: caseInsensitiveAttributeValues.contains(typeName.lower))
  }

  static let functionalPseudoClasses: Set<String> = [
    "not", "is", "where", "has", "nth-child", "nth-last-child", "nth-of-type", "nth-last-of-type",
  ]

  /// A pseudo-class; `pos` is on `:`.
  mutating func parsePseudoClass() throws(SelectorError) -> SimpleSelector {
    let colon = pos
    pos += 1
    if peek == ":" {
      throw SelectorError.unsupported("pseudo-elements such as '::before' are not supported", at: colon, in: source)
    }
    let name = asciiLowercased(try identifier("a pseudo-class name after ':'"))
    if peek == "(" {
      guard Self.functionalPseudoClasses.contains(name) else {
        if Self.simplePseudoClasses[name] != nil {
          throw fail("':\(name)' takes no argument", at: colon)
        }
        throw SelectorError.unsupported("unsupported pseudo-class ':\(name)()'", at: colon, in: source)
      }
      pos += 1
      depth += 1
      if depth > Self.maxNesting {
        throw SelectorError.tooDeep(
          "selector nesting is too deep (more than \(Self.maxNesting) levels)", at: colon, in: source)
      }
      let result = try parseFunctionalArgument(name)
      skipWhitespace()
      guard peek == ")" else { throw unexpected("')'") }
      pos += 1
      depth -= 1
      return result
    }
    if let simple = Self.simplePseudoClasses[name] { return simple }
    if Self.functionalPseudoClasses.contains(name) {
      throw fail("':\(name)' needs an argument in parentheses", at: colon)
    }
    throw SelectorError.unsupported("unsupported pseudo-class ':\(name)'", at: colon, in: source)
  }

  static let simplePseudoClasses: [String: SimpleSelector] = [
    "first-child": .nth(NthSelector(kind: .child, a: 0, b: 1)),
    "last-child": .nth(NthSelector(kind: .lastChild, a: 0, b: 1)),
    "only-child": .onlyChild,
    "first-of-type": .nth(NthSelector(kind: .ofType, a: 0, b: 1)),
    "last-of-type": .nth(NthSelector(kind: .lastOfType, a: 0, b: 1)),
    "only-of-type": .onlyOfType,
    "empty": .empty,
    "root": .root,
    "scope": .scope,
    "checked": .checked,
    "disabled": .disabled,
    "enabled": .enabled,
    "link": .link,
    "any-link": .link,
  ]

  mutating func parseFunctionalArgument(_ name: String) throws(SelectorError) -> SimpleSelector {
    skipWhitespace()
    switch name {
    case "not": return .not(try parseSelectorList(nested: true))
    case "is", "where": return .isAny(try parseSelectorList(nested: true))
    case "has": return .has(try parseRelativeList())
    case "nth-child": return .nth(try parseNth(.child, allowsOf: true))
    case "nth-last-child": return .nth(try parseNth(.lastChild, allowsOf: true))
    case "nth-of-type": return .nth(try parseNth(.ofType, allowsOf: false))
    default: return .nth(try parseNth(.lastOfType, allowsOf: false))
    }
  }

  /// `<relative-selector-list>` for `:has()`.
  mutating func parseRelativeList() throws(SelectorError) -> [RelativeSelector] {
    var result: [RelativeSelector] = []
    while true {
      skipWhitespace()
      var leading = Combinator.descendant
      switch peek {
      case ">": leading = .child
      case "+": leading = .nextSibling
      case "~": leading = .subsequentSibling
      default: break
      }
      if leading != .descendant {
        pos += 1
        skipWhitespace()
      }
      if atEnd || peek == ")" || peek == "," {
        throw fail(result.isEmpty ? "expected a relative selector" : "expected a relative selector after ','")
      }
      var complex = try parseComplex()
      let own = complex.combinators
      complex.compounds.append(CompoundSelector(typeOrdinal: -1, simples: [.hasAnchor]))
      complex.combinators.append(leading)
      result.append(
        RelativeSelector(
          leading: leading, complex: complex,
          reachesSiblings: own.contains { $0 == .nextSibling || $0 == .subsequentSibling },
          reachesDescendants: own.contains { $0 == .descendant || $0 == .child }))
      if peek == "," {
        pos += 1
        continue
      }
      return result
    }
  }

  /// Reads up to 9 digits (larger numbers are clamped) or returns nil.
  mutating func parseInteger() -> Int? {
    guard Self.isDigit(peek) else { return nil }
    var value = 0
    while let c = peek, Self.isDigit(c) {
      if value < 1_000_000_000 { value = value * 10 + Int(c.value - 0x30) }
      pos += 1
    }
    return value
  }

  /// `<an+b> [of <complex-selector-list>]?`.
  /// https://www.w3.org/TR/css-syntax-3/#anb-microsyntax
  mutating func parseNth(_ kind: NthSelector.Kind, allowsOf: Bool) throws(SelectorError) -> NthSelector {
    var a = 0
    var b = 0
    let start = pos
    if startsIdentifier(at: pos) && peek != "-" && peek != "n" && peek != "N" {
      let word = asciiLowercased(consumeIdentifier())
      switch word {
      case "odd": (a, b) = (2, 1)
      case "even": (a, b) = (2, 0)
      default: throw fail("expected An+B, 'odd' or 'even'", at: start)
      }
    } else {
      var sign = 1
      if peek == "+" || peek == "-" {
        sign = peek == "-" ? -1 : 1
        pos += 1
      }
      let digits = parseInteger()
      if peek == "n" || peek == "N" {
        pos += 1
        a = sign * (digits ?? 1)
        if Self.isName(peek) && peek != "-" { throw fail("expected An+B, 'odd' or 'even'", at: start) }
        let afterN = pos
        skipWhitespace()
        if peek == "+" || peek == "-" {
          let bSign = peek == "-" ? -1 : 1
          pos += 1
          skipWhitespace()
          guard let value = parseInteger() else { throw unexpected("a number in An+B") }
          b = bSign * value
        } else {
          pos = afterN
        }
      } else {
        guard let digits else { throw fail("expected An+B, 'odd' or 'even'", at: start) }
        b = sign * digits
      }
    }
    var of: SelectorList?
    if skipWhitespace(), startsIdentifier(at: pos) {
      let wordStart = pos
      let word = asciiLowercased(consumeIdentifier())
      guard word == "of", allowsOf else {
        throw fail(allowsOf ? "expected 'of' or ')'" : "expected ')'", at: wordStart)
      }
      guard skipWhitespace() else { throw unexpected("a space after 'of'") }
      of = try parseSelectorList(nested: true)
    }
    return NthSelector(kind: kind, a: a, b: b, of: of)
  }
}

/// `s` with ASCII upper-case letters lower-cased (other characters kept).
func asciiLowercased(_ s: String) -> String {
  guard s.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return s }
  return String(decoding: s.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
}
