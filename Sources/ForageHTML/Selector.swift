/// A parsed CSS selector list, ready to match elements of any `Document`.
///
/// Parse once and reuse: parsing checks the whole selector and throws a
/// `SelectorError` naming the problem and its position.
///
///     let price = try Selector("div.product > .price")
///     for page in pages {
///       for element in page.select(price) { print(element.text) }
///     }
///
/// Supported (a subset of Selectors Level 4): type and universal selectors,
/// `#id`, `.class`, attribute selectors `[a]`, `=`, `~=`, `|=`, `^=`, `$=`,
/// `*=` with the `i` and `s` flags, the combinators descendant, `>`, `+`,
/// `~`, selector lists, `:not()`, `:is()`, `:where()`, `:has()` with
/// relative selectors, `:nth-child(An+B [of S])`, `:nth-last-child()`,
/// `:nth-of-type()`, `:nth-last-of-type()`, `:first-child`, `:last-child`,
/// `:only-child`, `:first-of-type`, `:last-of-type`, `:only-of-type`,
/// `:empty`, `:root`, `:scope`, `:checked`, `:disabled`, `:enabled`,
/// `:link` and `:any-link`. Anything else (`:hover`, `::before`, namespace
/// prefixes) is an error rather than a selector that silently never matches;
/// `:is()` and `:where()` are parsed strictly, not forgivingly, for the same
/// reason.
///
/// Matching follows the HTML case rules: element and attribute names match
/// ASCII case-insensitively on HTML elements and case-sensitively on SVG and
/// MathML elements (`foreignObject`); attribute values are case-sensitive
/// unless the `i` flag is given or the attribute is one the HTML standard
/// lists as case-insensitive for selectors (`type`, `lang`, `rel`…); ids and
/// classes are case-insensitive only in quirks-mode documents.
///
/// - SeeAlso: <https://www.w3.org/TR/selectors-4/>,
///   <https://html.spec.whatwg.org/#case-sensitivity-of-selectors>
public struct Selector: Sendable {
  /// The selector text this value was parsed from.
  public let source: String
  /// The parsed form, shared by copies (a matcher holds one reference).
  let compiled: CompiledSelector

  var list: SelectorList { compiled.list }
  var typeNames: [TypeName] { compiled.typeNames }

  /// Parses a selector list.
  ///
  ///     let links = try Selector("a[href^='https:' i]:not(.nav a)")
  ///
  /// - Throws: `SelectorError` when `css` is not a valid selector list in
  ///   the supported subset, naming the problem and its character offset.
  public init(_ css: String) throws(SelectorError) {
    var parser = SelectorParser(css)
    let list = try parser.parseTopLevel()
    self.source = css
    self.compiled = CompiledSelector(list, parser.typeNames)
  }

  /// True when `element` matches this selector (any selector of the list).
  ///
  /// `:scope` stands for the element itself here.
  public func matches(_ element: Element) -> Bool {
    let matcher = SelectorMatcher(self, document: element.document, scope: element.id)
    return matcher.matches(element.id)
  }
}

extension Selector: CustomStringConvertible {
  public var description: String { source }
}

/// A parsed selector list with what matchers need to start quickly;
/// immutable, so `Selector` copies share it.
final class CompiledSelector: Sendable {
  let list: SelectorList
  /// The type selectors, by ordinal (`CompoundSelector.typeOrdinal`), so a
  /// match can resolve each name to the document's interned code once.
  let typeNames: [TypeName]
  /// The type names resolved once to the parser's known tag names (`T`),
  /// whose codes are the same in every document; matchers use them
  /// instead of looking names up per document (see `SelectorMatcher`).
  let codes: TypeCodes
  /// True when some simple selector needs sibling positions (the `:nth-*`
  /// family, `:only-of-type`), so a matcher sets up its position cache.
  let usesSiblingIndexes: Bool
  /// True when some combinator or `:has()` may walk far (see `WalkMemo`),
  /// so a matcher keeps a memo of its long walks.
  let walksFar: Bool
  /// The selector as plain data when it is simple enough for the quick
  /// path (one compound per selector: type, ids, classes, attributes).
  let quick: QuickSelectors?

  init(_ list: SelectorList, _ typeNames: [TypeName]) {
    self.list = list
    self.typeNames = typeNames
    self.codes = TypeCodes(list, typeNames) { T.index[$0] }
    self.usesSiblingIndexes = Self.usesSiblingIndexes(list)
    self.walksFar = Self.walksFar(list)
    self.quick = QuickSelectors.make(list, typeNames)
  }

