/// A mistake in the command line: the message says what and how to fix it.
struct UsageError: Error, CustomStringConvertible {
  var message: String
  init(_ message: String) { self.message = message }
  var description: String { message }
}

/// The arguments of one command, consumed as they are matched.
///
/// `--name=value` and `--name value` are the same; `--` ends options.
struct ArgumentList {
  private(set) var items: [String]
  private var positionalOnly = false

  init(_ arguments: [String]) {
    var out: [String] = []
    var afterDashes = false
    for a in arguments {
      if afterDashes || a == "--" || !a.hasPrefix("--") {
        if a == "--" { afterDashes = true }
        out.append(a)
      } else if let eq = a.firstIndex(of: "=") {
        out.append(String(a[..<eq]))
        out.append(String(a[a.index(after: eq)...]))
      } else {
        out.append(a)
      }
    }
    items = out
  }

  var isEmpty: Bool { items.isEmpty }

  /// Removes and returns the value of the last `name` option, if present.
  mutating func option(_ name: String) throws(UsageError) -> String? {
    try options(name).last
  }

  /// Removes and returns the values of every `name` option.
  mutating func options(_ name: String) throws(UsageError) -> [String] {
    var values: [String] = []
    var i = 0
    while i < items.count {
      if items[i] == "--" { break }
      if items[i] == name {
        guard i + 1 < items.count, items[i + 1] != "--" else { throw UsageError("option \(name) needs a value") }
        values.append(items[i + 1])
        items.removeSubrange(i...i + 1)
      } else {
        i += 1
      }
    }
    return values
  }

  /// Removes `name` and returns whether it was present.
  mutating func flag(_ name: String) -> Bool {
    guard let end = items.firstIndex(of: "--") ?? Optional(items.count),
          let i = items[..<end].firstIndex(of: name) else { return false }
    items.remove(at: i)
    items.removeAll { $0 == name }
    return true
  }

  /// Removes and returns the next positional argument.
  mutating func positional(_ what: String) throws(UsageError) -> String {
    guard let i = items.firstIndex(where: { !$0.hasPrefix("--") || $0 == "--" }) else {
      throw UsageError("missing \(what)")
    }
    if items[i] == "--" {
      items.remove(at: i)
      return try positional(what)
    }
    return items.remove(at: i)
  }

  /// Fails on anything not consumed.
  func expectNoMore() throws(UsageError) {
    let rest = items.filter { $0 != "--" }
    guard let first = rest.first else { return }
    throw UsageError(first.hasPrefix("--") ? "unknown option \(first)" : "unexpected argument \"\(first)\"")
  }
}
