/// A 64-bit FNV-1a hash: stable across processes, runs and platforms (unlike
/// Swift's `Hasher`, which is seeded per process), so it can be stored.
///
///     StableHash.of("abc")                  // 0xe71fa2190541574b
///     var h = StableHash()
///     h.combine("abc".utf8)                 // the same value
///
/// The package's one FNV-1a: record content hashes (the engine) and URL
/// fingerprints (`URLCanonicalizer`, which adds a finalizer) are built on it.
///
/// - SeeAlso: <http://www.isthe.com/chongo/tech/comp/fnv/>
package struct StableHash: Sendable, Hashable {
  /// FNV-1a's 64-bit offset basis.
  @usableFromInline static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
  /// FNV-1a's 64-bit prime.
  @usableFromInline static let prime: UInt64 = 0x0000_0100_0000_01B3

  @usableFromInline var state: UInt64

  /// The hash of everything combined so far.
  package var value: UInt64 { state }

  /// The hash of no bytes (the offset basis).
  @inlinable package init() { state = StableHash.offsetBasis }

  /// Mixes bytes into the hash.
  @inlinable package mutating func combine<S: Sequence<UInt8>>(_ bytes: S) {
    var h = state
    for b in bytes { h = (h ^ UInt64(b)) &* StableHash.prime }
    state = h
  }

  /// Mixes contiguous bytes into the hash (the loop callers in other modules
  /// get specialized: a hash per link of every page goes through it).
  @inlinable package mutating func combine(_ bytes: UnsafeBufferPointer<UInt8>) {
    var h = state
    var i = 0
    while i < bytes.count {
      h = (h ^ UInt64(bytes[i])) &* StableHash.prime
      i += 1
    }
    state = h
  }

  /// The hash of a string's UTF-8 bytes.
  @inlinable package static func of(_ s: String) -> UInt64 {
    var h = StableHash()
    var copy = s
    copy.withUTF8 { h.combine($0) }
    return h.value
  }

  /// The hash of a byte array.
  @inlinable package static func of(_ bytes: [UInt8]) -> UInt64 {
    var h = StableHash()
    bytes.withUnsafeBufferPointer { h.combine($0) }
    return h.value
  }
}
