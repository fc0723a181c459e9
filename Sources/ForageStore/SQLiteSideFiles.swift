#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one rule for names a command writes (a download, an export, a report,
/// a notification file): never a file that SQLite or Forage would read as part
/// of a store.
///
/// SQLite keeps a database `X`'s transient state in files beside it, named by
/// appending to `X`'s name: `X-journal` (the rollback journal), `X-wal` (the
/// write-ahead log), `X-shm` (its shared-memory index) and `X-mjHHHHHH9HH` (a
/// super-journal). The next connection to `X` treats them as its own: a
/// "hot" journal is played back into the database, a stale one deleted, a
/// WAL's frames applied. So a file written under such a name corrupts a
/// database or is deleted; and whether `X` exists now does not matter (a
/// store may be created there later). Those names are reserved in every
/// folder. Beside them, a path is reserved when it is the store a command
/// uses (or the `<store>.pending.json` an earlier Forage kept beside it,
/// which the daemon imports), or an existing SQLite database.
///
///     SQLiteSideFiles.isReserved(name: "forage.sqlite-journal")   // true
///     SQLiteSideFiles.reservation(ofPath: "./forage.sqlite", store: "forage.sqlite")  // .store
///
/// - SeeAlso: <https://www.sqlite.org/tempfiles.html>,
///   <https://www.sqlite.org/lockingv3.html#hot_journals>
public enum SQLiteSideFiles {
  /// Why a path is reserved.
  public enum Reservation: Sendable, Hashable {
    /// SQLite would take the name for the `role` file ("rollback journal",
    /// "write-ahead log"…) of the database named `database` in its folder.
    case sideFile(database: String, role: String)
    /// The path is the store the command uses.
    case store
    /// The path is a file Forage reads beside the store (an earlier
    /// version's pending requests, imported by the daemon).
    case storeCompanion
    /// An existing SQLite database (another store, or another program's).
    case database

    /// Why, as a clause after "it": for messages about the user's path.
    public var explanation: String {
      switch self {
      case .sideFile(let database, let role):
        "is the name SQLite gives the \(role) of a database named \(database) in that folder: "
          + "the next open of that database would read it as its own and replay or delete it"
      case .store:
        "is the store this command uses; writing there would destroy it"
      case .storeCompanion:
        "is a file Forage reads beside the store (an earlier version's pending task requests)"
      case .database:
        "is a SQLite database (a store, or another program's); writing there would destroy it"
      }
    }
  }

  /// The suffixes of SQLite's side files and what each is.
  static let suffixes: [(suffix: String, role: String)] = [
    ("-journal", "rollback journal"), ("-wal", "write-ahead log"), ("-shm", "shared-memory index"),
  ]

  /// The database and role of a side file named `name` (no folder), or nil
  /// when SQLite would not take the name for a side file. Case is ignored:
  /// on a case-insensitive disk `X-WAL` is `X-wal`.
  ///
  ///     SQLiteSideFiles.sideFile(named: "forage.sqlite-wal")   // ("forage.sqlite", "write-ahead log")
  public static func sideFile(named name: String) -> (database: String, role: String)? {
    let lower = Array(name.lowercased().utf8)
    for (suffix, role) in suffixes {
      let s = Array(suffix.utf8)
      if lower.count > s.count, lower.suffix(s.count).elementsEqual(s) {
        return (String(decoding: Array(name.utf8).dropLast(s.count), as: UTF8.self), role)
      }
    }
    // A super-journal: "-mj", six hex digits, "9", two hex digits (the
    // name vdbeaux.c gives it in vdbeCommit).
    let tail = Array(lower.suffix(12))
    if lower.count > 12, tail.starts(with: Array("-mj".utf8)), tail[9] == UInt8(ascii: "9"),
      tail[3..<9].allSatisfy(isHex), tail[10...].allSatisfy(isHex)
    {
      return (String(decoding: Array(name.utf8).dropLast(12), as: UTF8.self), "super-journal")
    }
    return nil
  }

  /// Whether a file named `name` (no folder) is reserved in every folder:
  /// SQLite would take it for a side file of some database there.
  public static func isReserved(name: String) -> Bool {
    sideFile(named: name) != nil
  }

  /// Why writing a file at `path` would harm a store, or nil when it would not.
  ///
  /// - Parameter store: the store location the command uses (a SQLite path;
  ///   a URL or `:memory:` reserves nothing more).
  public static func reservation(ofPath path: String, store: String?) -> Reservation? {
    let name = path.split(separator: "/").last.map(String.init) ?? path
    if let side = sideFile(named: name) { return .sideFile(database: side.database, role: side.role) }
    if let store, isFilePath(store) {
      let here = canonical(path)
      if here == canonical(store) || sameFile(path, store) { return .store }
      if here == canonical(store + ".pending.json") { return .storeCompanion }
    }
    if isDatabase(path) { return .database }
    return nil
  }

  /// Whether the file at `path` (following links) begins with SQLite's
  /// header: "SQLite format 3" and a NUL.
  ///
  /// - SeeAlso: <https://www.sqlite.org/fileformat.html#the_database_header>
  public static func isDatabase(_ path: String) -> Bool {
    let fd = openFile(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
    var header = [UInt8](repeating: 0, count: 16)
    let n = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 16, 0) }
    return n == 16 && header == Array("SQLite format 3\0".utf8)
  }

  /// True for a location that names a file (not a URL, not `:memory:`).
  package static func isFilePath(_ location: String) -> Bool {
    !location.isEmpty && location != ":memory:" && !location.contains("://") && !location.hasPrefix("file:")
  }

  /// `path` with its folder resolved (links, `.`, `..`) and its last
  /// component kept: two spellings of one place compare equal even when
  /// the file does not exist yet.
  package static func canonical(_ path: String) -> String {
    let slash = path.lastIndex(of: "/")
    let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    guard let resolved = realpath(folder, nil) else { return path }
    defer { free(resolved) }
    let base = String(cString: resolved)
    return (base == "/" ? "" : base) + "/" + name
  }

  /// Whether two existing paths are one file (a hard link, a symbolic link).
  package static func sameFile(_ a: String, _ b: String) -> Bool {
    var x = stat()
    var y = stat()
    guard stat(a, &x) == 0, stat(b, &y) == 0 else { return false }
    return x.st_dev == y.st_dev && x.st_ino == y.st_ino
  }

  private static func isHex(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte)
  }

  private static func openFile(_ path: String, _ flags: Int32) -> Int32 {
    #if canImport(Glibc)
    return Glibc.open(path, flags)
    #else
    return Darwin.open(path, flags)
    #endif
  }
}
