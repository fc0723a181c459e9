#if Postgres
import Foundation
import Testing
@testable import ForagePostgres
@testable import ForageStore

/// `PostgresConnection` on its own (issue 27): a pipeline's results and errors, parameters
/// packed into one buffer, result cells read in place, array literals written in one pass.
@Suite(
  .enabled(
    if: PostgresTestServer.url != nil || PostgresTestServer.isCI,
    "FORAGE_TEST_POSTGRES_URL is not set: the PostgreSQL connection tests are skipped"))
struct PostgresConnectionTests {
  /// A connection to a new database that has a table `t (id bigint primary key, v text)`.
  func withTable(_ body: (PostgresConnection) throws -> Void) async throws {
    try await PostgresTestServer.withDatabase { url in
      let db = try PostgresConnection(url: try PostgresURL(url))
      defer { db.close() }
      try db.exec("CREATE TABLE t (id bigint PRIMARY KEY, v text)")
      try body(db)
    }
  }

  func count(_ db: PostgresConnection) throws -> Int { try db.query("SELECT count(*) FROM t").int(0, 0) }

  @Test func test_issue27_aPipelineReturnsEachStatementsResult_inTheOrderSent() async throws {
    try await withTable { db in
      let insert = "INSERT INTO t (id, v) VALUES ($1, $2) RETURNING id"
      let results = try db.pipeline { p in
        p.send(insert, [.int(Int64(1)), .text("one")])
        p.send(insert, [.int(Int64(2)), .text("two")])
        p.send("UPDATE t SET v = v || '!' WHERE id >= $1", [.int(Int64(1))])
        p.send("SELECT v FROM t ORDER BY id")
        #expect(p.send("SELECT $1::bigint + 1", [.int(Int64(41))]) == 4)
      }
      #expect(results.count == 5)
      #expect(results[0].int(0, 0) == 1)
      #expect(results[1].int(0, 0) == 2)
      #expect(results[2].affected == 2)
      #expect(results[3].rows { results[3].string($0, 0) } == ["one!", "two!"])
      #expect(results[4].int(0, 0) == 42)
      // The statements stay prepared: the same SQL again, by `query` and in a pipeline.
      #expect(try db.query(insert, [.int(Int64(3)), .text("three")]).int(0, 0) == 3)
      let again = try db.pipeline { p in p.send(insert, [.int(Int64(4)), .null]) }
      #expect(again[0].int(0, 0) == 4)
      #expect(try db.query("SELECT v FROM t WHERE id = 4").optionalString(0, 0) == nil)
      #expect(try db.pipeline { _ in }.isEmpty)
    }
  }

