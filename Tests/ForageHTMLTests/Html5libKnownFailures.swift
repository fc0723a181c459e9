/// html5lib-tests cases that do not pass yet, each with the reason.
///
/// The conformance tests fail when a case fails that is not listed here, and
/// when a listed case passes (so the list only shrinks). Keys are
/// `file#index [state] description` for the tokenizer and `file#index` (the
/// case's position in its file, from 0) for tree construction.
///
/// Both lists are empty: every tokenizer case and every tree-construction
/// case without `#script-on` passes.
enum Html5libKnownFailures {
  static let tokenizer: [String: String] = [:]
  static let treeConstruction: [String: String] = [:]
}
