#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `forage` executable.
@main
struct ForageMain {
  static func main() async {
    var arguments = Array(CommandLine.arguments.dropFirst())
    var out = Terminal()
    // --verbose is understood by every command, anywhere on the line.
    if let i = arguments.firstIndex(of: "--verbose") {
      arguments.remove(at: i)
      out.verbose = true
    }
    let status = await dispatch(arguments, out)
    exit(status.rawValue)
  }

  static func dispatch(_ arguments: [String], _ out: Terminal) async -> ExitStatus {
    guard let name = arguments.first, name != "--help", name != "-h", name != "help" else {
      if arguments.isEmpty {
        out.error(mainHelp)
        return .badInput
      }
      if arguments.count > 1, let c = commands.first(where: { $0.name == arguments[1] }) {
        out.print(c.help)
      } else {
        out.print(mainHelp)
      }
      return .ok
    }
    if name == "--version" {
      out.print("forage \(forageVersion)")
      return .ok
    }
    guard let command = commands.first(where: { $0.name == name }) else {
      out.error("forage: unknown command \"\(name)\"\n\n\(mainHelp)")
      return .badInput
    }
    var args = ArgumentList(Array(arguments.dropFirst()))
    if args.flag("--help") || args.flag("-h") {
      out.print(command.help)
      return .ok
    }
    do {
      let c = try command.init(&args)
      return await c.run(out)
    } catch {
      out.error("forage \(name): \(error)\nRun 'forage \(name) --help' for usage.")
      return .badInput
    }
  }
}

let forageVersion = "0.1.0"
