import ForageSupport
import Testing

@testable import ForageHTML

@Suite struct SelectorParserTests {
  /// Parses `css` and returns the error it throws (nil when it parses).
  func error(_ css: String) -> SelectorError? {
    do {
      _ = try Selector(css)
      return nil
    } catch {
      return error
    }
  }

  @Test(arguments: [
    "div", "*", "#main", ".a.b", "div#x.y[z]", "a[href]", "a[href='x']", #"a[href="x" i]"#, "a[href=x s]",
    "[a~=b]", "[a|=b]", "[a^=b]", "[a$=b]", "[a*=b]", "[ a = b ]", "div p", "div > p", "div + p", "div ~ p",
    "div>p+q~r s", "a, b , c", ":not(.a)", ":not(.a, div > p)", ":is(h1, h2) a", ":where(.a)", ":has(> img)",
    ":has(+ p)", ":has(~ p, img)", "li:has(> a b)", ":nth-child(2n+1)", ":nth-child(odd)", ":nth-child(EVEN)",
    ":nth-child(-n + 3)", ":nth-child( 3 )", ":nth-child(+5)", ":nth-child(n)", ":nth-child(-2n-1)",
    ":nth-child(2n of .a, .b)", ":nth-last-child(2)", ":nth-of-type(3n)", ":nth-last-of-type(n+2)",
    ":first-child", ":last-child", ":only-child", ":first-of-type", ":last-of-type", ":only-of-type", ":empty",
    ":root", ":scope > p", ":checked", ":disabled", ":enabled", ":link", ":any-link", "DIV:FIRST-CHILD",
    "foreignObject", #".a\:b"#, #"#\31 23"#, "-foo", "--bar", "_x", "é", "div\n>\tp", ":not(:not(:not(a)))",
    #"[data-x="a\"b"]"#, "[a='']", ":nth-child(2n- 1)", ":nth-child(2n +1)",
  ])
  func test_parse_acceptsValidSelectors(_ css: String) throws {
    _ = try Selector(css)
  }

  @Test func test_typeNames_keepCaseAndLowerCase() throws {
    let s = try Selector("foreignObject DIV")
    #expect(s.typeNames.map(\.exact) == ["foreignObject", "DIV"])
    #expect(s.typeNames.map(\.lower) == ["foreignobject", "div"])
  }

  @Test func test_complexSelector_isStoredRightToLeft() throws {
    let s = try Selector("ul > li a")
    let complex = try #require(s.list.selectors.first)
    #expect(complex.compounds.count == 3)
    #expect(complex.combinators == [.descendant, .child])
    #expect(s.typeNames[Int(complex.compounds[0].typeOrdinal)].exact == "a")
  }

