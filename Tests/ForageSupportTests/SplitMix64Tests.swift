import Testing

@testable import ForageSupport

@Suite struct SplitMix64Tests {
  @Test func test_matchesReferenceSequence() {
    // splitmix64.c (Vigna) from seed 0 and from seed 1234567.
    var zero = SplitMix64(seed: 0)
    #expect(zero.next() == 0xE220_A839_7B1D_CDAF)
    #expect(zero.next() == 0x6E78_9E6A_A1B9_65F4)
    #expect(zero.next() == 0x06C4_5D18_8009_454F)
    var r = SplitMix64(seed: 1_234_567)
    #expect(r.next() == 6_457_827_717_110_365_317)
    #expect(r.next() == 3_203_168_211_198_807_973)
  }

  @Test func test_sameSeed_sameSequence() {
    for seed in UInt64(0)..<20 {
      var a = SplitMix64(seed: seed), b = SplitMix64(seed: seed)
      for _ in 0..<10 { #expect(a.next() == b.next(), "seed \(seed)") }
    }
  }
}
