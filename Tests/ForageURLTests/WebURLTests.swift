import Foundation
import Testing

@testable import ForageURL

struct WebURLTests {
  @Test func test_components_ofAFullURL() throws {
    let url = try WebURL(parsing: "HTTPS://user:pa%20ss@Example.COM:8443/a/./b/../c?q=1&r#frag")
    #expect(url.href == "https://user:pa%20ss@example.com:8443/a/c?q=1&r#frag")
    #expect(url.scheme == "https")
    #expect(url.username == "user")
    #expect(url.password == "pa%20ss")
    #expect(url.host == "example.com")
    #expect(url.port == 8443)
    #expect(url.effectivePort == 8443)
    #expect(url.path == "/a/c")
    #expect(url.query == "q=1&r")
    #expect(url.fragment == "frag")
    #expect(url.isSpecial)
    #expect(url.origin == "https://example.com:8443")
    #expect(url.pathAndQuery == "/a/c?q=1&r")
    #expect(url.description == url.href)
  }

  @Test func test_isHTTP_onlyForHTTPAndHTTPS() throws {
    for yes in ["http://a/", "https://a/", "HTTPS://A/x", "http://127.0.0.1:8080/"] {
      #expect(try #require(WebURL(yes)).isHTTP, "\(yes)")
    }
    for no in ["httpx://a/", "htt://a/", "ws://a/", "wss://a/", "file:///x", "mailto:a@b", "https+x://a/", "shttp://a/",
               "data:,http"] {
      #expect(try #require(WebURL(no)).isHTTP == false, "\(no)")
    }
  }

  @Test func test_defaultPort_isDroppedAndEffectivePortFillsIn() throws {
    let url = try WebURL(parsing: "http://example.com:80/")
    #expect(url.href == "http://example.com/")
    #expect(url.port == nil)
    #expect(url.effectivePort == 80)
    #expect(WebURL("wss://h/")?.effectivePort == 443)
    #expect(WebURL("ftp://h/")?.effectivePort == 21)
    #expect(WebURL("foo://h/")?.effectivePort == nil)
  }

  @Test func test_absentVersusEmptyQueryAndFragment() throws {
    let plain = try WebURL(parsing: "http://h/p")
    #expect(plain.query == nil)
    #expect(plain.fragment == nil)
    #expect(plain.pathAndQuery == "/p")
    let empty = try WebURL(parsing: "http://h/p?#")
    #expect(empty.query == "")
    #expect(empty.fragment == "")
    #expect(empty.pathAndQuery == "/p?")
  }

  @Test func test_resolving_relativeReferences() throws {
    let base = try WebURL(parsing: "http://a/b/c/d;p?q")
    // RFC 3986 section 5.4.1 normal examples, as browsers resolve them.
    let cases: [(String, String)] = [
      ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
      ("/g", "http://a/g"), ("//g", "http://g/"), ("?y", "http://a/b/c/d;p?y"),
      ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q#s"), ("", "http://a/b/c/d;p?q"),
      ("..", "http://a/b/"), ("../g", "http://a/b/g"), ("../../../g", "http://a/g"),
      ("g;x=1/../y", "http://a/b/c/y"), ("https:g", "https://g/"),
    ]
    for (reference, expected) in cases {
      #expect(base.resolving(reference)?.href == expected, "\(reference)")
      #expect(WebURL(reference, base: base)?.href == expected, "\(reference)")
    }
  }

  @Test func test_relativeReference_withoutBase_fails() {
    #expect(WebURL("/just/a/path") == nil)
    #expect(throws: URLParseError.missingScheme) { try WebURL(parsing: "/just/a/path") }
  }

  @Test func test_errors_sayWhy() {
    #expect(throws: URLParseError.portOutOfRange) { try WebURL(parsing: "http://h:65536/") }
    #expect(throws: URLParseError.invalidPort) { try WebURL(parsing: "http://h:8a/") }
    #expect(throws: URLParseError.hostMissing) { try WebURL(parsing: "http:///") }
    #expect(throws: URLParseError.invalidIPv6) { try WebURL(parsing: "http://[::1/") }
    #expect(throws: URLParseError.invalidIPv4) { try WebURL(parsing: "http://1.2.3.256/") }
    #expect(throws: URLParseError.invalidDomain) { try WebURL(parsing: "http://a%20b/") }
    #expect(throws: URLParseError.invalidHost) { try WebURL(parsing: "foo://a<b/") }
    do {
      _ = try WebURL(parsing: "http://h:99999/")
      Issue.record("must throw")
    } catch {
      #expect(error.offset != nil)
      #expect(error.description.contains("65535"))
    }
  }

  @Test func test_hosts_ipv4NumberForms() {
    #expect(WebURL("http://0x7f.1/")?.host == "127.0.0.1")
    #expect(WebURL("http://017700000001/")?.host == "127.0.0.1")
    #expect(WebURL("http://2130706433/")?.host == "127.0.0.1")
    #expect(WebURL("http://127.1/")?.host == "127.0.0.1")
    #expect(WebURL("http://1.2.3.4.5/") == nil)
    #expect(WebURL("http://4294967296/") == nil)
  }

