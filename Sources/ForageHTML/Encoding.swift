/// Input decoding: encoding sniffing and the decoders of every encoding of
/// the Encoding Standard, all producing UTF-8 with newlines normalized for
/// the tokenizer (the legacy decoders are in `InputDecoder+Legacy.swift`).
///
///     let (utf8, name) = InputDecoder.decode(bytes, transportEncoding: "text/html; charset=ISO-8859-1")
///     // name == "windows-1252"
///
/// - SeeAlso: <https://html.spec.whatwg.org/#determining-the-character-encoding>,
///   <https://encoding.spec.whatwg.org/>
public enum InputDecoder {
  /// The encodings of the Encoding Standard, each by its name.
  ///
  /// - SeeAlso: <https://encoding.spec.whatwg.org/#names-and-labels>
  public enum Encoding: String, Sendable, CaseIterable {
    case utf8 = "UTF-8"
    case ibm866 = "IBM866"
    case iso8859_2 = "ISO-8859-2"
    case iso8859_3 = "ISO-8859-3"
    case iso8859_4 = "ISO-8859-4"
    case iso8859_5 = "ISO-8859-5"
    case iso8859_6 = "ISO-8859-6"
    case iso8859_7 = "ISO-8859-7"
    case iso8859_8 = "ISO-8859-8"
    case iso8859_8I = "ISO-8859-8-I"
    case iso8859_10 = "ISO-8859-10"
    case iso8859_13 = "ISO-8859-13"
    case iso8859_14 = "ISO-8859-14"
    case iso8859_15 = "ISO-8859-15"
    case iso8859_16 = "ISO-8859-16"
    case koi8R = "KOI8-R"
    case koi8U = "KOI8-U"
    case macintosh = "macintosh"
    case windows874 = "windows-874"
    case windows1250 = "windows-1250"
    case windows1251 = "windows-1251"
    case windows1252 = "windows-1252"
    case windows1253 = "windows-1253"
    case windows1254 = "windows-1254"
    case windows1255 = "windows-1255"
    case windows1256 = "windows-1256"
    case windows1257 = "windows-1257"
    case windows1258 = "windows-1258"
    case xMacCyrillic = "x-mac-cyrillic"
    case gbk = "GBK"
    case gb18030 = "gb18030"
    case big5 = "Big5"
    case eucJP = "EUC-JP"
    case iso2022JP = "ISO-2022-JP"
    case shiftJIS = "Shift_JIS"
    case eucKR = "EUC-KR"
    case replacement = "replacement"
    case utf16BE = "UTF-16BE"
    case utf16LE = "UTF-16LE"
    case xUserDefined = "x-user-defined"
  }

  /// Maps a label of the Encoding Standard (`latin1`, ` UTF8 `, `sjis`…) to
  /// its encoding, or nil for a string that is no label.
  ///
  ///     InputDecoder.encoding(forLabel: "x-sjis")   // .shiftJIS
  ///
  /// - SeeAlso: <https://encoding.spec.whatwg.org/#concept-encoding-get>
  public static func encoding(forLabel label: String) -> Encoding? {
    var label = label
    return label.withUTF8 { encoding(forLabelBytes: $0) }
  }

  /// Every label of the Encoding Standard, sorted.
  public static var allLabels: [String] { labelTable.map(\.label) }

  /// The labels as bytes with their encodings, sorted by label (built from
  /// the generated `labelTable` the first time a label is not `utf-8`).
  static let labels: [(label: [UInt8], encoding: Encoding)] = labelTable.map { (Array($0.label.utf8), Encoding(rawValue: $0.name)!) }

