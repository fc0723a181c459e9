/// One argument a command accepts, declared once: the parser, `--help`, the
/// misspelling suggestion and `docs/cli.md` are all made from it.
///
///     .option("--config", "FILE", "The config file.", default: "forage.json")
///
/// A command lists its arguments in `Command.arguments`; its `init` then reads
/// them by name from the `ArgumentList` parsed against that list.
struct Argument: Sendable, Equatable {
  /// How an argument appears on the command line.
  enum Kind: Sendable, Equatable {
    /// `--json`: present or not; takes no value.
    case flag
    /// `--config FILE`: one value (given twice, the last wins).
    case option
    /// `--source NAME`: one value each time it is given.
    case repeatable
    /// `FILE|URL`: a bare word, in order.
    case positional
  }

  /// The name (`--config`), or for a positional its value name (`SELECTOR`).
  var name: String
  /// Another spelling (`-h` for `--help`).
  var shortName: String?
  /// The value's placeholder in usage and help (`FILE`); nil for a flag.
  var valueName: String?
  var kind: Kind
  /// One or two sentences for the options table.
  var help: String
  /// The default as shown in help (`forage.json`), if there is one worth saying.
  var defaultShown: String?
  /// An option the command cannot run without (shown without brackets).
  var isRequired = false
  /// A positional that takes every remaining bare word (`URL ...`); the last one.
  var isVariadic = false

  /// A flag: `--json`.
  static func flag(_ name: String, short: String? = nil, _ help: String) -> Argument {
    Argument(name: name, shortName: short, valueName: nil, kind: .flag, help: help)
  }

  /// An option with one value: `--config FILE`.
  static func option(
    _ name: String, _ valueName: String, _ help: String, default defaultShown: String? = nil, required: Bool = false
  ) -> Argument {
    Argument(
      name: name, valueName: valueName, kind: .option, help: help, defaultShown: defaultShown, isRequired: required)
  }

  /// An option that may be given several times: `--source NAME ...`.
  static func repeatable(_ name: String, _ valueName: String, _ help: String, default defaultShown: String? = nil)
    -> Argument
  {
    Argument(name: name, valueName: valueName, kind: .repeatable, help: help, defaultShown: defaultShown)
  }

  /// A positional argument, required: `SELECTOR`.
  static func positional(_ valueName: String, _ help: String) -> Argument {
    Argument(name: valueName, valueName: valueName, kind: .positional, help: help, isRequired: true)
  }

  /// A positional argument that may be left out: `[DIR]`.
  static func optionalPositional(_ valueName: String, _ help: String, default defaultShown: String? = nil) -> Argument {
    Argument(name: valueName, valueName: valueName, kind: .positional, help: help, defaultShown: defaultShown)
  }

  /// Positional arguments that may be given any number of times, none included:
  /// `[URL ...]`. It must be the command's last positional.
  static func variadicPositional(_ valueName: String, _ help: String) -> Argument {
    Argument(name: valueName, valueName: valueName, kind: .positional, help: help, isVariadic: true)
  }

  /// Whether the argument takes a value after its name.
  var takesValue: Bool { kind == .option || kind == .repeatable }

  /// The argument as the usage line shows it, without brackets:
  /// `--config FILE`, `--source NAME ...`, `--json`, `SELECTOR`.
  var synopsis: String {
    switch kind {
    case .flag: name
    case .option: "\(name) \(valueName ?? "VALUE")"
    case .repeatable: "\(name) \(valueName ?? "VALUE") ..."
    case .positional: isVariadic ? "\(name) ..." : name
    }
  }

  /// The argument as the options table shows it: `-h, --help`, `--config FILE`.
  var label: String {
    let names = [shortName, name].compactMap { $0 }.joined(separator: ", ")
    switch kind {
    case .flag, .positional: return names
    case .option, .repeatable: return "\(names) \(valueName ?? "VALUE")"
    }
  }

  /// The help sentence with its notes: `Run this source (repeatable; default: every source).`
  var fullHelp: String {
    var notes: [String] = []
    if kind == .repeatable { notes.append("repeatable") }
    if isRequired && kind != .positional { notes.append("required") }
    if let defaultShown { notes.append("default: \(defaultShown)") }
    guard !notes.isEmpty else { return help }
    let sentence = help.hasSuffix(".") ? String(help.dropLast()) : help
    return "\(sentence) (\(notes.joined(separator: "; ")))."
  }
}

/// The arguments every command accepts, handled by `forage` itself.
enum GlobalArguments {
  static let verbose = Argument.flag(
    "--verbose", "Also show each error's internal detail, for bug reports.")
  static let quiet = Argument.flag("--quiet", "Print only results and errors: no notes, no progress line.")
  static let noProgress = Argument.flag(
    "--no-progress", "No live progress line (it shows only on a terminal, and not with NO_COLOR).")
  static let help = Argument.flag("--help", short: "-h", "Show this help.")
  /// In the order help lists them, after a command's own.
  static let all = [verbose, quiet, noProgress, help]
}
