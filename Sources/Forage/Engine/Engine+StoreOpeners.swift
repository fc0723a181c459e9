import ForageStore
import ForageSupport

extension Engine {
  /// Opens a store named by a URL, such as `postgres://…`.
  ///
  /// `forReading` is true for a command that only reads the store (what
  /// ``openStore(_:forReading:)`` was given): the opener then creates and
  /// migrates nothing, and refuses a location without a Forage store, or
  /// with one an older or newer Forage wrote, as `SQLiteStore(readingAt:)`
  /// does (`StoreError` of kind `.notAStore`, `.olderStore`, `.newerStore`).
  public typealias StoreOpener = @Sendable (_ location: String, _ forReading: Bool) throws -> any Store

  private static let openers = Locked<[String: StoreOpener]>([:])

  /// Lets ``openStore(_:forReading:)`` (and so every `--store`) open
  /// locations starting with `scheme` (`"postgres://"`): the engine does not
  /// depend on the modules of such stores, so a front end that links one
  /// registers it.
  ///
  ///     Engine.registerStore(scheme: "postgres://") { url, forReading in
  ///       forReading ? try PostgresStore(readingAt: url) : try PostgresStore(url: url)
  ///     }
  public static func registerStore(scheme: String, _ open: @escaping StoreOpener) {
    openers.withLock { $0[scheme] = open }
  }

  /// Registers an opener that does not know reading opens: reading commands
  /// get the store it opens as any other command does (it may migrate it).
  @available(
    *, deprecated,
    message: "register an opener taking (location, forReading), so that reading commands change nothing"
  )
  public static func registerStore(scheme: String, _ open: @escaping @Sendable (String) throws -> any Store) {
    registerStore(scheme: scheme) { location, _ in try open(location) }
  }

  /// The opener registered for `location`'s scheme, if any.
  static func opener(for location: String) -> StoreOpener? {
    openers.withLock { table in table.first { location.hasPrefix($0.key) }?.value }
  }
}
