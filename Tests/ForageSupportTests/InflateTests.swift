import Foundation
import Testing

@testable import ForageSupport

private let python = "/usr/bin/python3"
private let hasPython = FileManager.default.isExecutableFile(atPath: python)

/// A gzip member holding `data` in stored blocks (RFC 1951 §3.2.4), with its trailer.
private func storedGzip(_ data: [UInt8], name: String? = nil) -> [UInt8] {
  var out: [UInt8] = [0x1F, 0x8B, 8, name == nil ? 0 : 0x08, 0, 0, 0, 0, 0, 3]
  if let name { out += Array(name.utf8) + [0] }
  var start = 0
  repeat {
    let end = min(start + 65_535, data.count)
    let length = UInt16(end - start)
    out.append(end == data.count ? 1 : 0)
    out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
    out += data[start..<end]
    start = end
  } while start < data.count
  let crc = Inflate.crc32(data)
  let size = UInt32(truncatingIfNeeded: data.count)
  for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
  for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: size >> UInt32(shift))) }
  return out
}

/// Runs python3 with `script` and `arguments`.
private func runPython(_ script: String, _ arguments: [String]) throws {
  let p = Process()
  p.executableURL = URL(fileURLWithPath: python)
  p.arguments = ["-c", script] + arguments
  try p.run()
  p.waitUntilExit()
  #expect(p.terminationStatus == 0, "python3 failed")
}

