import Foundation
import ForageHTTP
import ForageURL

/// A whole Forage configuration: fetch defaults, tasks and sources.
///
///     let config = try ForageConfig.load(path: "forage.json")
///     for source in config.sources { print(source.name) }
///
/// The JSON format is described in `docs/configuration.md`; the same types
/// can be built in code.
public struct ForageConfig: Sendable, Hashable {
  /// Whether two configs have the same settings, tasks, sources and channels (the folder they were loaded from is not compared).
  public static func == (a: ForageConfig, b: ForageConfig) -> Bool {
    a.store == b.store && a.fetch == b.fetch && a.removeQueryParameters == b.removeQueryParameters
      && a.tasks == b.tasks && a.sources == b.sources && a.notify == b.notify
  }

  /// Hashes the same settings `==` compares.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(store)
    hasher.combine(fetch)
    hasher.combine(removeQueryParameters)
    hasher.combine(tasks)
    hasher.combine(sources)
    hasher.combine(notify)
  }

  /// A SQLite path (relative to the config file) or a `postgres://` URL.
  public var store: String?
  /// Fetch settings of every source that has none of its own (ForageHTTP's
  /// one type for them: identity, politeness, limits, secrets).
  public var fetch: FetchSettings
  /// Query parameters (glob patterns such as `utm_*`) removed from URLs
  /// before deduplication.
  public var removeQueryParameters: [String]
  /// The background tasks that run the sources, each with its identifier and kind.
  public var tasks: [TaskDefinition]
  /// The sources to keep fresh; names are unique.
  public var sources: [Source]
  /// Where notable changes are delivered (the top-level `notify` array).
  public var notify: [NotifyChannel] = []
  /// The folder of the file the config was loaded from (`load(path:)`), for
  /// paths in it that are relative (a `file` channel's); nil when it was
  /// not read from a file. Not part of the config's equality.
  public var directory: String? = nil

  /// Creates a config.
  ///
  /// - Parameter userAgent: when given, replaces `fetch.userAgent` (the
  ///   config file's top-level `userAgent`).
  public init(
    userAgent: String? = nil, store: String? = nil, fetch: FetchSettings = FetchSettings(),
    removeQueryParameters: [String] = EngineDefaults.removedQueryParameters,
    tasks: [TaskDefinition] = [], sources: [Source]
  ) {
    self.store = store
    self.fetch = fetch
    if let userAgent { self.fetch.userAgent = userAgent }
    self.removeQueryParameters = removeQueryParameters
    self.tasks = tasks
    self.sources = sources
  }

  /// The source named `name`.
  public func source(named name: String) -> Source? { sources.first { $0.name == name } }

  /// The task with identifier `id`.
  public func task(withID id: String) -> TaskDefinition? { tasks.first { $0.id == id } }

  /// The fetch settings of `source`: its own, else the config's. Secrets
  /// (`credentials`) also go to the origins of its start URLs.
  public func fetchSettings(for source: Source) -> FetchSettings {
    var settings = source.fetch ?? fetch
    if !settings.credentials.isEmpty {
      settings.credentialOrigins.formUnion(source.urls.compactMap { WebURL($0)?.origin })
    }
    return settings
  }

  /// Reads and validates a config file.
  ///
  ///     let config = try ForageConfig.load(path: "forage.json") { print("warning: \($0)") }
  ///
  /// - Parameter onWarning: called for each warning: something allowed that
  ///   does not do what it says (an appRefresh budget past 30 s is clamped).
  /// - Throws: `ConfigError` listing every problem with its path
  ///   (`sources[2].extract.price.css`), or naming the file when it cannot
  ///   be read or is not JSON.
  public static func load(
    path: String, onWarning: (ConfigProblem) -> Void = { _ in }
  ) throws(ConfigError) -> ForageConfig {
    guard let data = FileManager.default.contents(atPath: path) else {
      var isFolder: ObjCBool = false
      let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
      let message =
        !exists ? "no such file"
        : isFolder.boolValue ? "it is a folder; name the config file (such as \(path)/forage.json)"
        : !FileManager.default.isReadableFile(atPath: path) ? "permission denied: this user cannot read it"
        : "cannot read the file"
      throw ConfigError(file: path, problems: [ConfigProblem(path: "", message: message)])
    }
    var config = try parse(Array(data), file: path, onWarning: onWarning)
    let folder = (path as NSString).deletingLastPathComponent
    config.directory = folder.isEmpty ? "." : folder
    return config
  }

  /// Where `bytes` stop being UTF-8, as a sentence naming the byte, its
  /// offset, line and column; nil when they are UTF-8 throughout. (The JSON
  /// parser would read a bad sequence as U+FFFD, and a name or a selector
  /// would silently hold it.)
  static func invalidUTF8(_ bytes: [UInt8]) -> String? {
    var parser = Unicode.UTF8.ForwardParser()
    var iterator = bytes.makeIterator()
    var offset = 0, line = 1, column = 1
    while true {
      switch parser.parseScalar(from: &iterator) {
      case .valid(let encoded):
        if encoded.count == 1 && encoded.first == 0x0A { line += 1; column = 1 } else { column += 1 }
        offset += encoded.count
      case .emptyInput:
        return nil
      case .error:
        let hex = String(bytes[offset], radix: 16, uppercase: true)
        return "the file is not valid UTF-8: the bytes at offset \(offset) (line \(line), column \(column)), "
          + "starting 0x\(hex.count == 1 ? "0" : "")\(hex), are not a UTF-8 character; save the file as UTF-8"
      }
    }
  }

  /// Parses and validates config JSON.
  ///
  /// - Parameter onWarning: called for each warning (see ``load(path:onWarning:)``).
  /// - Throws: `ConfigError` listing every problem with its path.
  public static func parse(
    _ bytes: [UInt8], file: String = "<config>", onWarning: (ConfigProblem) -> Void = { _ in }
  ) throws(ConfigError) -> ForageConfig {
    if let bad = ForageConfig.invalidUTF8(bytes) {
      throw ConfigError(file: file, problems: [ConfigProblem(path: "", message: bad)])
    }
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
    reader.warnings.forEach(onWarning)
    return config!
  }
}
