/// Where notable changes are delivered: a top-level `notify` entry of the config.
///
///     NotifyChannel(name: "ops", target: .webhook(url: "https://hooks.example.com/forage",
///                                                 secretEnv: "FORAGE_HOOK_SECRET"))
public struct NotifyChannel: Sendable, Hashable {
  /// The channel's name, unique in the config (a source's `notifyVia` names
  /// channels); unnamed channels are called by their type (`"webhook"`).
  public var name: String
  /// Where notifications go.
  public var target: Target
  /// Several notifications of one delivery round go in one request (or one
  /// run of the command) as `{"type": "batch", "notifications": [...]}`.
  public var batch: Bool
  /// The longest one delivery attempt may take.
  public var timeout: Duration
  /// A notification not delivered within this time after its change is marked
  /// dead: kept and shown, never retried.
  public var maxAge: Duration
  /// Command channels only: variables set in the program's environment, by
  /// name (the config's `env`). Beside them the program gets only `PATH`,
  /// `HOME`, `LANG`, `LC_ALL` and `TZ` from Forage's environment, the
  /// variables of ``passEnv``, and `FORAGE_MESSAGE_ID`.
  public var env: [String: String]
  /// Command channels only: names of variables of Forage's environment that
  /// the program gets too (the config's `passEnv`), so a secret such as a
  /// token is named in the config, never written in it.
  public var passEnv: [String]

  /// Where a channel delivers.
  public enum Target: Sendable, Hashable {
    /// POST JSON to `url` (Standard Webhooks headers); `secretEnv` names the
    /// environment variable that holds the signing secret (`whsec_…`).
    case webhook(url: String, secretEnv: String?)
    /// Run a program (argv, no shell) with the notification JSON on stdin.
    case command([String])
    /// Append JSON Lines to a file (relative paths: to the config file).
    case file(String)
    /// Print JSON Lines on standard output.
    case stdout
    /// Show a notification on the device the app runs on (iOS, through
    /// `ForageBackgroundTasks`); elsewhere every attempt fails, saying why.
    case local

    /// The type's word in the config (`"webhook"`, `"command"`, `"file"`, `"stdout"`).
    public var typeName: String {
      switch self {
      case .webhook: return "webhook"
      case .command: return "command"
      case .file: return "file"
      case .stdout: return "stdout"
      case .local: return "local"
      }
    }
  }

  /// A channel delivering to `target`; an unnamed one is called by its type.
  public init(
    name: String? = nil, target: Target, batch: Bool = false, timeout: Duration = EngineDefaults.notifyTimeout,
    maxAge: Duration = EngineDefaults.notifyMaxAge, env: [String: String] = [:], passEnv: [String] = []
  ) {
    self.name = name ?? target.typeName
    self.target = target
    self.batch = batch
    self.timeout = timeout
    self.maxAge = maxAge
    self.env = env
    self.passEnv = passEnv
  }
}
