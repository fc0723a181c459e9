/// SplitMix64: a tiny, fast, well-mixed generator whose whole sequence is
/// decided by its seed, the same on every platform.
///
///     var random = SplitMix64(seed: 42)
///     let roll = Int.random(in: 1...6, using: &random)
///
/// The package's one SplitMix64: ForageScheduler's `SeededRandom` seeds its
/// xoshiro256** state with it, the demo shop draws its products from it, and
/// the seeded tests use it, so a seed means the same sequence everywhere.
///
/// - SeeAlso: Steele, Lea and Flood, "Fast Splittable Pseudorandom Number
///   Generators" (2014); <https://prng.di.unimi.it/splitmix64.c>
package struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
  /// The state, advanced by the golden-ratio increment at each draw.
  @usableFromInline var state: UInt64

  /// A generator starting from `seed` (any value, zero included).
  @inlinable package init(seed: UInt64) { state = seed }

  /// The next 64 random bits.
  @inlinable package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
