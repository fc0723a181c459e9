/// DEFLATE decompression (RFC 1951) and the gzip file format around it
/// (RFC 1952), with a hard limit on the output: a gzip bomb is cut off after
/// `limit` bytes, never decompressed further.
///
///     let result = Inflate.gunzip(body, limit: 50 << 20)
///     if result.limitReached { /* more followed: cut off */ }
///     if let failure = result.failure { /* damaged or truncated: result.bytes is what came before */ }
///
/// Lenient the way a reader of damaged downloads wants: decoding stops at the
/// first error and returns everything decoded up to it, with the error. A
/// gzip file may hold several members (their outputs are concatenated, as
/// `gunzip` does); bytes after the last member that do not start another are
/// ignored. Each complete member's CRC-32 and length (ISIZE) are checked: a
/// mismatch is reported as ``Failure/checksum`` with the member's output
/// kept. Incomplete Huffman codes are accepted (a code the stream never uses
/// needs no meaning); over-subscribed ones are ``Failure/malformed(_:)``.
///
/// The package's one inflater: sitemaps served as `.xml.gz` files arrive
/// without `Content-Encoding` (the transport decodes that kind itself) and
/// are decompressed here.
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc1951>,
///   <https://www.rfc-editor.org/rfc/rfc1952>
package enum Inflate {
  /// Why decoding stopped before the end of the input.
  package enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The input does not start with the gzip magic bytes (1F 8B) and method 8.
    case notGzip
    /// The input ends in the middle of a header, a block or a trailer.
    case truncated
    /// The stream breaks the format: the reason.
    case malformed(String)
    /// A member's CRC-32 or ISIZE does not match its output.
    case checksum

    package var description: String {
      switch self {
      case .notGzip: "not gzip data"
      case .truncated: "the compressed data ends early"
      case .malformed(let reason): "damaged compressed data: \(reason)"
      case .checksum: "the compressed data's checksum does not match"
      }
    }
  }

  /// What decoding gave.
  package struct Result: Sendable, Hashable {
    /// The decompressed bytes: all of them, or those before the limit or the
    /// failure.
    package var bytes: [UInt8]
    /// True when the stream had more output than the limit: `bytes` holds the
    /// first `limit` bytes.
    package var limitReached: Bool
    /// Why decoding stopped early; nil when every member ended properly (or
    /// the limit was reached first).
    package var failure: Failure?
  }

  /// True when `bytes` start as a gzip member does: ID1 ID2 (1F 8B) and
  /// compression method 8 (deflate).
  package static func isGzip(_ bytes: some Collection<UInt8>) -> Bool {
    var i = bytes.makeIterator()
    return i.next() == 0x1F && i.next() == 0x8B && i.next() == 8
  }

  /// Decompresses gzip data (RFC 1952), every member in turn, stopping after
  /// `limit` output bytes.
  package static func gunzip(_ data: [UInt8], limit: Int = .max) -> Result {
    data.withUnsafeBufferPointer { input in
      var inflater = Inflater(input: input, limit: max(0, limit))
      defer { inflater.deallocate() }
      let failure = inflater.gunzip()
      return Result(bytes: inflater.outputArray(), limitReached: inflater.limitReached, failure: failure)
    }
  }

  /// Decompresses a raw DEFLATE stream (RFC 1951, no wrapper), stopping after
  /// `limit` output bytes. Bytes after the final block are ignored.
  package static func inflate(_ data: [UInt8], limit: Int = .max) -> Result {
    data.withUnsafeBufferPointer { input in
      var inflater = Inflater(input: input, limit: max(0, limit))
      defer { inflater.deallocate() }
      let failure = inflater.inflateStream()
      return Result(bytes: inflater.outputArray(), limitReached: inflater.limitReached, failure: failure)
    }
  }

  /// The CRC-32 of `bytes` as gzip computes it (reflected polynomial
  /// 0xEDB88320, RFC 1952 §8), continuing from `crc` (0 to start).
  package static func crc32(_ bytes: UnsafeBufferPointer<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
    var c = ~crc
    crcTable.withUnsafeBufferPointer { table in
      for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
    }
    return ~c
  }

  /// The CRC-32 of `bytes` (see ``crc32(_:continuing:)``).
  package static func crc32(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBufferPointer { crc32($0) }
  }

  static let crcTable: [UInt32] = (0..<256).map { index in
    var c = UInt32(index)
    for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    return c
  }

  // MARK: Tables of RFC 1951 §3.2.5

  static let lengthBase: [UInt16] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
  ]
  static let lengthExtra: [UInt8] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
  ]
  static let distanceBase: [UInt16] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
    6145, 8193, 12289, 16385, 24577,
  ]
  static let distanceExtra: [UInt8] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
  ]
  /// The order code length code lengths are sent in (§3.2.7).
  static let codeLengthOrder: [Int] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

  /// The fixed literal/length code (§3.2.6).
  static let fixedLiteralCode: Huffman = {
    var lengths = [UInt8](repeating: 8, count: 288)
    for i in 144..<256 { lengths[i] = 9 }
    for i in 256..<280 { lengths[i] = 7 }
    return try! Huffman(lengths)
  }()
  /// The fixed distance code: 30 usable codes of 5 bits (30 and 31 never occur).
  static let fixedDistanceCode: Huffman = try! Huffman([UInt8](repeating: 5, count: 30))
}

