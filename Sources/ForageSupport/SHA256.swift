/// SHA-256 (FIPS 180-4, section 6.2): a 32-byte digest of any number of bytes.
///
///     SHA256.hash("abc".utf8)               // ba7816bf…f20015ad
///     var h = SHA256()
///     h.update("a".utf8)
///     h.update("bc".utf8)
///     h.finalize()                          // the same 32 bytes
///
/// Incremental: `update` may be called any number of times with pieces of
/// any size; whole 64-byte blocks are compressed straight from the caller's
/// contiguous bytes, and only a partial block is kept between calls.
/// `finalize()` does not change the hasher, so a running hash can be read and
/// then fed more bytes.
///
/// The package's one SHA-256: webhook signatures (`HMAC.sha256`) are built on
/// it. Not constant-time with respect to anything but the input's length,
/// which a hash of public or secret-keyed input does not need.
///
/// - SeeAlso: <https://nvlpubs.nist.gov/nistpubs/FIPS/NIST.FIPS.180-4.pdf>
package struct SHA256: Sendable {
  /// The digest's length in bytes.
  package static let digestByteCount = 32
  /// The length in bytes of the blocks the compression function takes.
  package static let blockByteCount = 64

  /// The eight working hash words H0…H7 (FIPS 180-4, 6.2).
  struct Words: Sendable {
    var a, b, c, d, e, f, g, h: UInt32

    init(
      _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32,
      _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: UInt32
    ) {
      (self.a, self.b, self.c, self.d, self.e, self.f, self.g, self.h) = (a, b, c, d, e, f, g, h)
    }
  }

  /// The hash words after every whole block seen so far.
  var words: Words
  /// The bytes of the block not yet complete (fewer than 64).
  var pending: [UInt8]
  /// How many bytes were given in all (the length field of the padding).
  var byteCount: UInt64

  /// A hasher that has seen no bytes (H(0) of FIPS 180-4, 5.3.3).
  package init() {
    words = Words(
      0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a,
      0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)
    pending = []
    pending.reserveCapacity(SHA256.blockByteCount)
    byteCount = 0
  }

  /// Feeds contiguous bytes to the hash.
  package mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard !bytes.isEmpty else { return }
    byteCount &+= UInt64(bytes.count)
    var rest = bytes
    if !pending.isEmpty {
      let take = min(SHA256.blockByteCount - pending.count, rest.count)
      pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<take]))
      rest = UnsafeRawBufferPointer(rebasing: rest[take...])
      guard pending.count == SHA256.blockByteCount else { return }
      var w = words
      pending.withUnsafeBytes { SHA256.compress(&w, $0) }
      words = w
      pending.removeAll(keepingCapacity: true)
    }
    var w = words
    while rest.count >= SHA256.blockByteCount {
      SHA256.compress(&w, UnsafeRawBufferPointer(rebasing: rest[..<SHA256.blockByteCount]))
      rest = UnsafeRawBufferPointer(rebasing: rest[SHA256.blockByteCount...])
    }
    words = w
    pending.append(contentsOf: rest)
  }

  /// Feeds bytes to the hash: contiguous collections (arrays, `Data`, a
  /// native string's UTF-8 view) go through the block path without copying;
  /// other sequences are buffered a block at a time.
  package mutating func update<S: Sequence<UInt8>>(_ bytes: S) {
    let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
    if done != nil { return }
    var chunk = [UInt8]()
    chunk.reserveCapacity(4 * SHA256.blockByteCount)
    for byte in bytes {
      chunk.append(byte)
      if chunk.count == chunk.capacity {
        chunk.withUnsafeBytes { update($0) }
        chunk.removeAll(keepingCapacity: true)
      }
    }
    chunk.withUnsafeBytes { update($0) }
  }

  /// The digest of every byte fed so far (32 bytes). The hasher is left as
  /// it was: more bytes may follow.
  package func finalize() -> [UInt8] {
    var copy = self
    let bitLength = byteCount &* 8
    // 0x80, then zeros until the length is 56 mod 64, then the 64-bit
    // big-endian bit length (FIPS 180-4, 5.1.1): one or two blocks.
    let zeros = (SHA256.blockByteCount * 2 - 8 - 1 - pending.count) % SHA256.blockByteCount
    var tail = [UInt8](repeating: 0, count: 1 + zeros + 8)
    tail[0] = 0x80
    for i in 0..<8 {
      tail[tail.count - 1 - i] = UInt8(truncatingIfNeeded: bitLength >> UInt64(8 * i))
    }
    copy.update(tail)
    precondition(copy.pending.isEmpty, "SHA-256 padding must end on a block boundary")
    var digest = [UInt8]()
    digest.reserveCapacity(SHA256.digestByteCount)
    let w = copy.words
    for word in [w.a, w.b, w.c, w.d, w.e, w.f, w.g, w.h] {
      digest.append(UInt8(truncatingIfNeeded: word >> 24))
      digest.append(UInt8(truncatingIfNeeded: word >> 16))
      digest.append(UInt8(truncatingIfNeeded: word >> 8))
      digest.append(UInt8(truncatingIfNeeded: word))
    }
    return digest
  }

  /// The digest of `bytes` (32 bytes).
  package static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
    var h = SHA256()
    h.update(bytes)
    return h.finalize()
  }

  /// The round constants K0…K63 (FIPS 180-4, 4.2.2).
  static let roundConstants: [UInt32] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
    0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
    0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
    0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
    0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
    0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
    0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
  ]

  @inline(__always) static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 {
    (x >> n) | (x << (32 &- n))
  }

  /// Runs the compression function on one 64-byte block (FIPS 180-4, 6.2.2).
  /// The message schedule lives in a stack buffer: no allocation per block.
  static func compress(_ words: inout Words, _ block: UnsafeRawBufferPointer) {
    precondition(block.count == blockByteCount)
    withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
      for t in 0..<16 {
        w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: 4 * t, as: UInt32.self))
      }
      for t in 16..<64 {
        let x = w[t - 15]
        let y = w[t - 2]
        let s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3)
        let s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y >> 10)
        w[t] = s1 &+ w[t - 7] &+ s0 &+ w[t - 16]
      }
      roundConstants.withUnsafeBufferPointer { k in
        var (a, b, c, d) = (words.a, words.b, words.c, words.d)
        var (e, f, g, h) = (words.e, words.f, words.g, words.h)
        for t in 0..<64 {
          let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
          let ch = (e & f) ^ (~e & g)
          let t1 = h &+ s1 &+ ch &+ k[t] &+ w[t]
          let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
          let maj = (a & b) ^ (a & c) ^ (b & c)
          let t2 = s0 &+ maj
          h = g
          g = f
          f = e
          e = d &+ t1
          d = c
          c = b
          b = a
          a = t1 &+ t2
        }
        words.a &+= a
        words.b &+= b
        words.c &+= c
        words.d &+= d
        words.e &+= e
        words.f &+= f
        words.g &+= g
        words.h &+= h
      }
    }
  }
}
