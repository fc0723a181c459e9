import Foundation
import Testing

@testable import ForageHTML

/// Finds `shared/testdata/encoding` (the Encoding Standard's encodings.json
/// and indexes.json) beside the package, as `Html5libData` does.
enum EncodingData {
  static let root: String? = {
    guard let html5lib = Html5libData.root else { return nil }
    let dir = (html5lib as NSString).deletingLastPathComponent + "/encoding"
    return FileManager.default.fileExists(atPath: dir + "/indexes.json") ? dir : nil
  }()

  static var available: Bool { root != nil }

  static func json(_ name: String) -> Any? {
    guard let root, let data = FileManager.default.contents(atPath: root + "/" + name) else { return nil }
    return try? JSONSerialization.jsonObject(with: data)
  }
}

/// The decoders of the Encoding Standard, checked against its indexes, its
/// text, and Python's encoders.
/// https://encoding.spec.whatwg.org/
@Suite struct EncodingDecoderTests {
  typealias E = InputDecoder.Encoding

  func decode(_ bytes: [UInt8], _ e: E) -> String {
    String(decoding: InputDecoder.decode(bytes, as: e), as: UTF8.self)
  }

  func scalars(_ s: String) -> [String] { s.unicodeScalars.map { String($0.value, radix: 16, uppercase: true) } }

  static func hexBytes(_ hex: Substring) -> [UInt8] {
    var out: [UInt8] = []
    var k = hex.startIndex
    while k < hex.endIndex {
      let next = hex.index(k, offsetBy: 2)
      out.append(UInt8(hex[k..<next], radix: 16)!)
      k = next
    }
    return out
  }

  // MARK: Labels

  @Test(.enabled(if: EncodingData.available, "shared/testdata/encoding not found; skipped"))
  func test_labels_everyLabelOfTheStandardResolvesToItsEncoding() throws {
    let groups = try #require(EncodingData.json("encodings.json") as? [[String: Any]])
    var count = 0
    for group in groups {
      for encoding in group["encodings"] as! [[String: Any]] {
        let name = encoding["name"] as! String
        #expect(E(rawValue: name) != nil, "no case for \(name)")
        for label in encoding["labels"] as! [String] {
          count += 1
          #expect(InputDecoder.encoding(forLabel: label)?.rawValue == name, "\(label)")
          #expect(InputDecoder.encoding(forLabel: " \t" + label.uppercased() + "\n")?.rawValue == name, "\(label)")
        }
      }
    }
    #expect(count == InputDecoder.allLabels.count)
    #expect(Set(E.allCases.map(\.rawValue)).count == E.allCases.count)
  }

  @Test func test_labels_aliasesAndUnknownLabels() {
    for label in ["sjis", "x-sjis", "windows-31j", "csshiftjis", "ms932", "ms_kanji", "shift-jis"] {
      #expect(InputDecoder.encoding(forLabel: label) == .shiftJIS, "\(label)")
    }
    #expect(InputDecoder.encoding(forLabel: "gb2312") == .gbk)
    #expect(InputDecoder.encoding(forLabel: "x-user-defined") == .xUserDefined)
    #expect(InputDecoder.encoding(forLabel: "iso-2022-kr") == .replacement)
    #expect(InputDecoder.encoding(forLabel: "replacement") == .replacement)
    #expect(InputDecoder.encoding(forLabel: "utf-7") == nil)
    #expect(InputDecoder.encoding(forLabel: "shift_jis2") == nil)
    #expect(InputDecoder.encoding(forLabel: "") == nil)
  }

  // MARK: Every index entry

