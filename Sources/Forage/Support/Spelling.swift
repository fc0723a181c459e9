/// Suggestions for misspelt names: config keys, source names, flags.
package enum Spelling {
  /// The candidate closest to `word` by edit distance, when it is close
  /// enough to be a likely typo (`"prcies"` → `"prices"`); nil otherwise.
  package static func closest(to word: String, in candidates: [String]) -> String? {
    ConfigReader.closest(to: word, in: candidates)
  }

  /// The hint a message about a wrong name ends with: ` (did you mean "prices"?)`
  /// when one of `names` is close to `word` (unquoted with `quoted: false`, for
  /// flags and commands: ` (did you mean --json?)`), else "".
  ///
  ///     "unknown key \"prcies\"" + Spelling.hint(for: "prcies", in: ["prices"])
  ///
  /// The one place the hint is worded: config keys, kinds, source and task names,
  /// commands and options all end their message with it.
  package static func hint(for word: String, in names: [String], quoted: Bool = true) -> String {
    guard let name = closest(to: word, in: names) else { return "" }
    return quoted ? " (did you mean \"\(name)\"?)" : " (did you mean \(name)?)"
  }
}

extension CaseIterable where Self: RawRepresentable, RawValue == String {
  /// The "did you mean" hint for a wrong spelling of one of this type's cases
  /// (`TaskKind.hint(for: "crwal")` is ` (did you mean "crawl"?)`), else "".
  package static func hint(for word: String) -> String {
    Spelling.hint(for: word, in: allCases.map(\.rawValue))
  }
}
