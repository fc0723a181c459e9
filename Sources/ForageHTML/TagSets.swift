/// Interned tag names and the spec's element sets.
///
/// Every `Document` starts with these names interned in this order, so a
/// name's code (`Document.intern`) equals the constant here and the tree
/// builder compares small integers instead of strings.
///
/// - SeeAlso: <https://html.spec.whatwg.org/#special>
enum T {
  /// The names, in code order.
  static let names: [String] = [
    "html", "head", "body", "base", "basefont", "bgsound", "link", "meta", "title", "noscript",
    "noframes", "style", "script", "template", "frameset", "frame", "address", "article", "aside",
    "blockquote", "center", "details", "dialog", "dir", "div", "dl", "fieldset", "figcaption",
    "figure", "footer", "header", "hgroup", "main", "menu", "nav", "ol", "p", "search", "section",
    "summary", "ul", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "listing", "form", "li", "dd", "dt",
    "plaintext", "button", "a", "b", "big", "code", "em", "font", "i", "s", "small", "strike",
    "strong", "tt", "u", "nobr", "applet", "marquee", "object", "table", "area", "br", "embed",
    "img", "keygen", "wbr", "input", "param", "source", "track", "hr", "image", "textarea", "xmp",
    "iframe", "noembed", "select", "optgroup", "option", "rb", "rtc", "rp", "rt", "math", "svg",
    "caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr", "mi", "mo", "mn",
    "ms", "mtext", "annotation-xml", "foreignObject", "desc", "mglyph", "malignmark", "span",
    "label", "ruby", "sub", "sup", "var", "selectedcontent",
  ]
  static let index: [String: Int32] = {
    var d: [String: Int32] = [:]
    for (i, n) in names.enumerated() { d[n] = Int32(i) }
    return d
  }()
  static let html: Int32 = 0
  static let head: Int32 = 1
  static let body: Int32 = 2
  static let base: Int32 = 3
  static let basefont: Int32 = 4
  static let bgsound: Int32 = 5
  static let link: Int32 = 6
  static let meta: Int32 = 7
  static let title: Int32 = 8
  static let noscript: Int32 = 9
  static let noframes: Int32 = 10
  static let style: Int32 = 11
  static let script: Int32 = 12
  static let template: Int32 = 13
  static let frameset: Int32 = 14
  static let frame: Int32 = 15
  static let address: Int32 = 16
  static let article: Int32 = 17
  static let aside: Int32 = 18
  static let blockquote: Int32 = 19
  static let center: Int32 = 20
  static let details: Int32 = 21
  static let dialog: Int32 = 22
  static let dir: Int32 = 23
  static let div: Int32 = 24
  static let dl: Int32 = 25
  static let fieldset: Int32 = 26
  static let figcaption: Int32 = 27
  static let figure: Int32 = 28
  static let footer: Int32 = 29
  static let header: Int32 = 30
  static let hgroup: Int32 = 31
  static let main: Int32 = 32
  static let menu: Int32 = 33
  static let nav: Int32 = 34
  static let ol: Int32 = 35
  static let p: Int32 = 36
  static let search: Int32 = 37
  static let section: Int32 = 38
  static let summary: Int32 = 39
  static let ul: Int32 = 40
  static let h1: Int32 = 41
  static let h2: Int32 = 42
  static let h3: Int32 = 43
  static let h4: Int32 = 44
  static let h5: Int32 = 45
  static let h6: Int32 = 46
  static let pre: Int32 = 47
  static let listing: Int32 = 48
  static let form: Int32 = 49
  static let li: Int32 = 50
  static let dd: Int32 = 51
  static let dt: Int32 = 52
  static let plaintext: Int32 = 53
  static let button: Int32 = 54
  static let a: Int32 = 55
  static let b: Int32 = 56
  static let big: Int32 = 57
  static let code: Int32 = 58
  static let em: Int32 = 59
  static let font: Int32 = 60
  static let i: Int32 = 61
  static let s: Int32 = 62
  static let small: Int32 = 63
  static let strike: Int32 = 64
  static let strong: Int32 = 65
  static let tt: Int32 = 66
  static let u: Int32 = 67
  static let nobr: Int32 = 68
  static let applet: Int32 = 69
  static let marquee: Int32 = 70
  static let object: Int32 = 71
  static let table: Int32 = 72
  static let area: Int32 = 73
  static let br: Int32 = 74
  static let embed: Int32 = 75
  static let img: Int32 = 76
  static let keygen: Int32 = 77
  static let wbr: Int32 = 78
  static let input: Int32 = 79
  static let param: Int32 = 80
  static let source: Int32 = 81
  static let track: Int32 = 82
  static let hr: Int32 = 83
  static let image: Int32 = 84
  static let textarea: Int32 = 85
  static let xmp: Int32 = 86
  static let iframe: Int32 = 87
  static let noembed: Int32 = 88
  static let select: Int32 = 89
  static let optgroup: Int32 = 90
  static let option: Int32 = 91
  static let rb: Int32 = 92
  static let rtc: Int32 = 93
  static let rp: Int32 = 94
  static let rt: Int32 = 95
  static let math: Int32 = 96
  static let svg: Int32 = 97
  static let caption: Int32 = 98
  static let col: Int32 = 99
  static let colgroup: Int32 = 100
  static let tbody: Int32 = 101
  static let td: Int32 = 102
  static let tfoot: Int32 = 103
  static let th: Int32 = 104
  static let thead: Int32 = 105
  static let tr: Int32 = 106
  static let mi: Int32 = 107
  static let mo: Int32 = 108
  static let mn: Int32 = 109
  static let ms: Int32 = 110
  static let mtext: Int32 = 111
  static let annotationXml: Int32 = 112
  static let foreignObject: Int32 = 113
  static let desc: Int32 = 114
  static let mglyph: Int32 = 115
  static let malignmark: Int32 = 116
  static let span: Int32 = 117
  static let label: Int32 = 118
  static let ruby: Int32 = 119
  static let sub: Int32 = 120
  static let sup: Int32 = 121
  static let `var`: Int32 = 122
  static let selectedcontent: Int32 = 123
  /// The number of known names (`names.count`) as a constant: reading the
  /// array's count loaded the array for every start tag. `Document.init`
  /// checks that the two agree.
  static let knownCount: Int32 = 124
}

