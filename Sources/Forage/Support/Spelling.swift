/// Suggestions for misspelt names: config keys, source names, flags.
package enum Spelling {
  /// The candidate closest to `word` by edit distance, when it is close
  /// enough to be a likely typo (`"prcies"` → `"prices"`); nil otherwise.
  package static func closest(to word: String, in candidates: [String]) -> String? {
    ConfigReader.closest(to: word, in: candidates)
  }
}
