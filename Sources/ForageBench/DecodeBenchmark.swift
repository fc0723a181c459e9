import Foundation
import Forage
import ForageSupport

/// Decoding stored records into a `Decodable` struct: Forage's
/// `RecordDecoder` beside `JSONDecoder` over the same canonical JSON (the
/// floor to beat), in one run, alternating, best of `--repeat` rounds each.
///
///     forage-bench decode [--records 100000] [--repeat 5]
///
/// The records are what a catalog source stores: canonical JSON (sorted keys,
/// compact) with strings, numbers, a boolean, an array, nested objects, an
/// ISO 8601 date and a missing optional field on every third record.
enum DecodeBenchmark {
  struct Offer: Decodable {
    let price: Double
    let seller: String
  }

  struct Product: Decodable {
    let title: String
    let price: Double?
    let sku: String
    let inStock: Bool
    let rating: Int?
    let tags: [String]
    let offers: [Offer]
    let updated: Date
  }

  /// The fields of record `i` as Forage stores them.
  static func record(_ i: Int, dates: ISO8601DateFormatter) -> String {
    var members: [(key: String, value: JSONValue)] = [
      ("title", .string("Stoneware mug no. \(i) \u{2013} blue")),
      ("sku", .string("SKU-\(100_000 + i)")),
      ("inStock", .bool(i % 5 != 0)),
      ("tags", .array([.string("kitchen"), .string("mugs"), .string("gift")])),
      ("offers", .array([
        .object([("seller", .string("Shop A")), ("price", .number(Double(i % 997) + 0.99))]),
        .object([("seller", .string("Shop B")), ("price", .number(Double(i % 991) + 1.49))]),
      ])),
      ("updated", .string(dates.string(from: Date(timeIntervalSince1970: 1_790_000_000 + Double(i) * 37)))),
      ("rating", .number(Double(i % 5 + 1))),
    ]
    if i % 3 != 0 { members.append(("price", .number(Double(i % 500) + 0.5))) }
    return JSONValue.object(members).serialized(sortedKeys: true)
  }

  static func run(_ args: [String]) throws -> Int32 {
    var count = 100_000
    var rounds = 5
    var i = 0
    while i < args.count {
      switch args[i] {
      case "--records": i += 1; count = i < args.count ? Int(args[i]) ?? count : count
      case "--repeat": i += 1; rounds = i < args.count ? Int(args[i]) ?? rounds : rounds
      default:
        print("usage: forage-bench decode [--records N] [--repeat K]")
        return 2
      }
      i += 1
    }
    let dates = ISO8601DateFormatter()
    let texts = (0..<count).map { record($0, dates: dates) }
    let bytes = texts.reduce(0) { $0 + $1.utf8.count }
    print("decode: \(count) records, \(bytes / count) bytes each on average, best of \(rounds) rounds")

    let ours = RecordDecoder()
    let theirs = JSONDecoder()
    theirs.dateDecodingStrategy = .iso8601
    var checksum = 0.0
    func timeOurs() throws -> Double {
      let start = ContinuousClock.now
      for text in texts { checksum += try ours.decode(Product.self, from: text).offers[0].price }
      return (ContinuousClock.now - start).seconds
    }
    func timeTheirs() throws -> Double {
      let start = ContinuousClock.now
      for text in texts { checksum += try theirs.decode(Product.self, from: Data(text.utf8)).offers[0].price }
      return (ContinuousClock.now - start).seconds
    }
    var bestOurs = Double.infinity, bestTheirs = Double.infinity
    for round in 0..<rounds {
      // Alternating which goes first, so neither always meets a warm or a cold cache.
      if round % 2 == 0 {
        bestOurs = min(bestOurs, try timeOurs())
        bestTheirs = min(bestTheirs, try timeTheirs())
      } else {
        bestTheirs = min(bestTheirs, try timeTheirs())
        bestOurs = min(bestOurs, try timeOurs())
      }
    }
    let oursRate = Double(count) / bestOurs
    let theirsRate = Double(count) / bestTheirs
    print(String(format: "RecordDecoder: %.0f records/s (%.3f s)", oursRate, bestOurs))
    print(String(format: "JSONDecoder:   %.0f records/s (%.3f s)", theirsRate, bestTheirs))
    print(String(format: "ratio: %.2fx JSONDecoder", oursRate / theirsRate))
    if checksum.isNaN { print("checksum: \(checksum)") }
    return 0
  }
}
