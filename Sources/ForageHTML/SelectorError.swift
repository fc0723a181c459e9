/// A CSS selector that could not be parsed, or uses a feature outside the
/// supported subset of Selectors Level 4.
///
///     do {
///       _ = try Selector("div[a=b")
///     } catch let error as SelectorError {
///       print(error)   // expected ']' at character 7 in 'div[a=b'
///     }
///
/// `position` is the 0-based offset, counted in Unicode scalars (which is
/// the character offset for ASCII selectors), of the place where the parser
/// gave up.
///
/// - SeeAlso: <https://www.w3.org/TR/selectors-4/#parse-selector>
public struct SelectorError: Error, CustomStringConvertible, Sendable, Equatable {
  /// What is wrong, without the position (e.g. `expected ']'`).
  public var message: String
  /// The 0-based character offset in `selector` where the problem was found.
  public var position: Int
  /// The selector text that failed to parse.
  public var selector: String
  private var code: Code

  private enum Code: Sendable, Equatable {
    case syntax, unsupported, tooDeep
  }

  /// True when the selector is well-formed CSS but uses a feature this
  /// implementation does not support (`:hover`, `::before`, namespaces).
  public var isUnsupported: Bool { code == .unsupported }

  /// `message at character N in 'selector'` (long selectors are shortened).
  public var description: String {
    let shown = selector.unicodeScalars.count > 200
      ? String(String.UnicodeScalarView(selector.unicodeScalars.prefix(200))) + "…"
      : selector
    return "\(message) at character \(position) in '\(shown)'"
  }

  static func syntax(_ message: String, at position: Int, in selector: String) -> SelectorError {
    SelectorError(message: message, position: position, selector: selector, code: .syntax)
  }

  static func unsupported(_ message: String, at position: Int, in selector: String) -> SelectorError {
    SelectorError(message: message, position: position, selector: selector, code: .unsupported)
  }

  static func tooDeep(_ message: String, at position: Int, in selector: String) -> SelectorError {
    SelectorError(message: message, position: position, selector: selector, code: .tooDeep)
  }
}
