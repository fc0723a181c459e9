import Forage

/// A mistake in the command line: the message says what and how to fix it.
struct UsageError: Error, CustomStringConvertible {
  var message: String
  init(_ message: String) { self.message = message }
  var description: String { message }
}

/// The arguments of one command, parsed against its declared `Argument`s and
/// then read by name.
///
/// `--name=value` and `--name value` are the same; `--` ends options (what
/// follows is positional, even when it starts with `-`). An undeclared option
/// is an error that names the closest declared one; so are a missing value, a
/// value given to a flag, a missing required option or positional, an extra
/// positional, and two options declared as excluding each other.
///
///     var args = try ArgumentList(["--budget=3s", "--json"], declaring: RunCommand.arguments)
///     args.flag("--json")            // true
///     try args.option("--budget")    // "3s"
struct ArgumentList {
  /// What the command accepts, in declaration order.
  let declared: [Argument]
  /// The values of each option and repeatable option given, in order.
  private var values: [String: [String]] = [:]
  /// The flags given.
  private var flags: Set<String> = []
  /// The positional arguments, in order.
  private var positionals: [String] = []
  /// Every name the command has read, to check that none is declared but unused.
  private var read: Set<String> = []

  /// Parses `arguments` against `declared`.
  ///
  /// - Parameter exclusive: groups of names of which at most one may be given.
  /// - Throws: `UsageError` for the first mistake, left to right.
  init(_ arguments: [String], declaring declared: [Argument], exclusive: [[String]] = []) throws(UsageError) {
    self.declared = declared
    var i = 0
    var afterDashes = false
    while i < arguments.count {
      let token = arguments[i]
      i += 1
      if afterDashes || !Self.looksLikeOption(token) {
        if token == "--" && !afterDashes { afterDashes = true } else { positionals.append(token) }
        continue
      }
      // --name=value is --name value.
      var name = token
      var inline: String?
      if token.hasPrefix("--"), let eq = token.firstIndex(of: "=") {
        name = String(token[..<eq])
        inline = String(token[token.index(after: eq)...])
      }
      guard let argument = declared.first(where: { $0.kind != .positional && ($0.name == name || $0.shortName == name) })
      else { throw Self.unknownOption(name, declared) }
      switch argument.kind {
      case .flag:
        if inline != nil { throw UsageError("\(argument.name) takes no value") }
        flags.insert(argument.name)
      case .option, .repeatable:
        if let inline {
          values[argument.name, default: []].append(inline)
        } else if i < arguments.count, !arguments[i].hasPrefix("--") {
          values[argument.name, default: []].append(arguments[i])
          i += 1
        } else {
          var message = "\(argument.name) needs a value: \(argument.synopsis)"
          if i < arguments.count, arguments[i] != "--" {
            message += " (for a value that starts with --, write \(argument.name)=\(arguments[i]))"
          }
          throw UsageError(message)
        }
      case .positional:
        break  // not matched by name
      }
    }
    try Self.refuseEmptyPaths(declared, values: values, positionals: positionals)

    for group in exclusive {
      let given = group.filter { flags.contains($0) || values[$0] != nil }
      guard given.count > 1 else { continue }
      throw UsageError(
        group.count == 2 ? "give \(group[0]) or \(group[1]), not both" : "give one of \(group.joined(separator: ", "))")
    }
    for argument in declared where argument.kind == .option && argument.isRequired && values[argument.name] == nil {
      throw UsageError("missing \(argument.synopsis)")
    }
    let expected = declared.filter { $0.kind == .positional }
    let required = expected.filter(\.isRequired)
    if positionals.count < required.count {
      throw UsageError("missing \(required[positionals.count].name)")
    }
    if positionals.count > expected.count, expected.last?.isVariadic != true {
      throw UsageError("unexpected argument \"\(positionals[expected.count])\"")
    }
  }

  /// What an empty value of each kind of path would have named, by value name.
  static let pathValues: [String: String] = [
    "PATH": "a SQLite file or a postgres:// URL", "FILE": "a file", "DIR": "a folder",
    "NAME|FILE": "a profile or a file", "FILE|URL": "a file or an http(s) URL",
  ]

