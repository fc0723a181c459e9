// libFuzzer entry point for the decoders of the WHATWG Encoding Standard
// (ForageHTML's InputDecoder).
//
// Built by Fuzz/run-fuzz.sh (target `encoding`) together with the ForageHTML
// sources in one module. The input's first byte picks an encoding; the rest is
// decoded with it, and:
// - the output is valid UTF-8 (so valid Unicode) and holds no CR (newlines
//   are normalized);
// - it is at most four bytes per input byte, plus one U+FFFD (no decoder
//   loops or repeats itself: a put-back byte is read again only once);
// - for every ASCII-compatible encoding, an ASCII letter in front of the input
//   is that letter in front of the output;
// - the whole page also goes through the sniffer and parser with the
//   encoding's name as the transport charset.
// The input's first line is also tried as a label: a label found is one of
// the standard's labels once trimmed and lower-cased.

private let encodings = InputDecoder.Encoding.allCases

@_cdecl("LLVMFuzzerTestOneInput")
public func encodingFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let all = Array(UnsafeBufferPointer(start: data, count: size))
  guard let first = all.first else { return 0 }
  let encoding = encodings[Int(first) % encodings.count]
  let bytes = Array(all.dropFirst())
  let out = InputDecoder.decode(bytes, as: encoding)
  precondition(InputDecoder.isValidUTF8(out), "\(encoding.rawValue): invalid UTF-8 out")
  precondition(!out.contains(0x0D), "\(encoding.rawValue): a CR survived")
  precondition(out.count <= 4 * bytes.count + 3, "\(encoding.rawValue): \(out.count) bytes out of \(bytes.count)")
  switch encoding {
  case .utf16BE, .utf16LE, .replacement: break
  default:
    let prefixed = InputDecoder.decode([0x61] + bytes, as: encoding)
    precondition(prefixed == [0x61] + out, "\(encoding.rawValue): a leading ASCII byte changed the rest")
  }
  let doc = Document.parse(bytes, transportEncoding: encoding.rawValue)
  precondition(!doc.encoding.isEmpty)

  let line = Array(all.prefix(while: { $0 != 0x0A }).prefix(64))
  if let found = InputDecoder.encoding(forLabel: String(decoding: line, as: UTF8.self)) {
    let space: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0C]
    var label = line.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    while let c = label.last, space.contains(c) { label.removeLast() }
    while let c = label.first, space.contains(c) { label.removeFirst() }
    precondition(InputDecoder.labels.contains { $0.label == label && $0.encoding == found })
  }
  return 0
}