  /// `encoding(forLabel:)` over the label's bytes. Labels match ASCII
  /// case-insensitively after trimming ASCII whitespace; the common `utf-8`
  /// is found without a table lookup.
  static func encoding(forLabelBytes label: UnsafeBufferPointer<UInt8>) -> Encoding? {
    @inline(__always) func isSpace(_ c: UInt8) -> Bool {
      c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == 0x0C
    }
    var lo = 0, hi = label.count
    while lo < hi && isSpace(label[lo]) { lo += 1 }
    while hi > lo && isSpace(label[hi - 1]) { hi -= 1 }
    let n = hi - lo
    // The longest label, "cseucpkdfmtjapanese", has 19 bytes.
    guard n > 0 && n <= 19 else { return nil }
    @inline(__always) func matches(_ s: StaticString) -> Bool {
      guard s.utf8CodeUnitCount == n else { return false }
      for k in 0..<n where toLower(label[lo + k]) != s.utf8Start[k] { return false }
      return true
    }
    if matches("utf-8") || matches("utf8") { return .utf8 }
    var lowered = [UInt8](repeating: 0, count: n)
    for k in 0..<n { lowered[k] = toLower(label[lo + k]) }
    let table = labels
    var first = 0, last = table.count
    while first < last {
      let mid = (first + last) / 2
      if table[mid].label.lexicographicallyPrecedes(lowered) { first = mid + 1 } else { last = mid }
    }
    return first < table.count && table[first].label == lowered ? table[first].encoding : nil
  }

  /// Picks the encoding of `bytes`: BOM, then the transport charset (a label
  /// or a whole `Content-Type` value), then a `<meta>` prescan of the first
  /// 1024 bytes, then UTF-8 when the bytes are valid UTF-8, else
  /// windows-1252.
  ///
  /// - Returns: the encoding and the number of BOM bytes to skip.
  public static func sniff(_ bytes: [UInt8], transportEncoding: String? = nil) -> (Encoding, bomLength: Int) {
    if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { return (.utf8, 3) }
    if bytes.count >= 2 && bytes[0] == 0xFE && bytes[1] == 0xFF { return (.utf16BE, 2) }
    if bytes.count >= 2 && bytes[0] == 0xFF && bytes[1] == 0xFE { return (.utf16LE, 2) }
    if let t = transportEncoding {
      let label = charsetParameter(t) ?? t
      if let e = encoding(forLabel: label) { return (e, 0) }
    }
    if var e = prescan(bytes) {
      if e == .utf16BE || e == .utf16LE { e = .utf8 }
      if e == .xUserDefined { e = .windows1252 }
      return (e, 0)
    }
    return (isValidUTF8(bytes) ? .utf8 : .windows1252, 0)
  }

  /// Decodes `bytes` to UTF-8 (invalid sequences become U+FFFD) and
  /// normalizes CR and CRLF to LF.
  public static func decode(_ bytes: [UInt8], transportEncoding: String? = nil) -> (utf8: [UInt8], encoding: Encoding) {
    let (e, bom) = sniff(bytes, transportEncoding: transportEncoding)
    // The common case needs no copy: valid UTF-8 without a BOM or a CR.
    if e == .utf8 && bom == 0 && isCleanUTF8(bytes) { return (bytes, e) }
    return (decode(bytes, from: bom, as: e), e)
  }

  /// True when `bytes` is valid UTF-8 and holds no CR.
  static func isCleanUTF8(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBufferPointer { b in
      var i = 0
      while i < b.count {
        i = scanPlainASCII(b, i)
        if i >= b.count { break }
        if b[i] == 0x0D { return false }
        let l = utf8SequenceLength(b, i)
        if l <= 0 { return false }
        i += l
      }
      return true
    }
  }

  /// Decodes `bytes[start...]` from encoding `e` to normalized UTF-8.
  public static func decode(_ bytes: [UInt8], from start: Int = 0, as e: Encoding) -> [UInt8] {
    guard e != .utf8 else {
      var out: [UInt8] = []
      out.reserveCapacity(bytes.count - start + 16)
      bytes.withUnsafeBufferPointer { decodeUTF8($0, start, &out) }
      return out
    }
    // CJK text grows by half in UTF-8 (two bytes become three).
    var sink = DecodedText(capacity: (bytes.count - start) * 3 / 2 + 16)
    bytes.withUnsafeBufferPointer { b in
      switch e {
      case .utf8: break
      case .utf16LE: decodeUTF16(b, start, bigEndian: false, &sink)
      case .utf16BE: decodeUTF16(b, start, bigEndian: true, &sink)
      case .gbk, .gb18030: decodeGB18030(b, start, &sink)
      case .big5: decodeBig5(b, start, &sink)
      case .eucJP: decodeEUCJP(b, start, &sink)
      case .iso2022JP: decodeISO2022JP(b, start, &sink)
      case .shiftJIS: decodeShiftJIS(b, start, &sink)
      case .eucKR: decodeEUCKR(b, start, &sink)
      case .replacement: if start < b.count { sink.error() }
      case .xUserDefined: decodeXUserDefined(b, start, &sink)
      default: decodeSingleByte(b, start, EncodingIndex.singleByte(e)!, &sink)
      }
    }
    return sink.finish()
  }