  /// An empty path names nothing: `--store ""` would be SQLite's temporary
  /// database, which keeps nothing; `--config ""` or `init ""` no file or
  /// folder. Refused for every option and positional whose value is a path.
  private static func refuseEmptyPaths(
    _ declared: [Argument], values: [String: [String]], positionals: [String]
  ) throws(UsageError) {
    for argument in declared where argument.kind == .option || argument.kind == .repeatable {
      guard let valueName = argument.valueName, let what = pathValues[valueName],
        values[argument.name]?.contains("") == true
      else { continue }
      throw UsageError("\(argument.name) was given an empty \(valueName): name \(what)")
    }
    let expected = declared.filter { $0.kind == .positional }
    for (i, value) in positionals.enumerated() where value.isEmpty && !expected.isEmpty {
      let argument = expected[min(i, expected.count - 1)]
      guard let valueName = argument.valueName, let what = pathValues[valueName] else { continue }
      throw UsageError("the \(valueName) argument is empty: name \(what)")
    }
  }

  /// Whether `token` is an option's name rather than a value: `--name`,
  /// `--name=value`, `-h`; not `-`, `--`, or a negative number.
  static func looksLikeOption(_ token: String) -> Bool {
    if token.hasPrefix("--") { return token.count > 2 }
    guard token.hasPrefix("-"), let second = token.dropFirst().first else { return false }
    return second.isLetter
  }

  /// The error for an undeclared option, naming the closest declared one.
  static func unknownOption(_ name: String, _ declared: [Argument]) -> UsageError {
    // Long names only: any one-letter name is within two edits of any other.
    let names = declared.filter { $0.kind != .positional }.map(\.name)
    let hint = name.hasPrefix("--") ? Spelling.hint(for: name, in: names, quoted: false) : ""
    return UsageError("unknown option \(name)\(hint)")
  }

  /// The value of the `name` option, the last one if given several times.
  mutating func option(_ name: String) throws(UsageError) -> String? {
    try options(name).last
  }

  /// The values of every `name` option, in order.
  mutating func options(_ name: String) throws(UsageError) -> [String] {
    markRead(name, as: [.option, .repeatable])
    return values[name] ?? []
  }

  /// Whether the `name` flag was given.
  mutating func flag(_ name: String) -> Bool {
    markRead(name, as: [.flag])
    return flags.contains(name)
  }

  /// The positional argument declared as `name`.
  mutating func positional(_ name: String) throws(UsageError) -> String {
    markRead(name, as: [.positional])
    let index = declared.filter { $0.kind == .positional }.firstIndex { $0.name == name }!
    guard index < positionals.count else { throw UsageError("missing \(name)") }
    return positionals[index]
  }

  /// The optional positional argument declared as `name`, or nil when it
  /// was left out (optional positionals come after the required ones).
  mutating func optionalPositional(_ name: String) -> String? {
    markRead(name, as: [.positional])
    let index = declared.filter { $0.kind == .positional }.firstIndex { $0.name == name }!
    return index < positionals.count ? positionals[index] : nil
  }

  /// Every value of the variadic positional `name` (see
  /// `Argument.variadicPositional`), in order; empty when none was given.
  mutating func variadicPositional(_ name: String) -> [String] {
    markRead(name, as: [.positional])
    let index = declared.filter { $0.kind == .positional }.firstIndex { $0.name == name }!
    return index < positionals.count ? Array(positionals[index...]) : []
  }

  /// Called at the end of a command's `init`. The parser has already refused
  /// anything undeclared; this checks the other direction, that the command
  /// read every argument it declares (a declared but unread one would be
  /// accepted and ignored).
  func expectNoMore() throws(UsageError) {
    let unread = unread.filter { $0 != GlobalArguments.help.name }
    assert(unread.isEmpty, "declared but never read: \(unread.joined(separator: ", "))")
  }

  /// The declared names not read yet (`--help` is `forage`'s to read).
  var unread: [String] { declared.map(\.name).filter { !read.contains($0) } }

  private mutating func markRead(_ name: String, as kinds: [Argument.Kind]) {
    guard let argument = declared.first(where: { $0.name == name }), kinds.contains(argument.kind) else {
      preconditionFailure("\(name) is not declared as \(kinds); declare it in the command's arguments")
    }
    read.insert(name)
  }
}
