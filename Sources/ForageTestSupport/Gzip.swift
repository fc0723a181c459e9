import ForageSupport

/// Tiny gzip writers for test servers: a bomb of zeros and a stored (uncompressed) member.
///
/// Neither compresses real data well; they exist so a test server can send valid gzip
/// without zlib. A bomb of 1 GiB of zeros is about 1 MiB on the wire:
///
///     let bomb = Gzip.zeroBomb(decodedSize: 1 << 30)   // ≈ 1.04 MB
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc1952> (gzip),
///   <https://www.rfc-editor.org/rfc/rfc1951> (DEFLATE).
public enum Gzip {
  /// A gzip member that decodes to `decodedSize` zero bytes, in about `decodedSize / 1032`
  /// bytes.
  ///
  /// One dynamic-Huffman DEFLATE block: a literal zero, then matches of length 258 at
  /// distance 1, each coded in two bits (the length and distance codes are one bit each),
  /// then the remaining literals and the end of block.
  ///
  /// - Complexity: O(`decodedSize` / 1032).
  /// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc1951#section-3.2.7>
  public static func zeroBomb(decodedSize: Int) -> [UInt8] {
    precondition(decodedSize >= 0, "decodedSize must not be negative")
    var out = header
    out += deflateZeros(count: decodedSize)
    appendLittleEndian(CRC32.ofZeros(count: decodedSize), to: &out)
    appendLittleEndian(UInt32(truncatingIfNeeded: decodedSize), to: &out)
    return out
  }

  /// ``zeroBomb(decodedSize:)``, remembered for the last few sizes asked for.
  static func cachedZeroBomb(decodedSize: Int) -> [UInt8] {
    if let bomb = bombCache.withLock({ $0[decodedSize] }) { return bomb }
    let bomb = zeroBomb(decodedSize: decodedSize)
    bombCache.withLock { cache in
      if cache.count >= 4 { cache.removeAll() }
      cache[decodedSize] = bomb
    }
    return bomb
  }

  private static let bombCache = Locked<[Int: [UInt8]]>([:])

  /// A gzip member holding `data` in stored (uncompressed) DEFLATE blocks.
  ///
  /// Valid for every decoder; it only adds framing (5 bytes per 65,535).
  ///
  /// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc1951#section-3.2.4>
  public static func stored(_ data: [UInt8]) -> [UInt8] {
    var out = header
    var start = 0
    repeat {
      let end = min(start + 65_535, data.count)
      let length = UInt16(end - start)
      out.append(end == data.count ? 1 : 0)  // BFINAL, BTYPE 00, padded to the byte
      out += [UInt8(length & 0xFF), UInt8(length >> 8)]
      out += [UInt8(~length & 0xFF), UInt8(~length >> 8)]
      out += data[start..<end]
      start = end
    } while start < data.count
    var crc = CRC32()
    crc.update(data)
    appendLittleEndian(crc.value, to: &out)
    appendLittleEndian(UInt32(truncatingIfNeeded: data.count), to: &out)
    return out
  }

  /// ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=3 (Unix).
  /// https://www.rfc-editor.org/rfc/rfc1952#section-2.3
  static let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]

  static func appendLittleEndian(_ value: UInt32, to out: inout [UInt8]) {
    for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> shift)) }
  }

  /// A raw DEFLATE stream of `count` zeros.
  static func deflateZeros(count: Int) -> [UInt8] {
    var bits = BitWriter()
    bits.write(1, count: 1)  // BFINAL
    bits.write(2, count: 2)  // BTYPE = dynamic Huffman
    // Literal/length code lengths: 0 → 2, 256 (end of block) → 2, 285 (length 258) → 1;
    // distance code lengths: 0 (distance 1) → 1. Canonical codes (RFC 1951 §3.2.2):
    // 285 = "0", 0 = "10", 256 = "11"; distance 0 = "0".
    bits.write(286 - 257, count: 5)  // HLIT
    bits.write(1 - 1, count: 5)  // HDIST
    // Code-length alphabet: symbols 1, 2 (length 2) and 18 (length 1), sent in the
    // permuted order up to symbol 1, the 18th entry.
    let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1]
    bits.write(UInt32(order.count - 4), count: 4)  // HCLEN
    let codeLengthLengths: [Int: UInt32] = [18: 1, 1: 2, 2: 2]
    for symbol in order { bits.write(codeLengthLengths[symbol] ?? 0, count: 3) }
    // Canonical code-length codes: 18 = "0", 1 = "10", 2 = "11".
    func lengthSymbol(_ symbol: Int) {
      switch symbol {
      case 18: bits.writeCode(0b0, length: 1)
      case 1: bits.writeCode(0b10, length: 2)
      default: bits.writeCode(0b11, length: 2)
      }
    }
    func zeros(_ n: Int) {  // symbol 18: 11...138 zero lengths, 7 extra bits
      var left = n
      while left > 0 {
        let run = min(left, 138)
        lengthSymbol(18)
        bits.write(UInt32(run - 11), count: 7)
        left -= run
      }
    }
    lengthSymbol(2)  // literal 0
    zeros(255)  // literals 1...255
    lengthSymbol(2)  // 256, end of block
    zeros(28)  // lengths 257...284
    lengthSymbol(1)  // 285, length 258
    lengthSymbol(1)  // distance code 0

    var remaining = count
    if remaining > 0 {
      bits.writeCode(0b10, length: 2)  // one literal zero to copy from
      remaining -= 1
    }
    let matches = remaining / 258
    bits.writeZeroBits(matches * 2)  // each match: length "0", distance "0"
    for _ in 0..<(remaining % 258) { bits.writeCode(0b10, length: 2) }
    bits.writeCode(0b11, length: 2)  // end of block
    return bits.finish()
  }
}

