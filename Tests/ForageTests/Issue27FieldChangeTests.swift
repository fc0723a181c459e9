import Foundation
import ForageStore
import Testing

@testable import Forage

/// Issue 27: what changed comes with the change (`fieldChanges`, found from
/// the two stored texts' members), compared byte for byte as the content
/// hash compares records.
@Suite struct Issue27FieldChangeTests {
  /// "é" as one scalar and as "e" with a combining accent are different
  /// bytes (a different content hash, so a changed record) that Swift's
  /// `==` calls equal: the field is listed, where it used to be dropped
  /// and the change shown with no field at all.
  @Test func test_issue27_aValueChangedOnlyInItsUnicodeForm_isListed() {
    let composed = "{\"name\":\"caf\u{E9}\",\"n\":1}", decomposed = "{\"name\":\"cafe\u{301}\",\"n\":1}"
    let change = RecordChange(
      id: 1, source: "s", key: "k", kind: .changed, beforeJSON: composed, afterJSON: decomposed,
      at: Date(timeIntervalSince1970: 1_000), run: nil)
    #expect(change.changedFields == ["name"])
    let lines = ChangeText.lines(change)
    #expect(lines.count == 2, "\(lines)")
    #expect(lines.last?.hasPrefix("  name: ") == true, "\(lines)")
  }
}
