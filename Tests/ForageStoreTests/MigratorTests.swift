import Testing
@testable import ForageStore

@Suite struct MigratorTests {
  @Test func test_migrate_appliesInRegistrationOrder_once() throws {
    let db = try SQLiteConnection(path: ":memory:")
    var migrator = Migrator()
    migrator.register(Migration("b-first", sql: "CREATE TABLE log (step TEXT)"))
    migrator.register(Migration("a-second", sql: "INSERT INTO log VALUES ('second')"))
    #expect(try migrator.migrate(db, now: 1) == ["b-first", "a-second"])
    #expect(try migrator.migrate(db, now: 2).isEmpty)
    #expect(try migrator.appliedNames(db) == ["b-first", "a-second"])
    #expect(try db.statement("SELECT count(*) FROM log").firstRow { $0.int(0) } == 1)

    // A later build registers one more: only it runs.
    migrator.register(Migration("c-third", sql: "INSERT INTO log VALUES ('third')"))
    #expect(try migrator.migrate(db, now: 3) == ["c-third"])
    #expect(try db.statement("SELECT count(*) FROM log").firstRow { $0.int(0) } == 2)
  }

  @Test func test_migrate_failingMigration_recordsNothing() throws {
    let db = try SQLiteConnection(path: ":memory:")
    var migrator = Migrator()
    migrator.register(Migration("ok", sql: "CREATE TABLE t (x INTEGER)"))
    migrator.register(Migration(
      "broken", sql: "CREATE TABLE u (x INTEGER); INSERT INTO nowhere VALUES (1)"))
    #expect(throws: StoreError.self) { try migrator.migrate(db, now: 1) }
    #expect(try migrator.appliedNames(db) == ["ok"])
    // The broken migration's first statement was rolled back with it.
    #expect(try db.statement(
      "SELECT count(*) FROM sqlite_schema WHERE name = 'u'").firstRow { $0.int(0) } == 0)
  }

  @Test func test_migrate_unknownAppliedName_failsWithoutChanges() throws {
    let db = try SQLiteConnection(path: ":memory:")
    var old = Migrator()
    old.register(Migration("one", sql: "CREATE TABLE t (x INTEGER)"))
    var newer = old
    newer.register(Migration("two", sql: "CREATE TABLE u (x INTEGER)"))
    try newer.migrate(db, now: 1)
    let error = try #require(throws: StoreError.self) { try old.migrate(db, now: 2) }
    #expect(error.kind == .newerStore)
    #expect(error.description.contains("(two)"))
  }
}