  @Test func test_hosts_ipv6Compression() {
    #expect(WebURL("http://[0:0:0:0:0:0:0:1]/")?.host == "[::1]")
    #expect(WebURL("http://[2001:DB8:0:0:1:0:0:1]/")?.host == "[2001:db8::1:0:0:1]")
    #expect(WebURL("http://[::ffff:192.168.0.1]/")?.host == "[::ffff:c0a8:1]")
    #expect(WebURL("http://[1:2:3:4:5:6:7:8]:8080/")?.port == 8080)
    #expect(WebURL("http://[1::2::3]/") == nil)
  }

  @Test func test_hosts_internationalDomains() {
    #expect(WebURL("http://Bücher.example/")?.host == "xn--bcher-kva.example")
    #expect(WebURL("http://xn--bcher-kva.example/")?.host == "xn--bcher-kva.example")
    // Decomposed input is normalized (NFC) before Punycode.
    #expect(WebURL("http://bu\u{308}cher.example/")?.host == "xn--bcher-kva.example")
    #expect(WebURL("http://例え.テスト/")?.host == "xn--r8jz45g.xn--zckzah")
    // Full-width letters and the ideographic full stop map to ASCII.
    #expect(WebURL("http://ＥＸＡＭＰＬＥ。com/")?.host == "example.com")
    // Nontransitional processing keeps ß; Unicode lower-casing applies.
    #expect(WebURL("http://faß.de/")?.host == "xn--fa-hia.de")
    #expect(WebURL("http://ÉCOLE.fr/")?.host == "xn--cole-9oa.fr")
    // Joiners: ZWNJ between Arabic-script letters, ZWJ after a virama.
    #expect(WebURL("http://نامه\u{200C}ای.ir/")?.host == "xn--mgba3gch31f060k.ir")
    #expect(WebURL("http://\u{915}\u{94D}\u{200D}\u{937}.in/")?.host
      == "xn--11b2ezcw70k.in")
    #expect(WebURL("http://a\u{200C}b.com/") == nil)
    // Soft hyphen is ignored; a domain of only ignored code points fails.
    #expect(WebURL("http://ex\u{AD}ample.com/")?.host == "example.com")
    #expect(WebURL("http://\u{AD}/") == nil)
    // Super-script digits map to digits; other format controls are disallowed.
    #expect(WebURL("http://x².example/")?.host == "x2.example")
    #expect(WebURL("http://a\u{600}b.example/") == nil)
    // Invalid Punycode and a leading combining mark fail.
    #expect(WebURL("http://xn--a.example/") == nil)
    #expect(WebURL("http://\u{301}a.example/") == nil)
  }

  @Test func test_opaquePathsAndOrigins() throws {
    let mail = try WebURL(parsing: "mailto:Someone@Example.com?subject=hi")
    #expect(mail.hasOpaquePath)
    #expect(mail.host == nil)
    #expect(mail.path == "Someone@Example.com")
    #expect(mail.origin == "null")
    #expect(mail.resolving("x") == nil)
    #expect(WebURL("file:///etc/hosts")?.host == "")
    #expect(WebURL("file:///etc/hosts")?.origin == "null")
    #expect(WebURL("blob:https://example.com:443/uuid")?.origin == "https://example.com")
  }

  @Test func test_removingFragment() throws {
    let url = try WebURL(parsing: "http://h/p?q#f")
    let cut = url.removingFragment
    #expect(cut.href == "http://h/p?q")
    #expect(cut.fragment == nil)
    #expect(cut.query == "q")
    #expect(cut == WebURL("http://h/p?q"))
  }

  @Test func test_percentEncodingOfNonASCII() {
    #expect(WebURL("http://h/é?é#é")?.href == "http://h/%C3%A9?%C3%A9#%C3%A9")
    #expect(WebURL("http://h/a b?c d'")?.href == "http://h/a%20b?c%20d%27")
    #expect(WebURL("foo://h/?c'")?.href == "foo://h/?c'")
  }

  @Test func test_codable_usesTheHrefString() throws {
    let url = try WebURL(parsing: "https://example.com/a?b#c")
    let data = try JSONEncoder().encode([url])
    #expect(String(decoding: data, as: UTF8.self) == #"["https:\/\/example.com\/a?b#c"]"#)
    #expect(try JSONDecoder().decode([WebURL].self, from: data) == [url])
    #expect(throws: DecodingError.self) {
      try JSONDecoder().decode([WebURL].self, from: Data(#"["not a url"]"#.utf8))
    }
  }

  @Test func test_hashable_equalForEqualHrefs() throws {
    let a = try WebURL(parsing: "HTTP://EXAMPLE.com:80")
    let b = try WebURL(parsing: "http://example.com/")
    #expect(a == b)
    #expect(Set([a, b]).count == 1)
    #expect(a != WebURL("http://example.com/x"))
  }

  @Test func test_whitespace_isStrippedAndTabsRemoved() {
    #expect(WebURL("  \t http://h/a\tb\n  ")?.href == "http://h/ab")
  }
}
