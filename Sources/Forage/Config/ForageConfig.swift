import Foundation

/// A whole Forage configuration: fetch defaults, tasks and sources.
///
///     let config = try ForageConfig.load(path: "forage.json")
///     for source in config.sources { print(source.name) }
///
/// The JSON format is described in `docs/configuration.md`; the same types
/// can be built in code.
public struct ForageConfig: Sendable, Hashable {
  /// The User-Agent sent with every request unless a source overrides it.
  public var userAgent: String?
  /// A SQLite path (relative to the config file) or a `postgres://` URL.
  public var store: String?
  /// Fetch defaults for every source.
  public var fetch: FetchOptions
  /// Query parameters (glob patterns such as `utm_*`) removed from URLs
  /// before deduplication.
  public var removeQueryParameters: [String]
  public var tasks: [TaskDefinition]
  public var sources: [Source]

  public init(
    userAgent: String? = nil, store: String? = nil, fetch: FetchOptions = FetchOptions(),
    removeQueryParameters: [String] = Defaults.removedQueryParameters,
    tasks: [TaskDefinition] = [], sources: [Source]
  ) {
    self.userAgent = userAgent
    self.store = store
    self.fetch = fetch
    self.removeQueryParameters = removeQueryParameters
    self.tasks = tasks
    self.sources = sources
  }

  /// The source named `name`.
  public func source(named name: String) -> Source? { sources.first { $0.name == name } }

  /// The task with identifier `id`.
  public func task(withID id: String) -> TaskDefinition? { tasks.first { $0.id == id } }

  /// The effective fetch options of a source: config defaults, then the
  /// source's own, with the config's user agent.
  public func fetchOptions(for source: Source) -> FetchOptions {
    var base = fetch
    if base.userAgent == nil { base.userAgent = userAgent }
    return base.overridden(by: source.fetch)
  }

  /// Reads and validates a config file.
  ///
  /// - Throws: `ConfigError` listing every problem with its path
  ///   (`sources[2].extract.price.css`), or naming the file when it cannot
  ///   be read or is not JSON.
  public static func load(path: String) throws(ConfigError) -> ForageConfig {
    guard let data = FileManager.default.contents(atPath: path) else {
      let exists = FileManager.default.fileExists(atPath: path)
      throw ConfigError(file: path, problems: [
        ConfigProblem(path: "", message: exists ? "cannot read the file" : "no such file")
      ])
    }
    return try parse(Array(data), file: path)
  }

  /// Parses and validates config JSON.
  ///
  /// - Throws: `ConfigError` listing every problem with its path.
  public static func parse(_ bytes: [UInt8], file: String = "<config>") throws(ConfigError) -> ForageConfig {
    let json: JSONValue
    do {
      json = try JSONValue.parse(bytes)
    } catch {
      throw ConfigError(file: file, problems: [ConfigProblem(path: "", message: "not valid JSON: \(error)")])
    }
    var reader = ConfigReader()
    let config = reader.config(json)
    if !reader.problems.isEmpty || config == nil {
      throw ConfigError(file: file, problems: reader.problems)
    }
    return config!
  }
}
