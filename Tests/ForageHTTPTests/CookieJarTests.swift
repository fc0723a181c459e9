import ForageURL
import Testing

@testable import ForageHTTP

@Suite struct CookieJarTests {
  @Test func test_domainPathAndSecure() {
    let jar = CookieJar()
    let url = WebURL("http://shop.example.com/cart/view")!
    var headers = HTTPHeaders()
    headers.add("Set-Cookie", "a=1; Domain=example.com; Path=/")
    headers.add("Set-Cookie", "b=2")  // host-only, path /cart
    headers.add("Set-Cookie", "c=3; Secure")
    headers.add("Set-Cookie", "evil=1; Domain=other.org")
    jar.store(headers, from: url)
    #expect(jar.header(for: WebURL("http://shop.example.com/cart/x")!) == "b=2; a=1")
    #expect(jar.header(for: WebURL("http://www.example.com/")!) == "a=1")
    #expect(jar.header(for: WebURL("https://shop.example.com/cart/")!)?.contains("c=3") == true)
    #expect(jar.header(for: WebURL("http://other.org/")!) == nil)
    var delete = HTTPHeaders()
    delete.add("Set-Cookie", "a=; Domain=example.com; Path=/; Max-Age=0")
    jar.store(delete, from: url)
    #expect(jar.header(for: WebURL("http://www.example.com/")!) == nil)
  }

  /// Found by the HTTP fuzzer: `Domain=.com` from www.example.com was kept,
  /// so the cookie went to every .com site the job fetched.
  @Test func test_domainAttributeNamingATopLevelDomain_isIgnored() {
    let jar = CookieJar()
    var headers = HTTPHeaders()
    headers.add("Set-Cookie", "tld=1; Domain=.com; Path=/")
    headers.add("Set-Cookie", "bare=2; Domain=com")
    headers.add("Set-Cookie", "parent=3; Domain=example.com")
    jar.store(headers, from: WebURL("http://www.example.com/")!)
    #expect(jar.header(for: WebURL("http://other.com/")!) == nil)
    #expect(jar.header(for: WebURL("http://www.example.com/")!) == "parent=3")
    // A single-label host may still name itself.
    var local = HTTPHeaders()
    local.add("Set-Cookie", "l=1; Domain=localhost")
    jar.store(local, from: WebURL("http://localhost/")!)
    #expect(jar.header(for: WebURL("http://localhost/")!) == "l=1")
  }
}
