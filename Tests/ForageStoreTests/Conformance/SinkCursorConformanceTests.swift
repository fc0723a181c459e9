import Foundation
import Testing
@testable import ForageStore

/// `SinkCursorStore` on every store: one cursor per sink name, 0 until set,
/// written over, kept for other connections and apart from other names.
@Suite struct SinkCursorConformanceTests {
  @Test(arguments: StoreKind.all) func test_aNewSinkStartsAtZero_andItsCursorIsWrittenOver(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      #expect(try await store.sinkCursor("coredata") == 0)
      try await store.setSinkCursor("coredata", to: 41, now: t0)
      #expect(try await store.sinkCursor("coredata") == 41)
      try await store.setSinkCursor("coredata", to: 97, now: t0 + 1)
      #expect(try await store.sinkCursor("coredata") == 97)
      // Back to 0: the sink starts over (an app that wiped its own database).
      try await store.setSinkCursor("coredata", to: 0, now: t0 + 2)
      #expect(try await store.sinkCursor("coredata") == 0)
    }
  }

  @Test(arguments: StoreKind.all) func test_sinksKeepTheirOwnCursors_seenByAnotherConnection(_ kind: StoreKind) async throws {
    try await withTwoStores(kind) { (a: any Store, b: any Store) in
      try await a.setSinkCursor("coredata", to: 12, now: t0)
      try await a.setSinkCursor("widget", to: 3, now: t0)
      #expect(try await b.sinkCursor("coredata") == 12)
      #expect(try await b.sinkCursor("widget") == 3)
      #expect(try await b.sinkCursor("Coredata") == 0)
      try await b.setSinkCursor("widget", to: Int64.max, now: t0)
      #expect(try await a.sinkCursor("widget") == Int64.max)
      #expect(try await a.sinkCursor("coredata") == 12)
    }
  }
}