/// A canonical Huffman code (RFC 1951 §3.2.2), decoded through a table of
/// its codes of up to `fastBits` bits, and code by code beyond.
struct Huffman: Sendable {
  static let fastBits = 10
  /// For each `fastBits`-bit window of the input (least significant bit
  /// first): `symbol << 4 | length` of the code it starts with, 0 when that
  /// code is longer (or missing).
  var fast: [UInt16]
  /// How many codes have each length 0…15.
  var counts: [UInt16]
  /// Symbols by code, shortest codes first.
  var symbols: [UInt16]

  /// Builds the code from each symbol's code length (0: unused).
  ///
  /// - Throws: ``Inflate/Failure/malformed(_:)`` for an over-subscribed set of lengths.
  init(_ lengths: [UInt8]) throws(Inflate.Failure) {
    var counts = [UInt16](repeating: 0, count: 16)
    for l in lengths { counts[Int(l)] += 1 }
    counts[0] = 0
    var left = 1
    for len in 1...15 {
      left <<= 1
      left -= Int(counts[len])
      if left < 0 { throw .malformed("an over-subscribed Huffman code") }
    }
    var offsets = [Int](repeating: 0, count: 16)
    for len in 1..<15 { offsets[len + 1] = offsets[len] + Int(counts[len]) }
    var symbols = [UInt16](repeating: 0, count: lengths.count)
    var fast = [UInt16](repeating: 0, count: 1 << Huffman.fastBits)
    // Canonical codes: the first code of each length, then in symbol order.
    var next = [Int](repeating: 0, count: 16)
    var code = 0
    for len in 1...15 {
      code = (code + Int(counts[len - 1])) << 1
      next[len] = code
    }
    for (symbol, l) in lengths.enumerated() where l > 0 {
      let len = Int(l)
      symbols[offsets[len]] = UInt16(symbol)
      offsets[len] += 1
      let c = next[len]
      next[len] += 1
      guard len <= Huffman.fastBits else { continue }
      // The code's bits as they arrive: most significant first, so reversed.
      var reversed = 0
      for k in 0..<len where c & (1 << k) != 0 { reversed |= 1 << (len - 1 - k) }
      let entry = UInt16(symbol) << 4 | UInt16(len)
      var fill = reversed
      while fill < 1 << Huffman.fastBits {
        fast[fill] = entry
        fill += 1 << len
      }
    }
    self.fast = fast
    self.counts = counts
    self.symbols = symbols
  }
}

