/// HTML's named character references for other readers of markup (the
/// engine's lenient feed reader resolves `&nbsp;` and `&eacute;`, which XML
/// does not declare, through this).
package enum HTMLNamedReference {
  /// The text that `&name;` stands for in HTML, or nil when HTML has no
  /// such reference. `name` is written without `&` and `;`; with
  /// `semicolon` false, only the legacy references HTML also reads without
  /// `;` (`&nbsp`) are found.
  ///
  ///     HTMLNamedReference.value(of: "eacute")   // "é"
  package static func value(of name: String, semicolon: Bool = true) -> String? {
    var bytes = Array(name.utf8)
    guard !bytes.isEmpty else { return nil }
    if semicolon { bytes.append(UInt8(ascii: ";")) }
    let t = NamedCharacterReferences.decoded
    guard let i = bytes.withUnsafeBufferPointer({ b in
      NamedCharacterReferences.lookup(b.baseAddress!, b.count, in: t)
    }) else { return nil }
    var s = String.UnicodeScalarView()
    if let c = Unicode.Scalar(t.first[i]) { s.append(c) }
    if t.second[i] != 0, let c = Unicode.Scalar(t.second[i]) { s.append(c) }
    return String(s)
  }
}
