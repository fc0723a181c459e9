/// Where a store is, as `--store` and a config's `store` name it: a SQLite
/// path, or a URL such as `postgres://user:password@host:5432/forage`.
public enum StoreLocation {
  /// `location` as messages may show it: a URL without the password of its
  /// user part and without a `password=` parameter; a path unchanged.
  ///
  ///     StoreLocation.redacted("postgres://forage:secret@db:5432/forage")
  ///     // "postgres://forage@db:5432/forage"
  public static func redacted(_ location: String) -> String {
    guard let schemeEnd = location.range(of: "://")?.upperBound else { return location }
    let rest = location[schemeEnd...]
    let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
    var authority = String(rest[..<authorityEnd])
    if let at = authority.lastIndex(of: "@") {
      let user = authority[..<at]
      let name = user.firstIndex(of: ":").map { user[..<$0] } ?? user
      authority = String(name) + authority[at...]
    }
    var tail = String(rest[authorityEnd...])
    if let question = tail.firstIndex(of: "?") {
      let query = tail[tail.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
        .filter { !$0.lowercased().hasPrefix("password=") }
      tail = String(tail[..<question]) + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }
    return String(location[..<schemeEnd]) + authority + tail
  }
}