  /// Normalizes newlines of text that is already valid UTF-8.
  static func normalizeNewlines(_ bytes: [UInt8]) -> [UInt8] {
    guard bytes.contains(0x0D) else { return bytes }
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var i = 0
    while i < bytes.count {
      let c = bytes[i]
      if c == 0x0D {
        out.append(0x0A)
        if i + 1 < bytes.count && bytes[i + 1] == 0x0A { i += 1 }
      } else {
        out.append(c)
      }
      i += 1
    }
    return out
  }

  // MARK: Decoders

  /// https://encoding.spec.whatwg.org/#utf-8-decoder
  static func decodeUTF8(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ out: inout [UInt8]) {
    let n = b.count
    var i = start
    while i < n {
      // ASCII run.
      let runStart = i
      i = scanPlainASCII(b, i)
      if i > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: b[runStart..<i])) }
      guard i < n else { break }
      let c = b[i]
      if c == 0x0D {
        out.append(0x0A)
        i += 1
        if i < n && b[i] == 0x0A { i += 1 }
        continue
      }
      let length = utf8SequenceLength(b, i)
      if length > 0 {
        out.append(contentsOf: UnsafeBufferPointer(rebasing: b[i..<i + length]))
        i += length
      } else {
        out.append(0xEF); out.append(0xBF); out.append(0xBD)
        i += max(1, -length)
      }
    }
  }

  /// The length of the valid UTF-8 sequence at `i`, or minus the length of
  /// the maximal invalid subpart to replace with one U+FFFD.
  @inline(__always)
  static func utf8SequenceLength(_ b: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int {
    let c = b[i]
    let n = b.count
    var need = 0
    var lower: UInt8 = 0x80, upper: UInt8 = 0xBF
    switch c {
    case 0xC2...0xDF: need = 1
    case 0xE0: need = 2; lower = 0xA0
    case 0xE1...0xEC, 0xEE...0xEF: need = 2
    case 0xED: need = 2; upper = 0x9F
    case 0xF0: need = 3; lower = 0x90
    case 0xF1...0xF3: need = 3
    case 0xF4: need = 3; upper = 0x8F
    default: return -1
    }
    var j = 1
    while j <= need {
      guard i + j < n else { return -j }
      let d = b[i + j]
      if d < lower || d > upper { return -j }
      lower = 0x80; upper = 0xBF
      j += 1
    }
    return need + 1
  }

  /// The index of the first byte at or after `i` that is not ASCII or is a
  /// CR (or `b.count`), scanning eight bytes at a time.
  @inline(__always)
  static func scanPlainASCII(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, allowCR: Bool = false) -> Int {
    var i = start
    let n = b.count
    guard let base = b.baseAddress else { return n }
    let raw = UnsafeRawPointer(base)
    let high: UInt64 = 0x8080_8080_8080_8080
    let ones: UInt64 = 0x0101_0101_0101_0101
    let crs: UInt64 = 0x0D0D_0D0D_0D0D_0D0D
    while i + 8 <= n {
      let w = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
      if w & high != 0 { break }
      if !allowCR {
        let v = w ^ crs
        if (v &- ones) & ~v & high != 0 { break }
      }
      i += 8
    }
    while i < n {
      let c = base[i]
      if c >= 0x80 || (!allowCR && c == 0x0D) { break }
      i += 1
    }
    return i
  }

  /// True when `bytes` is entirely valid UTF-8.
  public static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBufferPointer { b in
      var i = 0
      while i < b.count {
        i = scanPlainASCII(b, i, allowCR: true)
        if i >= b.count { break }
        let l = utf8SequenceLength(b, i)
        if l <= 0 { return false }
        i += l
      }
      return true
    }
  }

  // MARK: Prescan

  /// The `charset` parameter of a `Content-Type` value, if any.
  static func charsetParameter(_ contentType: String) -> String? {
    let bytes = Array(contentType.utf8)
    guard bytes.contains(UInt8(ascii: "=")) else { return nil }
    return bytes.withUnsafeBufferPointer { b in extractCharset(b).map { String(decoding: UnsafeBufferPointer(rebasing: b[$0]), as: UTF8.self) } }
  }

  /// Where the charset value is in `b`, or nil.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#algorithm-for-extracting-a-character-encoding-from-a-meta-element>
  static func extractCharset(_ b: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
    let n = b.count
    var i = 0
    while true {
      // Find "charset" case-insensitively.
      var found = false
      while i + 7 <= n {
        if toLower(b[i]) == UInt8(ascii: "c") && toLower(b[i + 1]) == UInt8(ascii: "h")
          && toLower(b[i + 2]) == UInt8(ascii: "a") && toLower(b[i + 3]) == UInt8(ascii: "r")
          && toLower(b[i + 4]) == UInt8(ascii: "s") && toLower(b[i + 5]) == UInt8(ascii: "e")
          && toLower(b[i + 6]) == UInt8(ascii: "t") {
          found = true
          i += 7
          break
        }
        i += 1
      }
      guard found else { return nil }
      while i < n && isHTMLWhitespace(b[i]) { i += 1 }
      guard i < n else { return nil }
      if b[i] != UInt8(ascii: "=") { continue }
      i += 1
      while i < n && isHTMLWhitespace(b[i]) { i += 1 }
      guard i < n else { return nil }
      let q = b[i]
      if q == UInt8(ascii: "\"") || q == UInt8(ascii: "'") {
        var close = i + 1
        while close < n && b[close] != q { close += 1 }
        guard close < n else { return nil }
        return (i + 1)..<close
      }
      var j = i
      while j < n && !isHTMLWhitespace(b[j]) && b[j] != UInt8(ascii: ";") { j += 1 }
      return i..<j
    }
  }

  /// Prescans the first 1024 bytes for a `<meta>` encoding declaration and
  /// returns the encoding it names, if it names one.
  ///
  /// It runs over the bytes in place and only collects attribute names and
  /// values inside `<meta>` tags; the attributes of other tags are skipped.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#prescan-a-byte-stream-to-determine-its-encoding>
  static func prescan(_ all: [UInt8]) -> Encoding? {
    all.withUnsafeBufferPointer { whole in prescan(UnsafeBufferPointer(rebasing: whole.prefix(1024))) }
  }

  static func prescan(_ b: UnsafeBufferPointer<UInt8>) -> Encoding? {
    let n = b.count
    var i = 0
    @inline(__always) func at(_ k: Int) -> UInt8 { k < n ? b[k] : 0 }
    let lt = UInt8(ascii: "<"), gt = UInt8(ascii: ">"), bang = UInt8(ascii: "!")
    let dash = UInt8(ascii: "-"), slash = UInt8(ascii: "/")
    var name: [UInt8] = [], value: [UInt8] = []
    while i < n {
      // Every case below starts at a '<'.
      if b[i] != lt { i += 1; continue }
      if at(i + 1) == bang && at(i + 2) == dash && at(i + 3) == dash {
        var j = i + 2
        while j + 2 < n && !(b[j] == dash && b[j + 1] == dash && b[j + 2] == gt) { j += 1 }
        i = j + 3
        continue
      }
      if toLower(at(i + 1)) == UInt8(ascii: "m") && toLower(at(i + 2)) == UInt8(ascii: "e")
        && toLower(at(i + 3)) == UInt8(ascii: "t") && toLower(at(i + 4)) == UInt8(ascii: "a")
        && (isHTMLWhitespace(at(i + 5)) || at(i + 5) == slash) {
        i += 5
        // The attribute list only matters for the three names read below:
        // a repeated one is skipped, as the spec's list check does.
        var seenHTTPEquiv = false, seenContent = false, seenCharset = false
        var gotPragma = false
        var needPragma: Bool? = nil
        var charset: Encoding?? = nil
        while attribute(b, &i, name: &name, value: &value, collect: true) {
          if bytesEqual(name, "http-equiv") {
            if seenHTTPEquiv { continue }
            seenHTTPEquiv = true
            if bytesEqual(value, "content-type") { gotPragma = true }
          } else if bytesEqual(name, "content") {
            if seenContent { continue }
            seenContent = true
            if charset == nil, let found = value.withUnsafeBufferPointer({ v in
              extractCharset(v).map { encoding(forLabelBytes: UnsafeBufferPointer(rebasing: v[$0])) }
            }) {
              charset = .some(found)
              needPragma = true
            }
          } else if bytesEqual(name, "charset") {
            if seenCharset { continue }
            seenCharset = true
            charset = .some(value.withUnsafeBufferPointer { encoding(forLabelBytes: $0) })
            needPragma = false
          }
        }
        if let needPragma, let charset, !(needPragma && !gotPragma), let e = charset { return e }
        continue
      }
      if isAlpha(at(i + 1)) || (at(i + 1) == slash && isAlpha(at(i + 2))) {
        while i < n && !isHTMLWhitespace(b[i]) && b[i] != gt { i += 1 }
        while attribute(b, &i, name: &name, value: &value, collect: false) {}
        continue
      }
      if at(i + 1) == bang || at(i + 1) == slash || at(i + 1) == UInt8(ascii: "?") {
        while i < n && b[i] != gt { i += 1 }
        i += 1
        continue
      }
      i += 1
    }
    return nil
  }

  /// True when `bytes` are the bytes of `s`.
  @inline(__always)
  static func bytesEqual(_ bytes: [UInt8], _ s: StaticString) -> Bool {
    guard bytes.count == s.utf8CodeUnitCount else { return false }
    let p = s.utf8Start
    for k in 0..<bytes.count where bytes[k] != p[k] { return false }
    return true
  }

  /// Reads one attribute at `i`; false when there is none (end of tag or
  /// of input). With `collect`, the lower-cased name and value are left in
  /// `name` and `value`; otherwise the attribute is only skipped.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#concept-get-attributes-when-sniffing>
  static func attribute(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int,
                        name: inout [UInt8], value: inout [UInt8], collect: Bool) -> Bool {
    let n = b.count
    let eq = UInt8(ascii: "="), gt = UInt8(ascii: ">"), slash = UInt8(ascii: "/")
    while i < n && (isHTMLWhitespace(b[i]) || b[i] == slash) { i += 1 }
    guard i < n, b[i] != gt else { return false }
    if collect {
      name.removeAll(keepingCapacity: true)
      value.removeAll(keepingCapacity: true)
    }
    // Name.
    var nameLength = 0
    while i < n {
      let c = b[i]
      if c == eq && nameLength > 0 { break }
      if isHTMLWhitespace(c) { break }
      if c == slash || c == gt { return true }
      if collect { name.append(toLower(c)) }
      nameLength += 1
      i += 1
    }
    while i < n && isHTMLWhitespace(b[i]) { i += 1 }
    guard i < n, b[i] == eq else { return true }
    i += 1
    while i < n && isHTMLWhitespace(b[i]) { i += 1 }
    guard i < n else { return false }
    let q = b[i]
    if q == UInt8(ascii: "\"") || q == UInt8(ascii: "'") {
      i += 1
      while i < n && b[i] != q {
        if collect { value.append(toLower(b[i])) }
        i += 1
      }
      guard i < n else { return false }
      i += 1
    } else if q == gt {
      return true
    } else {
      while i < n && !isHTMLWhitespace(b[i]) && b[i] != gt {
        if collect { value.append(toLower(b[i])) }
        i += 1
      }
    }
    return true
  }
}
