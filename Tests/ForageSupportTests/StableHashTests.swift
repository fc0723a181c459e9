import Testing

@testable import ForageSupport

@Suite struct StableHashTests {
  @Test func test_matchesFNV1a64ReferenceValues() {
    // From the FNV reference test suite (http://www.isthe.com/chongo/tech/comp/fnv/).
    #expect(StableHash.of("") == 0xcbf2_9ce4_8422_2325)
    #expect(StableHash.of("a") == 0xaf63_dc4c_8601_ec8c)
    #expect(StableHash.of("foobar") == 0x8594_4171_f739_67e8)
  }

  @Test func test_combine_inPieces_equalsWhole() {
    var h = StableHash()
    h.combine("foo".utf8)
    h.combine([UInt8]("bar".utf8))
    #expect(h.value == StableHash.of("foobar"))
    #expect(StableHash.of([UInt8]("foobar".utf8)) == StableHash.of("foobar"))
  }

  /// `ofLarge`: every byte counts, wherever it falls (each of the four
  /// lanes, the tail after the last 32-byte block), and so does the length.
  @Test func test_ofLarge_seesEveryByteAndTheLength() {
    var generator = SplitMix64(seed: 7)
    for count in [0, 1, 7, 31, 32, 33, 64, 100, 4099] {
      let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
      let h = StableHash.ofLarge(bytes)
      #expect(StableHash.ofLarge(bytes) == h)
      for i in bytes.indices {
        var changed = bytes
        changed[i] ^= 0x01
        #expect(StableHash.ofLarge(changed) != h, "byte \(i) of \(count)")
      }
      #expect(StableHash.ofLarge(bytes + [0]) != h, "length \(count)")
    }
  }
}
