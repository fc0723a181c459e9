import ForageSupport
import Foundation

/// A small, fast, seedable random number generator: xoshiro256** seeded
/// through SplitMix64, so the same seed always yields the same sequence on
/// every platform.
///
///     var random = SeededRandom(seed: 42)
///     let roll = Int.random(in: 1...6, using: &random)
///
/// - SeeAlso: Blackman and Vigna, "Scrambled Linear Pseudorandom Number
///   Generators" (2018), <https://prng.di.unimi.it/>
public struct SeededRandom: RandomNumberGenerator, Sendable, Hashable, Codable {
  private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

  /// Creates a generator whose whole sequence is decided by `seed`.
  public init(seed: UInt64) {
    // SplitMix64 spreads the one 64-bit seed over the 256-bit state, which
    // must not be all zero (as xoshiro's authors recommend).
    var sm = SplitMix64(seed: seed)
    s0 = sm.next()
    s1 = sm.next()
    s2 = sm.next()
    s3 = sm.next()
  }

  @inline(__always)
  private static func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

  /// The next 64 random bits (xoshiro256**).
  public mutating func next() -> UInt64 {
    let result = SeededRandom.rotl(s1 &* 5, 7) &* 9
    let t = s1 << 17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = SeededRandom.rotl(s3, 45)
    return result
  }

  /// A uniform `Double` in `0..<1` built from the top 53 bits.
  public mutating func unit() -> Double {
    Double(next() >> 11) * 0x1.0p-53
  }

  /// True with probability `p`.
  public mutating func chance(_ p: Double) -> Bool {
    if p >= 1 { return true }
    if p <= 0 { return false }
    return unit() < p
  }

  /// A standard normal draw (Box–Muller).
  public mutating func normal() -> Double {
    var u = unit()
    if u < 1e-300 { u = 1e-300 }
    let v = unit()
    return (-2 * Foundation.log(u)).squareRoot() * cos(2 * Double.pi * v)
  }

  /// A generator for a sub-stream, independent of later draws from this one.
  public mutating func fork() -> SeededRandom { SeededRandom(seed: next()) }
}

/// A distribution of durations, used for model-mode task run times and for
/// device profiles.
///
///     let d = DurationDistribution.logNormal(median: .seconds(12), spread: 0.5)
///     var random = SeededRandom(seed: 1)
///     let sample = d.sample(using: &random)
public enum DurationDistribution: Codable, Sendable, Hashable {
  /// Always the same duration.
  case constant(Duration)
  /// Uniform between the bounds.
  case uniform(Duration, Duration)
  /// Normal with a mean and standard deviation, clipped at zero.
  case normal(mean: Duration, deviation: Duration)
  /// Log-normal: `median × e^(spread × N(0,1))`; long-tailed like real fetches.
  case logNormal(median: Duration, spread: Double)

  /// One draw, in milliseconds.
  func sampleMilliseconds(using random: inout SeededRandom) -> Int64 {
    let seconds: Double
    switch self {
    case .constant(let d): return d.milliseconds
    case .uniform(let a, let b):
      seconds = a.seconds + (b.seconds - a.seconds) * random.unit()
    case .normal(let mean, let deviation):
      seconds = max(0, mean.seconds + deviation.seconds * random.normal())
    case .logNormal(let median, let spread):
      seconds = median.seconds * exp(spread * random.normal())
    }
    return Int64((seconds * 1000).rounded())
  }

  /// One draw.
  public func sample(using random: inout SeededRandom) -> Duration {
    .milliseconds(sampleMilliseconds(using: &random))
  }
}
