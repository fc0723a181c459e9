#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Forage
#if Postgres
import ForagePostgres
#endif

/// The `forage` executable.
@main
struct ForageMain {
  static func main() async {
    registerStores()
    let status = await dispatch(Array(CommandLine.arguments.dropFirst()), Terminal())
    // Every command waits for the programs it started; should one still run
    // (an abandoned delivery being stopped), it does not outlive us.
    ChildProcesses.killAll()
    exit(status.rawValue)
  }

  /// Lets every `--store` name a `postgres://` URL (when built with the
  /// `Postgres` trait); a command that only reads opens it with
  /// `PostgresStore(readingAt:)`, which creates and migrates nothing.
  static func registerStores() {
    #if Postgres
    for scheme in ["postgres://", "postgresql://"] {
      Engine.registerStore(scheme: scheme) { url, forReading in
        forReading ? try PostgresStore(readingAt: url) : try PostgresStore(url: url)
      }
    }
    #endif
  }

  /// Runs the command line `arguments` (without the program's name).
  ///
  /// `forage [--verbose] COMMAND [arguments]`; `--help`/`-h` anywhere before
  /// `--` prints help on standard output and exits 0; `forage help [COMMAND]`
  /// does too, and `forage help --markdown` prints docs/cli.md. Usage errors
  /// print the message and exit 2.
  static func dispatch(_ arguments: [String], _ terminal: Terminal) async -> ExitStatus {
    var out = terminal
    if arguments.isEmpty {
      out.error(mainHelp)
      return .badInput
    }
    // Options before the command's name: forage's own.
    var rest = arguments[...]
    var wantsHelp = false
    while let first = rest.first, ArgumentList.looksLikeOption(first) {
      rest = rest.dropFirst()
      switch first {
      case GlobalArguments.verbose.name: out.verbose = true
      case GlobalArguments.quiet.name: out.quiet = true
      case GlobalArguments.noProgress.name: out.showsProgress = false
      case MainCommand.help.name, MainCommand.help.shortName: wantsHelp = true
      case MainCommand.version.name:
        out.print("forage \(forageVersion)")
        return .ok
      default:
        out.error("forage: \(ArgumentList.unknownOption(first, MainCommand.arguments))\n\n\(mainHelp)")
        return .badInput
      }
    }
    guard let name = rest.first else {
      if wantsHelp {
        out.print(mainHelp)
        return .ok
      }
      out.error(mainHelp)
      return .badInput
    }
    rest = rest.dropFirst()
    if name == "help" { return help(Array(rest), out) }
    guard let command = commands.first(where: { $0.name == name }) else {
      let hint = Spelling.hint(for: name, in: commands.map { $0.name }, quoted: false)
      out.error("forage: unknown command \"\(name)\"\(hint)\n\n\(mainHelp)")
      return .badInput
    }
    // --help anywhere before "--" wins over any mistake on the line.
    let options = rest.prefix { $0 != "--" }
    if wantsHelp || options.contains(where: { $0 == GlobalArguments.help.name || $0 == GlobalArguments.help.shortName }) {
      out.print(command.help)
      return .ok
    }
    do {
      let c = try command.parse(Array(rest), terminal: &out)
      return await c.run(out)
    } catch {
      out.error("forage \(name): \(error)\nRun 'forage \(name) --help' for usage.")
      return .badInput
    }
  }

  /// `forage help [COMMAND]`, and `forage help --markdown` for docs/cli.md.
  static func help(_ arguments: [String], _ out: Terminal) -> ExitStatus {
    guard let name = arguments.first else {
      out.print(mainHelp)
      return .ok
    }
    guard arguments.count == 1 else {
      out.error("forage help: give one command's name, e.g. 'forage help run'")
      return .badInput
    }
    if name == "--markdown" {
      out.write(1, Help.markdown)
      return .ok
    }
    guard let command = commands.first(where: { $0.name == name }) else {
      let hint = Spelling.hint(for: name, in: commands.map { $0.name }, quoted: false)
      out.error("forage help: unknown command \"\(name)\"\(hint)\n\n\(mainHelp)")
      return .badInput
    }
    out.print(command.help)
    return .ok
  }
}

let forageVersion = "0.1.0"