/// Packs bits least-significant first, as DEFLATE requires.
/// https://www.rfc-editor.org/rfc/rfc1951#section-3.1.1
struct BitWriter {
  private(set) var bytes: [UInt8] = []
  private var buffer: UInt32 = 0
  private var used = 0

  /// Writes the low `count` bits of `value`, least-significant bit first.
  mutating func write(_ value: UInt32, count: Int) {
    for i in 0..<count { pushBit(UInt8((value >> i) & 1)) }
  }

  /// Writes a Huffman code, most-significant bit first.
  mutating func writeCode(_ code: UInt32, length: Int) {
    for i in stride(from: length - 1, through: 0, by: -1) { pushBit(UInt8((code >> i) & 1)) }
  }

  /// Writes `count` zero bits quickly.
  mutating func writeZeroBits(_ count: Int) {
    var left = count
    while left > 0 && used != 0 {
      pushBit(0)
      left -= 1
    }
    bytes += [UInt8](repeating: 0, count: left / 8)
    for _ in 0..<(left % 8) { pushBit(0) }
  }

  /// Pads the last byte with zero bits and returns everything written.
  mutating func finish() -> [UInt8] {
    if used > 0 {
      bytes.append(UInt8(buffer))
      buffer = 0
      used = 0
    }
    return bytes
  }

  private mutating func pushBit(_ bit: UInt8) {
    buffer |= UInt32(bit) << used
    used += 1
    if used == 8 {
      bytes.append(UInt8(buffer))
      buffer = 0
      used = 0
    }
  }
}

/// CRC-32 as gzip uses it (reflected polynomial 0xEDB88320).
///
///     var crc = CRC32(); crc.update(Array("123456789".utf8)); crc.value  // 0xCBF43926
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc1952#section-8>
public struct CRC32: Sendable {
  private var register: UInt32 = 0xFFFF_FFFF

  public init() {}

  /// The checksum of everything passed to `update` so far.
  public var value: UInt32 { register ^ 0xFFFF_FFFF }

  /// Adds bytes to the checksum.
  public mutating func update(_ bytes: some Sequence<UInt8>) {
    for byte in bytes {
      register = CRC32.table[Int((register ^ UInt32(byte)) & 0xFF)] ^ (register >> 8)
    }
  }

  /// The CRC-32 of `count` zero bytes, in O(log count).
  ///
  /// Feeding a zero byte is a linear map on the 32-bit register over GF(2); this raises
  /// its 32×32 matrix to the power `count` by repeated squaring.
  public static func ofZeros(count: Int) -> UInt32 {
    typealias Matrix = [UInt32]  // column i is the image of bit i
    func apply(_ m: Matrix, _ v: UInt32) -> UInt32 {
      var result: UInt32 = 0
      var v = v
      var i = 0
      while v != 0 {
        if v & 1 != 0 { result ^= m[i] }
        v >>= 1
        i += 1
      }
      return result
    }
    var power: Matrix = (0..<32).map { bit in
      let r = UInt32(1) << bit
      return table[Int(r & 0xFF)] ^ (r >> 8)
    }
    var register: UInt32 = 0xFFFF_FFFF
    var n = count
    while n > 0 {
      if n & 1 != 0 { register = apply(power, register) }
      n >>= 1
      if n > 0 { power = power.map { apply(power, $0) } }
    }
    return register ^ 0xFFFF_FFFF
  }

  static let table: [UInt32] = (0..<256).map { index in
    var c = UInt32(index)
    for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    return c
  }
}
