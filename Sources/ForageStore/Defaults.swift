/// Defaults of the store, in one place.
public enum StoreDefaults {
  /// How long a connection waits for another connection's write lock
  /// before failing with `SQLITE_BUSY`.
  ///
  /// - SeeAlso: <https://www.sqlite.org/c3ref/busy_timeout.html>
  public static let busyTimeout: Duration = .seconds(5)

  /// How many changes a `ChangeStream` reads at a time while it replays.
  public static let changeStreamPage = 256

  /// How often a SQLite `ChangeStream` asks `PRAGMA data_version` whether
  /// another process committed (its own process's commits wake it at once).
  public static let changeStreamPoll: Duration = .milliseconds(250)

  /// How long a record sink not delivered to keeps holding the history of
  /// a source whose retention has no `maxAge` (with one, that age): see
  /// ``HistoryRetention/sinkHold``.
  public static let sinkHistoryHold: Duration = .seconds(30 * 86_400)

  /// Page cache per connection, in KiB (SQLite's default is 2 MiB): large
  /// frontiers and their indexes stay in memory during a crawl.
  ///
  /// - SeeAlso: <https://www.sqlite.org/pragma.html#pragma_cache_size>
  static let cacheSizeKiB = 32 * 1024

  /// Bytes of the database file read through memory mapping rather than
  /// `pread`, which saves a copy per page read.
  ///
  /// - SeeAlso: <https://www.sqlite.org/mmap.html>
  static let mmapSize = 256 * 1024 * 1024

  /// WAL size, in pages, that triggers a checkpoint (SQLite's default is
  /// 1,000). Checkpoints are the only `fsync` under `synchronous=NORMAL`;
  /// spacing them out keeps a crawl's commits from waiting on the disk.
  ///
  /// - SeeAlso: <https://www.sqlite.org/pragma.html#pragma_wal_autocheckpoint>
  static let walAutocheckpointPages = 8_000

  /// Size a WAL file is truncated to after a checkpoint, in bytes.
  ///
  /// - SeeAlso: <https://www.sqlite.org/pragma.html#pragma_journal_size_limit>
  static let journalSizeLimit = 64 * 1024 * 1024

  /// Fingerprints per crawl remembered as already on the frontier (two
  /// generations of this many, 8 bytes each plus set overhead), so links
  /// repeated across pages skip the index lookup.
  static let knownFingerprintsPerCrawl = 65_536

  /// Statements kept prepared per connection; the store uses a few dozen.
  static let statementCacheLimit = 128
}