  @Test func test_issue27_aFailingStatementInAPipeline_throwsItsError_andRollsBackTheOthers() async throws {
    try await withTable { db in
      try db.query("INSERT INTO t (id, v) VALUES (1, 'kept')")
      let insert = "INSERT INTO t (id, v) VALUES ($1, $2)"
      let clash = "INSERT INTO t (id, v) VALUES ($1, 'clash')"
      #expect {
        _ = try db.pipeline { p in
          p.send(insert, [.int(Int64(2)), .text("before")])
          p.send(clash, [.int(Int64(1))])
          p.send("INSERT INTO t (id, v) VALUES ($1, 'after')", [.int(Int64(3))])
        }
      } throws: { error in
        guard let error = error as? StoreError else { return false }
        return error.kind == .statement && error.function == "PQsendQueryPrepared"
          && error.description.contains("a row with the same key already exists")
          && error.debugDescription.contains(clash) && !error.debugDescription.contains("before")
      }
      // One implicit transaction: the statement before the failure is rolled back too.
      #expect(try db.query("SELECT id, v FROM t ORDER BY id").rows { _ in 0 }.count == 1)
      // The connection is usable, and every statement of the failed pipeline can run again
      // (the ones prepared there and the one whose prepare never ran).
      #expect(db.isOpen)
      let results = try db.pipeline { p in
        p.send(insert, [.int(Int64(2)), .text("before")])
        p.send("INSERT INTO t (id, v) VALUES ($1, 'after')", [.int(Int64(3))])
      }
      #expect(results.map(\.affected) == [1, 1])
      #expect(try count(db) == 3)
    }
  }

  @Test func test_issue27_aPipelineInsideATransaction_isPartOfIt() async throws {
    try await withTable(pipelineInsideATransaction)
  }

  // A method rather than a closure given to withTable: Swift 6.3 crashed compiling these
  // transactions' closures nested in that closure (SIL "function type mismatch").
  func pipelineInsideATransaction(_ db: PostgresConnection) throws {
    #expect(stops {
      try db.transaction { () throws -> Void in
        _ = try db.pipeline { p in
          p.send("INSERT INTO t (id, v) VALUES ($1, 'x')", [.int(Int64(1))])
          p.send("INSERT INTO t (id, v) VALUES ($1, 'x')", [.int(Int64(2))])
        }
        throw Stop()
      }
    })
    #expect(try count(db) == 0, "rolled back with the transaction")
    var failedInside = false
    try db.transaction { () throws -> Void in
      _ = try db.pipeline { p in p.send("INSERT INTO t (id, v) VALUES ($1, 'x')", [.int(Int64(1))]) }
      do {
        _ = try db.pipeline { p in p.send("INSERT INTO t (id, v) VALUES ($1, 'x')", [.int(Int64(1))]) }
      } catch is StoreError {
        failedInside = true
      }
    }
    #expect(failedInside)
    #expect(try count(db) == 0, "a failed pipeline aborts the transaction around it")
    #expect(db.isOpen)
  }

  /// A transaction's last statements and its COMMIT go in one pipeline: what
  /// they wrote is committed, and when one fails, nothing of the transaction
  /// is left and the connection goes on.
  @Test func test_issue27_pipelineCommitting_commitsWithTheLastStatements_orRollsAllBack() async throws {
    try await withTable(pipelineCommitting)
  }

  // A method, as `pipelineInsideATransaction` (the same compiler crash).
  func pipelineCommitting(_ db: PostgresConnection) throws {
    let results = try db.transaction { () throws -> [PostgresResult] in
      try db.query("INSERT INTO t (id, v) VALUES ($1, 'first')", [.int(Int64(1))])
      return try db.pipelineCommitting { p in
        p.send("INSERT INTO t (id, v) VALUES ($1, 'x') RETURNING id", [.int(Int64(2))])
      }
    }
    #expect(results.count == 1 && results[0].int64(0, 0) == 2)
    #expect(try count(db) == 2)
    var failed = false
    do {
      try db.transaction { () throws -> Void in
        try db.query("INSERT INTO t (id, v) VALUES ($1, 'x')", [.int(Int64(3))])
        _ = try db.pipelineCommitting { p in
          p.send("INSERT INTO t (id, v) VALUES ($1, 'x')", [.int(Int64(4))])
          p.send("INSERT INTO t (id, v) VALUES ($1, 'x')", [.int(Int64(1))])  // a duplicate key
        }
      }
    } catch is StoreError {
      failed = true
    }
    #expect(failed)
    #expect(try count(db) == 2, "the failed transaction left nothing")
    #expect(db.isOpen)
    // The connection is out of the failed transaction: the next one works.
    try db.transaction { () throws -> Void in _ = try db.query("INSERT INTO t (id, v) VALUES ($1, 'x')", [.int(Int64(5))]) }
    #expect(try count(db) == 3)
  }

  /// BEGIN goes with a transaction's first statement (one round trip fewer): every
  /// statement after it must still be inside the same transaction.
  @Test func test_issue27_aTransactionsDeferredBegin_stillHoldsEveryStatement() async throws {
    try await withTable(deferredBegin)
  }

  func deferredBegin(_ db: PostgresConnection) throws {
    let times = try db.transaction { () -> [String] in
      let first = try db.query("SELECT now()::text").string(0, 0)
      try db.exec("SELECT pg_sleep(0.01)")
      let second = try db.query("SELECT now()::text").string(0, 0)
      return [first, second]
    }
    #expect(times[0] == times[1], "now() is the transaction's start: one transaction")
    #expect(stops {
      try db.transaction { () throws -> Void in
        try db.query("INSERT INTO t (id, v) VALUES ($1, 'x')", [.int(Int64(1))])
        try db.exec("INSERT INTO t (id, v) VALUES (2, 'y')")
        throw Stop()
      }
    })
    #expect(try count(db) == 0, "the first statement, sent with BEGIN, is rolled back too")
    // A transaction that fails on its first statement, then one that runs nothing.
    #expect(throws: StoreError.self) {
      try db.transaction { () throws -> Void in
        try db.query("INSERT INTO t (id, v) VALUES ($1, $2)", [.text("not a number"), .null])
      }
    }
    try db.transaction { () throws -> Void in }
    try db.transaction { () throws -> Void in try db.exec("INSERT INTO t (id, v) VALUES (3, 'z')") }
    #expect(try count(db) == 1)
    let before = try db.query("SELECT now()::text").string(0, 0)
    try db.exec("SELECT pg_sleep(0.01)")
    #expect(try db.query("SELECT now()::text").string(0, 0) != before, "no transaction left open")
  }

  @Test func test_issue27_aTextValueWithANUL_isRefused_beforeAnyStatementOfThePipelineIsSent() async throws {
    try await withTable { db in
      #expect {
        _ = try db.pipeline { p in
          p.send("INSERT INTO t (id, v) VALUES ($1, $2)", [.int(Int64(1)), .text("fine")])
          p.send("INSERT INTO t (id, v) VALUES ($1, $2)", [.int(Int64(2)), .text("a\u{0}b")])
        }
      } throws: { error in
        (error as? StoreError)?.description.contains("NUL character") == true
      }
      #expect(db.isOpen)
      let stored = try count(db)
      #expect(stored == 0)
      #expect(throws: StoreError.self) { try db.query("SELECT $1::text", [.text("\u{0}")]) }
    }
  }

  /// Megabytes each way: more than the sockets hold, so a pipeline that wrote everything
  /// before reading anything would wait on a server waiting on it.
  @Test func test_issue27_aLongPipeline_withLargeValuesBothWays_completes() async throws {
    try await withTable { db in
      let big = String(repeating: "x", count: 8_000)
      let results = try db.pipeline { p in
        for i in 0..<1_500 { p.send("SELECT $1::text || $2::bigint", [.text(big), .int(Int64(i))]) }
      }
      #expect(results.count == 1_500)
      #expect(results[1_499].string(0, 0) == big + "1499")
      #expect(results.allSatisfy { $0.string(0, 0).utf8.count >= 8_001 })
    }
  }

  @Test func test_issue27_cellsAndParameters_roundTripEveryKindOfValue() async throws {
    try await withTable { db in
      let r = try db.query(
        "SELECT $1::bigint, $2::bigint, $3::bigint, $4::text, $5::text, $6::boolean, $7::boolean, $8::bytea, $9::bytea, $10::text",
        [.int(Int64.min), .int(Int64.max), .int(Int64(-1)), .text("grüße, \"quoted\" \\ 🍐"), .null, .bool(true), .bool(false),
         .bytes([0, 1, 0xAB, 0xFF]), .bytes([]), .text("")])
      #expect(r.int64(0, 0) == .min)
      #expect(r.int64(0, 1) == .max)
      #expect(r.int(0, 2) == -1)
      #expect(r.uint64(0, 2) == .max)
      #expect(r.string(0, 3) == "grüße, \"quoted\" \\ 🍐")
      #expect(r.optionalString(0, 4) == nil && r.optionalInt64(0, 4) == nil && r.isNull(0, 4))
      #expect(r.bool(0, 5) && !r.bool(0, 6))
      #expect(r.bytes(0, 7) == [0, 1, 0xAB, 0xFF])
      #expect(r.bytes(0, 8) == [])
      #expect(r.string(0, 9) == "")
      #expect(r.optionalInt64(0, 3) == nil, "text that is not a number reads as no number")
    }
  }

  @Test func test_issue27_arrayParameters_keepEveryElementExactly() async throws {
    try await withTable { db in
      let texts: [String?] = ["plain", "", "a,b", "{braces}", "\"quotes\"", "back\\slash", "NULL", nil, "grüße 🍐", " spaced "]
      let back = try db.query("SELECT u FROM unnest($1::text[]) WITH ORDINALITY AS a (u, n) ORDER BY n", [.textArray(texts)])
      #expect(back.rows { back.optionalString($0, 0) } == texts)
      let ints: [Int64?] = [0, -1, .min, .max, nil, 42]
      let backInts = try db.query("SELECT u FROM unnest($1::bigint[]) WITH ORDINALITY AS a (u, n) ORDER BY n", [.bigintArray(ints)])
      #expect(backInts.rows { backInts.optionalInt64($0, 0) } == ints)
      let empty = try db.query("SELECT cardinality($1::text[]), cardinality($2::bigint[])", [.textArray([]), .bigintArray([])])
      #expect(empty.int(0, 0) == 0 && empty.int(0, 1) == 0)
    }
  }
}

/// What a test throws to leave a transaction.
private struct Stop: Error {}

/// True when `body` throws ``Stop``.
private func stops(_ body: () throws -> Void) -> Bool {
  do {
    try body()
    return false
  } catch is Stop {
    return true
  } catch {
    Issue.record(error)
    return false
  }
}

/// The integer parser behind `PostgresResult`'s cells, against Swift's own.
@Suite struct PostgresIntegerParsingTests {
  @Test func test_issue27_integersParseAsInt64FromString_does() {
    let cases = ["0", "-0", "+7", "42", "-42", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                 "-9223372036854775809", "", "-", "+", "1e3", "12a", " 1", "99999999999999999999", "007"]
    for text in cases {
      let bytes = Array(text.utf8)
      let parsed = bytes.withUnsafeBufferPointer { PostgresResult.parseInt64($0.baseAddress, count: $0.count) }
      #expect(parsed == Int64(text), "\(text)")
    }
  }
}
#endif