  /// The bytes that reach `pointer` of the index an encoding decodes with.
  static func bytes(_ e: E, pointer p: Int) -> [UInt8]? {
    switch e {
    case .gbk, .gb18030:
      let trail = p % 190
      return [UInt8(p / 190 + 0x81), UInt8(trail + (trail < 0x3F ? 0x40 : 0x41))]
    case .big5:
      let trail = p % 157
      return [UInt8(p / 157 + 0x81), UInt8(trail + (trail < 0x3F ? 0x40 : 0x62))]
    case .eucKR:
      return [UInt8(p / 190 + 0x81), UInt8(p % 190 + 0x41)]
    case .eucJP:
      return p < 94 * 94 ? [UInt8(p / 94 + 0xA1), UInt8(p % 94 + 0xA1)] : nil
    case .iso2022JP:
      return p < 94 * 94 ? [0x1B, 0x24, 0x42, UInt8(p / 94 + 0x21), UInt8(p % 94 + 0x21)] : nil
    case .shiftJIS:
      let lead = p / 188, trail = p % 188
      return [UInt8(lead + (lead < 0x1F ? 0x81 : 0xC1)), UInt8(trail + (trail < 0x3F ? 0x40 : 0x41))]
    default:
      return [UInt8(0x80 + p)]
    }
  }

  static func index(for e: E) -> String? {
    switch e {
    case .gbk, .gb18030: "gb18030"
    case .big5: "big5"
    case .eucKR: "euc-kr"
    case .eucJP, .iso2022JP, .shiftJIS: "jis0208"
    case .iso8859_8I: "iso-8859-8"
    case .utf8, .utf16BE, .utf16LE, .replacement, .xUserDefined: nil
    default: e.rawValue.lowercased()
    }
  }

  @Test(.enabled(if: EncodingData.available, "shared/testdata/encoding not found; skipped"))
  func test_index_everyEntryDecodesToItsCodePoint() throws {
    let indexes = try #require(EncodingData.json("indexes.json") as? [String: Any])
    for e in E.allCases {
      guard let name = Self.index(for: e) else { continue }
      let table = try #require(indexes[name] as? [Any], "\(name)")
      var checked = 0, wrong: [String] = []
      for (pointer, value) in table.enumerated() {
        guard let cp = value as? Int, let bytes = Self.bytes(e, pointer: pointer) else { continue }
        // Big5's four pointers that decode to two code points, and the
        // Shift_JIS pointers decoded as private use, are checked below.
        if e == .big5 && [1133, 1135, 1164, 1166].contains(pointer) { continue }
        if e == .shiftJIS && (8836...10715).contains(pointer) { continue }
        checked += 1
        let got = decode(bytes, e).unicodeScalars.map(\.value)
        if got != [UInt32(cp)] { wrong.append("\(pointer): \(got) != \(cp)") }
      }
      #expect(wrong.isEmpty, "\(e.rawValue): \(wrong.prefix(5))")
      #expect(checked > 60, "\(e.rawValue)")
    }
    // JIS X 0212 through EUC-JP's 0x8F.
    let jis0212 = try #require(indexes["jis0212"] as? [Any])
    var wrong: [String] = []
    for (p, value) in jis0212.enumerated() {
      guard let cp = value as? Int else { continue }
      let got = decode([0x8F, UInt8(p / 94 + 0xA1), UInt8(p % 94 + 0xA1)], .eucJP).unicodeScalars.map(\.value)
      if got != [UInt32(cp)] { wrong.append("\(p): \(got) != \(cp)") }
    }
    #expect(wrong.isEmpty, "jis0212: \(wrong.prefix(5))")
    // Every gb18030 range starts where the index says, in both GBK and gb18030.
    let ranges = try #require(indexes["gb18030-ranges"] as? [[Int]])
    for range in ranges {
      let p = range[0]
      let bytes: [UInt8] = [
        UInt8(p / 12600 + 0x81), UInt8(p / 1260 % 10 + 0x30), UInt8(p / 10 % 126 + 0x81), UInt8(p % 10 + 0x30),
      ]
      let expected = p == 7457 ? 0xE7C7 : range[1]
      #expect(decode(bytes, .gb18030).unicodeScalars.map(\.value) == [UInt32(expected)], "range \(p)")
      #expect(decode(bytes, .gbk).unicodeScalars.map(\.value) == [UInt32(expected)], "range \(p)")
    }
  }

