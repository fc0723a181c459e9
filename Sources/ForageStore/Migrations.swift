import CSQLite

/// A named, forward-only schema change.
struct Migration {
  /// Unique and never reused; recorded in `forage_migrations` once applied.
  let name: String
  let apply: (SQLiteConnection) throws -> Void
  /// Runs with foreign key enforcement off (set before its transaction, as
  /// SQLite only changes it outside one) and checks every foreign key before
  /// committing: a migration that rebuilds a table other tables refer to,
  /// whose `DROP TABLE` would otherwise cascade into them.
  ///
  /// - SeeAlso: <https://www.sqlite.org/lang_altertable.html#otheralter>
  let rebuildsReferencedTable: Bool

  init(_ name: String, rebuildsReferencedTable: Bool = false, sql: String) {
    self.name = name
    self.rebuildsReferencedTable = rebuildsReferencedTable
    self.apply = { try $0.exec(sql) }
  }
}

/// Applies named migrations in registration order, each once.
///
/// Applied names are kept in the table `forage_migrations`. A store that
/// records a name this build does not know was written by a newer Forage;
/// opening it fails rather than guessing at a schema.
struct Migrator {
  var migrations: [Migration] = []

  mutating func register(_ migration: Migration) {
    precondition(!migrations.contains { $0.name == migration.name },
                 "duplicate migration \(migration.name)")
    migrations.append(migration)
  }

  /// Applies every migration not yet recorded, each in its own transaction.
  ///
  /// - Returns: the names applied by this call.
  /// - Throws: `StoreError` of kind `.newerStore` when the store holds
  ///   unknown migrations (nothing is changed then), or a statement error.
  @discardableResult
  func migrate(_ db: SQLiteConnection, now: Int64) throws -> [String] {
    try db.exec(
      """
      CREATE TABLE IF NOT EXISTS forage_migrations (
        name TEXT PRIMARY KEY NOT NULL,
        applied_at INTEGER NOT NULL
      ) STRICT
      """)
    let applied = try appliedNames(db)
    let known = Set(migrations.map(\.name))
    let unknown = applied.filter { !known.contains($0) }
    if !unknown.isEmpty { throw StoreError.newerStore(path: db.path, unknown: unknown) }
    let appliedSet = Set(applied)
    var done: [String] = []
    for migration in migrations where !appliedSet.contains(migration.name) {
      if migration.rebuildsReferencedTable { try db.exec("PRAGMA foreign_keys = OFF") }
      defer { if migration.rebuildsReferencedTable { try? db.exec("PRAGMA foreign_keys = ON") } }
      let applied = try db.transaction { () throws -> Bool in
        // Another process may have applied it since we looked.
        let check = try db.statement("SELECT 1 FROM forage_migrations WHERE name = ?")
        try check.bind(migration.name, at: 1)
        if try check.firstRow({ _ in true }) ?? false { return false }
        try migration.apply(db)
        if migration.rebuildsReferencedTable {
          let broken = try db.uncachedStatement("PRAGMA foreign_key_check").rows { $0.string(0) }
          if let table = broken.first {
            throw StoreError.notAStore(
              path: db.path,
              "rows of its table \(table) refer to rows that are missing, so \(migration.name) was not applied")
          }
        }
        let insert = try db.statement(
          "INSERT INTO forage_migrations (name, applied_at) VALUES (?, ?)")
        try insert.bind(migration.name, at: 1)
        try insert.bind(now, at: 2)
        try insert.execute()
        return true
      }
      if applied { done.append(migration.name) }
    }
    return done
  }