private func read(_ path: String) throws -> [UInt8] {
  Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

@Suite struct InflateTests {
  @Test func test_crc32_checkValue() {
    #expect(Inflate.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
    #expect(Inflate.crc32([]) == 0)
  }

  @Test func test_isGzip_magicAndMethod() {
    #expect(Inflate.isGzip([0x1F, 0x8B, 8, 0]))
    #expect(!Inflate.isGzip([0x1F, 0x8B, 7]))
    #expect(!Inflate.isGzip([0x1F]))
    #expect(!Inflate.isGzip(Array("<urlset>".utf8)))
  }

  @Test func test_storedMembers_andSeveralMembers_concatenate() {
    let a = Array("hello, ".utf8)
    let b = [UInt8](repeating: 7, count: 70_000)  // two stored blocks
    let result = Inflate.gunzip(storedGzip(a, name: "a.txt") + storedGzip(b) + [0, 0, 0])
    #expect(result.failure == nil)
    #expect(!result.limitReached)
    #expect(result.bytes == a + b)
  }

  @Test func test_limit_cutsTheOutputAtExactlyTheLimit() {
    let data = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let cut = Inflate.gunzip(storedGzip(data), limit: 4_000)
    #expect(cut.limitReached)
    #expect(cut.failure == nil)
    #expect(cut.bytes == Array(data.prefix(4_000)))
    // Exactly as long as the limit: not cut.
    let whole = Inflate.gunzip(storedGzip(data), limit: data.count)
    #expect(!whole.limitReached)
    #expect(whole.bytes == data)
  }

  @Test func test_damage_isReported_withWhatCameBefore() {
    let data = Array("<urlset><url><loc>https://example.com/a</loc></url></urlset>".utf8)
    let gz = storedGzip(data)
    var badCRC = gz
    badCRC[badCRC.count - 8] ^= 0xFF
    let checked = Inflate.gunzip(badCRC)
    #expect(checked.failure == .checksum)
    #expect(checked.bytes == data)

    let truncated = Inflate.gunzip(Array(gz.prefix(gz.count - 20)))
    #expect(truncated.failure == .truncated)
    #expect(truncated.bytes == Array(data.prefix(truncated.bytes.count)))
    #expect(!truncated.bytes.isEmpty)

    #expect(Inflate.gunzip(Array("plain".utf8)).failure == .notGzip)
    // Block type 3 does not exist.
    #expect(Inflate.inflate([0b111]).failure == .malformed("block type 3"))
    #expect(Inflate.inflate([]).failure == .truncated)
    // A fixed block whose first code is a match (length 3, distance 1): nothing to copy from.
    let reachBack = Inflate.inflate([0x03, 0x02])
    #expect(reachBack.failure == .malformed("a distance of 1 back, before the start"))
  }

  /// Compressed by Python's zlib at several levels and strategies, as gzip and as
  /// raw DEFLATE, for random, text-like and repetitive data of several sizes.
  @Test(.enabled(if: hasPython)) func test_againstPythonZlib() throws {
    let dir = NSTemporaryDirectory() + "forage-inflate-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let script = """
      import os, random, sys, zlib
      out = sys.argv[1]
      rng = random.Random(12)
      words = [b"<url>", b"<loc>", b"https://example.com/", b"product/", b"</loc>", b"<lastmod>", b"2024-05-01", b"\\n"]
      def kinds(n):
          yield "random", bytes(rng.getrandbits(8) for _ in range(n))
          yield "text", b"".join(rng.choice(words) for _ in range(n // 6 + 1))[:n]
          yield "runs", b"".join(bytes([rng.randrange(4)]) * rng.randrange(1, 600) for _ in range(n // 100 + 1))[:n]
          yield "alphabet", bytes(rng.choice(b"ab") for _ in range(n))
      cases = 0
      for n in [0, 1, 2, 100, 1000, 65535, 65536, 70000, 300000, 1000000]:
          for kind, data in kinds(n):
              for level, strategy in [(0, 0), (1, 0), (6, 0), (9, 0), (6, zlib.Z_HUFFMAN_ONLY), (6, zlib.Z_RLE), (6, zlib.Z_FIXED)]:
                  if n >= 300000 and (level, strategy) not in [(6, 0), (1, 0)]: continue
                  gz = zlib.compressobj(level, zlib.DEFLATED, 31, 8, strategy)
                  raw = zlib.compressobj(level, zlib.DEFLATED, -15, 8, strategy)
                  name = os.path.join(out, "%d-%s-%d-%d" % (n, kind, level, strategy))
                  open(name + ".data", "wb").write(data)
                  open(name + ".gz", "wb").write(gz.compress(data) + gz.flush())
                  # Raw: flushed in the middle too (an empty stored block, a sync point).
                  half = raw.compress(data[: n // 2]) + raw.flush(zlib.Z_SYNC_FLUSH)
                  open(name + ".deflate", "wb").write(half + raw.compress(data[n // 2 :]) + raw.flush())
                  cases += 1
      # A bomb: 200 MB of zeros in about 200 KB.
      bomb = zlib.compressobj(9, zlib.DEFLATED, 31)
      with open(os.path.join(out, "bomb.gz"), "wb") as f:
          chunk = bytes(1 << 20)
          for _ in range(200): f.write(bomb.compress(chunk))
          f.write(bomb.flush())
      """
    try runPython(script, [dir])
    let names = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".data") }
    #expect(names.count > 200)
    for name in names.sorted() {
      let stem = dir + "/" + String(name.dropLast(5))
      let data = try read(stem + ".data")
      let gz = Inflate.gunzip(try read(stem + ".gz"))
      #expect(gz.failure == nil, "\(name): \(String(describing: gz.failure))")
      #expect(gz.bytes == data, "\(name) as gzip")
      let raw = Inflate.inflate(try read(stem + ".deflate"))
      #expect(raw.failure == nil, "\(name): \(String(describing: raw.failure))")
      #expect(raw.bytes == data, "\(name) as raw DEFLATE")
      if data.count > 10 {
        let cut = Inflate.gunzip(try read(stem + ".gz"), limit: data.count / 3)
        #expect(cut.limitReached && cut.bytes == Array(data.prefix(data.count / 3)), "\(name) cut at a third")
      }
    }
    let limit = 3 << 20
    let bomb = Inflate.gunzip(try read(dir + "/bomb.gz"), limit: limit)
    #expect(bomb.limitReached)
    #expect(bomb.failure == nil)
    #expect(bomb.bytes.count == limit)
    #expect(bomb.bytes.allSatisfy { $0 == 0 })
  }
}
