/// Keyed-hash message authentication (HMAC, RFC 2104).
///
///     HMAC.sha256(key: Array("key".utf8), message: "The quick brown fox…".utf8)
///
/// Used to sign webhook deliveries (Standard Webhooks: the base64 of
/// `HMAC.sha256(key: secret, message: "\(id).\(timestamp).\(body)")`).
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc2104>,
///   <https://www.rfc-editor.org/rfc/rfc4231> (the test vectors)
package enum HMAC {
  /// HMAC-SHA256 of `message` under `key` (32 bytes).
  ///
  /// A key longer than SHA-256's 64-byte block is hashed first and its
  /// digest used instead; a shorter one is padded with zeros (RFC 2104,
  /// section 2). Any key length, including empty, is accepted.
  package static func sha256(key: [UInt8], message: some Sequence<UInt8>) -> [UInt8] {
    let blockSize = SHA256.blockByteCount
    var block = key.count > blockSize ? SHA256.hash(key) : key
    block.append(contentsOf: repeatElement(0, count: blockSize - block.count))

    var inner = SHA256()
    inner.update(block.map { $0 ^ 0x36 })
    inner.update(message)

    var outer = SHA256()
    outer.update(block.map { $0 ^ 0x5c })
    outer.update(inner.finalize())
    return outer.finalize()
  }
}
