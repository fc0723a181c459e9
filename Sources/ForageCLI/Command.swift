/// A subcommand of `forage`: declares its arguments, reads them in `init`, then runs.
///
/// The declarations are the only place an option is spelled out: the parser,
/// `--help`, the suggestion for a misspelt option and `docs/cli.md` are made
/// from them (see `Help`).
protocol Command {
  /// The subcommand's name (`run`).
  static var name: String { get }
  /// One line for the command list.
  static var abstract: String { get }
  /// What the command accepts, in the order usage and help show them
  /// (`--verbose` and `--help` are added by `forage`).
  static var arguments: [Argument] { get }
  /// Groups of argument names of which at most one may be given
  /// (`[--task ID | --source NAME ...]`); adjacent in `arguments`.
  static var exclusive: [[String]] { get }
  /// What the command does: paragraphs between the usage line and the options.
  static var discussion: String { get }
  /// Paragraphs after the options: signals, exit statuses. May be empty.
  static var notes: String { get }
  init(_ args: inout ArgumentList) throws(UsageError)
  func run(_ out: Terminal) async -> ExitStatus
}

extension Command {
  static var exclusive: [[String]] { [] }
  static var notes: String { "" }
  /// The command's own arguments followed by the global ones.
  static var allArguments: [Argument] { arguments + GlobalArguments.all }
  /// The full help text, generated from the declarations.
  static var help: String { Help.text(for: self) }

  /// Parses `arguments` (those after the command's name) as `forage` does:
  /// against the declared and global arguments, then through `init`.
  ///
  /// - Parameter terminal: takes the global flags given (`--verbose`,
  ///   `--quiet`, `--no-progress`).
  static func parse(_ arguments: [String], terminal: inout Terminal) throws(UsageError) -> Self {
    var args = try ArgumentList(arguments, declaring: allArguments, exclusive: exclusive)
    terminal.read(&args)
    return try Self(&args)
  }
}

/// Every subcommand, in the order `forage --help` lists them.
var commands: [any Command.Type] {
  [
    RunCommand.self, DaemonCommand.self, SimulateCommand.self, StatusCommand.self, HealthCommand.self, ChangesCommand.self,
    NotifyCommand.self,
    ExportCommand.self, DownloadCommand.self, ReportCommand.self, QueryCommand.self, InitCommand.self, DemoCommand.self,
  ]
}

/// What `forage` itself says and accepts before a command's name.
enum MainCommand {
  static let summary = "forage: keeps web data fresh in the background."
  static let version = Argument.flag("--version", "Print the version and exit.")
  static let help = Argument.flag(
    "--help", short: "-h", "Show this help; 'forage help COMMAND' or 'forage COMMAND --help' shows a command's.")
  /// The options `forage` takes before a command (`--verbose` also after it).
  static let arguments = [GlobalArguments.verbose, GlobalArguments.quiet, GlobalArguments.noProgress, version, help]
  static let notes = """
    Every command takes --verbose, --quiet, --no-progress and --help, before or
    after its name. Colour and the live progress line appear only on a terminal;
    NO_COLOR turns both off, FORCE_COLOR turns colour on.
    Exit status: 0 success (a run stopped by its budget too), 1 a job failed,
    2 bad input (config, arguments; nothing is written), 130/143 a run stopped
    by SIGINT/SIGTERM.
    """
}

/// The top-level help.
var mainHelp: String { Help.main }

extension String {
  func padding(_ width: Int) -> String { count >= width ? self + " " : self + String(repeating: " ", count: width - count) }
}
