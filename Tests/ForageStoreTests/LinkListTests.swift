import Testing
@testable import ForageStore

@Suite struct LinkListTests {
  @Test func test_encode_storesSameOriginLinksByPath() {
    let page = "https://example.com/a/b?q=1"
    let links = [
      "https://example.com/", "https://example.com/p/2?x=1#", "https://example.com",
      "https://example.com.evil.org/x", "https://example.com:8443/x", "http://example.com/x",
      "https://other.org/é", "https://example.com//double",
    ]
    let text = LinkList.encode(links, pageURL: page)
    #expect(text.split(separator: "\n", omittingEmptySubsequences: false) == [
      "/", "/p/2?x=1#", "https://example.com", "https://example.com.evil.org/x",
      "https://example.com:8443/x", "http://example.com/x", "https://other.org/é", "//double",
    ])
    #expect(LinkList.decode(text, pageURL: page) == links)
  }

  @Test func test_roundTrip_withoutOrigin_andEmpty() {
    #expect(LinkList.decode(LinkList.encode([], pageURL: "https://a.b/"), pageURL: "https://a.b/")
      .isEmpty)
    let links = ["https://a.b/x", "mailto:x@y.z"]
    #expect(LinkList.decode(LinkList.encode(links, pageURL: "data:text/plain,hi"),
                            pageURL: "data:text/plain,hi") == links)
    #expect(LinkList.origin(of: "https://host:81/p") == "https://host:81")
    #expect(LinkList.origin(of: "https://host") == "https://host")
    #expect(LinkList.origin(of: "mailto:x") == nil)
  }
}
