import ForageStore
import Testing

@testable import Forage

/// Record fields from JSON text.
private func fields(_ json: String) -> JSONValue {
  do { return try JSONValue.parse(json) } catch {
    Issue.record("bad test JSON: \(error)")
    return .null
  }
}

/// Whether `test` on field "f" holds for a changed record going from `before` to `after`.
private func holds(_ test: FieldTest, _ before: String, _ after: String) -> Bool {
  ChangeCondition.field("f", test).holds(kind: .changed, before: fields(before), after: fields(after))
}

@Suite struct ChangeConditionTests {
  // MARK: Kinds

  @Test func test_kind_holdsForItsKindOnly() {
    for kind in ChangeKind.allCases {
      for other in ChangeKind.allCases {
        #expect(ChangeCondition.kind(kind).holds(kind: other, before: nil, after: nil) == (kind == other))
      }
    }
  }

  @Test func test_fieldCondition_holdsForChangedRecordsOnly() {
    let c = ChangeCondition.field("f", .changes)
    let a = fields(#"{"f": 1}"#)
    let b = fields(#"{"f": 2}"#)
    #expect(c.holds(kind: .changed, before: a, after: b))
    #expect(!c.holds(kind: .new, before: nil, after: b))
    #expect(!c.holds(kind: .removed, before: a, after: nil))
    #expect(!c.holds(kind: .restored, before: a, after: b))
    #expect(!ChangeCondition.field("f", .appears).holds(kind: .new, before: nil, after: b))
  }

  // MARK: Tests of a field

  @Test func test_changes() {
    #expect(holds(.changes, #"{"f": "a"}"#, #"{"f": "b"}"#))
    #expect(!holds(.changes, #"{"f": "a", "g": 1}"#, #"{"f": "a", "g": 2}"#))
    #expect(holds(.changes, #"{"g": 1}"#, #"{"f": null}"#), "absent and null differ")
    #expect(holds(.changes, #"{"f": [1, 2]}"#, #"{"f": [2, 1]}"#))
    #expect(!holds(.changes, #"{"f": {"a": 1}}"#, #"{"f": {"a": 1}}"#))
  }

  @Test func test_increasesAndDecreases() {
    #expect(holds(.increases, #"{"f": 10}"#, #"{"f": 12.5}"#))
    #expect(!holds(.increases, #"{"f": 12.5}"#, #"{"f": 10}"#))
    #expect(holds(.decreases, #"{"f": "£1,299.50"}"#, #"{"f": "£999"}"#))
    #expect(!holds(.decreases, #"{"f": "£999"}"#, #"{"f": "£1,299.50"}"#))
    #expect(holds(.increases, #"{"f": "3 left"}"#, #"{"f": 4}"#), "a string and a number compare")
    // The text changed but the number did not.
    #expect(!holds(.increases, #"{"f": "$5"}"#, #"{"f": "5 USD"}"#))
    #expect(!holds(.decreases, #"{"f": "$5"}"#, #"{"f": "5 USD"}"#))
  }

  @Test func test_increases_nonNumbersNeverHold() {
    #expect(!holds(.increases, #"{"f": "abc"}"#, #"{"f": "abd"}"#))
    #expect(!holds(.increases, #"{"f": "sold out"}"#, #"{"f": 5}"#))
    #expect(!holds(.increases, #"{"f": 5}"#, #"{"f": "call us"}"#))
    #expect(!holds(.increases, #"{"g": 1}"#, #"{"f": 5}"#), "absent before")
    #expect(!holds(.increases, #"{"f": 5}"#, #"{"f": null}"#))
    #expect(!holds(.decreases, #"{"f": true}"#, #"{"f": false}"#))
    #expect(!holds(.increases, #"{"f": [1]}"#, #"{"f": [2]}"#))
  }

  @Test func test_belowAndAbove_compareTheNewNumberOfAChangedField() {
    #expect(holds(.below(20), #"{"f": 25}"#, #"{"f": "19.99 EUR"}"#))
    #expect(!holds(.below(20), #"{"f": 25}"#, #"{"f": 20}"#), "below is strict")
    #expect(!holds(.below(20), #"{"f": 15}"#, #"{"f": 15}"#), "unchanged")
    #expect(holds(.below(20), #"{"f": "£15"}"#, #"{"f": "15 GBP"}"#), "the text changed")
    #expect(holds(.below(20), #"{"f": "n/a"}"#, #"{"f": 3}"#), "only the new value must be a number")
    #expect(!holds(.below(20), #"{"f": 3}"#, #"{"f": "n/a"}"#))
    #expect(holds(.above(100), #"{"f": 90}"#, #"{"f": "1,000"}"#))
    #expect(!holds(.above(100), #"{"f": 90}"#, #"{"f": 100}"#))
    #expect(holds(.below(0), #"{"f": "1%"}"#, #"{"f": "-3.5%"}"#))
  }

  @Test func test_contains_isCaseInsensitiveOnTheNewText() {
    #expect(holds(.contains("in stock"), #"{"f": "Sold out"}"#, #"{"f": "Back IN STOCK today"}"#))
    #expect(!holds(.contains("in stock"), #"{"f": "In stock"}"#, #"{"f": "Sold out"}"#))
    #expect(!holds(.contains("stock"), #"{"f": "In stock"}"#, #"{"f": "In stock"}"#), "unchanged")
    #expect(holds(.contains("12"), #"{"f": 11}"#, #"{"f": 12}"#), "a number's text")
    #expect(holds(.contains("true"), #"{"f": false}"#, #"{"f": true}"#))
    #expect(holds(.contains("\"b\""), #"{"f": ["a"]}"#, #"{"f": ["a", "b"]}"#), "arrays as JSON")
    #expect(!holds(.contains("null"), #"{"f": 1}"#, #"{"f": null}"#))
  }

  @Test func test_matches_searchesTheNewText() {
    #expect(holds(.matches(#"v\d+\.\d+"#), #"{"f": "Release v1.2"}"#, #"{"f": "Release v1.3"}"#))
    #expect(holds(.matches("^Sold"), #"{"f": "Few left"}"#, #"{"f": "Sold out"}"#))
    #expect(!holds(.matches("^Sold"), #"{"f": "Few left"}"#, #"{"f": "All sold"}"#))
    #expect(!holds(.matches("x"), #"{"f": "x"}"#, #"{"f": "x"}"#), "unchanged")
    #expect(holds(.matches(#"^12$"#), #"{"f": 11}"#, #"{"f": 12.0}"#), "whole numbers without .0")
    #expect(!holds(.matches("("), #"{"f": "a"}"#, #"{"f": "("}"#), "an invalid pattern never holds")
  }

  @Test func test_appearsAndDisappears() {
    for empty in [#"{}"#, #"{"f": null}"#, #"{"f": ""}"#, #"{"f": []}"#, #"{"f": {}}"#] {
      #expect(holds(.appears, empty, #"{"f": "x"}"#), "\(empty)")
      #expect(holds(.appears, empty, #"{"f": 0}"#), "\(empty)")
      #expect(holds(.disappears, #"{"f": ["x"]}"#, empty), "\(empty)")
      #expect(!holds(.appears, #"{"f": "x"}"#, empty), "\(empty)")
      #expect(!holds(.disappears, empty, #"{"f": "x"}"#), "\(empty)")
    }
    #expect(!holds(.appears, #"{"f": "x"}"#, #"{"f": "y"}"#))
    #expect(!holds(.disappears, #"{"f": "x"}"#, #"{"f": "y"}"#))
    #expect(!holds(.appears, #"{"f": null}"#, #"{"f": ""}"#))
  }

  // MARK: Numbers and text

  @Test func test_number_readsTheFirstNumberOfAString() {
    let cases: [(String, Double?)] = [
      ("£1,299.50", 1299.5), ("12 left", 12), ("-3.5%", -3.5), ("abc", nil), ("", nil),
      ("1,234,567", 1_234_567), ("1,2345", 1), ("1234,567", 1234), ("1,23", 1), ("Only 3 of 10", 3),
      ("+7", 7), ("SKU-42", 42), ("(-2)", -2), ("costs .5 more", 0.5), ("12.", 12), ("v1.2.3", 1.2),
      ("€ 9,99", 9), ("1,000.25 kg", 1000.25), ("- 5", 5),
    ]
    for (text, expected) in cases {
      #expect(ChangeCondition.number(in: .string(text)) == expected, "\(text)")
    }
    #expect(ChangeCondition.number(in: .number(-2.5)) == -2.5)
    #expect(ChangeCondition.number(in: .bool(true)) == nil)
    #expect(ChangeCondition.number(in: .null) == nil)
    #expect(ChangeCondition.number(in: nil) == nil)
    #expect(ChangeCondition.number(in: .array([.number(1)])) == nil)
  }

  @Test func test_text_ofEachKindOfValue() {
    #expect(ChangeCondition.text(of: .string("a b")) == "a b")
    #expect(ChangeCondition.text(of: .number(3)) == "3")
    #expect(ChangeCondition.text(of: .number(2.5)) == "2.5")
    #expect(ChangeCondition.text(of: .bool(false)) == "false")
    #expect(ChangeCondition.text(of: fields(#"{"a": [1, "x"]}"#)) == #"{"a":[1,"x"]}"#)
    #expect(ChangeCondition.text(of: .null) == nil)
    #expect(ChangeCondition.text(of: nil) == nil)
  }

  // MARK: Notable changes

  @Test func test_defaultRule_everyChangeExceptNewOnTheFirstCrawl() {
    let a = fields(#"{"f": 1}"#)
    let b = fields(#"{"f": 2}"#)
    func notable(_ kind: ChangeKind, first: Bool) -> Bool {
      ChangeCondition.isNotable(
        kind: kind, before: kind == .new ? nil : a, after: kind == .removed ? nil : b, conditions: nil,
        firstCompletedCrawl: first)
    }
    for first in [false, true] {
      #expect(notable(.changed, first: first))
      #expect(notable(.removed, first: first))
      #expect(notable(.restored, first: first))
    }
    #expect(notable(.new, first: false))
    #expect(!notable(.new, first: true), "no flood of new records on the first run")
  }

  @Test func test_givenConditions_anyOneSuffices() {
    let conditions: [ChangeCondition] = [.field("price", .decreases), .field("price", .below(20)), .kind(.removed)]
    func notable(_ kind: ChangeKind, _ before: String?, _ after: String?) -> Bool {
      ChangeCondition.isNotable(
        kind: kind, before: before.map(fields), after: after.map(fields), conditions: conditions,
        firstCompletedCrawl: false)
    }
    #expect(notable(.changed, #"{"price": 30}"#, #"{"price": 25}"#))
    #expect(notable(.changed, #"{"price": 10}"#, #"{"price": 15}"#))
    #expect(!notable(.changed, #"{"price": 25}"#, #"{"price": 30}"#))
    #expect(!notable(.changed, #"{"price": 25, "title": "a"}"#, #"{"price": 25, "title": "b"}"#))
    #expect(notable(.removed, #"{"price": 25}"#, nil))
    #expect(!notable(.new, nil, #"{"price": 5}"#))
    #expect(!notable(.restored, #"{"price": 25}"#, #"{"price": 5}"#))
  }

  @Test func test_givenConditions_firstCrawlDoesNotSuppressAnExplicitNewCondition() {
    #expect(
      ChangeCondition.isNotable(
        kind: .new, before: nil, after: fields(#"{"f": 1}"#), conditions: [.kind(.new)], firstCompletedCrawl: true))
    #expect(
      !ChangeCondition.isNotable(
        kind: .changed, before: fields(#"{"f": 1}"#), after: fields(#"{"f": 2}"#), conditions: [],
        firstCompletedCrawl: false))
  }

  // MARK: Conditions over a change's field changes

  /// A condition evaluated from a change's field changes (each value
  /// parsed alone, as the router does) holds exactly when it holds over the
  /// two whole records.
  @Test func test_conditionOverFieldChanges_agreesWithTheWholeRecords() {
    let tests: [FieldTest] = [
      .appears, .disappears, .changes, .increases, .decreases, .below(20), .above(20), .contains("lamp"),
      .matches("^[0-9]+ left$"),
    ]
    let values = [
      nil, "null", #""""#, "[]", "{}", "3", "25", "19.5", #""£25.00""#, #""£19.50""#, #""12 left""#,
      #""A Lamp""#, #""lamp""#, "true", "[1,2]", #"{"a":1}"#,
    ]
    func record(_ value: String?) -> String { value.map { #"{"f":"# + $0 + #","g":1}"# } ?? #"{"g":1}"# }
    for test in tests {
      for before in values {
        for after in values {
          for kind in [ChangeKind.changed, .restored] {
            let change = RecordChange(
              id: 1, source: "s", key: "k", kind: kind, beforeJSON: record(before), afterJSON: record(after),
              at: .now, run: nil)
            let condition = ChangeCondition.field("f", test)
            let whole = condition.holds(kind: kind, before: fields(record(before)), after: fields(record(after)))
            #expect(condition.holds(for: change) == whole, "\(test) \(before ?? "absent") → \(after ?? "absent")")
          }
        }
      }
    }
  }

  /// The router reads only the fields its conditions name: a record whose
  /// other field does not parse still notifies on the price it watches.
  @Test func test_issue27_theRouterReadsOnlyTheFieldsItsConditionsName() throws {
    let text = #"""
      {"notify": [{"webhook": "https://example.com/hook"}], "sources": [{"name": "s", "url": "https://example.com/",
       "extract": {"price": ".price", "x": ".x"}, "notifyWhen": [{"field": "price", "below": 20}]}]}
      """#
    let router = try #require(NotificationRouter(config: try ForageConfig.parse(Array(text.utf8))))
    func change(_ before: String, _ after: String) -> RecordChange {
      RecordChange(id: 1, source: "s", key: "k", kind: .changed, beforeJSON: before, afterJSON: after, at: .now, run: nil)
    }
    #expect(router.channels(for: change(#"{"price":25,"x":1}"#, #"{"price":19,"x":1}"#), firstCrawl: false).count == 1)
    #expect(router.channels(for: change(#"{"price":25,"x":01}"#, #"{"price":19,"x":02}"#), firstCrawl: false).count == 1)
    #expect(router.channels(for: change(#"{"price":25,"x":1}"#, #"{"price":21,"x":1}"#), firstCrawl: false).isEmpty)
    #expect(router.channels(for: change(#"{"price":19,"x":1}"#, #"{"price":19,"x":2}"#), firstCrawl: false).isEmpty)
  }
}