  /// Checks, reading only, that the store holds every migration of this
  /// build and no other.
  ///
  /// - Throws: `StoreError` of kind `.notAStore` when it has no
  ///   `forage_migrations` (an empty database), `.newerStore` for unknown
  ///   migrations, `.olderStore` for missing ones.
  func checkCurrent(_ db: SQLiteConnection) throws {
    let table = try db.uncachedStatement(
      "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'forage_migrations'"
    ).firstRow { _ in true } ?? false
    guard table else {
      throw StoreError.notAStore(path: db.path, "it is an empty SQLite database (a command that only reads never adds tables)")
    }
    let applied = try appliedNames(db)
    let known = Set(migrations.map(\.name))
    let unknown = applied.filter { !known.contains($0) }
    if !unknown.isEmpty { throw StoreError.newerStore(path: db.path, unknown: unknown) }
    let appliedSet = Set(applied)
    let missing = migrations.map(\.name).filter { !appliedSet.contains($0) }
    if !missing.isEmpty { throw StoreError.olderStore(path: db.path, missing: missing) }
  }

  /// Refuses a database that another program made: one with tables (or
  /// views) but no `forage_migrations`. An empty database, or one Forage
  /// has migrated, passes. It only reads the schema.
  ///
  /// - Throws: `StoreError` of kind `.foreignDatabase` naming the tables.
  static func refuseForeignDatabase(_ db: SQLiteConnection) throws {
    let names = try db.uncachedStatement(
      """
      SELECT name FROM sqlite_schema
      WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name
      """
    ).rows { $0.string(0) }
    if !names.isEmpty && !names.contains("forage_migrations") {
      throw StoreError.foreignDatabase(path: db.path, tables: names)
    }
  }

  /// Names recorded in `forage_migrations`, in the order they were applied.
  func appliedNames(_ db: SQLiteConnection) throws -> [String] {
    try db.uncachedStatement("SELECT name FROM forage_migrations ORDER BY rowid")
      .rows { $0.string(0) }
  }
}

