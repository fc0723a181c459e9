import Foundation
import Testing
@testable import ForageCLI

/// The parser and the help made from the commands' declarations, in process.
@Suite struct ArgumentListTests {
  /// Parses `arguments` as `command`'s, without `init`.
  func parse(_ command: any Command.Type, _ arguments: [String]) throws(UsageError) -> ArgumentList {
    try ArgumentList(arguments, declaring: command.allArguments, exclusive: command.exclusive)
  }

  /// `command` as `forage` parses it from `arguments`.
  func parsed<C: Command>(_ command: C.Type, _ arguments: [String]) throws(UsageError) -> C {
    var terminal = Terminal()
    return try C.parse(arguments, terminal: &terminal)
  }

  /// The message of the usage error `arguments` give `command`, or nil.
  func mistake(_ command: any Command.Type, _ arguments: [String]) -> String? {
    var terminal = Terminal()
    do {
      _ = try command.parse(arguments, terminal: &terminal)
      return nil
    } catch {
      return error.message
    }
  }

  @Test func test_nameEqualsValue_isNameSpaceValue() throws {
    var a = try parse(RunCommand.self, ["--budget=3s", "--config=a=b.json", "--task="])
    #expect(try a.option("--budget") == "3s")
    #expect(try a.option("--config") == "a=b.json")
    #expect(try a.option("--task") == "")
    var b = try parse(RunCommand.self, ["--budget", "3s"])
    #expect(try b.option("--budget") == "3s")
    #expect(try parsed(RunCommand.self, ["--budget", "3s"]).budget == .seconds(3))
  }

