import Testing

@testable import ForageURL

/// The one percent-decoder (URL hosts, download names, `filename*`).
@Suite struct PercentDecodingTests {
  func decode(_ s: String) -> String { String(decoding: percentDecode(Array(s.utf8)), as: UTF8.self) }
  func strictly(_ s: String) -> String? {
    percentDecodeStrictly(Array(s.utf8)).map { String(decoding: $0, as: UTF8.self) }
  }

  @Test func test_percentDecode_decodesEscapes_inEitherCase_andKeepsAnyOtherSign() {
    #expect(decode("a%20b%2fc%2F") == "a b/c/")
    #expect(decode("%zz%4%") == "%zz%4%")
    #expect(decode("%2541") == "%41")  // decoded once
    #expect(decode("%E2%82%AC") == "€")
  }

  @Test func test_percentDecodeStrictly_refusesALoneSign_elseDecodesTheSame() {
    #expect(strictly("a%20b%2541") == "a b%41")
    #expect(strictly("%E2%82%AC") == "€")
    #expect(strictly("") == "")
    #expect(strictly("100%") == nil)
    #expect(strictly("%4") == nil)
    #expect(strictly("a%zzb") == nil)
    #expect(strictly("%20%") == nil)
  }
}
