import Testing

@testable import ForageHTML

/// Attributes stored as name codes and byte runs read back as written.
@Suite struct AttributeStoreTests {
  /// Every common name's code from the tokenizer's byte table is its index
  /// in the table of names (a name coded twice would make two attributes of
  /// one name).
  @Test func test_commonNames_haveOneCodeEach() {
    for (i, name) in A.names.enumerated() {
      var bytes = Array(name.utf8)
      let code = bytes.withUnsafeMutableBufferPointer { A.code($0.baseAddress!, $0.count) }
      #expect(code == Int32(i), "\(name)")
      #expect(A.index[name] == Int32(i), "\(name)")
    }
    #expect(Set(A.names).count == A.names.count)
  }

  @Test func test_valuesAndNames_readBackAsWritten() throws {
    let doc = Document.parse(
      html: """
        <p id=a class="x y" data-sku="SKU-1" DATA-Long-Name="\(String(repeating: "v", count: 40))" title='&amp;é'>1</p>\
        <p id=b data-sku=other href=/h id=dup></p x=end-tag-attribute><i lang=en>2</i>
        """)
    let a = try #require(try doc.selectFirst("#a"))
    #expect(a.attributes.map(\.name) == ["id", "class", "data-sku", "data-long-name", "title"])
    #expect(a.attr("data-sku") == "SKU-1")
    #expect(a.attr("DATA-SKU") == "SKU-1")
    #expect(a.attr("data-long-name") == String(repeating: "v", count: 40))
    #expect(a.attr("title") == "&é")
    #expect(a.attr("missing") == nil)
    let b = try #require(try doc.selectFirst("#b"))
    #expect(b.attributes.map(\.value) == ["b", "other", "/h"], "the duplicate id is dropped")
    let i = try #require(try doc.selectFirst("i"))
    #expect(i.attributes == [Attribute(name: "lang", value: "en")], "an end tag's attributes are dropped")
    #expect(try doc.select("[data-sku]").count == 2)
    #expect(try doc.select("[data-sku^=SKU]").map { $0.attr("id") } == ["a"])
    #expect(try doc.select("[x]").isEmpty)
  }

  @Test func test_foreignAttributes_keepNamespaceAndPrefix() throws {
    let doc = Document.parse(html: "<svg><a xlink:href=#t viewbox='0 0 1 1'></a></svg>")
    let a = try #require(try doc.selectFirst("svg a"))
    #expect(a.attributes.contains(Attribute(name: "href", value: "#t", namespace: .xlink, prefix: "xlink")))
    #expect(a.attributes.contains(Attribute(name: "viewBox", value: "0 0 1 1")))
    #expect(a.attr("href") == nil, "xlink:href is no attribute without a namespace")
  }

  /// Past the names a scan finds, a dictionary does: every name keeps its
  /// code either way.
  @Test func test_manyUncommonNames_keepTheirCodes() throws {
    let count = Document.linearNameLimit * 3
    let html = "<p " + (0..<count).map { "data-n\($0)=v\($0)" }.joined(separator: " ") + ">x</p><i data-n5=again data-n40=later>"
    let doc = Document.parse(html: html)
    let p = try #require(try doc.selectFirst("p"))
    for i in 0..<count { #expect(p.attr("data-n\(i)") == "v\(i)") }
    #expect(try doc.select("[data-n5]").count == 2)
    #expect(try doc.select("[data-n40=later]").map(\.localName) == ["i"])
    #expect(p.attr("data-n\(count)") == nil)
  }

  @Test func test_createdElements_storeTheirAttributes() {
    let doc = Document()
    let e = doc.createElement("div", attributes: [Attribute(name: "data-x", value: "1"), Attribute(name: "class", value: "k")])
    doc.addMissingAttributes(e, [Attribute(name: "class", value: "ignored"), Attribute(name: "data-y", value: "2")])
    #expect(doc.attributes(e).map { "\($0.name)=\($0.value)" } == ["data-x=1", "class=k", "data-y=2"])
    #expect(doc.attribute(e, "data-y") == "2")
  }
}