  /// Issue 25: `--store ""` ran against SQLite's temporary database, said
  /// "the next run continues" and kept nothing.
  @Test func test_issue25_anEmptyPath_isAUsageError_forEveryCommandThatTakesOne() throws {
    var checked = 0
    for command in commands {
      for argument in command.allArguments where argument.kind == .option || argument.kind == .repeatable {
        guard let valueName = argument.valueName, ArgumentList.pathValues[valueName] != nil else { continue }
        for spelling in [[argument.name, ""], [argument.name + "="]] {
          let message = mistake(command, spelling)
          #expect(
            message?.contains("\(argument.name) was given an empty \(valueName)") == true,
            "forage \(command.name) \(spelling): \(message ?? "accepted")")
        }
        checked += 1
      }
    }
    #expect(checked >= 20, "every --store, --config, --out, --to, --report and --profile")
    for command in commands where command.allArguments.contains(where: { $0.name == "--store" }) {
      #expect(mistake(command, ["--store", ""]) != nil, "forage \(command.name) --store \"\"")
    }
    #expect(mistake(InitCommand.self, [""]) == "the DIR argument is empty: name a folder")
    #expect(mistake(QueryCommand.self, ["", "h1"])?.contains("FILE|URL argument is empty") == true)
  }

  @Test func test_repeatableSource_keepsEveryValueInOrder() throws {
    let run = try parsed(RunCommand.self, ["--source", "b", "--json", "--source=a", "--source", "c"])
    #expect(run.sources == ["b", "a", "c"])
    #expect(run.json)
  }

  @Test func test_optionGivenTwice_theLastWins() throws {
    #expect(try parsed(RunCommand.self, ["--config", "a.json", "--config", "b.json"]).config == "b.json")
  }

  @Test func test_missingValue_isAnError() {
    #expect(mistake(RunCommand.self, ["--budget"]) == "--budget needs a value: --budget DURATION")
    #expect(mistake(RunCommand.self, ["--budget", "--"]) == "--budget needs a value: --budget DURATION")
    #expect(
      mistake(RunCommand.self, ["--store", "--json"])
        == "--store needs a value: --store PATH (for a value that starts with --, write --store=--json)")
    #expect(mistake(RunCommand.self, ["--source", "a", "--source"]) == "--source needs a value: --source NAME ...")
  }

  @Test func test_unknownOption_namesTheClosestDeclaredOne() {
    #expect(mistake(RunCommand.self, ["--bugdet", "3s"]) == "unknown option --bugdet (did you mean --budget?)")
    #expect(mistake(RunCommand.self, ["--bugdet=3s"]) == "unknown option --bugdet (did you mean --budget?)")
    #expect(mistake(QueryCommand.self, ["p.html", "p", "--charest", "utf8"]) == "unknown option --charest (did you mean --charset?)")
    #expect(mistake(RunCommand.self, ["--verbos"]) == "unknown option --verbos (did you mean --verbose?)")
    #expect(mistake(RunCommand.self, ["--frobnicate"]) == "unknown option --frobnicate")
    #expect(mistake(RunCommand.self, ["-x"]) == "unknown option -x")
  }

  @Test func test_flagWithAValue_isAnError() {
    #expect(mistake(RunCommand.self, ["--json=yes"]) == "--json takes no value")
  }

  @Test func test_doubleDash_endsOptions() throws {
    let query = try parsed(QueryCommand.self, ["--text", "--", "--odd.html", "-p"])
    #expect(query.input == "--odd.html")
    #expect(query.selector == "-p")
    #expect(query.text)
    #expect(mistake(RunCommand.self, ["--", "--json"]) == "unexpected argument \"--json\"")
  }

  @Test func test_positionals_missingAndExtra() {
    #expect(mistake(QueryCommand.self, []) == "missing FILE|URL")
    #expect(mistake(QueryCommand.self, ["p.html"]) == "missing SELECTOR")
    #expect(mistake(QueryCommand.self, ["p.html", "p", "q"]) == "unexpected argument \"q\"")
    #expect(mistake(RunCommand.self, ["run"]) == "unexpected argument \"run\"")
  }

  @Test func test_requiredOption_andExclusiveOptions() {
    #expect(mistake(ExportCommand.self, ["--format", "csv"]) == "missing --store PATH")
    #expect(mistake(RunCommand.self, ["--task", "t", "--source", "s"]) == "give --task or --source, not both")
    #expect(mistake(QueryCommand.self, ["p.html", "p", "--text", "--attr=href"]) == "give one of --text, --attr, --count")
    #expect(mistake(QueryCommand.self, ["p.html", "p", "--text", "--text"]) == nil)
  }

  @Test func test_valuesAreStillCheckedByTheCommand() {
    #expect(mistake(SimulateCommand.self, ["--days", "0"]) == "--days expects a number from 1 to 3650, not \"0\"")
    #expect(mistake(ExportCommand.self, ["--store", "s", "--format", "xml"]) == "--format expects jsonl or csv, not \"xml\"")
  }

  /// Every command reads every argument it declares (a declared one it never
  /// read would be accepted and ignored), and help lists them all.
  @Test func test_everyCommand_readsAndDocumentsEveryDeclaredArgument() throws {
    let minimal: [String: [String]] = [
      "export": ["--store", "s.sqlite"], "query": ["p.html", "p"], "changes": ["--store", "s.sqlite"],
      "status": ["--store", "s.sqlite"], "report": ["--store", "s.sqlite", "--out", "r.html"],
      "download": ["--list"],
    ]
    for command in commands {
      var args = try parse(command, minimal[command.name] ?? [])
      var terminal = Terminal()
      terminal.read(&args)  // forage reads the global flags
      _ = try command.init(&args)
      #expect(args.unread == ["--help"], "\(command.name) never reads \(args.unread)")
      for argument in command.allArguments {
        #expect(command.help.contains("\n  \(argument.label)  "), "\(command.name) --help omits \(argument.label)")
      }
      for argument in command.arguments {
        #expect(Help.usage(command).contains(argument.synopsis), "\(command.name) usage omits \(argument.synopsis)")
      }
    }
  }

  /// A default shown in help is a valid value, and the one the command uses
  /// when the option is not given.
  @Test func test_shownDefaults_areTheDefaultsUsed() throws {
    /// `command` parsed from `base` plus `name` given its shown default.
    func withShownDefault<C: Command>(_ command: C.Type, _ name: String, _ base: [String] = []) throws -> C {
      let shown = try #require(command.arguments.first { $0.name == name }?.defaultShown, "\(name)")
      return try parsed(command, base + [name, shown])
    }
    let run = try parsed(RunCommand.self, [])
    #expect(try withShownDefault(RunCommand.self, "--config").config == run.config)
    let simulate = try parsed(SimulateCommand.self, [])
    #expect(try withShownDefault(SimulateCommand.self, "--config").config == simulate.config)
    #expect(try withShownDefault(SimulateCommand.self, "--days").days == simulate.days)
    #expect(try withShownDefault(SimulateCommand.self, "--profile").profile == simulate.profile)
    #expect(try withShownDefault(SimulateCommand.self, "--seed").seed == simulate.seed)
    let daemon = try parsed(DaemonCommand.self, [])
    #expect(try withShownDefault(DaemonCommand.self, "--config").config == daemon.config)
    let export = try parsed(ExportCommand.self, ["--store", "s.sqlite"])
    #expect(try withShownDefault(ExportCommand.self, "--format", ["--store", "s.sqlite"]).format == export.format)
    let base = ["--store", "s.sqlite", "--out", "r.html"]
    let report = try parsed(ReportCommand.self, base)
    #expect(try withShownDefault(ReportCommand.self, "--days", base).days == report.days)
    #expect(try withShownDefault(ReportCommand.self, "--profile", base).profile == report.profile)
    #expect(mistake(ReportCommand.self, base + ["--days", "0"]) == "--days expects a number from 1 to 365, not \"0\"")
    let demo = try parsed(DemoCommand.self, [])
    #expect(try withShownDefault(DemoCommand.self, "--days").days == demo.days)
    #expect(try withShownDefault(DemoCommand.self, "--products").products == demo.products)
    #expect(try withShownDefault(DemoCommand.self, "--seed").seed == demo.seed)
    #expect(try withShownDefault(DemoCommand.self, "--profile").profile == demo.profile)
    #expect(try withShownDefault(DemoCommand.self, "--report").reportPath == demo.reportPath)
  }

  /// README.md's command-line block shows each command's usage on one line.
  @Test func test_readmeUsageLines_matchTheDeclarations() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    for command in commands {
      let line = "forage " + command.name.padding(9) + Help.usageItems(command).joined(separator: " ")
      #expect(readme.contains("\n\(line)\n"), "README.md's command line section should read:\n\(line)")
    }
  }

  @Test func test_help_fitsIn80Columns() {
    for (name, text) in [("forage", Help.main)] + commands.map({ ($0.name, $0.help) }) {
      for line in text.split(separator: "\n") {
        #expect(line.count <= Help.width, "forage \(name) --help: \(line)")
        #expect(!line.hasSuffix(" "), "forage \(name) --help: trailing space in \(line)")
      }
    }
  }

  @Test func test_help_wrapsLongSentencesBesideTheirNames() {
    let option = Argument.option("--colour", "NAME", String(repeating: "word ", count: 30) + "end.", default: "red")
    let table = Help.table([option, .flag("--json", "Print JSON.")], column: 18)
    #expect(table == """
        --colour NAME   word word word word word word word word word word word word
                        word word word word word word word word word word word word
                        word word word word word word end (default: red).
        --json          Print JSON.
      """)
    let long = Argument.option("--a-very-long-option-name", "VALUE", "Goes below.")
    #expect(Help.table([long], column: 18) == "  --a-very-long-option-name VALUE\n                  Goes below.")
  }
}