  // MARK: The standard's text: errors, truncation, special cases

  @Test func test_singleByte_unmappedByteIsAnError() {
    #expect(decode([0x41, 0xA5, 0x42], .iso8859_3) == "A\u{FFFD}B")
    #expect(decode([0xDB], .windows874) == "\u{FFFD}")
    #expect(decode([0x80, 0x81, 0xE9], .windows1252) == "€\u{81}é")
    #expect(decode([0xF0, 0xD0], .koi8R) == "Пп")
  }

  @Test func test_gb18030_fourByteRangesAndErrors() {
    #expect(decode([0x80], .gb18030) == "€")
    #expect(decode([0xFF], .gb18030) == "\u{FFFD}")
    #expect(decode([0x81, 0x30, 0x81, 0x30], .gb18030) == "\u{80}")
    #expect(decode([0x84, 0x31, 0xA4, 0x39], .gb18030) == "\u{FFFF}")
    #expect(decode([0x84, 0x31, 0xA5, 0x30], .gb18030) == "\u{FFFD}")  // pointer 39420: none
    #expect(decode([0x90, 0x30, 0x81, 0x30], .gb18030) == "\u{10000}")
    #expect(decode([0xE3, 0x32, 0x9A, 0x35], .gbk) == "\u{10FFFF}")
    #expect(decode([0xE3, 0x32, 0x9A, 0x36], .gb18030) == "\u{FFFD}")  // past 1237575
    #expect(decode([0x81, 0x35, 0xF4, 0x37], .gb18030) == "\u{E7C7}")  // pointer 7457
    // Truncated: one error however far the sequence got.
    #expect(decode([0x61, 0x81], .gb18030) == "a\u{FFFD}")
    #expect(decode([0x81, 0x30], .gb18030) == "\u{FFFD}")
    #expect(decode([0x81, 0x30, 0x81], .gb18030) == "\u{FFFD}")
    // Third byte out of range: second and third are read again.
    #expect(decode([0x81, 0x30, 0x41], .gb18030) == "\u{FFFD}0A")
    // Fourth not a digit: second, third and fourth are read again.
    #expect(decode([0x81, 0x30, 0x81, 0x41], .gb18030) == "\u{FFFD}0\u{4E04}")
    // A two-byte sequence with no code point puts back an ASCII trail only.
    #expect(decode([0x81, 0x7F], .gb18030) == "\u{FFFD}\u{7F}")
    #expect(decode([0xA1, 0xFF, 0x41], .gbk) == "\u{FFFD}A")
  }

  @Test func test_big5_twoCodePointPointersAndErrors() {
    #expect(decode([0x88, 0x62, 0x88, 0x64], .big5) == "\u{CA}\u{304}\u{CA}\u{30C}")
    #expect(decode([0x88, 0xA3, 0x88, 0xA5], .big5) == "\u{EA}\u{304}\u{EA}\u{30C}")
    #expect(decode([0xA4, 0x40], .big5) == "一")
    #expect(decode([0x81, 0x40], .big5) == "\u{FFFD}@")  // pointer 0 has no code point
    #expect(decode([0xA4, 0xFF], .big5) == "\u{FFFD}")
    #expect(decode([0x80, 0xFF], .big5) == "\u{FFFD}\u{FFFD}")
    #expect(decode([0x41, 0xA4], .big5) == "A\u{FFFD}")
  }