  @Test func test_escapes_areDecoded() throws {
    let s = try Selector(#"#\31 23.a\:b[x="q\"r"]"#)
    let simples = try #require(s.list.selectors.first?.compounds.first?.simples)
    guard case .id(let id) = simples[0], case .className(let cls) = simples[1], case .attribute(let attr) = simples[2]
    else {
      Issue.record("unexpected simples \(simples)")
      return
    }
    #expect(id == "123")
    #expect(cls == "a:b")
    #expect(attr.value == "q\"r")
  }

  @Test func test_nth_parsesAnPlusB() throws {
    func nth(_ css: String) throws -> (Int, Int) {
      let s = try Selector(":nth-child(\(css))")
      guard case .nth(let n) = s.list.selectors[0].compounds[0].simples[0] else { return (-99, -99) }
      return (n.a, n.b)
    }
    #expect(try nth("odd") == (2, 1))
    #expect(try nth("even") == (2, 0))
    #expect(try nth("3") == (0, 3))
    #expect(try nth("-n+3") == (-1, 3))
    #expect(try nth("+n") == (1, 0))
    #expect(try nth("2n - 1") == (2, -1))
    #expect(try nth("-2N+0") == (-2, 0))
    #expect(try nth("n-1") == (1, -1))
  }

  @Test func test_error_messageAndPosition() throws {
    let e = try #require(error("div[a=b"))
    #expect(e.message == "expected ']', found end of selector")
    #expect(e.position == 7)
    #expect(e.description == "expected ']', found end of selector at character 7 in 'div[a=b'")
  }

  @Test(arguments: [
    ("", 0, "empty selector"),
    ("   ", 3, "empty selector"),
    ("div,", 4, "expected a selector after ','"),
    (",div", 0, "expected a selector"),
    ("div >", 5, "expected a selector after '>'"),
    ("> p", 0, "a selector cannot start with '>'"),
    ("div > > p", 6, "unexpected '>'"),
    ("#", 1, "expected an identifier after '#'"),
    ("#1a", 1, "expected an identifier after '#'"),
    (".", 1, "expected a class name after '.'"),
    ("[", 1, "expected an attribute name"),
    ("[a=]", 3, "expected an identifier or a quoted string"),
    ("[a=1]", 3, "expected an identifier or a quoted string"),
    ("[a!=b]", 2, "expected ']' or an operator"),
    ("[a~b]", 3, "expected '='"),
    ("[a=b x]", 5, "unknown attribute selector flag"),
    ("[a='b]", 3, "unterminated string"),
    ("a)", 1, "unbalanced ')'"),
    ("a:not(b", 7, "expected ')'"),
    (":not()", 5, "expected a selector"),
    (":is(a,)", 6, "expected a selector after ','"),
    (":has()", 5, "expected a relative selector"),
    (":not", 0, "':not' needs an argument"),
    (":first-child(1)", 0, "':first-child' takes no argument"),
    (":nth-child()", 11, "expected An+B"),
    (":nth-child(foo)", 11, "expected An+B"),
    (":nth-child(2n+)", 14, "expected a number in An+B"),
    (":nth-child(+ n)", 11, "expected An+B"),
    (":nth-of-type(2 of p)", 15, "expected ')'"),
    (":nth-child(2 of)", 15, "expected a space after 'of'"),
    ("div*", 3, "'*' must come first"),
    ("[a]div", 3, "a type selector must come first"),
    ("a!", 1, "unexpected '!'"),
    ("a/**/b", 1, "unexpected '/'"),
  ])
  func test_errors(_ css: String, _ position: Int, _ messagePrefix: String) throws {
    let e = try #require(error(css), "'\(css)' should not parse")
    #expect(e.message.hasPrefix(messagePrefix), "'\(css)': \(e.message)")
    #expect(e.position == position, "'\(css)': \(e)")
    #expect(!e.isUnsupported)
  }

  @Test(arguments: [
    ("a:hover", 1, "unsupported pseudo-class ':hover'"),
    ("p::before", 1, "pseudo-elements"),
    (":lang(en)", 0, "unsupported pseudo-class ':lang()'"),
    ("svg|rect", 3, "namespace prefixes"),
    ("*|a", 1, "namespace prefixes"),
    ("[xlink|href]", 6, "namespace prefixes"),
  ])
  func test_unsupportedFeatures(_ css: String, _ position: Int, _ messagePrefix: String) throws {
    let e = try #require(error(css))
    #expect(e.message.hasPrefix(messagePrefix), "'\(css)': \(e.message)")
    #expect(e.position == position, "'\(css)': \(e)")
    #expect(e.isUnsupported)
  }

  @Test func test_unsupportedPseudoClass_description() throws {
    let e = try #require(error("div:hover"))
    #expect(e.description == "unsupported pseudo-class ':hover' at character 3 in 'div:hover'")
  }

  @Test func test_deepNesting_isAnErrorNotACrash() throws {
    let depth = 10_000
    let css = String(repeating: ":not(", count: depth) + "a" + String(repeating: ")", count: depth)
    let e = try #require(error(css))
    #expect(e.message.hasPrefix("selector nesting is too deep"))
    #expect(e.position == SelectorParser.maxNesting * 5)
    // The limit itself is fine.
    let ok = SelectorParser.maxNesting
    _ = try Selector(String(repeating: ":is(", count: ok) + "a" + String(repeating: ")", count: ok))
  }

  @Test func test_tooManyCompounds_isAnError() throws {
    let css = Array(repeating: "a", count: 10_000).joined(separator: " > ")
    let e = try #require(error(css))
    #expect(e.message.hasPrefix("too many combinators"))
  }

  @Test func test_longDescription_isShortened() throws {
    let css = String(repeating: "a", count: 500) + "!"
    let e = try #require(error(css))
    #expect(e.position == 500)
    #expect(e.description.count < 300)
  }

  @Test func test_randomInput_neverCrashes() throws {
    // Random selectors built from the grammar's characters: each either
    // parses or throws a positioned error.
    let alphabet = Array("ab*#.:[]()=~|^$+>, \"'\\-n0123456789iosx")
    for seed in 0..<200 {
      // Seeded one step ahead, as these selectors have always been drawn.
      var rng = SplitMix64(seed: UInt64(seed) &+ 0x9E37_79B9_7F4A_7C15)
      for _ in 0..<50 {
        let length = Int(rng.next() % 24)
        let css = String((0..<length).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
        do {
          _ = try Selector(css)
        } catch {
          #expect(error.position >= 0 && error.position <= css.unicodeScalars.count, "seed \(seed): '\(css)'")
        }
      }
    }
  }
}
