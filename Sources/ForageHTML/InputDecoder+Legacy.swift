/// The decoders of the Encoding Standard other than UTF-8: UTF-16, the
/// single-byte encodings, the CJK multi-byte encodings, `replacement` and
/// `x-user-defined`. Each runs over the whole input at once, so the
/// standard's "prepend to the I/O queue" is a step back in the input, and
/// end of input is the end of the buffer. Errors are the standard's
/// replacement mode: U+FFFD, with the bytes the standard says to put back
/// decoded again.
///
/// - SeeAlso: <https://encoding.spec.whatwg.org/#decoders>
extension InputDecoder {
  /// Decoded text as UTF-8 with CR and CRLF normalized to LF.
  ///
  /// It writes to a `ByteBuffer` (one capacity check per byte, no
  /// copy-on-write check): through `[UInt8].append` the decoders of CJK
  /// text spent most of their time in the appends. `finish()` hands the
  /// bytes over as an array and frees the buffer; call it exactly once.
  struct DecodedText {
    private var buffer: ByteBuffer
    /// The last code point written was a CR (written as LF).
    var afterCR = false

    /// Room for `capacity` bytes to start with (it grows as needed).
    init(capacity: Int) {
      buffer = ByteBuffer(capacity: capacity)
    }

    /// The decoded bytes; frees the buffer.
    mutating func finish() -> [UInt8] {
      let bytes = buffer.array
      buffer.free()
      return bytes
    }

    @inline(__always) mutating func ascii(_ c: UInt8) {
      if c == 0x0D {
        buffer.append(0x0A)
        afterCR = true
        return
      }
      if c == 0x0A && afterCR {
        afterCR = false
        return
      }
      afterCR = false
      buffer.append(c)
    }

    @inline(__always) mutating func scalar(_ v: UInt32) {
      if v < 0x80 {
        ascii(UInt8(v))
        return
      }
      afterCR = false
      buffer.appendNonASCII(v)
    }

    /// A character from a table of `EncodingIndex.packedUTF8` (never
    /// ASCII, never 0).
    @inline(__always) mutating func packed(_ p: UInt32) {
      afterCR = false
      buffer.appendPacked(p)
    }

    /// U+FFFD, the standard's error in replacement mode.
    @inline(__always) mutating func error() { scalar(0xFFFD) }