/// A set of known tag codes, as a 256-bit mask.
struct TagSet: Sendable {
  var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0, w3: UInt64 = 0

  init(_ codes: [Int32]) {
    for c in codes {
      let bit = UInt64(1) << UInt64(c & 63)
      switch c >> 6 {
      case 0: w0 |= bit
      case 1: w1 |= bit
      case 2: w2 |= bit
      default: w3 |= bit
      }
    }
  }

  @inline(__always) func contains(_ c: Int32) -> Bool {
    guard c >= 0 && c < 256 else { return false }
    let bit = UInt64(1) << UInt64(c & 63)
    switch c >> 6 {
    case 0: return w0 & bit != 0
    case 1: return w1 & bit != 0
    case 2: return w2 & bit != 0
    default: return w3 & bit != 0
    }
  }
}

extension T {
  /// https://html.spec.whatwg.org/#special (HTML namespace part; `select`
  /// left the list with customizable select)
  static let special = TagSet([
    address, applet, area, article, aside, base, basefont, bgsound, blockquote, body, br, button,
    caption, center, col, colgroup, dd, details, dialog, dir, div, dl, dt, embed, fieldset, figcaption, figure,
    footer, form, frame, frameset, h1, h2, h3, h4, h5, h6, head, header, hgroup, hr, html, iframe,
    img, input, keygen, li, link, listing, main, marquee, menu, meta, nav, noembed, noframes,
    noscript, object, ol, p, param, plaintext, pre, script, search, section, source, style,
    summary, table, tbody, td, template, textarea, tfoot, th, thead, title, tr, track, ul, wbr, xmp,
  ])
  /// https://html.spec.whatwg.org/#has-an-element-in-scope (HTML part)
  static let defaultScope = TagSet([applet, caption, html, table, td, th, marquee, object, template])
  static let listItemScope = TagSet([applet, caption, html, table, td, th, marquee, object, template, ol, ul])
  static let buttonScope = TagSet([applet, caption, html, table, td, th, marquee, object, template, button])
  static let tableScope = TagSet([html, table, template])
  /// https://html.spec.whatwg.org/#generate-implied-end-tags
  static let impliedEndTags = TagSet([dd, dt, li, optgroup, option, p, rb, rp, rt, rtc])
  static let impliedEndTagsThorough = TagSet([
    caption, colgroup, dd, dt, li, optgroup, option, p, rb, rp, rt, rtc, tbody, td, tfoot, th, thead, tr,
  ])
  /// Elements the depth limit (`ParserOptions.maximumDepth`) never closes
  /// early: the insertion modes rely on them (a table's parts, a template,
  /// the document's own elements).
  static let structural = TagSet([
    html, head, body, frameset, template, table, caption, colgroup, tbody, thead, tfoot, tr, td, th,
  ])
  static let headings = TagSet([h1, h2, h3, h4, h5, h6])
  /// https://html.spec.whatwg.org/#formatting
  static let formatting = TagSet([a, b, big, code, em, font, i, nobr, s, small, strike, strong, tt, u])
  static let tableSections = TagSet([tbody, tfoot, thead])
  static let cells = TagSet([td, th])
  /// Start tags that close a `<p>` in body: address, article…
  static let closesP = TagSet([
    address, article, aside, blockquote, center, details, dialog, dir, div, dl, fieldset, figcaption,
    figure, footer, header, hgroup, main, menu, nav, ol, p, search, section, summary, ul,
  ])
  /// End tags handled like `</div>` in body.
  static let blockEnd = TagSet([
    address, article, aside, blockquote, button, center, details, dialog, dir, div, dl, fieldset,
    figcaption, figure, footer, header, hgroup, listing, main, menu, nav, ol, pre, search, section,
    summary, ul,
  ])
  /// Tags that make foreign content hand the token back to HTML rules.
  /// https://html.spec.whatwg.org/#parsing-main-inforeign
  static let foreignBreakout = TagSet([
    b, big, blockquote, body, br, center, code, dd, div, dl, dt, em, embed, h1, h2, h3, h4, h5, h6,
    head, hr, i, img, li, listing, menu, meta, nobr, ol, p, pre, ruby, s, small, span, strong, strike,
    sub, sup, table, tt, u, ul, `var`,
  ])
  /// End tags that in body do more than pop the current node even when it
  /// is theirs: the formatting elements (their list entry goes too) and
  /// applet, marquee, object (a marker), form (the form pointer), template,
  /// body and html (mode changes), br (an element) and select.
  static let endTagNotJustPop = TagSet([
    a, b, big, code, em, font, i, nobr, s, small, strike, strong, tt, u, applet, marquee, object, form,
    template, body, html, br, select,
  ])
  /// Elements whose end tag is ignored when open at EOF / </body> without error.
  static let bodyEndOK = TagSet([
    dd, dt, li, optgroup, option, p, rb, rp, rt, rtc, tbody, td, tfoot, th, thead, tr, body, html,
  ])
}

