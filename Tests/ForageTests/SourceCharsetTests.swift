import Testing
@testable import Forage

/// A source's `charset`: any label of the Encoding Standard, stored as the
/// encoding's name; a typo names the closest label.
@Suite struct SourceCharsetTests {
  func config(charset: String) -> String {
    #"{"sources": [{"name": "a", "url": "https://x.org/", "charset": "\#(charset)"}]}"#
  }

  @Test func test_issue15_charset_labelResolvesToTheEncodingName() throws {
    let c = try ForageConfig.parse(Array(config(charset: " x-SJIS ").utf8))
    #expect(c.sources[0].charset == "Shift_JIS")
    let gbk = try ForageConfig.parse(Array(config(charset: "gb2312").utf8))
    #expect(gbk.sources[0].charset == "GBK")
    let none = try ForageConfig.parse(Array(#"{"sources": [{"name": "a", "url": "https://x.org/"}]}"#.utf8))
    #expect(none.sources[0].charset == nil)
  }

  @Test func test_issue15_charset_unknownLabel_namesTheClosest() {
    #expect(problems(config(charset: "shift-jsi")).map(\.description)
      == [#"sources[0].charset: unknown charset "shift-jsi" (did you mean "shift-jis"?)"#])
    #expect(problems(config(charset: "klingon")).map(\.description)
      == [#"sources[0].charset: unknown charset "klingon""#])
  }

  @Test func test_issue15_charset_writtenConfigReadsBack() throws {
    let c = try ForageConfig.parse(Array(config(charset: "euc-kr").utf8))
    let again = try ForageConfig.parse(Array(c.jsonText.utf8))
    #expect(again == c)
    #expect(again.sources[0].charset == "EUC-KR")
  }
}