  /// True when `list` (nested lists included) has a simple selector whose
  /// match needs an element's position among its siblings.
  static func usesSiblingIndexes(_ list: SelectorList) -> Bool {
    for complex in list.selectors {
      for compound in complex.compounds {
        for simple in compound.simples {
          switch simple {
          case .nth, .onlyOfType: return true
          case .not(let inner), .isAny(let inner):
            if usesSiblingIndexes(inner) { return true }
          case .has(let relatives):
            for r in relatives where usesSiblingIndexes(SelectorList(selectors: [r.complex])) { return true }
          default: break
          }
        }
      }
    }
    return false
  }
}

/// A comma-separated list of complex selectors: matches when any matches.
struct SelectorList: Sendable {
  var selectors: [ComplexSelector]
}

/// Compound selectors joined by combinators, stored right to left.
///
/// `compounds[0]` is the subject; `combinators[i]` joins `compounds[i]`
/// (on its right) to `compounds[i + 1]` (on its left). For `ul > li a`:
/// compounds `[a, li, ul]`, combinators `[.descendant, .child]`.
struct ComplexSelector: Sendable {
  var compounds: [CompoundSelector]
  var combinators: [Combinator]
}

/// https://www.w3.org/TR/selectors-4/#combinators
enum Combinator: UInt8, Sendable {
  /// `A B`
  case descendant
  /// `A > B`
  case child
  /// `A + B`
  case nextSibling
  /// `A ~ B`
  case subsequentSibling
}

/// A type selector's name, kept as written (for SVG and MathML elements)
/// and lower-cased (for HTML elements).
struct TypeName: Sendable {
  var exact: String
  var lower: String
}

/// The interned name codes a matcher compares element names with.
///
/// Per type ordinal: the code of the lower-cased name (matched against
/// HTML elements) and of the name as written (other namespaces), -1 when
/// the name is not interned. Per top-level complex selector: the code its
/// subject's element must have (`SelectorMatcher.anyType` when the subject
/// has no type selector), for a quick reject.
struct TypeCodes: Sendable {
  var lower: [Int32] = []
  var exact: [Int32] = []
  var subjectLower: [Int32] = []
  var subjectExact: [Int32] = []
  /// True when every name resolved (to a code that cannot change later).
  var complete = true

  /// Resolves the names of `list` with `lookup`.
  init(_ list: SelectorList, _ typeNames: [TypeName], _ lookup: (String) -> Int32?) {
    lower.reserveCapacity(typeNames.count)
    exact.reserveCapacity(typeNames.count)
    for name in typeNames {
      let l = lookup(name.lower)
      let e = name.exact == name.lower ? l : lookup(name.exact)
      if l == nil || e == nil { complete = false }
      lower.append(l ?? -1)
      exact.append(e ?? -1)
    }
    subjectLower.reserveCapacity(list.selectors.count)
    subjectExact.reserveCapacity(list.selectors.count)
    for complex in list.selectors {
      let ordinal = complex.compounds[0].typeOrdinal
      subjectLower.append(ordinal >= 0 ? lower[Int(ordinal)] : SelectorMatcher.anyType)
      subjectExact.append(ordinal >= 0 ? exact[Int(ordinal)] : SelectorMatcher.anyType)
    }
  }
}

/// A sequence of simple selectors that all apply to one element.
///
/// https://www.w3.org/TR/selectors-4/#compound
struct CompoundSelector: Sendable {
  /// Index into `Selector.typeNames`, or -1 for the universal selector (or
  /// no type selector at all).
  var typeOrdinal: Int32 = -1
  var simples: [SimpleSelector] = []
}

/// The simple selectors other than type and universal.
enum SimpleSelector: Sendable {
  /// https://www.w3.org/TR/selectors-4/#id-selectors
  case id(String)
  /// https://www.w3.org/TR/selectors-4/#class-html
  case className(String)
  /// https://www.w3.org/TR/selectors-4/#attribute-selectors
  case attribute(AttributeSelector)
  /// https://www.w3.org/TR/selectors-4/#negation
  case not(SelectorList)
  /// `:is()` and `:where()` (specificity is not computed, so they are the
  /// same here). https://www.w3.org/TR/selectors-4/#matches
  case isAny(SelectorList)
  /// https://www.w3.org/TR/selectors-4/#relational
  case has([RelativeSelector])
  /// The `:nth-*` family and its `:first-*` / `:last-*` shorthands.
  /// https://www.w3.org/TR/selectors-4/#child-index
  indirect case nth(NthSelector)
  /// https://www.w3.org/TR/selectors-4/#the-only-child-pseudo
  case onlyChild
  /// https://www.w3.org/TR/selectors-4/#the-only-of-type-pseudo
  case onlyOfType
  /// https://www.w3.org/TR/selectors-4/#the-empty-pseudo
  case empty
  /// https://www.w3.org/TR/selectors-4/#the-root-pseudo
  case root
  /// https://www.w3.org/TR/selectors-4/#the-scope-pseudo
  case scope
  /// https://html.spec.whatwg.org/#selector-checked
  case checked
  /// https://html.spec.whatwg.org/#selector-disabled
  case disabled
  /// https://html.spec.whatwg.org/#selector-enabled
  case enabled
  /// `:link` and `:any-link` (nothing is visited).
  /// https://html.spec.whatwg.org/#selector-link
  case link
  /// Internal: the element a `:has()` argument is anchored at.
  case hasAnchor
}

