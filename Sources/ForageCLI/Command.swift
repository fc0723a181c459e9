/// A subcommand of `forage`: parses its arguments in `init`, then runs.
protocol Command {
  /// The subcommand's name (`run`).
  static var name: String { get }
  /// One line for the command list.
  static var abstract: String { get }
  /// The full help text.
  static var help: String { get }
  init(_ args: inout ArgumentList) throws(UsageError)
  func run(_ out: Terminal) async -> ExitStatus
}

/// Every subcommand, in the order `forage --help` lists them.
var commands: [any Command.Type] {
  [
    RunCommand.self, DaemonCommand.self, SimulateCommand.self, ExportCommand.self, QueryCommand.self,
    DemoCommand.self,
  ]
}

/// The top-level help.
let mainHelp: String = {
  var lines = [
    "forage: keeps web data fresh in the background.",
    "",
    "Usage: forage <command> [options]",
    "",
    "Commands:",
  ]
  for c in commands { lines.append("  " + c.name.padding(10) + c.abstract) }
  lines += [
    "",
    "Run 'forage <command> --help' for a command's options. Every command also takes",
    "--verbose: errors then show their internal detail (for bug reports).",
    "Exit status: 0 success, 1 a job failed, 2 bad input (config, arguments).",
  ]
  return lines.joined(separator: "\n")
}()

extension String {
  func padding(_ width: Int) -> String { count >= width ? self + " " : self + String(repeating: " ", count: width - count) }
}
