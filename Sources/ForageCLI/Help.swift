/// Help text made from the commands' declarations: each command's `--help`
/// and `forage --help`.
///
/// A command's help is its usage line (wrapped, continuation lines under the
/// first argument), its discussion, a table of its positional arguments and
/// options (help sentences wrapped beside the names), then its notes. The
/// discussion and notes are the command's declared text, kept as written.
enum Help {
  /// The width everything is wrapped to.
  static let width = 80
  /// Names longer than this go on a line of their own, the help under them.
  static let maxLabelWidth = 20

  /// The `--help` text of `command`.
  static func text(for command: any Command.Type) -> String {
    var sections = [
      usage(command),
      command.discussion,
    ]
    let all = command.allArguments
    let column = labelColumn(all)
    let positionals = all.filter { $0.kind == .positional }
    if !positionals.isEmpty {
      sections.append("Arguments:\n" + table(positionals, column: column))
    }
    sections.append("Options:\n" + table(all.filter { $0.kind != .positional }, column: column))
    if !command.notes.isEmpty { sections.append(command.notes) }
    return sections.joined(separator: "\n\n")
  }

  /// The usage line of `command`: required arguments bare, optional ones in
  /// brackets, exclusive ones as `[a | b]`.
  static func usage(_ command: any Command.Type) -> String {
    wrap(usageItems(command), first: "Usage: forage \(command.name) ")
  }

  /// The usage line's items: `[--config FILE]`, `[--task ID | --source NAME ...]`.
  static func usageItems(_ command: any Command.Type) -> [String] {
    var items: [String] = []
    var done: Set<String> = []
    for argument in command.arguments where !done.contains(argument.name) {
      if let group = command.exclusive.first(where: { $0.contains(argument.name) }) {
        let members = group.compactMap { name in command.arguments.first { $0.name == name } }
        items.append("[" + members.map(\.synopsis).joined(separator: " | ") + "]")
        done.formUnion(group)
      } else {
        items.append(argument.isRequired ? argument.synopsis : "[\(argument.synopsis)]")
      }
    }
    return items
  }

  /// `forage --help`.
  static var main: String {
    let nameWidth = commands.map { $0.name.count }.max()! + 2
    let list = commands.map { "  " + $0.name.padding(nameWidth) + $0.abstract }
    return [
      MainCommand.summary,
      "Usage: forage [--verbose] COMMAND [options]",
      "Commands:\n" + list.joined(separator: "\n"),
      "Options:\n" + table(MainCommand.arguments, column: labelColumn(MainCommand.arguments)),
      MainCommand.notes,
    ].joined(separator: "\n\n")
  }

  /// Where help sentences start: after the longest name that fits beside them.
  static func labelColumn(_ arguments: [Argument]) -> Int {
    let widest = arguments.map(\.label.count).filter { $0 <= maxLabelWidth }.max() ?? maxLabelWidth
    return 2 + widest + 2
  }

  /// Two-column rows: the name, then its help wrapped from `column`.
  static func table(_ arguments: [Argument], column: Int) -> String {
    var lines: [String] = []
    for argument in arguments {
      let label = "  " + argument.label
      var body = wrap(argument.fullHelp.split(separator: " ").map(String.init), first: "", indent: column)
        .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
      if label.count + 2 <= column {
        body[0] = label.padding(column) + body[0].dropFirst(column)
      } else {
        lines.append(label)
      }
      lines += body
    }
    return lines.joined(separator: "\n")
  }

  /// `words` after `first`, wrapped at `width`; continuation lines start at
  /// `indent` (default: under the first word).
  static func wrap(_ words: [String], first: String, indent: Int? = nil) -> String {
    let indent = indent ?? first.count
    let margin = String(repeating: " ", count: indent)
    var lines: [String] = []
    var line = first.isEmpty ? margin : first
    var lineIsEmpty = true
    for word in words {
      if !lineIsEmpty && line.count + 1 + word.count > width {
        lines.append(line)
        line = margin
        lineIsEmpty = true
      }
      line += (lineIsEmpty ? "" : " ") + word
      lineIsEmpty = false
    }
    lines.append(line)
    return lines.joined(separator: "\n")
  }
}