/// One decoding run over contiguous input, writing to a buffer that grows
/// up to the limit.
struct Inflater {
  let input: UnsafeBufferPointer<UInt8>
  /// The next input byte not yet in `bits`.
  var position = 0
  /// Input bits not yet used, the next one lowest.
  var bits: UInt64 = 0
  var bitCount = 0
  let limit: Int
  var output: UnsafeMutablePointer<UInt8>
  var capacity: Int
  var count = 0
  var limitReached = false

  init(input: UnsafeBufferPointer<UInt8>, limit: Int) {
    self.input = input
    self.limit = limit
    capacity = max(1, min(limit, max(1 << 16, input.count.multipliedReportingOverflow(by: 4).partialValue)))
    output = .allocate(capacity: capacity)
  }

  func deallocate() { output.deallocate() }

  func outputArray() -> [UInt8] { Array(UnsafeBufferPointer(start: output, count: count)) }

  // MARK: gzip

  /// Reads gzip members until the input holds no further one.
  mutating func gunzip() -> Inflate.Failure? {
    guard Inflate.isGzip(input) else { return .notGzip }
    while true {
      let start = count
      if let failure = readMemberHeader() { return failure }
      if let failure = inflateStream() { return failure }
      if limitReached { return nil }
      // The trailer: CRC-32 and ISIZE, little-endian, at the next byte.
      alignToByte()
      guard position + 8 <= input.count else { return .truncated }
      let crc = readUInt32LE(at: position)
      let size = readUInt32LE(at: position + 4)
      position += 8
      let member = UnsafeBufferPointer(start: output + start, count: count - start)
      if Inflate.crc32(member) != crc || UInt32(truncatingIfNeeded: count - start) != size { return .checksum }
      // Another member, or the end (trailing zeros or garbage are ignored).
      guard position + 3 <= input.count, input[position] == 0x1F, input[position + 1] == 0x8B, input[position + 2] == 8
      else { return nil }
    }
  }

  /// Skips a member's header (RFC 1952 §2.3.1) at `position`.
  private mutating func readMemberHeader() -> Inflate.Failure? {
    guard position + 10 <= input.count else { return .truncated }
    guard input[position] == 0x1F, input[position + 1] == 0x8B, input[position + 2] == 8 else { return .notGzip }
    let flags = input[position + 3]
    if flags & 0xE0 != 0 { return .malformed("reserved gzip header flags are set") }
    position += 10
    if flags & 0x04 != 0 {  // FEXTRA
      guard position + 2 <= input.count else { return .truncated }
      position += 2 + (Int(input[position]) | Int(input[position + 1]) << 8)
    }
    for flag: UInt8 in [0x08, 0x10] where flags & flag != 0 {  // FNAME, FCOMMENT: zero-terminated
      while position < input.count && input[position] != 0 { position += 1 }
      position += 1
    }
    if flags & 0x02 != 0 { position += 2 }  // FHCRC (not checked)
    return position <= input.count ? nil : .truncated
  }

