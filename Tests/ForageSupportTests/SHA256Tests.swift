import Foundation
import Testing

@testable import ForageSupport

/// Lowercase hex of bytes.
private func hex(_ bytes: [UInt8]) -> String {
  let digits = Array("0123456789abcdef".utf8)
  var out = [UInt8]()
  for b in bytes {
    out.append(digits[Int(b >> 4)])
    out.append(digits[Int(b & 0x0f)])
  }
  return String(decoding: out, as: UTF8.self)
}

/// Bytes of a hex string (the test's own literals: always well formed).
private func bytes(hex text: String) -> [UInt8] {
  let chars = Array(text.utf8)
  func nibble(_ c: UInt8) -> UInt8 {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    default: return c - UInt8(ascii: "A") + 10
    }
  }
  return stride(from: 0, to: chars.count, by: 2).map { nibble(chars[$0]) << 4 | nibble(chars[$0 + 1]) }
}

/// A deterministic message of `count` bytes that is not periodic in 64.
private func message(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
  (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ ($0 >> 8) &+ Int(seed) &* 17 &+ 7) }
}

private let python = "/usr/bin/python3"
private let hasPython = FileManager.default.isExecutableFile(atPath: python)

/// Runs python3 with `script` and `arguments`; its stdout split into lines.
private func runPython(_ script: String, _ arguments: [String]) throws -> [String] {
  let p = Process()
  p.executableURL = URL(fileURLWithPath: python)
  p.arguments = ["-c", script] + arguments
  let out = Pipe()
  p.standardOutput = out
  try p.run()
  let data = out.fileHandleForReading.readDataToEndOfFile()
  p.waitUntilExit()
  #expect(p.terminationStatus == 0, "python3 failed")
  return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
}

@Suite struct SHA256Tests {
  @Test func test_fips180Examples() {
    #expect(hex(SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(hex(SHA256.hash("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(
      hex(SHA256.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
        == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    #expect(
      hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
        == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  @Test func test_oneMillionA_inUnevenPieces_equalsWhole() {
    // 1000 updates of 1000 bytes: pieces straddle block boundaries.
    var h = SHA256()
    let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
    for _ in 0..<1000 { h.update(piece) }
    #expect(hex(h.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  @Test func test_anySplit_equalsOneShot() {
    let whole = message(200)
    let expected = SHA256.hash(whole)
    for split in 0...whole.count {
      var h = SHA256()
      h.update(whole[..<split])
      h.update(whole[split...])
      #expect(h.finalize() == expected, "split at \(split)")
    }
    // Three pieces around a block boundary, through the raw-buffer entry.
    var h = SHA256()
    whole.withUnsafeBytes { raw in
      h.update(UnsafeRawBufferPointer(rebasing: raw[..<10]))
      h.update(UnsafeRawBufferPointer(rebasing: raw[10..<70]))
      h.update(UnsafeRawBufferPointer(rebasing: raw[70...]))
    }
    #expect(h.finalize() == expected)
  }

  @Test func test_nonContiguousSequence_equalsArray() {
    for count in [0, 1, 63, 64, 65, 255, 256, 257, 1000] {
      let bytes = message(count, seed: 3)
      let lazy = (0..<count).lazy.map { bytes[$0] }
      #expect(SHA256.hash(lazy) == SHA256.hash(bytes), "length \(count)")
    }
  }

  @Test func test_finalize_leavesTheHasherUsable() {
    var h = SHA256()
    h.update("ab".utf8)
    #expect(h.finalize() == SHA256.hash("ab".utf8))
    h.update("c".utf8)
    #expect(h.finalize() == SHA256.hash("abc".utf8))
    #expect(h.finalize().count == SHA256.digestByteCount)
  }

  @Test(
    "Lengths around the padding boundaries match Python's hashlib",
    .enabled(if: hasPython, "needs /usr/bin/python3 as an independent implementation"))
  func test_paddingBoundaries_matchPythonHashlib() throws {
    let lengths = [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000]
    let messages = lengths.map { message($0) }
    let script = """
      import hashlib, sys
      for arg in sys.argv[1:]:
          print(hashlib.sha256(bytes.fromhex(arg)).hexdigest())
      """
    let expected = try runPython(script, messages.map(hex))
    try #require(expected.count == lengths.count)
    for (i, m) in messages.enumerated() {
      #expect(hex(SHA256.hash(m)) == expected[i], "length \(lengths[i])")
    }
  }
}

@Suite struct HMACTests {
  /// RFC 4231, section 4 (case 5, a truncated output, is left out).
  @Test func test_rfc4231KnownAnswers() {
    let longKey = [UInt8](repeating: 0xaa, count: 131)
    let cases: [(key: [UInt8], data: [UInt8], mac: String)] = [
      (
        [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
      ),
      (
        Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
      ),
      (
        [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
      ),
      (
        Array(1...25), [UInt8](repeating: 0xcd, count: 50),
        "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
      ),
      (
        longKey, Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
      ),
      (
        longKey,
        Array(
          ("This is a test using a larger than block-size key and a larger than block-size data. "
            + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
      ),
    ]
    for (number, c) in zip([1, 2, 3, 4, 6, 7], cases) {
      #expect(hex(HMAC.sha256(key: c.key, message: c.data)) == c.mac, "RFC 4231 test case \(number)")
    }
  }

  /// The example of the Standard Webhooks specification: the signature is
  /// the base64 of HMAC-SHA256 over "id.timestamp.body" keyed with the
  /// base64-decoded part of the secret after `whsec_`.
  static let webhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
  static let webhookMessage = #"msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}"#
  static let webhookSignature = "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

  @Test func test_standardWebhooksExample() throws {
    let encoded = try #require(Self.webhookSecret.split(separator: "_", maxSplits: 1).last)
    let key = try #require(Data(base64Encoded: String(encoded)))
    let mac = HMAC.sha256(key: Array(key), message: Self.webhookMessage.utf8)
    #expect(Data(mac).base64EncodedString() == Self.webhookSignature)
  }

  @Test(
    "The Standard Webhooks example and several key lengths match Python's hmac",
    .enabled(if: hasPython, "needs /usr/bin/python3 as an independent implementation"))
  func test_matchesPythonHmac() throws {
    let script = """
      import base64, hashlib, hmac, sys
      secret, msg = sys.argv[1], sys.argv[2]
      key = base64.b64decode(secret.split("_", 1)[1])
      print(base64.b64encode(hmac.new(key, msg.encode(), hashlib.sha256).digest()).decode())
      for arg in sys.argv[3:]:
          k, m = arg.split(":")
          print(hmac.new(bytes.fromhex(k), bytes.fromhex(m), hashlib.sha256).hexdigest())
      """
    let pairs = [0, 1, 20, 63, 64, 65, 131].map { (message($0, seed: 5), message($0 * 3 + 1, seed: 9)) }
    let lines = try runPython(
      script, [Self.webhookSecret, Self.webhookMessage] + pairs.map { hex($0.0) + ":" + hex($0.1) })
    try #require(lines.count == 1 + pairs.count)
    #expect(lines[0] == Self.webhookSignature)
    for (i, pair) in pairs.enumerated() {
      #expect(hex(HMAC.sha256(key: pair.0, message: pair.1)) == lines[i + 1], "key length \(pair.0.count)")
    }
    // The helper's own round trip, so a broken hex() cannot hide a mismatch.
    #expect(bytes(hex: hex(pairs[3].0)) == pairs[3].0)
  }
}