/// `[name op value flag]`.
///
/// A class (immutable) so matching an element copies one reference, not
/// the four strings.
final class AttributeSelector: Sendable {
  enum Operator: UInt8, Sendable {
    /// `[a]`
    case exists
    /// `[a=v]`
    case equals
    /// `[a~=v]`: one of the whitespace-separated words is `v`.
    case includes
    /// `[a|=v]`: `v` or starts with `v-`.
    case dashMatch
    /// `[a^=v]`
    case prefix
    /// `[a$=v]`
    case suffix
    /// `[a*=v]`
    case substring
  }

  /// The case flag: none (the HTML rules decide), `i` or `s`.
  enum CaseFlag: UInt8, Sendable {
    case none, insensitive, sensitive
  }

  let name: TypeName
  let op: Operator
  let value: String
  let flag: CaseFlag
  /// ASCII-lower-cased `value`, for case-insensitive comparisons.
  let lowerValue: String
  /// True when the HTML standard makes this attribute's value
  /// case-insensitive on HTML elements (absent an `s` flag).
  let htmlCaseInsensitive: Bool
  /// The name's code among the common attribute names (`A`), which every
  /// document shares, lower-cased and as written; -1 when not common (the
  /// document's own table is asked then).
  let commonLowerCode: Int32
  let commonExactCode: Int32

  init(
    name: TypeName, op: Operator, value: String, flag: CaseFlag, lowerValue: String,
    htmlCaseInsensitive: Bool
  ) {
    self.name = name
    self.op = op
    self.value = value
    self.flag = flag
    self.lowerValue = lowerValue
    self.htmlCaseInsensitive = htmlCaseInsensitive
    self.commonLowerCode = A.index[name.lower] ?? -1
    self.commonExactCode = A.index[name.exact] ?? -1
  }
}

/// `:nth-child(An+B of S)` and relatives.
struct NthSelector: Sendable {
  enum Kind: UInt8, Sendable {
    case child, lastChild, ofType, lastOfType
  }

  var kind: Kind
  var a: Int
  var b: Int
  /// The `of S` filter (only for `child` and `lastChild`).
  var of: SelectorList?

  /// True when some n ≥ 0 gives `a*n + b == position` (1-based).
  func accepts(_ position: Int) -> Bool {
    if a == 0 { return position == b }
    let diff = position - b
    return diff % a == 0 && diff / a >= 0
  }
}

/// A `:has()` argument: a complex selector whose leftmost compound is the
/// internal anchor, joined to the rest by the leading combinator.
///
/// https://www.w3.org/TR/selectors-4/#relative
struct RelativeSelector: Sendable {
  /// The leading combinator (descendant when none was written).
  var leading: Combinator
  /// The selector, ending (leftmost) in a `.hasAnchor` compound.
  var complex: ComplexSelector
  /// True when the selector's own combinators include `+` or `~` besides
  /// the leading one (so candidates are not only in the anchor's subtree).
  var reachesSiblings: Bool
  /// True when the selector's own combinators include descendant or child
  /// combinators (so candidates after a sibling combinator include their
  /// subtrees).
  var reachesDescendants: Bool
}

/// The attributes whose values match ASCII case-insensitively on HTML
/// elements. https://html.spec.whatwg.org/#case-sensitivity-of-selectors
let caseInsensitiveAttributeValues: Set<String> = [
  "accept", "accept-charset", "align", "alink", "axis", "bgcolor", "charset",
  "checked", "clear", "codetype", "color", "compact", "declare", "defer", "dir",
  "direction", "disabled", "enctype", "face", "frame", "hreflang", "http-equiv",
  "lang", "language", "link", "media", "method", "multiple", "nohref",
  "noresize", "noshade", "nowrap", "readonly", "rel", "rev", "rules", "scope",
  "scrolling", "selected", "shape", "target", "text", "type", "valign",
  "valuetype", "vlink",
]