  private func readUInt32LE(at i: Int) -> UInt32 {
    UInt32(input[i]) | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2]) << 16 | UInt32(input[i + 3]) << 24
  }

  // MARK: Bits

  /// Fills `bits` with whole input bytes while there is room.
  @inline(__always)
  private mutating func refill() {
    while bitCount <= 56 && position < input.count {
      bits |= UInt64(input[position]) << UInt64(bitCount)
      position += 1
      bitCount += 8
    }
  }

  /// The next `n` bits (n ≤ 32), or nil at the end of the input.
  @inline(__always)
  private mutating func take(_ n: Int) -> Int? {
    if bitCount < n {
      refill()
      if bitCount < n { return nil }
    }
    let value = Int(truncatingIfNeeded: bits & ((1 << UInt64(n)) - 1))
    bits >>= UInt64(n)
    bitCount -= n
    return value
  }

  /// Drops the bits up to the next byte boundary and gives back the whole
  /// bytes still in `bits` to the input.
  private mutating func alignToByte() {
    let drop = bitCount & 7
    bits >>= UInt64(drop)
    bitCount -= drop
    position -= bitCount / 8
    bits = 0
    bitCount = 0
  }

  /// The next symbol of `code`, or a failure.
  @inline(__always)
  private mutating func decode(_ code: Huffman) -> Result<Int, Inflate.Failure> {
    if bitCount < 15 { refill() }
    let entry = Int(code.fast[Int(truncatingIfNeeded: bits) & ((1 << Huffman.fastBits) - 1)])
    if entry != 0 {
      let len = entry & 15
      if len > bitCount { return .failure(.truncated) }
      bits >>= UInt64(len)
      bitCount -= len
      return .success(entry >> 4)
    }
    // A longer code (or none): canonical decoding, one bit at a time.
    var codeValue = 0
    var first = 0
    var index = 0
    for len in 1...15 {
      if len > bitCount { return .failure(.truncated) }
      codeValue |= Int(truncatingIfNeeded: (bits >> UInt64(len - 1)) & 1)
      let n = Int(code.counts[len])
      if codeValue - first < n {
        bits >>= UInt64(len)
        bitCount -= len
        return .success(Int(code.symbols[index + codeValue - first]))
      }
      index += n
      first += n
      first <<= 1
      codeValue <<= 1
    }
    return .failure(.malformed("a code that the block's Huffman table does not have"))
  }

  // MARK: Output

  /// Makes room for `n` more bytes, within the limit; false when the limit
  /// cuts them (then as many as fit are room for).
  @inline(__always)
  private mutating func reserve(_ n: Int) -> Int {
    let wanted = min(n, limit - count)
    if count + wanted > capacity {
      var newCapacity = capacity
      while newCapacity < count + wanted { newCapacity = min(limit, newCapacity.multipliedReportingOverflow(by: 2).partialValue) }
      let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
      grown.update(from: output, count: count)
      output.deallocate()
      output = grown
      capacity = newCapacity
    }
    return wanted
  }

  // MARK: DEFLATE

  /// Inflates one DEFLATE stream from `position` to its final block.
  mutating func inflateStream() -> Inflate.Failure? {
    let start = count
    while true {
      guard let final = take(1), let type = take(2) else { return .truncated }
      let failure: Inflate.Failure?
      switch type {
      case 0: failure = storedBlock()
      case 1: failure = codes(Inflate.fixedLiteralCode, Inflate.fixedDistanceCode, start: start)
      case 2: failure = dynamicBlock(start: start)
      default: failure = .malformed("block type 3")
      }
      if let failure { return failure }
      if limitReached || final == 1 { return nil }
    }
  }

  private mutating func storedBlock() -> Inflate.Failure? {
    alignToByte()
    guard position + 4 <= input.count else { return .truncated }
    let length = Int(input[position]) | Int(input[position + 1]) << 8
    let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
    guard length == complement ^ 0xFFFF else { return .malformed("a stored block's length check fails") }
    position += 4
    let available = min(length, input.count - position)
    let n = reserve(available)
    (output + count).update(from: input.baseAddress! + position, count: n)
    count += n
    position += n
    if n < length && count == limit {
      limitReached = true
      return nil
    }
    return available < length ? .truncated : nil
  }

  private mutating func dynamicBlock(start: Int) -> Inflate.Failure? {
    guard let hlit = take(5), let hdist = take(5), let hclen = take(4) else { return .truncated }
    let literalCount = hlit + 257
    let distanceCount = hdist + 1
    if literalCount > 286 || distanceCount > 30 { return .malformed("too many literal/length or distance codes") }
    var codeLengthLengths = [UInt8](repeating: 0, count: 19)
    for i in 0..<(hclen + 4) {
      guard let l = take(3) else { return .truncated }
      codeLengthLengths[Inflate.codeLengthOrder[i]] = UInt8(l)
    }
    let lengthCode: Huffman
    do { lengthCode = try Huffman(codeLengthLengths) } catch { return error }
    var lengths = [UInt8](repeating: 0, count: literalCount + distanceCount)
    var i = 0
    while i < lengths.count {
      let symbol: Int
      switch decode(lengthCode) {
      case .success(let s): symbol = s
      case .failure(let f): return f
      }
      if symbol < 16 {
        lengths[i] = UInt8(symbol)
        i += 1
        continue
      }
      var value: UInt8 = 0
      var repeatCount: Int
      switch symbol {
      case 16:
        if i == 0 { return .malformed("a repeated code length with none before it") }
        value = lengths[i - 1]
        guard let extra = take(2) else { return .truncated }
        repeatCount = 3 + extra
      case 17:
        guard let extra = take(3) else { return .truncated }
        repeatCount = 3 + extra
      default:
        guard let extra = take(7) else { return .truncated }
        repeatCount = 11 + extra
      }
      if i + repeatCount > lengths.count { return .malformed("code lengths run past their count") }
      while repeatCount > 0 {
        lengths[i] = value
        i += 1
        repeatCount -= 1
      }
    }
    if lengths[256] == 0 { return .malformed("no code for the end of the block") }
    let literalCode: Huffman
    let distanceCode: Huffman
    do {
      literalCode = try Huffman(Array(lengths[0..<literalCount]))
      distanceCode = try Huffman(Array(lengths[literalCount...]))
    } catch {
      return error
    }
    return codes(literalCode, distanceCode, start: start)
  }

  /// Decodes a block's literals and matches until its end-of-block code.
  private mutating func codes(_ literalCode: Huffman, _ distanceCode: Huffman, start: Int) -> Inflate.Failure? {
    while true {
      let symbol: Int
      switch decode(literalCode) {
      case .success(let s): symbol = s
      case .failure(let f): return f
      }
      if symbol < 256 {
        guard reserve(1) == 1 else {
          limitReached = true
          return nil
        }
        output[count] = UInt8(truncatingIfNeeded: symbol)
        count += 1
        continue
      }
      if symbol == 256 { return nil }
      let lengthIndex = symbol - 257
      guard lengthIndex < 29 else { return .malformed("length code \(symbol)") }
      guard let lengthExtra = take(Int(Inflate.lengthExtra[lengthIndex])) else { return .truncated }
      let length = Int(Inflate.lengthBase[lengthIndex]) + lengthExtra
      let distanceSymbol: Int
      switch decode(distanceCode) {
      case .success(let s): distanceSymbol = s
      case .failure(let f): return f
      }
      guard distanceSymbol < 30 else { return .malformed("distance code \(distanceSymbol)") }
      guard let distanceExtra = take(Int(Inflate.distanceExtra[distanceSymbol])) else { return .truncated }
      let distance = Int(Inflate.distanceBase[distanceSymbol]) + distanceExtra
      if distance > count - start { return .malformed("a distance of \(distance) back, before the start") }
      let n = reserve(length)
      copyMatch(distance: distance, length: n)
      if n < length {
        limitReached = true
        return nil
      }
    }
  }

  /// Appends `length` bytes copied from `distance` back (the source may
  /// overlap what is being written: a run repeats with period `distance`,
  /// so after each copy twice as much can be copied at once).
  @inline(__always)
  private mutating func copyMatch(distance: Int, length: Int) {
    let to = output + count
    if distance == 1 {
      to.update(repeating: output[count - 1], count: length)
    } else {
      var written = 0
      var step = distance
      while written < length {
        let chunk = min(length - written, step)
        (to + written).update(from: to + written - step, count: chunk)
        written += chunk
        step *= 2
      }
    }
    count += length
  }
}