extension Migrator {
  /// The store's schema, migration by migration.
  ///
  /// | table | holds | keys and indexes |
  /// |---|---|---|
  /// | `sources` | source names seen (created by `openCrawl`) | `name` |
  /// | `crawls` | one pass over a source; `frontier_size` counts its frontier rows | `id`; `(source, completed_at)` |
  /// | `frontier` | URL, fingerprint, depth, state, attempts, lease | `id`; UNIQUE `(crawl, fingerprint)`; claim order `(crawl, state, depth, id)`; claimed by owner |
  /// | `frontier` (v8) | `lastmod`: a sitemap's last modification of the page, NULL when none said | |
  /// | `pages` | last fetch of a URL; `links` one per line (see `LinkList`) | `id`; UNIQUE `fingerprint` |
  /// | `records` | extracted records, fields as JSON text | `id`; UNIQUE `(source, key)`; `(source, id)` |
  /// | `records` (v7) | `page`: fingerprint of the page it came from; `seen_crawl`: the last crawl that saw it; `removed_at` | — |
  /// | `pages` (v10) | `kept_crawl`: the last crawl that kept the page's records without reading it again | — |
  /// | `changes` | new, changed, removed and restored records: kind, page URL, before and after | `id`; `(source, id)`; `(source, key, id)` |
  /// | `outbox` | notifications of notable changes: channel, message id (the same on every retry), state `pending`/`delivered`/`dead`, attempts, next attempt, lease | `id`; UNIQUE `message_id`; due `(next_at)` while pending; `change` |
  /// | `disabled_channels` | channels a receiver turned off (HTTP 410), with the target they had | `name` |
  /// | `runs` | task runs; `sources` and `summary` as JSON | `id` |
  /// | `robots` | robots.txt answers per origin, kept until `expires_at` (see `RobotsFile`) | `origin` |
  /// | `pending_requests` | task requests not yet run, replaced as a set (see `PendingTaskRequest`) | `identifier` |
  /// | `crawl_fields`, `health_episodes`, `held_changes` (v12, extraction health) | see `SQLiteHealthSchema` | |
  /// | `history_pruned` (v13) | per source, the highest change id pruning dropped (a change stream resuming below it says so) | `source` |
  /// | `changes` (v14) | `changed_fields`: the names of the fields a change touched, a JSON array; NULL before v14 (found when read) | — |
  /// | `sink_cursors` (v15) | per record sink name, the id of the last change its `apply` returned for, and when | `name` |
  /// | `changes` (v16) | rebuilt with AUTOINCREMENT: ids are never used again, even after pruning the newest | — |
  /// | `health_episodes` (v17) | `ended_crawl`: the crawl that ended the episode (see `SQLiteHealthSchema`) | — |
  /// | `downloads` (v9) | background downloads: URL, folder, file name, expected size and SHA-256, state `queued`/`claimed`/`done`/`failed`, bytes durably in the `.part`, validator, attempts, lease, final path (see `DownloadEntry`) | `id`; UNIQUE `(url, folder)`; `(state, id)` |
  ///
  /// Dates are integer milliseconds since 1970 (UTC). 64-bit fingerprints
  /// and hashes are stored by bit pattern as signed integers. Frontier
  /// states are text: `queued`, `claimed`, `done`, `failed`.
  static var forage: Migrator {
    var migrator = Migrator()
    migrator.register(Migration("v1-initial-schema", sql: """
      CREATE TABLE sources (
        name TEXT PRIMARY KEY NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE crawls (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        completed_at INTEGER,
        frontier_size INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      CREATE INDEX crawls_open ON crawls (source, completed_at, id);

      CREATE TABLE frontier (
        id INTEGER PRIMARY KEY,
        crawl INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        fingerprint INTEGER NOT NULL,
        depth INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'queued'
          CHECK (state IN ('queued', 'claimed', 'done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        owner TEXT,
        lease_until INTEGER,
        UNIQUE (crawl, fingerprint)
      ) STRICT;
      CREATE INDEX frontier_claim_order ON frontier (crawl, state, depth, id);
      CREATE INDEX frontier_claimed ON frontier (owner) WHERE state = 'claimed';

      CREATE TABLE pages (
        fingerprint INTEGER PRIMARY KEY,
        url TEXT NOT NULL,
        status INTEGER NOT NULL,
        etag TEXT,
        last_modified TEXT,
        content_hash INTEGER,
        fetched_at INTEGER NOT NULL,
        links TEXT NOT NULL DEFAULT ''
      ) STRICT;

      CREATE TABLE records (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL,
        key TEXT NOT NULL,
        url TEXT NOT NULL,
        fields TEXT NOT NULL,
        content_hash INTEGER NOT NULL,
        first_seen INTEGER NOT NULL,
        last_seen INTEGER NOT NULL,
        UNIQUE (source, key)
      ) STRICT;
      CREATE INDEX records_by_source ON records (source, id);

      CREATE TABLE changes (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL,
        key TEXT NOT NULL,
        before TEXT,
        after TEXT NOT NULL,
        at INTEGER NOT NULL,
        run INTEGER
      ) STRICT;
      CREATE INDEX changes_by_source ON changes (source, id);

      CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        task TEXT NOT NULL,
        sources TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        finished_at INTEGER,
        summary TEXT
      ) STRICT;
      """))
    // Pages were keyed by their fingerprint, a random 64-bit number, so each
    // commit wrote its pages' wide rows into random leaves of the whole table
    // (most of a crawl's WAL traffic). Keyed by insertion order, new rows go
    // to the last leaves and only the narrow fingerprint index is scattered.
    migrator.register(Migration("v2-pages-in-insertion-order", sql: """
      CREATE TABLE pages_v2 (
        id INTEGER PRIMARY KEY,
        fingerprint INTEGER NOT NULL UNIQUE,
        url TEXT NOT NULL,
        status INTEGER NOT NULL,
        etag TEXT,
        last_modified TEXT,
        content_hash INTEGER,
        fetched_at INTEGER NOT NULL,
        links TEXT NOT NULL DEFAULT ''
      ) STRICT;
      INSERT INTO pages_v2 (fingerprint, url, status, etag, last_modified, content_hash, fetched_at, links)
        SELECT fingerprint, url, status, etag, last_modified, content_hash, fetched_at, links
        FROM pages ORDER BY fetched_at, fingerprint;
      DROP TABLE pages;
      ALTER TABLE pages_v2 RENAME TO pages;
      """))
    // SQLite evaluates `state IN (…)` of four values through a temporary
    // index built on every UPDATE or INSERT of a frontier row, which more than
    // doubled the cost of marking a page done. The same check as comparisons
    // costs nothing extra.
    migrator.register(Migration("v3-frontier-state-check-without-in", sql: """
      CREATE TABLE frontier_v3 (
        id INTEGER PRIMARY KEY,
        crawl INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        fingerprint INTEGER NOT NULL,
        depth INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'queued'
          CHECK (state = 'queued' OR state = 'claimed' OR state = 'done' OR state = 'failed'),
        attempts INTEGER NOT NULL DEFAULT 0,
        owner TEXT,
        lease_until INTEGER,
        UNIQUE (crawl, fingerprint)
      ) STRICT;
      INSERT INTO frontier_v3 (id, crawl, url, fingerprint, depth, state, attempts, owner, lease_until)
        SELECT id, crawl, url, fingerprint, depth, state, attempts, owner, lease_until FROM frontier;
      DROP TABLE frontier;
      ALTER TABLE frontier_v3 RENAME TO frontier;
      CREATE INDEX frontier_claim_order ON frontier (crawl, state, depth, id);
      CREATE INDEX frontier_claimed ON frontier (owner) WHERE state = 'claimed';
      """))
    // robots.txt answers outlive the process: an app woken for a short task
    // starts a new one each time.
    migrator.register(Migration("v4-robots", sql: """
      CREATE TABLE robots (
        origin TEXT PRIMARY KEY NOT NULL,
        verdict TEXT NOT NULL,
        body BLOB NOT NULL,
        fetched_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT;
      """))
    // A daemon's pending task requests live beside the data they schedule:
    // kept in a file of their own, a crash could leave the two disagreeing.
    // The set is replaced in one transaction. Checks are comparisons, not
    // `IN (…)`, which would build a temporary index on every write (see v3).
    migrator.register(Migration("v5-pending-requests", sql: """
      CREATE TABLE pending_requests (
        identifier TEXT PRIMARY KEY NOT NULL,
        kind TEXT NOT NULL
          CHECK (kind = 'appRefresh' OR kind = 'processing' OR kind = 'continuedProcessing'),
        earliest_begin_at INTEGER,
        requires_network INTEGER NOT NULL CHECK (requires_network = 0 OR requires_network = 1),
        requires_external_power INTEGER NOT NULL
          CHECK (requires_external_power = 0 OR requires_external_power = 1),
        title TEXT,
        subtitle TEXT,
        strategy TEXT,
        CHECK (
          kind = 'continuedProcessing' AND title IS NOT NULL AND subtitle IS NOT NULL
            AND (strategy = 'fail' OR strategy = 'queue')
          OR kind <> 'continuedProcessing' AND title IS NULL AND subtitle IS NULL AND strategy IS NULL)
      ) STRICT;
      """))
    // The encoding each page was decoded with (the Encoding Standard's name,
    // "Shift_JIS"), so a user can see why a field reads the way it does;
    // NULL for pages stored before, and for pages that were not decoded.
    migrator.register(Migration("v6-page-encoding", sql: """
      ALTER TABLE pages ADD COLUMN encoding TEXT;
      """))
    // Changes become first-class: a kind (new, changed, removed, restored),
    // the record's page URL, and no `after` for a removed record. Records
    // remember the page they came from and the last crawl that saw them, so
    // that a completed crawl can tell which ones it did not see again; NULL
    // (rows stored before) means not known, and such a record is never
    // removed until a crawl sees it. Notable changes get outbox rows, written
    // in the change's transaction and delivered after commit.
    migrator.register(Migration("v7-change-kinds-and-outbox", sql: """
      CREATE TABLE changes_v7 (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL,
        key TEXT NOT NULL,
        kind TEXT NOT NULL
          CHECK (kind = 'new' OR kind = 'changed' OR kind = 'removed' OR kind = 'restored'),
        url TEXT NOT NULL DEFAULT '',
        before TEXT,
        after TEXT,
        at INTEGER NOT NULL,
        run INTEGER
      ) STRICT;
      INSERT INTO changes_v7 (id, source, key, kind, url, before, after, at, run)
        SELECT c.id, c.source, c.key, CASE WHEN c.before IS NULL THEN 'new' ELSE 'changed' END,
          coalesce((SELECT r.url FROM records r WHERE r.source = c.source AND r.key = c.key), ''),
          c.before, c.after, c.at, c.run
        FROM changes c;
      DROP TABLE changes;
      ALTER TABLE changes_v7 RENAME TO changes;
      CREATE INDEX changes_by_source ON changes (source, id);
      CREATE INDEX changes_by_record ON changes (source, key, id);

      ALTER TABLE records ADD COLUMN page INTEGER;
      ALTER TABLE records ADD COLUMN seen_crawl INTEGER;
      ALTER TABLE records ADD COLUMN removed_at INTEGER;
      CREATE INDEX records_by_page ON records (page) WHERE page IS NOT NULL;

      CREATE TABLE outbox (
        id INTEGER PRIMARY KEY,
        change INTEGER NOT NULL REFERENCES changes (id) ON DELETE CASCADE,
        channel TEXT NOT NULL,
        message_id TEXT NOT NULL UNIQUE,
        state TEXT NOT NULL DEFAULT 'pending'
          CHECK (state = 'pending' OR state = 'delivered' OR state = 'dead'),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        owner TEXT,
        lease_until INTEGER,
        last_error TEXT,
        done_at INTEGER
      ) STRICT;
      CREATE INDEX outbox_due ON outbox (next_at) WHERE state = 'pending';
      CREATE INDEX outbox_by_change ON outbox (change);

      CREATE TABLE disabled_channels (
        name TEXT PRIMARY KEY NOT NULL,
        target TEXT NOT NULL,
        reason TEXT NOT NULL,
        at INTEGER NOT NULL
      ) STRICT;
      """))
    // A sitemap's `lastmod` for each page it lists, carried to the page's
    // processing (a page not changed since its last fetch is not fetched
    // again). NULL for links found on pages and for rows stored before.
    migrator.register(Migration("v8-frontier-lastmod", sql: """
      ALTER TABLE frontier ADD COLUMN lastmod INTEGER;
      """))
    // Background downloads: one row per URL and destination folder, so a file
    // lands there once. `bytes` counts what the `.part` file holds durably
    // (fsynced before it is written here); `etag`/`last_modified` are the
    // validator those bytes came with, sent back in `If-Range`; `path` is set
    // just before the part is renamed into place, so a crash in between is
    // recognised. Checks are comparisons, not `IN (…)` (see v3).
    migrator.register(Migration("v9-downloads", sql: """
      CREATE TABLE downloads (
        id INTEGER PRIMARY KEY,
        url TEXT NOT NULL,
        folder TEXT NOT NULL,
        name TEXT,
        expected_size INTEGER,
        expected_sha256 TEXT,
        source TEXT,
        state TEXT NOT NULL DEFAULT 'queued'
          CHECK (state = 'queued' OR state = 'claimed' OR state = 'done' OR state = 'failed'),
        bytes INTEGER NOT NULL DEFAULT 0,
        total_size INTEGER,
        etag TEXT,
        last_modified TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        owner TEXT,
        lease_until INTEGER,
        last_error TEXT,
        path TEXT,
        sha256 TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        finished_at INTEGER,
        UNIQUE (url, folder)
      ) STRICT;
      CREATE INDEX downloads_by_state ON downloads (state, id);
      """))
    // A page that was not read again (304, fresh, a failure that may pass)
    // keeps its records: v7 marked each of them through an index on
    // records.page, which every record insert had to update at a random
    // place (4 % of a first crawl's speed). The page row now says which
    // crawl kept it, and completing a crawl looks records' pages up by the
    // pages' own fingerprint index.
    migrator.register(Migration("v10-pages-kept-by-crawl", sql: """
      DROP INDEX records_by_page;
      ALTER TABLE pages ADD COLUMN kept_crawl INTEGER;
      """))
    // A page answered 304 keeps its records without reading them; the count
    // of its last read lets the launch report them as unchanged.
    migrator.register(Migration("v11-pages-record-count", sql: """
      ALTER TABLE pages ADD COLUMN record_count INTEGER NOT NULL DEFAULT 0;
      """))
    migrator.register(Migration("v12-extraction-health", sql: SQLiteHealthSchema.migration))
    // The highest change id pruning dropped, per source: a change stream
    // resuming at a cursor below it would skip changes, and says so instead.
    migrator.register(Migration("v13-history-pruned-marks", sql: """
      CREATE TABLE history_pruned (source TEXT PRIMARY KEY, through INTEGER NOT NULL) WITHOUT ROWID;
      """))
    // The names of the fields a change touched, found once at commit (a JSON
    // array of strings); NULL for changes stored before, found when read.
    migrator.register(Migration("v14-changes-changed-fields", sql: """
      ALTER TABLE changes ADD COLUMN changed_fields TEXT;
      """))
    // How far each of an app's record sinks (`Engine.deliver(to:as:)`) has
    // applied the changes: the id of the last change its `apply` returned for.
    migrator.register(Migration("v15-sink-cursors", sql: """
      CREATE TABLE sink_cursors (
        name TEXT PRIMARY KEY NOT NULL,
        change INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
      """))
    // Change ids are never used twice: without AUTOINCREMENT a new change
    // took the id after the highest one still stored, so pruning the newest
    // changes (all older than a maxAge) handed their ids out again, at or
    // below the cursors of streams and sinks, which then skipped them. The
    // table is rebuilt with its ids; the sequence starts above every id
    // handed out before (the pruned marks, the sinks' cursors).
    migrator.register(Migration("v16-change-ids-never-reused", rebuildsReferencedTable: true, sql: """
      CREATE TABLE changes_v16 (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        source TEXT NOT NULL,
        key TEXT NOT NULL,
        kind TEXT NOT NULL
          CHECK (kind = 'new' OR kind = 'changed' OR kind = 'removed' OR kind = 'restored'),
        url TEXT NOT NULL DEFAULT '',
        before TEXT,
        after TEXT,
        at INTEGER NOT NULL,
        run INTEGER,
        changed_fields TEXT
      ) STRICT;
      INSERT INTO changes_v16 (id, source, key, kind, url, before, after, at, run, changed_fields)
        SELECT id, source, key, kind, url, before, after, at, run, changed_fields FROM changes ORDER BY id;
      DROP TABLE changes;
      ALTER TABLE changes_v16 RENAME TO changes;
      CREATE INDEX changes_by_source ON changes (source, id);
      CREATE INDEX changes_by_record ON changes (source, key, id);
      DELETE FROM sqlite_sequence WHERE name = 'changes';
      INSERT INTO sqlite_sequence (name, seq) SELECT 'changes', max(
        (SELECT coalesce(max(id), 0) FROM changes),
        (SELECT coalesce(max(through), 0) FROM history_pruned),
        (SELECT coalesce(max(change), 0) FROM sink_cursors));
      """))
    migrator.register(Migration("v17-health-episodes-ended-crawl", sql: SQLiteHealthSchema.endedCrawlMigration))
    return migrator
  }
}
