import ForageScheduler
import Testing

@testable import Forage

/// The one "did you mean" hint every message about a wrong name ends with.
@Suite struct SpellingTests {
  @Test func test_hint_namesTheClosestName_quotedOrNot() {
    #expect(Spelling.hint(for: "prcies", in: ["title", "prices"]) == " (did you mean \"prices\"?)")
    #expect(Spelling.hint(for: "--jsno", in: ["--json", "--config"], quoted: false) == " (did you mean --json?)")
  }

  @Test func test_hint_isEmpty_whenNoNameIsClose() {
    #expect(Spelling.hint(for: "zzzzzzzz", in: ["prices"]).isEmpty)
    #expect(Spelling.hint(for: "prices", in: []).isEmpty)
  }

  @Test func test_aKindType_makesTheHintFromItsOwnCases() {
    let first = TaskKind.allCases[0].rawValue
    let typo = String(first.dropLast()) + "x"
    #expect(TaskKind.hint(for: typo) == " (did you mean \"\(first)\"?)")
  }
}
