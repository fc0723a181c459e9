import Foundation
import Testing
@testable import Forage

/// `RecordDecoder`: a stored record's fields as the app's `Decodable` types.
@Suite struct RecordDecoderTests {
  struct Offer: Decodable, Equatable {
    let price: Double
    let seller: String
  }

  struct Everything: Decodable, Equatable {
    let title: String
    let price: Double
    let count: Int
    let small: UInt8
    let ratio: Float
    let inStock: Bool
    let tags: [String]
    let offers: [Offer]
    let best: Offer
    let stock: [String: Int]
    let matrix: [[Int]]
    let note: String?
    let missing: Int?
    let link: URL
    let exact: Decimal
  }

  let decoder = RecordDecoder()

  @Test func test_everyJSONKind_decodesLikeJSONDecoder() throws {
    let json = """
      {"best":{"price":2.5,"seller":"b"},"count":3,"exact":19.99,"inStock":true,"link":"https://example.com/a?b=1",
       "matrix":[[1,2],[],[3]],"note":null,"offers":[{"price":3,"seller":"a"},{"price":2.5,"seller":"b"}],
       "price":9.5,"ratio":0.25,"small":255,"stock":{"blue":0,"red":4},"tags":["x","y"],"title":"Mug \\"blue\\""}
      """
    let ours = try decoder.decode(Everything.self, from: json)
    let theirs = try JSONDecoder().decode(Everything.self, from: Data(json.utf8))
    #expect(ours == theirs)
    #expect(ours.title == "Mug \"blue\"" && ours.offers.count == 2 && ours.stock["red"] == 4)
    #expect(ours.note == nil && ours.missing == nil)
    #expect(ours.exact == Decimal(string: "19.99"))
    #expect(ours.link.host == "example.com")
  }

  struct Dated: Decodable {
    let day: Date
    let at: Date
    let precise: Date?
    let offset: Date?
  }

  @Test func test_isoDates_decodeAsDates() throws {
    let value = try decoder.decode(
      Dated.self,
      from: #"{"at":"2026-11-29T19:33:15Z","day":"2026-11-29","offset":"2026-11-29T20:33:15+01:00","precise":"2026-11-29T19:33:15.250Z"}"#)
    #expect(value.day == Date(timeIntervalSince1970: 1_795_910_400))
    #expect(value.at == Date(timeIntervalSince1970: 1_795_980_795))
    #expect(value.precise == Date(timeIntervalSince1970: 1_795_980_795.25))
    #expect(value.offset == value.at)
    // Both spellings Forage stores round-trip through its writer.
    let now = Date(timeIntervalSince1970: 1_700_000_123)
    #expect(ISODate.parse(ISODate.string(now)) == now)
    #expect(ISODate.parse(ISODate.dateOnly(now)) == Date(timeIntervalSince1970: 1_699_920_000))
    for bad in ["2026-13-01", "2026-02-30", "2026-11-29T25:00:00Z", "2026-11-29T10:00:00+0100", "29/11/2026", ""] {
      #expect(ISODate.parse(bad) == nil, "\(bad)")
    }
  }

  @Test func test_aDateThatIsNotISO_isAnErrorAtItsField() throws {
    #expect {
      try decoder.decode(Dated.self, from: #"{"at":"yesterday","day":"2026-11-29"}"#)
    } throws: { error in
      guard case DecodingError.dataCorrupted(let context) = error else { return false }
      return context.codingPath.map(\.stringValue) == ["at"] && context.debugDescription.contains("\"yesterday\"")
    }
  }

  struct Optionals: Decodable {
    let title: String
    let price: Double?
    let tags: [String]?
    let offer: Offer?
  }

  @Test func test_missingOrNullFields_areNilForOptionals() throws {
    let value = try decoder.decode(Optionals.self, from: #"{"offer":null,"title":"A"}"#)
    #expect(value.title == "A" && value.price == nil && value.tags == nil && value.offer == nil)
  }

  @Test func test_aFieldOfTheWrongKind_namesItsPath() throws {
    struct Listing: Decodable { let offers: [Offer] }
    #expect {
      try decoder.decode(Listing.self, from: #"{"offers":[{"price":1,"seller":"a"},{"price":"cheap","seller":"b"}]}"#)
    } throws: { error in
      guard case DecodingError.typeMismatch(_, let context) = error else { return false }
      return context.codingPath.map(\.stringValue) == ["offers", "1", "price"]
        && context.debugDescription == "expected a number, found a string"
    }
    #expect {
      try decoder.decode(Offer.self, from: #"{"price":1}"#)
    } throws: { error in
      guard case DecodingError.keyNotFound(let key, _) = error else { return false }
      return key.stringValue == "seller"
    }
  }

  @Test func test_aFractionForAnInteger_isAnErrorNamingTheValue() throws {
    struct Counted: Decodable { let count: Int }
    #expect {
      try decoder.decode(Counted.self, from: #"{"count":2.5}"#)
    } throws: { error in
      guard case DecodingError.dataCorrupted(let context) = error else { return false }
      return context.codingPath.map(\.stringValue) == ["count"] && context.debugDescription.contains("2.5")
    }
    #expect(throws: DecodingError.self) { try decoder.decode(UInt8Counted.self, from: #"{"count":300}"#) }
  }

  struct UInt8Counted: Decodable { let count: UInt8 }

  @Test func test_textThatIsNotJSON_isDataCorrupted() {
    #expect(throws: DecodingError.self) { try decoder.decode(Offer.self, from: "{not json") }
  }
}
