import ForageURL
import Testing

@testable import ForageHTTP

@Suite struct HTTPHeadersTests {
  @Test func test_caseInsensitive_multiValued_orderKept() {
    var headers = HTTPHeaders()
    headers.add("Set-Cookie", "a=1")
    headers.add("Content-Type", "text/html")
    headers.add("set-cookie", "b=2")
    #expect(headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
    #expect(headers["content-type"] == "text/html")
    #expect(headers.fields.map(\.name) == ["Set-Cookie", "Content-Type", "set-cookie"])
    headers["Set-Cookie"] = "c=3"
    #expect(headers.values(for: "set-cookie") == ["c=3"])
    #expect(headers.fields.first?.name == "Set-Cookie")
    headers["set-cookie"] = nil
    #expect(headers.count == 1)
    #expect(!headers.contains("Set-Cookie"))
  }

  @Test func test_nonLetterNamesDoNotMatchByCase() {
    let headers: HTTPHeaders = ["X-A": "1"]
    #expect(headers["x-a"] == "1")
    #expect(headers["X\u{0D}A"] == nil)
    #expect(headers["x-b"] == nil)
  }

  @Test func test_descriptionHidesValues() {
    let headers: HTTPHeaders = ["Authorization": "Bearer secret"]
    #expect(!"\(headers)".contains("secret"))
  }
}

#if canImport(CCurl)
/// The header lines libcurl hands over, as `CurlEasy` reads them.
@Suite struct CurlHeaderLineTests {
  /// Found by the HTTP fuzzer: a NUL (or a bare CR) inside a Set-Cookie value
  /// went into the Cookie header sent back, where a NUL cuts the C string and a
  /// CR starts another header line.
  @Test func test_headerValues_haveCRLFAndNULReplacedBySpaces() throws {
    let easy = try #require(CurlEasy())
    let lines = [
      "HTTP/1.1 200 OK\r\n", "Set-Cookie: a=1\0; Path=/\r\n", "ETag: \"x\ry\"\r\n", "X-Folded: a\0b\r\n",
      " c\rd\r\n", "\r\n",
    ]
    for line in lines {
      let bytes = Array(line.utf8)
      #expect(bytes.withUnsafeBytes { easy.receiveHeader($0) } == bytes.count)
    }
    #expect(easy.headers.values(for: "Set-Cookie") == ["a=1 ; Path=/"])
    #expect(easy.headers["ETag"] == "\"x y\"")
    #expect(easy.headers["X-Folded"] == "a b c d")
    let jar = CookieJar()
    jar.store(easy.headers, from: WebURL("http://h/")!)
    #expect(jar.header(for: WebURL("http://h/")!) == "a=1")
  }
}
#endif
