import ForageStore
import ForageSupport

extension Engine {
  /// Opens a store named by a URL, such as `postgres://…`.
  public typealias StoreOpener = @Sendable (String) throws -> any Store

  private static let openers = Locked<[String: StoreOpener]>([:])

  /// Lets ``openStore(_:)`` (and so every `--store`) open locations starting
  /// with `scheme` (`"postgres://"`): the engine does not depend on the
  /// modules of such stores, so a front end that links one registers it.
  ///
  ///     Engine.registerStore(scheme: "postgres://") { try PostgresStore(url: $0) }
  public static func registerStore(scheme: String, _ open: @escaping StoreOpener) {
    openers.withLock { $0[scheme] = open }
  }

  /// The opener registered for `location`'s scheme, if any.
  static func opener(for location: String) -> StoreOpener? {
    openers.withLock { table in table.first { location.hasPrefix($0.key) }?.value }
  }
}
