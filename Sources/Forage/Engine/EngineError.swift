/// A request the engine cannot carry out as asked: a task or source name the
/// config or the store does not know, a store it cannot open. The message is
/// a sentence about the user's input, with the closest name when there is one.
public struct EngineError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of problem this is; compare with the static members.
  public struct Kind: Sendable, Hashable, CustomStringConvertible {
    private let name: String
    private init(_ name: String) { self.name = name }
    /// No task with that identifier in the config.
    public static let unknownTask = Kind("unknownTask")
    /// No source with that name in the config (or, for export, the store).
    public static let unknownSource = Kind("unknownSource")
    /// A store location this build cannot open (a `postgres://` URL).
    public static let unsupportedStore = Kind("unsupportedStore")
    /// The kind's name, such as `unknownTask`.
    public var description: String { name }
  }

  /// The kind of problem.
  public let kind: Kind
  /// What is wrong, for a person.
  public let message: String

  init(_ kind: Kind, _ message: String) {
    self.kind = kind
    self.message = message
  }

  /// The sentence for a person (`message`).
  public var description: String { message }
}