    /// `b[from..<to]`, ASCII without CR (as `scanPlainASCII` finds it).
    @inline(__always) mutating func asciiRun(_ b: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) {
      var from = from
      if afterCR && b[from] == 0x0A { from += 1 }
      afterCR = false
      if from < to { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: b[from..<to])) }
    }
  }

  @inline(__always) static func isASCII(_ c: UInt8) -> Bool { c < 0x80 }

  /// https://encoding.spec.whatwg.org/#shared-utf-16-decoder
  static func decodeUTF16(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, bigEndian: Bool, _ out: inout DecodedText) {
    let n = b.count
    var i = start
    var leadSurrogate: UInt32? = nil
    while i + 1 < n {
      let unit = bigEndian ? UInt32(b[i]) << 8 | UInt32(b[i + 1]) : UInt32(b[i + 1]) << 8 | UInt32(b[i])
      i += 2
      if let lead = leadSurrogate {
        leadSurrogate = nil
        if unit >= 0xDC00 && unit <= 0xDFFF {
          out.scalar(0x10000 + ((lead - 0xD800) << 10) + (unit - 0xDC00))
          continue
        }
        // Prepend the code unit's two bytes: it is read again.
        i -= 2
        out.error()
        continue
      }
      if unit >= 0xD800 && unit <= 0xDBFF {
        leadSurrogate = unit
      } else if unit >= 0xDC00 && unit <= 0xDFFF {
        out.error()
      } else {
        out.scalar(unit)
      }
    }
    // End of input with a lead byte or a lead surrogate: one error.
    if leadSurrogate != nil || i < n { out.error() }
  }

  /// https://encoding.spec.whatwg.org/#single-byte-decoder
  static func decodeSingleByte(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ index: [UInt16], _ out: inout DecodedText) {
    let n = b.count
    var i = start
    index.withUnsafeBufferPointer { table in
      while i < n {
        let r = scanPlainASCII(b, i)
        if r > i {
          out.asciiRun(b, i, r)
          i = r
          if i >= n { break }
        }
        let c = b[i]
        i += 1
        if c < 0x80 {
          out.ascii(c)
        } else {
          let v = table[Int(c) - 0x80]
          if v == 0 { out.error() } else { out.scalar(UInt32(v)) }
        }
      }
    }
  }

  /// https://encoding.spec.whatwg.org/#x-user-defined-decoder
  static func decodeXUserDefined(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ out: inout DecodedText) {
    for i in start..<max(start, b.count) {
      let c = b[i]
      if c < 0x80 { out.ascii(c) } else { out.scalar(0xF780 + UInt32(c) - 0x80) }
    }
  }

  /// Copies the ASCII run (no CR) at `i` and moves past it; true when input remains.
  @inline(__always)
  static func skipASCII(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ out: inout DecodedText) -> Bool {
    // CJK text is mostly multi-byte characters in a row: no ASCII run to scan.
    if i < b.count && b[i] >= 0x80 { return true }
    let r = scanPlainASCII(b, i)
    if r > i {
      out.asciiRun(b, i, r)
      i = r
    }
    return i < b.count
  }

  /// The end of a failed two-byte sequence whose first byte is at `i`: the
  /// trail byte is put back (read again) when it is ASCII.
  @inline(__always)
  static func afterError(_ b: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int {
    isASCII(b[i + 1]) ? i + 1 : i + 2
  }

  /// https://encoding.spec.whatwg.org/#gb18030-decoder (GBK decodes the same way)
  static func decodeGB18030(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ out: inout DecodedText) {
    let n = b.count
    let table = EncodingIndex.gb18030Packed
    var i = start
    while i < n {
      guard skipASCII(b, &i, &out) else { break }
      let first = b[i]
      if first < 0x80 {
        out.ascii(first)
        i += 1
        continue
      }
      if first == 0x80 {
        out.scalar(0x20AC)
        i += 1
        continue
      }
      if first == 0xFF {
        out.error()
        i += 1
        continue
      }
      // gb18030 first is set; end of input after any byte of a sequence is one error.
      guard i + 1 < n else { out.error(); return }
      let second = b[i + 1]
      if second >= 0x30 && second <= 0x39 {
        guard i + 2 < n else { out.error(); return }
        let third = b[i + 2]
        guard third >= 0x81 && third <= 0xFE else {
          // Prepend second and byte: read again from the second byte.
          out.error()
          i += 1
          continue
        }
        guard i + 3 < n else { out.error(); return }
        let fourth = b[i + 3]
        guard fourth >= 0x30 && fourth <= 0x39 else {
          // Prepend second, third and byte.
          out.error()
          i += 1
          continue
        }
        let pointer = (Int(first) - 0x81) * (10 * 126 * 10) + (Int(second) - 0x30) * (10 * 126)
          + (Int(third) - 0x81) * 10 + Int(fourth) - 0x30
        if let cp = EncodingIndex.gb18030RangesCodePoint(pointer) { out.scalar(cp) } else { out.error() }
        i += 4
        continue
      }
      let offset = second < 0x7F ? 0x40 : 0x41
      if (second >= 0x40 && second <= 0x7E) || (second >= 0x80 && second <= 0xFE) {
        let packed = table[(Int(first) - 0x81) * 190 + Int(second) - offset]
        if packed != 0 {
          out.packed(packed)
          i += 2
          continue
        }
      }
      out.error()
      i = afterError(b, i)
    }
  }

  /// https://encoding.spec.whatwg.org/#big5-decoder
  static func decodeBig5(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ out: inout DecodedText) {
    let n = b.count
    var i = start
    while i < n {
      guard skipASCII(b, &i, &out) else { break }
      let lead = b[i]
      if lead < 0x80 {
        out.ascii(lead)
        i += 1
        continue
      }
      guard lead >= 0x81 && lead <= 0xFE else {
        out.error()
        i += 1
        continue
      }
      guard i + 1 < n else { out.error(); return }
      let byte = b[i + 1]
      let offset = byte < 0x7F ? 0x40 : 0x62
      if (byte >= 0x40 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xFE) {
        let pointer = (Int(lead) - 0x81) * 157 + Int(byte) - offset
        // The four pointers that decode to two code points.
        switch pointer {
        case 1133: out.scalar(0x00CA); out.scalar(0x0304); i += 2; continue
        case 1135: out.scalar(0x00CA); out.scalar(0x030C); i += 2; continue
        case 1164: out.scalar(0x00EA); out.scalar(0x0304); i += 2; continue
        case 1166: out.scalar(0x00EA); out.scalar(0x030C); i += 2; continue
        default: break
        }
        if let cp = EncodingIndex.big5CodePoint(pointer) {
          out.scalar(cp)
          i += 2
          continue
        }
      }
      out.error()
      i = afterError(b, i)
    }
  }

  /// https://encoding.spec.whatwg.org/#euc-jp-decoder
  static func decodeEUCJP(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ out: inout DecodedText) {
    let n = b.count
    let jis0208 = EncodingIndex.jis0208
    var i = start
    @inline(__always) func isTrail(_ c: UInt8) -> Bool { c >= 0xA1 && c <= 0xFE }
    while i < n {
      guard skipASCII(b, &i, &out) else { break }
      let lead = b[i]
      if lead < 0x80 {
        out.ascii(lead)
        i += 1
        continue
      }
      guard lead == 0x8E || lead == 0x8F || isTrail(lead) else {
        out.error()
        i += 1
        continue
      }
      guard i + 1 < n else { out.error(); return }
      let byte = b[i + 1]
      if lead == 0x8E && byte >= 0xA1 && byte <= 0xDF {
        out.scalar(0xFF61 - 0xA1 + UInt32(byte))
        i += 2
        continue
      }
      if lead == 0x8F && isTrail(byte) {
        // JIS X 0212: the lead is now the second byte.
        guard i + 2 < n else { out.error(); return }
        let trail = b[i + 2]
        if isTrail(trail), let cp = EncodingIndex.codePoint(EncodingIndex.jis0212, (Int(byte) - 0xA1) * 94 + Int(trail) - 0xA1) {
          out.scalar(cp)
          i += 3
          continue
        }
        out.error()
        i = isASCII(trail) ? i + 2 : i + 3
        continue
      }
      if isTrail(lead) && isTrail(byte), let cp = EncodingIndex.codePoint(jis0208, (Int(lead) - 0xA1) * 94 + Int(byte) - 0xA1) {
        out.scalar(cp)
        i += 2
        continue
      }
      out.error()
      i = afterError(b, i)
    }
  }

  /// The states of the ISO-2022-JP decoder.
  enum ISO2022JPState { case ascii, roman, katakana, leadByte, trailByte, escapeStart, escape }

  /// https://encoding.spec.whatwg.org/#iso-2022-jp-decoder
  static func decodeISO2022JP(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ out: inout DecodedText) {
    let n = b.count
    let jis0208 = EncodingIndex.jis0208
    var i = start
    var state = ISO2022JPState.ascii, outputState = ISO2022JPState.ascii
    var lead: UInt8 = 0
    var outputFlag = false
    while true {
      let at = i
      let eof = i >= n
      let byte: UInt8 = eof ? 0 : b[i]
      if !eof { i += 1 }
      switch state {
      case .ascii, .roman, .katakana, .leadByte:
        if eof { return }
        if byte == 0x1B {
          state = .escapeStart
          continue
        }
        outputFlag = false
        switch state {
        case .ascii where byte <= 0x7F && byte != 0x0E && byte != 0x0F: out.ascii(byte)
        case .roman where byte == 0x5C: out.scalar(0x00A5)
        case .roman where byte == 0x7E: out.scalar(0x203E)
        case .roman where byte <= 0x7F && byte != 0x0E && byte != 0x0F: out.ascii(byte)
        case .katakana where byte >= 0x21 && byte <= 0x5F: out.scalar(0xFF61 - 0x21 + UInt32(byte))
        case .leadByte where byte >= 0x21 && byte <= 0x7E:
          lead = byte
          state = .trailByte
        default: out.error()
        }
      case .trailByte:
        if eof {
          // Prepend end of input: it is read again in the lead byte state.
          state = .leadByte
          out.error()
          continue
        }
        if byte == 0x1B {
          state = .escapeStart
          out.error()
          continue
        }
        state = .leadByte
        if byte >= 0x21 && byte <= 0x7E,
          let cp = EncodingIndex.codePoint(jis0208, (Int(lead) - 0x21) * 94 + Int(byte) - 0x21)
        {
          out.scalar(cp)
        } else {
          out.error()
        }
      case .escapeStart:
        if !eof && (byte == 0x24 || byte == 0x28) {
          lead = byte
          state = .escape
          continue
        }
        i = at  // prepend byte
        outputFlag = false
        state = outputState
        out.error()
      case .escape:
        let l = lead
        lead = 0
        var next: ISO2022JPState? = nil
        if !eof {
          if l == 0x28 && byte == 0x42 { next = .ascii }
          else if l == 0x28 && byte == 0x4A { next = .roman }
          else if l == 0x28 && byte == 0x49 { next = .katakana }
          else if l == 0x24 && (byte == 0x40 || byte == 0x42) { next = .leadByte }
        }
        if let next {
          state = next
          outputState = next
          let output = outputFlag
          outputFlag = true
          if output { out.error() }
          continue
        }
        i = at - 1  // prepend lead and byte
        outputFlag = false
        state = outputState
        out.error()
      }
    }
  }

  /// https://encoding.spec.whatwg.org/#shift_jis-decoder
  static func decodeShiftJIS(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ out: inout DecodedText) {
    let n = b.count
    let table = EncodingIndex.shiftJISPacked
    var i = start
    while i < n {
      guard skipASCII(b, &i, &out) else { break }
      let lead = b[i]
      if lead <= 0x80 {
        out.scalar(UInt32(lead))  // ASCII, and 0x80 is U+0080
        i += 1
        continue
      }
      if lead >= 0xA1 && lead <= 0xDF {
        out.scalar(0xFF61 - 0xA1 + UInt32(lead))
        i += 1
        continue
      }
      guard (lead >= 0x81 && lead <= 0x9F) || (lead >= 0xE0 && lead <= 0xFC) else {
        out.error()
        i += 1
        continue
      }
      guard i + 1 < n else { out.error(); return }
      let byte = b[i + 1]
      let offset = byte < 0x7F ? 0x40 : 0x41
      let leadOffset = lead < 0xA0 ? 0x81 : 0xC1
      if (byte >= 0x40 && byte <= 0x7E) || (byte >= 0x80 && byte <= 0xFC) {
        // The private-use range 8836...10715 is in the table too.
        let packed = table[(Int(lead) - leadOffset) * 188 + Int(byte) - offset]
        if packed != 0 {
          out.packed(packed)
          i += 2
          continue
        }
      }
      out.error()
      i = afterError(b, i)
    }
  }

  /// https://encoding.spec.whatwg.org/#euc-kr-decoder
  static func decodeEUCKR(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ out: inout DecodedText) {
    let n = b.count
    let index = EncodingIndex.eucKr
    var i = start
    while i < n {
      guard skipASCII(b, &i, &out) else { break }
      let lead = b[i]
      if lead < 0x80 {
        out.ascii(lead)
        i += 1
        continue
      }
      guard lead >= 0x81 && lead <= 0xFE else {
        out.error()
        i += 1
        continue
      }
      guard i + 1 < n else { out.error(); return }
      let byte = b[i + 1]
      if byte >= 0x41 && byte <= 0xFE, let cp = EncodingIndex.codePoint(index, (Int(lead) - 0x81) * 190 + Int(byte) - 0x41) {
        out.scalar(cp)
        i += 2
        continue
      }
      out.error()
      i = afterError(b, i)
    }
  }
}