extension T {
  /// The known names' bytes, concatenated, and where each starts.
  static let nameBlob: [UInt8] = names.flatMap { Array($0.utf8) }
  static let nameStarts: [Int32] = {
    var s: [Int32] = [0]
    for n in names { s.append(s.last! + Int32(n.utf8.count)) }
    return s
  }()

  /// An open-addressing hash table (1024 slots, -1 empty) from lower-case
  /// name bytes to codes, so the tokenizer finds a known tag's code without
  /// building a String.
  static let slots: [Int32] = {
    var t = [Int32](repeating: -1, count: 1024)
    for (i, n) in names.enumerated() where n == n.lowercased() {
      let bytes = Array(n.utf8)
      var h = bytes.withUnsafeBufferPointer { hash($0.baseAddress!, $0.count) }
      while t[h] >= 0 { h = (h + 1) & 1023 }
      t[h] = Int32(i)
    }
    return t
  }()

  @inline(__always)
  static func hash(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
    var h = hashSeed
    for i in 0..<n { h = hashStep(h, p[i]) }
    return Int(h & 1023)
  }

  /// The name hash (FNV-1a) in steps, so the tokenizer can hash a name
  /// while it scans it: start from `hashSeed`, take `hashStep` per byte.
  static let hashSeed: UInt32 = 2_166_136_261
  @inline(__always)
  static func hashStep(_ h: UInt32, _ c: UInt8) -> UInt32 { (h ^ UInt32(c)) &* 16_777_619 }

  /// The code of the known lower-case tag name `p[0 ..< n]`, or -1.
  static func code(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int32 { nameTable.code(p, n) }

  /// `slots`, `nameStarts` and `nameBlob` in plain memory, made once.
  static let nameTable = TagNameTable()
}

/// The lookup behind `T.code(_:_:)`: the hash table and the name bytes in
/// plain memory, so a lookup has no lazy-global checks or array
/// uniqueness checks. The tokenizer keeps a reference to the one shared
/// instance (`T.nameTable`), which lives for the whole process and is never
/// written after `init`, hence `@unchecked Sendable`.
final class TagNameTable: @unchecked Sendable {
  private let slots: UnsafeMutablePointer<Int32>
  private let starts: UnsafeMutablePointer<Int32>
  private let blob: UnsafeMutablePointer<UInt8>

  fileprivate init() {
    slots = .allocate(capacity: T.slots.count)
    slots.initialize(from: T.slots, count: T.slots.count)
    starts = .allocate(capacity: T.nameStarts.count)
    starts.initialize(from: T.nameStarts, count: T.nameStarts.count)
    blob = .allocate(capacity: T.nameBlob.count)
    blob.initialize(from: T.nameBlob, count: T.nameBlob.count)
  }

  /// The code of the known lower-case tag name `p[0 ..< n]`, or -1.
  @inline(__always)
  func code(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int32 {
    guard n > 0 && n <= 14 else { return -1 }
    return lookup(p, n, T.hash(p, n))
  }

  /// `code(p, n)` for a name whose hash (`T.hashSeed`, then `T.hashStep`
  /// per byte) is already known.
  @inline(__always)
  func code(_ p: UnsafePointer<UInt8>, _ n: Int, hash: UInt32) -> Int32 {
    guard n > 0 && n <= 14 else { return -1 }
    return lookup(p, n, Int(hash & 1023))
  }

  @inline(__always)
  private func lookup(_ p: UnsafePointer<UInt8>, _ n: Int, _ slot: Int) -> Int32 {
    var h = slot
    while true {
      let c = slots[h]
      if c < 0 { return -1 }
      let s = Int(starts[Int(c)])
      if Int(starts[Int(c) + 1]) - s == n {
        var i = 0
        while i < n && blob[s + i] == p[i] { i += 1 }
        if i == n { return c }
      }
      h = (h + 1) & 1023
    }
  }
}
