import ForageSupport
import Testing

@testable import Forage

/// The text of the parts that belong to the first version (`same` and `removed`).
private func beforeText(_ parts: [WordDiff.Part]) -> String {
  parts.map { part -> String in
    switch part {
    case .same(let s), .removed(let s): return s
    case .added: return ""
    }
  }.joined()
}

/// The text of the parts that belong to the second version (`same` and `added`).
private func afterText(_ parts: [WordDiff.Part]) -> String {
  parts.map { part -> String in
    switch part {
    case .same(let s), .added(let s): return s
    case .removed: return ""
    }
  }.joined()
}

/// What every diff promises: both texts rebuilt byte for byte, no empty
/// part, no two `same` parts in a row, and between two `same` parts at most
/// one `removed` followed by at most one `added`.
private func checkInvariants(_ a: String, _ b: String, sourceLocation: SourceLocation = #_sourceLocation) {
  let parts = WordDiff.diff(a, b)
  #expect(Array(beforeText(parts).utf8) == Array(a.utf8), "before of \(a.debugDescription) → \(b.debugDescription)", sourceLocation: sourceLocation)
  #expect(Array(afterText(parts).utf8) == Array(b.utf8), "after of \(a.debugDescription) → \(b.debugDescription)", sourceLocation: sourceLocation)
  var previous: WordDiff.Part?
  for part in parts {
    switch (previous, part) {
    case (_, .same("")), (_, .removed("")), (_, .added("")):
      Issue.record("empty part in \(parts)", sourceLocation: sourceLocation)
    case (.same?, .same), (.removed?, .removed), (.added?, .added), (.added?, .removed):
      Issue.record("parts not merged: \(parts)", sourceLocation: sourceLocation)
    default:
      break
    }
    previous = part
  }
}

@Suite struct WordDiffTests {
  @Test func test_identicalTexts_areOneSamePart() {
    #expect(WordDiff.diff("a b  c\n", "a b  c\n") == [.same("a b  c\n")])
    #expect(WordDiff.diff("", "") == [])
  }

  @Test func test_oneWordReplaced() {
    #expect(
      WordDiff.diff("the quick brown fox", "the slow brown fox") == [
        .same("the "), .removed("quick "), .added("slow "), .same("brown fox"),
      ])
  }

  @Test func test_wordsAddedAndRemoved() {
    #expect(WordDiff.diff("the cat", "the cat sat") == [.same("the cat"), .added(" sat")])
    #expect(WordDiff.diff("the cat sat", "the cat") == [.same("the cat"), .removed(" sat")])
    #expect(WordDiff.diff("", "new text") == [.added("new text")])
    #expect(WordDiff.diff("old text", "") == [.removed("old text")])
    #expect(
      WordDiff.diff("In stock, ships today", "Sold out, ships today") == [
        .removed("In stock, "), .added("Sold out, "), .same("ships today"),
      ])
  }

  @Test func test_changesBetweenKeptWords_areOneRemovedAndOneAdded() {
    #expect(
      WordDiff.diff("a x b y c", "a p b q c") == [
        .same("a "), .removed("x "), .added("p "), .same("b "), .removed("y "), .added("q "), .same("c"),
      ])
    #expect(WordDiff.diff("one two three", "four five six") == [.removed("one two three"), .added("four five six")])
  }

  @Test func test_changedWhitespace_keepsTheWord() {
    #expect(WordDiff.diff("a  b", "a b") == [.same("a"), .removed("  "), .added(" "), .same("b")])
    #expect(WordDiff.diff("  lead", "lead") == [.removed("  "), .same("lead")])
    #expect(WordDiff.diff("line one\nline two", "line one line two") == [
      .same("line one"), .removed("\n"), .added(" "), .same("line two"),
    ])
  }

  @Test func test_unicodeEquivalentWords_areNotTheSame() {
    // "é" precomposed and decomposed are equal Swift strings, but the parts
    // must rebuild each text byte for byte.
    checkInvariants("caf\u{E9} au lait", "cafe\u{301} au lait")
    #expect(WordDiff.diff("caf\u{E9} noir", "cafe\u{301} noir").count == 3)
  }

  @Test func test_longMiddle_isOneRemovedAndOneAdded() {
    let n = WordDiff.largestComparedMiddle + 1
    let a = "start " + (0..<n).map { "a\($0)" }.joined(separator: " ") + " end"
    let b = "start " + (0..<n).map { "b\($0)" }.joined(separator: " ") + " end"
    let parts = WordDiff.diff(a, b)
    #expect(parts.count == 4)
    #expect(parts.first == .same("start "))
    #expect(parts.last == .same(" end") || parts.last == .same("end"))
    checkInvariants(a, b)
    // A long text with one changed word is still compared word by word.
    let words = (0..<(3 * n)).map { "w\($0)" }
    var changed = words
    changed[n] = "CHANGED"
    let parts2 = WordDiff.diff(words.joined(separator: " "), changed.joined(separator: " "))
    #expect(parts2.count == 4)
    #expect(parts2[1] == .removed("w\(n) "))
  }

  @Test func test_seededRandomTexts_rebuildBothVersions() {
    var random = SplitMix64(seed: 20_240_611)
    let vocabulary = ["a", "b", "the", "cat", "é", "e\u{301}", "$5", "x-y", "", "🙂"]
    let spaces = [" ", " ", " ", "  ", "\n", "\t", "\r\n", " \n "]
    func text(_ words: [String]) -> String {
      var s = Int.random(in: 0..<6, using: &random) == 0 ? spaces.randomElement(using: &random)! : ""
      for (i, w) in words.enumerated() {
        s += w
        if i < words.count - 1 || Int.random(in: 0..<3, using: &random) == 0 {
          s += spaces.randomElement(using: &random)!
        }
      }
      return s
    }
    for _ in 0..<400 {
      let count = Int.random(in: 0..<30, using: &random)
      let words = (0..<count).map { _ in vocabulary.randomElement(using: &random)! }
      var edited = words
      for _ in 0..<Int.random(in: 0..<6, using: &random) {
        let word = vocabulary.randomElement(using: &random)!
        switch Int.random(in: 0..<3, using: &random) {
        case 0: edited.insert(word, at: Int.random(in: 0...edited.count, using: &random))
        case 1 where !edited.isEmpty: edited.remove(at: Int.random(in: 0..<edited.count, using: &random))
        default: if !edited.isEmpty { edited[Int.random(in: 0..<edited.count, using: &random)] = word }
        }
      }
      checkInvariants(text(words), text(edited))
    }
  }

  @Test func test_isLongText() {
    #expect(!WordDiff.isLongText("short"))
    #expect(!WordDiff.isLongText(String(repeating: "x", count: 79)))
    #expect(WordDiff.isLongText(String(repeating: "x", count: 80)))
    #expect(WordDiff.isLongText("two\nlines"))
    #expect(WordDiff.isLongText("two\r\nlines"))
    #expect(!WordDiff.isLongText(""))
  }
}
