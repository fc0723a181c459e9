/// A 64-bit FNV-1a hash: stable across processes, runs and platforms (unlike
/// Swift's `Hasher`, which is seeded per process), so it can be stored.
///
/// Used for record content hashes; URL fingerprints come from
/// `URLCanonicalizer.fingerprint(_:)`.
///
/// - SeeAlso: <http://www.isthe.com/chongo/tech/comp/fnv/>
public struct StableHash: Sendable {
  public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

  public init() {}

  /// Mixes bytes into the hash.
  public mutating func combine<S: Sequence<UInt8>>(_ bytes: S) {
    var h = value
    for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
    value = h
  }

  /// The hash of a string's UTF-8 bytes.
  public static func of(_ s: String) -> UInt64 {
    var h = StableHash()
    var copy = s
    copy.withUTF8 { h.combine($0) }
    return h.value
  }

  /// The hash of a byte array.
  public static func of(_ bytes: [UInt8]) -> UInt64 {
    var h = StableHash()
    bytes.withUnsafeBufferPointer { h.combine($0) }
    return h.value
  }
}
