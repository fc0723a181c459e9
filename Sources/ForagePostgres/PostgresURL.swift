import ForageStore

/// A `postgres://` store location, with the form messages may show.
///
///     let url = try PostgresURL("postgres://forage:secret@db.example:5432/forage")
///     print(url.redacted)   // postgres://forage@db.example:5432/forage
///
/// The text itself goes to libpq as a connection URI (it understands every
/// parameter libpq does, such as `?host=/run/postgresql` or `sslmode=`);
/// ``redacted`` drops the password from the user part and any `password=`
/// parameter, so no message, log or report ever holds it.
///
/// - SeeAlso: <https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-CONNSTRING>
public struct PostgresURL: Sendable, Hashable, CustomStringConvertible {
  /// The URL as given (it may hold a password: never print it).
  public let text: String
  /// The URL without any password, for messages.
  public let redacted: String

  /// Parses a `postgres://` or `postgresql://` URL.
  ///
  /// - Throws: `PostgresURL.Invalid` with a sentence when the text is not such a URL.
  public init(_ text: String) throws(Invalid) {
    guard Self.isPostgresURL(text) else {
      throw Invalid(message: "a PostgreSQL store is named by a URL such as postgres://user@host:5432/database")
    }
    self.text = text
    self.redacted = StoreLocation.redacted(text)
  }

  /// True when `location` names a PostgreSQL store rather than a SQLite path.
  public static func isPostgresURL(_ location: String) -> Bool {
    location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
  }

  /// The description never holds the password.
  public var description: String { redacted }

  /// This URL naming another database on the same server (tests create one each).
  func replacingDatabase(with name: String) -> PostgresURL {
    let schemeEnd = text.range(of: "://")!.upperBound
    let rest = text[schemeEnd...]
    let queryStart = rest.firstIndex(of: "?") ?? rest.endIndex
    let pathStart = rest[..<queryStart].firstIndex(of: "/") ?? queryStart
    let rebuilt = String(text[..<pathStart]) + "/" + name + String(rest[queryStart...])
    return try! PostgresURL(rebuilt)
  }

  /// A location that is not a PostgreSQL URL.
  public struct Invalid: Error, CustomStringConvertible, Sendable {
    /// A sentence about the input.
    public let message: String
    public var description: String { message }
  }
}
