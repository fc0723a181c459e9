/// A word-by-word difference of two texts, for showing what changed in a
/// long text field.
///
///     WordDiff.diff("In stock, ships today", "Sold out, ships today")
///     // [.removed("In stock, "), .added("Sold out, "), .same("ships today")]
///
/// Words keep the whitespace after them, and the parts reproduce both texts
/// exactly: the `same` and `removed` parts joined give the first text, the
/// `same` and `added` parts joined give the second.
package enum WordDiff {
  /// A piece of a diff.
  package enum Part: Sendable, Hashable {
    /// Text both versions have.
    case same(String)
    /// Text only the first version has.
    case removed(String)
    /// Text only the second version has.
    case added(String)
  }

  /// The most words the middle of either text (after their common start and
  /// end are set aside) may have for a word-by-word comparison; past it the
  /// middle is shown as one removed and one added part. The comparison takes
  /// time and memory proportional to the product of the two counts.
  package static let largestComparedMiddle = 4000

  /// The parts that turn `before` into `after`: their common words as
  /// `same`, the rest as `removed` and `added`. Between two `same` parts,
  /// what was removed comes first, then what was added, each as one part;
  /// no part is empty.
  package static func diff(_ before: String, _ after: String) -> [Part] {
    let a = tokens(before)
    let b = tokens(after)
    var out = PartList()

    var prefix = 0
    while prefix < a.count && prefix < b.count && a[prefix].isIdentical(to: b[prefix]) { prefix += 1 }
    var suffix = 0
    while suffix < a.count - prefix && suffix < b.count - prefix
      && a[a.count - 1 - suffix].isIdentical(to: b[b.count - 1 - suffix])
    {
      suffix += 1
    }
    for t in a[..<prefix] { out.append(.same(t.text)) }

    let aMiddle = Array(a[prefix..<(a.count - suffix)])
    let bMiddle = Array(b[prefix..<(b.count - suffix)])
    if aMiddle.count > largestComparedMiddle || bMiddle.count > largestComparedMiddle {
      for t in aMiddle { out.append(.removed(t.text)) }
      for t in bMiddle { out.append(.added(t.text)) }
    } else {
      compare(aMiddle, bMiddle, into: &out)
    }

    for t in a[(a.count - suffix)...] { out.append(.same(t.text)) }
    return out.parts()
  }

  /// Whether a text is long enough to be shown as a word diff rather than
  /// as its old and new values: 80 characters or more, or more than one line.
  package static func isLongText(_ s: String) -> Bool {
    var count = 0
    for c in s {
      if c.isNewline { return true }
      count += 1
      if count >= 80 { return true }
    }
    return false
  }

  // MARK: Words

  /// A word and the whitespace after it. Text that starts with whitespace
  /// begins with a token whose word is empty.
  struct Token {
    var word: Substring
    var space: Substring
    var text: Substring { word.base[word.startIndex..<space.endIndex] }

    /// Same word and same whitespace, byte for byte (not by Unicode
    /// equivalence, so that the parts rebuild each text exactly).
    func isIdentical(to other: Token) -> Bool {
      word.utf8.elementsEqual(other.word.utf8) && space.utf8.elementsEqual(other.space.utf8)
    }
  }

  static func tokens(_ s: String) -> [Token] {
    var out: [Token] = []
    var i = s.startIndex
    while i < s.endIndex {
      let wordStart = i
      while i < s.endIndex && !s[i].isWhitespace { i = s.index(after: i) }
      let wordEnd = i
      while i < s.endIndex && s[i].isWhitespace { i = s.index(after: i) }
      out.append(Token(word: s[wordStart..<wordEnd], space: s[wordEnd..<i]))
    }
    return out
  }

  /// Words as numbers, equal when their bytes are.
  struct WordNumbers {
    var numbers: [[UInt8]: Int] = [:]
    mutating func number(_ word: Substring) -> Int {
      let bytes = Array(word.utf8)
      if let n = numbers[bytes] { return n }
      numbers[bytes] = numbers.count
      return numbers.count - 1
    }
  }

  /// A longest common subsequence of the two token lists by word; a word
  /// kept whose whitespace differs is `same` with its whitespace removed and
  /// added.
  static func compare(_ a: [Token], _ b: [Token], into out: inout PartList) {
    var words = WordNumbers()
    let x = a.map { words.number($0.word) }
    let y = b.map { words.number($0.word) }
    let n = x.count
    let m = y.count
    // length[i * width + j]: the longest common subsequence of x[i...] and
    // y[j...]. Counts stay below `largestComparedMiddle`, so UInt16 holds them.
    let width = m + 1
    var length = [UInt16](repeating: 0, count: (n + 1) * width)
    if n > 0 && m > 0 {
      for i in stride(from: n - 1, through: 0, by: -1) {
        for j in stride(from: m - 1, through: 0, by: -1) {
          length[i * width + j] =
            x[i] == y[j]
            ? length[(i + 1) * width + j + 1] + 1
            : max(length[(i + 1) * width + j], length[i * width + j + 1])
        }
      }
    }
    var i = 0
    var j = 0
    while i < n || j < m {
      if i < n && j < m && x[i] == y[j] {
        out.append(.same(a[i].word))
        if a[i].space.utf8.elementsEqual(b[j].space.utf8) {
          out.append(.same(a[i].space))
        } else {
          out.append(.removed(a[i].space))
          out.append(.added(b[j].space))
        }
        i += 1
        j += 1
      } else if j == m || (i < n && length[(i + 1) * width + j] >= length[i * width + j + 1]) {
        out.append(.removed(a[i].text))
        i += 1
      } else {
        out.append(.added(b[j].text))
        j += 1
      }
    }
  }

  /// Collects parts: adjacent `same` text is joined, and each run of
  /// changes between two `same` parts becomes one `removed` and one `added`.
  struct PartList {
    enum Piece {
      case same(Substring), removed(Substring), added(Substring)
    }
    var done: [Part] = []
    var same = ""
    var removed = ""
    var added = ""

    mutating func append(_ piece: Piece) {
      switch piece {
      case .same(let s) where !s.isEmpty:
        flushChanges()
        same += s
      case .removed(let s) where !s.isEmpty:
        flushSame()
        removed += s
      case .added(let s) where !s.isEmpty:
        flushSame()
        added += s
      default:
        break
      }
    }

    mutating func flushSame() {
      if !same.isEmpty { done.append(.same(same)) }
      same = ""
    }

    mutating func flushChanges() {
      if !removed.isEmpty { done.append(.removed(removed)) }
      if !added.isEmpty { done.append(.added(added)) }
      removed = ""
      added = ""
    }

    mutating func parts() -> [Part] {
      flushSame()
      flushChanges()
      return done
    }
  }
}
