import Testing

@testable import ForageURL

struct URLCanonicalizerTests {
  func canonical(_ s: String, _ c: URLCanonicalizer = .default) -> String? {
    WebURL(s).map { c.canonical($0).href }
  }

  @Test func test_canonical_dropsFragmentPortDotsAndUTM() {
    #expect(canonical("http://EXAMPLE.com:80/a/../b?utm_source=x&id=1#frag")
      == "http://example.com/b?id=1")
  }

  @Test func test_canonical_dropsEmptyQuery() {
    #expect(canonical("http://h/p?") == "http://h/p")
    #expect(canonical("http://h/p?utm_medium=a&utm_campaign=b") == "http://h/p")
    #expect(canonical("http://h/p?&&a=1&&") == "http://h/p?a=1")
  }

  @Test func test_canonical_normalizesPercentEncoding() {
    #expect(canonical("http://h/%7euser/%41%2d%5F?x=%2a%2A%7E") == "http://h/~user/A-_?x=%2A%2A~")
    #expect(canonical("http://us%65r:p%3aw@h/") == "http://user:p%3Aw@h/")
    // Reserved characters stay encoded: decoding them would change meaning.
    #expect(canonical("http://h/a%2Fb?x=%26%3D") == "http://h/a%2Fb?x=%26%3D")
  }

  @Test func test_canonical_removesConfiguredPatterns() {
    let c = URLCanonicalizer(removingQueryParameters: ["utm_*", "fbclid", "ref?"])
    #expect(canonical("http://h/?a=1&fbclid=z&UTM_Source=q&ref1=x&ref=y&refs2=w", c)
      == "http://h/?a=1&ref=y&refs2=w")
    let none = URLCanonicalizer(removingQueryParameters: [])
    #expect(canonical("http://h/?utm_source=x", none) == "http://h/?utm_source=x")
    #expect(URLCanonicalizer.default == URLCanonicalizer())
    #expect(URLCanonicalizer.default.removedQueryParameters == ["utm_*"])
  }

  @Test func test_canonical_sortsWhenAskedAndKeepsRepeatedOrder() {
    let c = URLCanonicalizer(sortingQueryParameters: true)
    #expect(canonical("http://h/?b=2&a=9&b=1&a=3", c) == "http://h/?a=9&a=3&b=2&b=1")
    #expect(canonical("http://h/?b=2&a=9") == "http://h/?b=2&a=9")
  }

  @Test func test_canonical_isIdempotentAndReparses() throws {
    let inputs = [
      "http://EXAMPLE.com:80/a/../b?utm_source=x&id=1#frag", "https://h/%7e/%2e%2E/x?q=%7e",
      "mailto:a@b?%41", "file:///C:/x/../y", "http://[::1]:8080/?z=1&utm_x=2",
    ]
    let c = URLCanonicalizer(sortingQueryParameters: true)
    for s in inputs {
      let once = c.canonical(try #require(WebURL(s)))
      #expect(c.canonical(once) == once, "\(s)")
      #expect(WebURL(once.href) == once, "\(s)")
    }
  }

  /// Found by the URL fuzzer: decoding `%35%30` after a lone `%` made the
  /// escape `%50` (a "P") out of a literal "%50", so the frontier fetched
  /// another page and canonicalizing twice differed from once.
  @Test func test_canonical_makesNoEscapeAfterALonePercentSign() throws {
    #expect(canonical("http://h/a%%35%30b") == "http://h/a%%350b")
    #expect(canonical("http://h/%5%30?q=%%46%46&r=%A%31") == "http://h/%5%30?q=%%46F&r=%A%31")
    // A lone "%" before other characters changes nothing.
    #expect(canonical("http://h/100%?q=%%7e%zz%41") == "http://h/100%?q=%~%zzA")
    for s in ["http://h/a%%35%30b", "http://h/%%%34%31", "http://h/%4%31%32", "http://h/?%%32%35%34%31"] {
      let once = URLCanonicalizer.default.canonical(try #require(WebURL(s)))
      #expect(URLCanonicalizer.default.canonical(once) == once, "\(s)")
    }
  }

  /// Found by the URL fuzzer: decoding "%43" spelled the drive letter "C|",
  /// which the parser writes "C:", so the canonical href parsed to another URL.
  @Test func test_canonical_ofAFileURLParsesToItself() throws {
    for s in ["file:///%43|", "file:///%43|/a%7e", "file://host/%63|/x?%41", "file:///%43:/"] {
      let once = URLCanonicalizer.default.canonical(try #require(WebURL(s)))
      let parsed = try #require(WebURL(once.href), "\(s)")
      #expect(parsed.href == once.href, "\(s)")
      #expect(parsed.layout == once.layout, "\(s)")
      #expect(URLCanonicalizer.default.canonical(once) == once, "\(s)")
    }
    #expect(canonical("file:///%43|/a%7e") == "file:///C:/a~")
  }

  @Test func test_canonical_shortcutAgreesWithFullRewrite() throws {
    let inputs = [
      "http://h/p", "http://h/p#f", "http://h/p?", "http://h/p?a=1&b=2#x", "http://h/p?b=1&a=2",
      "http://h/p?a=1&&b", "http://h/p?&", "http://h/p?utm_x=1", "http://h/p?x=1&UTM_y",
      "http://h/%41", "http://u%41@h/", "http://h/p?a=%41", "http://h/p?a=1&a=0",
      "mailto:x?y#z", "foo://h/?utm_a", "http://h/p#%41", "http://h/p?=&=",
    ]
    for c in [URLCanonicalizer.default, URLCanonicalizer(sortingQueryParameters: true),
      URLCanonicalizer(removingQueryParameters: [])]
    {
      for s in inputs {
        let url = try #require(WebURL(s))
        let full = c.canonicalFully(url)
        #expect(c.canonical(url) == full, "\(s)")
        #expect(c.canonical(url).layout == full.layout, "\(s)")
        #expect(c.fingerprint(url) == URLCanonicalizer.fingerprint(ofHref: full.href), "\(s)")
      }
    }
  }

  @Test func test_fingerprint_equalForEquivalentURLs() throws {
    let c = URLCanonicalizer.default
    let a = try WebURL(parsing: "http://EXAMPLE.com:80/a/../b?utm_source=x&id=1#frag")
    let b = try WebURL(parsing: "http://example.com/b?id=1")
    let d = try WebURL(parsing: "http://example.com/b?id=2")
    #expect(c.fingerprint(a) == c.fingerprint(b))
    #expect(c.fingerprint(a) != c.fingerprint(d))
    #expect(c.fingerprint(b) != c.fingerprint(try WebURL(parsing: "https://example.com/b?id=1")))
  }

  @Test func test_fingerprint_isPinned() throws {
    // FNV-1a 64 of "http://example.com/b?id=1" then the MurmurHash3 finalizer;
    // changing this value breaks every stored frontier.
    let url = try WebURL(parsing: "http://example.com/b?id=1#x")
    #expect(URLCanonicalizer.default.fingerprint(url) == 0xe78e_35af_9b5a_888c)
  }

  @Test func test_globMatch() {
    func m(_ p: String, _ n: String) -> Bool { globMatch(Array(p.utf8)[...], Array(n.utf8)[...]) }
    #expect(m("utm_*", "utm_source"))
    #expect(m("utm_*", "utm_"))
    #expect(!m("utm_*", "utm"))
    #expect(m("*id", "fbclid"))
    #expect(m("a*b*c", "aXXbYYc"))
    #expect(!m("a*b*c", "aXXbYY"))
    #expect(m("?", "x"))
    #expect(!m("?", ""))
    #expect(m("*", ""))
  }
}
