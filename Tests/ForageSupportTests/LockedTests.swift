import Foundation
import Testing

@testable import ForageSupport

@Suite struct LockedTests {
  @Test func test_withLock_serializesConcurrentUpdates() async {
    let count = Locked(0)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<8 {
        group.addTask {
          for _ in 0..<1_000 { count.withLock { $0 += 1 } }
        }
      }
    }
    #expect(count.withLock { $0 } == 8_000)
  }

  @Test func test_withLock_returnsAndRethrows() {
    struct Failure: Error {}
    let names = Locked(["a"])
    #expect(names.withLock { $0.append("b"); return $0.count } == 2)
    #expect(throws: Failure.self) { try names.withLock { _ in throw Failure() } }
    #expect(names.withLock { $0 } == ["a", "b"])
  }
}
