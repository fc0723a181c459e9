import Foundation
import Testing
@testable import ForageStore

/// `PolitenessStore` on every store: kept robots.txt answers, the election
/// of the process that fetches one, and host request slots. A store of one
/// process (not ``LeaseStore/isShared``) grants every robots.txt fetch and
/// gives ticket 0 at once; a shared store coordinates its processes.
@Suite struct PolitenessConformanceTests {
  @Test(arguments: StoreKind.all) func test_robotsFile_keptReadAndReplaced_perOrigin(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      #expect(try await store.robotsFile(origin: "https://a.test") == nil)
      let file = RobotsFile(
        origin: "https://a.test", verdict: .rules, body: Array("User-agent: *\nDisallow: /x\n".utf8),
        fetchedAt: t0, expiresAt: t0 + 86_400)
      try await store.keepRobotsFile(file)
      try await store.keepRobotsFile(
        RobotsFile(origin: "http://b.test:8080", verdict: .disallowAll, body: Array("HTTP 503".utf8), fetchedAt: t0,
                   expiresAt: t0 + 600))
      #expect(try await store.robotsFile(origin: "https://a.test") == file)
      let replaced = RobotsFile(origin: "https://a.test", verdict: .allowAll, body: [], fetchedAt: t0 + 5, expiresAt: t0 + 9)
      try await store.keepRobotsFile(replaced)
      #expect(try await store.robotsFile(origin: "https://a.test") == replaced)
      let b = try await store.robotsFile(origin: "http://b.test:8080")
      #expect(b?.verdict == .disallowAll && b?.body == Array("HTTP 503".utf8))
      #expect(try await store.robotsFile(origin: "https://a.test:443") == nil, "origins are compared as given")
    }
  }

  /// A file's bytes come back exactly, whatever they are (robots.txt need
  /// not be UTF-8), and an expired answer is still read.
  @Test(arguments: StoreKind.all) func test_robotsFile_keepsEveryByte_andExpiredAnswers(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let bytes: [UInt8] = [0xEF, 0xBB, 0xBF, 0x00, 0xFF, 0xFE, 0x0D, 0x0A, 0x5C, 0x27, 0x22] + Array(0...255)
      let file = RobotsFile(origin: "https://bytes.test", verdict: .rules, body: bytes, fetchedAt: t0 - 7200,
                            expiresAt: t0 - 3600)
      try await store.keepRobotsFile(file)
      #expect(try await store.robotsFile(origin: "https://bytes.test") == file)
    }
  }

  /// One process of a shared store downloads an origin's robots.txt while
  /// another is refused; a store of one process always fetches.
  @Test(arguments: StoreKind.all) func test_claimRobotsFetch_electsOneProcessPerOrigin_whenShared(_ kind: StoreKind) async throws {
    try await withTwoStores(kind) { (a: any Store, b: any Store) async throws in
      #expect(a.isShared == b.isShared)
      #expect(try await electRobotsFetch(a, origin: "https://example.com"))
      #expect(try await electRobotsFetch(b, origin: "https://example.com") == !a.isShared)
      #expect(try await electRobotsFetch(b, origin: "https://other.example"))
    }
  }

  /// A shared store bounds a host's concurrent requests across processes and
  /// gives a slot back when its ticket is returned; a store of one process
  /// leaves politeness to the process (ticket 0, always).
  @Test(arguments: StoreKind.all) func test_hostTickets_boundConcurrency_whenShared(_ kind: StoreKind) async throws {
    try await withTwoStores(kind) { (a: any Store, b: any Store) async throws in
      let host = "http://example.com"
      let one = try #require(try await takeHostTicket(a, host: host, owner: "a", concurrency: 2))
      let two = try #require(try await takeHostTicket(b, host: host, owner: "b", concurrency: 2))
      let third = try await takeHostTicket(a, host: host, owner: "a", concurrency: 2)
      let elsewhere = try await takeHostTicket(a, host: "http://other.example", owner: "a", concurrency: 2)
      if a.isShared {
        #expect(one != two)
        #expect(third == nil, "a third request while two run")
        #expect(elsewhere != nil, "another host has its own slots")
        try await returnHostTicket(b, two, owner: "b")
        #expect(try await takeHostTicket(a, host: host, owner: "a", concurrency: 2) != nil)
      } else {
        #expect([one, two, third, elsewhere] == [0, 0, 0, 0])
        try await returnHostTicket(b, two, owner: "b")
      }
    }
  }

  /// A delay keeps a host's starts apart across a shared store's processes.
  @Test(arguments: StoreKind.all) func test_hostTickets_delaySpacesStarts_whenShared(_ kind: StoreKind) async throws {
    try await withTwoStores(kind) { (a: any Store, b: any Store) async throws in
      let host = "http://slow.example"
      let first = try await takeHostTicket(a, host: host, owner: "a", concurrency: 9, delay: .seconds(30))
      let second = try await takeHostTicket(b, host: host, owner: "b", concurrency: 9, delay: .seconds(30))
      #expect(first != nil)
      #expect((second == nil) == a.isShared)
    }
  }
}