  @Test func test_eucJP_katakanaJIS0212AndErrors() {
    #expect(decode([0x8E, 0xA1, 0x8E, 0xDF], .eucJP) == "\u{FF61}\u{FF9F}")
    #expect(decode([0xA1, 0xA1, 0xC6, 0xFC], .eucJP) == "\u{3000}日")
    #expect(decode([0x8E, 0xE0], .eucJP) == "\u{FFFD}")
    #expect(decode([0x8E, 0x41], .eucJP) == "\u{FFFD}A")
    #expect(decode([0x8F, 0xA1], .eucJP) == "\u{FFFD}")  // truncated JIS X 0212
    #expect(decode([0x8F, 0xA2, 0x41], .eucJP) == "\u{FFFD}A")
    #expect(decode([0x8F, 0x41], .eucJP) == "\u{FFFD}A")
    #expect(decode([0x80, 0xFF, 0xA1], .eucJP) == "\u{FFFD}\u{FFFD}\u{FFFD}")
  }

  @Test func test_iso2022JP_escapesStatesAndErrors() {
    let esc: UInt8 = 0x1B
    #expect(decode([esc, 0x24, 0x42, 0x30, 0x21, esc, 0x28, 0x42, 0x61], .iso2022JP) == "亜a")
    #expect(decode([esc, 0x28, 0x4A, 0x5C, 0x7E, 0x61], .iso2022JP) == "\u{A5}\u{203E}a")
    #expect(decode([esc, 0x28, 0x49, 0x21, 0x5F, 0x60], .iso2022JP) == "\u{FF61}\u{FF9F}\u{FFFD}")
    // Two escapes with no output between them: the second is an error.
    #expect(decode([esc, 0x28, 0x42, esc, 0x28, 0x42, 0x61], .iso2022JP) == "\u{FFFD}a")
    #expect(decode([esc, 0x28, 0x42, 0x61], .iso2022JP) == "a")
    // Unfinished or unknown escapes: the bytes after ESC are read again.
    #expect(decode([0x61, esc], .iso2022JP) == "a\u{FFFD}")
    #expect(decode([esc, 0x28], .iso2022JP) == "\u{FFFD}(")
    #expect(decode([esc, 0x58], .iso2022JP) == "\u{FFFD}X")
    #expect(decode([esc, 0x24, 0x41, 0x62], .iso2022JP) == "\u{FFFD}$Ab")
    // Truncated double-byte character, and ESC in the middle of one.
    #expect(decode([esc, 0x24, 0x42, 0x30], .iso2022JP) == "\u{FFFD}")
    #expect(decode([esc, 0x24, 0x42, 0x30, esc, 0x28, 0x42, 0x61], .iso2022JP) == "\u{FFFD}a")
    // SO, SI and bytes above 0x7F are errors; so is a newline in JIS X 0208 mode.
    #expect(decode([0x0E, 0x0F, 0x80, 0x61], .iso2022JP) == "\u{FFFD}\u{FFFD}\u{FFFD}a")
    #expect(decode([esc, 0x24, 0x42, 0x0A], .iso2022JP) == "\u{FFFD}")
  }

  @Test func test_shiftJIS_privateUseKatakanaAndErrors() {
    #expect(decode([0x80, 0xA1, 0xDF], .shiftJIS) == "\u{80}\u{FF61}\u{FF9F}")
    #expect(decode([0x93, 0xFA, 0x96, 0x7B], .shiftJIS) == "日本")
    #expect(decode([0xF0, 0x40, 0xF9, 0xFC], .shiftJIS) == "\u{E000}\u{E757}")
    #expect(decode([0x81, 0x20], .shiftJIS) == "\u{FFFD} ")
    #expect(decode([0x81, 0x7F], .shiftJIS) == "\u{FFFD}\u{7F}")
    #expect(decode([0xA0, 0xFD, 0xFF], .shiftJIS) == "\u{FFFD}\u{FFFD}\u{FFFD}")
    #expect(decode([0x61, 0x81], .shiftJIS) == "a\u{FFFD}")
  }

  @Test func test_eucKR_errors() {
    #expect(decode([0x81, 0x41, 0xB0, 0xA1], .eucKR) == "\u{AC02}가")
    #expect(decode([0x81, 0x40], .eucKR) == "\u{FFFD}@")
    #expect(decode([0x80, 0xFF], .eucKR) == "\u{FFFD}\u{FFFD}")
    #expect(decode([0x61, 0xB0], .eucKR) == "a\u{FFFD}")
  }

