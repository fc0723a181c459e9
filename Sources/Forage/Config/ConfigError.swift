/// One problem found in a config, at a path such as `sources[2].extract.price.css`.
public struct ConfigProblem: Sendable, Hashable, CustomStringConvertible {
  /// Where the problem is; empty for the whole file.
  public var path: String
  /// What is wrong, and how to fix it when that is known.
  public var message: String

  /// A problem at `path` (empty: the whole file), described by `message`.
  public init(path: String, message: String) {
    self.path = path
    self.message = message
  }

  /// The problem as one line: its path, then the message.
  public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// A config that cannot be used: every problem found, each with its path.
///
/// Nothing runs and nothing is written when a config is invalid; the
/// command line exits with status 2.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
  /// The config file's path.
  public var file: String
  /// Every problem found, in the order of the file.
  public var problems: [ConfigProblem]

  /// The error of the config at `file` with these problems.
  public init(file: String, problems: [ConfigProblem]) {
    self.file = file
    self.problems = problems
  }

  /// A heading naming the file, then one indented line per problem.
  public var description: String {
    let head = problems.count == 1 ? "invalid config \(file):" : "invalid config \(file) (\(problems.count) problems):"
    return ([head] + problems.map { "  \($0)" }).joined(separator: "\n")
  }
}
