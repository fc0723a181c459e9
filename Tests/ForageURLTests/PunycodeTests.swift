import Testing

@testable import ForageURL

struct PunycodeTests {
  @Test func test_encodeAndDecode_roundTrip() {
    let samples = ["bücher", "münchen-straße", "例え", "ü", "abc", "Привет", "😀x"]
    let expected = ["bcher-kva", "mnchen-strae-v9a90b", "r8jz45g", "tda", "abc-", nil, nil]
    for (word, want) in zip(samples, expected) {
      let scalars = word.unicodeScalars.map(\.value)
      let encoded = Punycode.encode(scalars)
      if let want { #expect(encoded.map { String(decoding: $0, as: UTF8.self) } == want) }
      #expect(encoded.flatMap { Punycode.decode($0[...]) } == scalars, "\(word)")
    }
  }

  @Test func test_decode_rejectsInvalidInput() {
    #expect(Punycode.decode(Array("a".utf8)[...]) == [0x80])  // valid, if useless
    #expect(Punycode.decode(Array("b".utf8)[...]) == nil)  // truncated digit sequence
    #expect(Punycode.decode(Array("a!".utf8)[...]) == nil)
    #expect(Punycode.decode(Array("ü-abc".utf8)[...]) == nil)
    #expect(Punycode.decode(Array("99999999999999".utf8)[...]) == nil)
  }
}
