import Foundation
import Testing

@testable import ForageTestSupport

@Suite struct GzipTests {
  @Test func test_crc32_matchesCheckValue() {
    var crc = CRC32()
    crc.update(Array("123456789".utf8))
    #expect(crc.value == 0xCBF4_3926)
  }

  @Test(arguments: [0, 1, 2, 7, 258, 1000, 65_537])
  func test_crc32OfZeros_matchesDirectComputation(count: Int) {
    var crc = CRC32()
    crc.update([UInt8](repeating: 0, count: count))
    #expect(CRC32.ofZeros(count: count) == crc.value)
  }

  @Test func test_zeroBomb_hasGzipFraming() {
    let bomb = Gzip.zeroBomb(decodedSize: 1000)
    #expect(Array(bomb.prefix(3)) == [0x1F, 0x8B, 8])
    let isize = bomb.suffix(4).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * $1.offset) }
    #expect(isize == 1000)
  }

  @Test func test_zeroBomb_ofOneGiB_isAboutOneMegabyte() {
    let bomb = Gzip.zeroBomb(decodedSize: 1 << 30)
    #expect(bomb.count > 1_000_000 && bomb.count < 1_100_000)
  }

  @Test(.enabled(if: gzipAvailable, "needs gzip on PATH"),
        arguments: [0, 1, 2, 3, 258, 259, 260, 517, 100_003, 64 << 20])
  func test_zeroBomb_decodesWithGzip(size: Int) throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("bomb-\(UUID().uuidString).gz").path
    defer { try? FileManager.default.removeItem(atPath: file) }
    #expect(FileManager.default.createFile(atPath: file, contents: Data(Gzip.zeroBomb(decodedSize: size))))
    // gzip -t checks the CRC-32 and ISIZE; then count all bytes and the non-zero ones.
    let result = try #require(shell("gzip -t \(file) && gzip -dc \(file) | wc -c && gzip -dc \(file) | tr -d '\\000' | wc -c"))
    let numbers = result.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    #expect(result.status == 0)
    #expect(numbers == ["\(size)", "0"])
  }

  @Test(.enabled(if: gzipAvailable, "needs gzip on PATH"), arguments: [0, 5, 65_535, 65_536, 200_000])
  func test_stored_roundTripsThroughGzip(size: Int) throws {
    let data = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    let result = try #require(shell("gzip -dc | od -An -tx1 -v | tr -d ' \\n'", input: Gzip.stored(data)))
    #expect(result.output == data.map { String(format: "%02x", $0) }.joined())
  }
}
