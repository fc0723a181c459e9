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

  /// A stable 64-bit hash of a large byte array (a page body) that reads
  /// eight bytes at a time in four independent lanes: FNV-1a takes one
  /// multiplication per byte, each waiting for the last, which cost a crawl
  /// of 100 KB pages 4% of its time. Not FNV-1a and not interchangeable with
  /// `of(_:)`; stable across runs and platforms (words are read little
  /// endian), so it can be stored.
  package static func ofLarge(_ bytes: [UInt8]) -> UInt64 {
    let k: UInt64 = 0x9E37_79B9_7F4A_7C15
    var lanes: (UInt64, UInt64, UInt64, UInt64) = (offsetBasis, offsetBasis ^ 1, offsetBasis ^ 2, offsetBasis ^ 3)
    @inline(__always) func mix(_ h: UInt64, _ w: UInt64) -> UInt64 {
      let m = (h ^ w) &* k
      return m ^ (m >> 29)
    }
    return bytes.withUnsafeBytes { raw in
      var i = 0
      let n = raw.count
      while i + 32 <= n {
        lanes.0 = mix(lanes.0, UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
        lanes.1 = mix(lanes.1, UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)))
        lanes.2 = mix(lanes.2, UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self)))
        lanes.3 = mix(lanes.3, UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)))
        i += 32
      }
      var h = StableHash()
      h.state = mix(mix(mix(mix(h.state, lanes.0), lanes.1), lanes.2), lanes.3) ^ UInt64(n)
      h.combine(UnsafeBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[i...]))
      return h.value
    }
  }

  /// The hash of a byte array.
  @inlinable package static func of(_ bytes: [UInt8]) -> UInt64 {
    var h = StableHash()
    bytes.withUnsafeBufferPointer { h.combine($0) }
    return h.value
  }
}