  @Test func test_utf16_surrogatesPerStandard() {
    #expect(decode([0x00, 0xD8, 0x41, 0x00], .utf16LE) == "\u{FFFD}A")
    #expect(decode([0x00, 0xD8, 0x00], .utf16LE) == "\u{FFFD}")  // lead surrogate and a lead byte: one error
    #expect(decode([0x00, 0xDC], .utf16LE) == "\u{FFFD}")
    #expect(decode([0x41], .utf16LE) == "\u{FFFD}")
    #expect(decode([0x00, 0xD8, 0x00, 0xD8, 0x00, 0xDC], .utf16LE) == "\u{FFFD}\u{10000}")
    #expect(decode([0xD8, 0x3D, 0xDE, 0x00], .utf16BE) == "😀")
  }

  @Test func test_replacementAndUserDefined() {
    #expect(decode([], .replacement) == "")
    #expect(decode([0x41, 0x42], .replacement) == "\u{FFFD}")
    #expect(decode([0x41, 0x80, 0xFF], .xUserDefined) == "A\u{F780}\u{F7FF}")
  }

  @Test func test_legacyDecoders_normalizeNewlines() {
    for e in [E.shiftJIS, .gb18030, .big5, .eucKR, .eucJP, .koi8R, .xUserDefined] {
      #expect(decode(Array("a\r\nb\rc\r".utf8) + [0x0A, 0x0D], e) == "a\nb\nc\n\n", "\(e)")
    }
  }

  // MARK: Sniffing hands over to every decoder

  @Test func test_sniffing_metaAndTransportNameLegacyEncodings() throws {
    let sjis: [UInt8] = Array("<meta charset=x-sjis><p>".utf8) + [0x93, 0xFA, 0x96, 0x7B]
    let a = Document.parse(sjis)
    #expect(a.encoding == "Shift_JIS")
    #expect(try a.select("p").first?.text == "日本")
    let gbk: [UInt8] = Array("<p>".utf8) + [0xD6, 0xD0, 0xCE, 0xC4]
    let b = Document.parse(gbk, transportEncoding: "text/html; charset=GB2312")
    #expect(b.encoding == "GBK")
    #expect(try b.select("p").first?.text == "中文")
    // An unknown transport label falls through to the <meta> prescan.
    let c = Document.parse(Array("<meta charset=koi8-r><p>".utf8) + [0xF0], transportEncoding: "text/html; charset=bogus")
    #expect(c.encoding == "KOI8-R")
    #expect(try c.select("p").first?.text == "П")
    // <meta> naming x-user-defined means windows-1252.
    #expect(Document.parse(Array("<meta charset=x-user-defined><p>".utf8) + [0x80]).encoding == "windows-1252")
    // iso-2022-kr names the replacement encoding: nothing of the page is decoded.
    let d = Document.parse(Array("<p>secret".utf8), transportEncoding: "iso-2022-kr")
    #expect(d.encoding == "replacement")
  }

  // MARK: Python's encoders

  /// Where Python's codec and the Encoding Standard disagree, by encoding,
  /// among the sampled characters (`EncodingPythonFixtures`): `refused` are
  /// code points the standard's index has and Python's encoder refuses;
  /// `decodeOtherwise` are code points Python encodes to bytes that the
  /// standard decodes to another code point. Everything else must match.
  struct PythonDifference {
    var refused: Set<UInt32> = []
    var refusedRange: ClosedRange<UInt32>? = nil
    var decodeOtherwise: Set<UInt32> = []
    var reason: String
  }

  /// The C1 controls U+0080–U+009F at the bytes of `bytes`.
  static func c1(_ bytes: [UInt32]) -> Set<UInt32> { Set(bytes) }

  static let c1Reason =
    "the standard decodes a windows-125x/874 byte with no assigned character as the C1 control of the same "
    + "value (as browsers do); Python's cpNNNN codecs leave those bytes undefined"

