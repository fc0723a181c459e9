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