  static let pythonDifferences: [String: PythonDifference] = [
    "KOI8-U": PythonDifference(
      refused: [0x40E, 0x45E],
      reason: "the standard's KOI8-U is KOI8-RU: 0xAE and 0xBE are ў and Ў; Python's koi8_u (RFC 2319) has box drawing there"),
    "windows-874": PythonDifference(
      refused: c1([0x81, 0x82, 0x83, 0x84, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x8F, 0x90,
                   0x98, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9E, 0x9F]), reason: c1Reason),
    "windows-1250": PythonDifference(refused: c1([0x81, 0x83, 0x88, 0x90, 0x98]), reason: c1Reason),
    "windows-1251": PythonDifference(refused: c1([0x98]), reason: c1Reason),
    "windows-1252": PythonDifference(refused: c1([0x81, 0x8D, 0x8F, 0x90, 0x9D]), reason: c1Reason),
    "windows-1253": PythonDifference(
      refused: c1([0x81, 0x88, 0x8A, 0x8C, 0x8D, 0x8E, 0x8F, 0x90, 0x98, 0x9A, 0x9C, 0x9D, 0x9E, 0x9F]), reason: c1Reason),
    "windows-1254": PythonDifference(refused: c1([0x81, 0x8D, 0x8E, 0x8F, 0x90, 0x9D, 0x9E]), reason: c1Reason),
    "windows-1255": PythonDifference(
      refused: c1([0x81, 0x8A, 0x8C, 0x8D, 0x8E, 0x8F, 0x90, 0x9A, 0x9C, 0x9D, 0x9E, 0x9F]).union([0x5BA]),
      reason: c1Reason + "; and the standard maps 0xCA to U+05BA (HEBREW POINT HOLAM HASER FOR VAV), undefined in Python's cp1255"),
    "windows-1257": PythonDifference(
      refused: c1([0x81, 0x83, 0x88, 0x8A, 0x8C, 0x90, 0x98, 0x9A, 0x9C, 0x9F]), reason: c1Reason),
    "windows-1258": PythonDifference(
      refused: c1([0x81, 0x8A, 0x8D, 0x8E, 0x8F, 0x90, 0x9A, 0x9D, 0x9E]), reason: c1Reason),
    "GBK": PythonDifference(
      refused: [0x1E3F, 0x20AC, 0x2E81, 0x2ECA, 0x2FFB, 0x4337, 0x4CA1, 0x9FB5, 0xFE19], refusedRange: 0xE000...0xE80C,
      reason: "the standard's GBK decodes with the gb18030 index: Python's gbk (GBK 1.0) has neither its private-use "
        + "code points in the user-defined areas nor the characters GB18030 added (€ at 0xA2E3, ḿ, the radicals...)"),
    "gb18030": PythonDifference(
      decodeOtherwise: [0x1E3F, 0xE5E5, 0xE7C7],
      reason: "the standard follows GB18030-2022 where Python follows GB18030-2005: Python encodes ḿ as 81 35 F4 37 "
        + "(pointer 7457, which the standard decodes as U+E7C7), U+E7C7 as A8 BC (the standard: ḿ) and U+E5E5 as "
        + "A3 A0 (the standard: U+3000)"),
    "Big5": PythonDifference(
      refused: [0x2027, 0x2295, 0x2408, 0x2419, 0x26021, 0x5896, 0x74C6, 0x9FC8, 0xFFE5],
      decodeOtherwise: [0xA5],
      reason: "the standard's Big5 is HKSCS-2008 where Python's big5hkscs is HKSCS-2004, so Python lacks the later "
        + "additions; and Python encodes ¥ as A2 44, which the standard decodes as U+FFE5 (FULLWIDTH YEN SIGN)"),
    "EUC-JP": PythonDifference(
      refused: [0x2161, 0x2168, 0x2172, 0x2225, 0x2460, 0x246B, 0x334A, 0x337B, 0x6801, 0x7AE7, 0x9115, 0x9AD9,
                0xE000, 0xFA0E, 0xFA18, 0xFA21, 0xFA23, 0xFA27, 0xFA28, 0xFA2D, 0xFF5E, 0xFFE2],
      decodeOtherwise: [0xA5, 0x203E, 0x2016, 0x2212, 0x301C],
      reason: "the standard's jis0208 index is Windows' (with the NEC and IBM extensions, ∥ U+2225, ～ U+FF5E, "
        + "－ U+FF0D) where Python's euc_jp is plain JIS X 0208 (‖ U+2016, 〜 U+301C, − U+2212) and encodes ¥ and ‾ "
        + "as the JIS-Roman 0x5C and 0x7E, which the standard decodes as \\ and ~"),
    "ISO-2022-JP": PythonDifference(
      refused: [0x2116, 0x2161, 0x2168, 0x2172, 0x2225, 0x2460, 0x246B, 0x334A, 0x337B, 0x4F39, 0x5040, 0x514A,
                0x52A6, 0x5765, 0x595B, 0x5D42, 0x5F67, 0x6111, 0x6460, 0x6624, 0x6631, 0x66A0, 0x6801, 0x69E2,
                0x6C5C, 0x6D96, 0x6EBF, 0x7085, 0x72B1, 0x73D6, 0x7489, 0x752F, 0x769B, 0x7AE7, 0x7E52, 0x7E8A,
                0x83C7, 0x8ABE, 0x9115, 0x9210, 0x9251, 0x93F8, 0x969D, 0x9865, 0x9AD9, 0xE000, 0xFA0E, 0xFA18,
                0xFA21, 0xFA23, 0xFA27, 0xFA28, 0xFA2D, 0xFF5E, 0xFFE2],
      decodeOtherwise: [0x2016, 0x2212, 0x301C],
      reason: "as EUC-JP: Python's iso2022_jp is plain JIS X 0208-1983 (no NEC/IBM rows, ‖ 〜 − where the standard "
        + "decodes ∥ ～ －)"),
    "Shift_JIS": PythonDifference(
      refused: [0xA5, 0x203E], decodeOtherwise: [0x2016, 0x2212, 0x301C],
      reason: "Python's cp932 refuses ¥ and ‾ (the standard's encoder writes 0x5C and 0x7E for them) and encodes "
        + "‖ 〜 − as 81 61, 81 60, 81 7C, which the standard decodes as ∥ ～ －"),
    "EUC-KR": PythonDifference(
      refused: [0x327E],
      reason: "㉾ (KS X 1001:2002, at A2 E8) is in the standard's index but not in Python's cp949"),
  ]

  @Test func test_pythonEncoded_decodesBackExceptListedDifferences() throws {
    for fixture in EncodingPythonFixtures.all {
      let e = try #require(E(rawValue: fixture.encoding))
      #expect(decode(Self.hexBytes(Substring(fixture.sentenceBytes)), e) == fixture.sentence, "\(e.rawValue)")
      var unlisted: [String] = []
      for item in fixture.characters.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
        let parts = item.split(separator: ":")
        let scalar = UInt32(parts[0], radix: 16)!
        let known = Self.pythonDifferences[fixture.encoding]
        if parts[1] == "-" {
          let listed = known.map { $0.refused.contains(scalar) || $0.refusedRange?.contains(scalar) == true } ?? false
          if !listed { unlisted.append("\(parts[0]) refused by Python") }
          continue
        }
        let got = decode(Self.hexBytes(parts[1]), e)
        let matches = scalars(got) == [String(parts[0])]
        let listed = known?.decodeOtherwise.contains(scalar) ?? false
        if matches == listed { unlisted.append("\(parts[0]) -> \(scalars(got))\(listed ? " (listed, but matches)" : "")") }
      }
      #expect(unlisted.isEmpty, "\(e.rawValue) (\(fixture.codec)): \(unlisted)")
    }
  }
}
