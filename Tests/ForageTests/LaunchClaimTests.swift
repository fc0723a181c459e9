import Foundation
import ForageScheduler
import ForageStore
import ForageSupport
import Testing

@testable import Forage

/// A fleet daemon's launch claim is taken per task and renewed while the
/// launch runs (README: a launch that outlasted half its interval could
/// overlap another daemon's next launch of the task).
@Suite struct LaunchClaimTests {
  /// A shared store's lease calls, recorded; `grants` decides claims and
  /// `holds` what a renewal finds.
  final class RecordingLeases: LeaseStore, @unchecked Sendable {
    struct State {
      var claims: [(task: String, lease: Lease)] = []
      var renewals: [(kind: LeaseKind, lease: Lease)] = []
    }
    let state = Locked(State())
    let grants: Bool
    let holds: Int
    init(grants: Bool = true, holds: Int = 1) {
      self.grants = grants
      self.holds = holds
    }
    var isShared: Bool { true }
    func renew(_ kind: LeaseKind, lease: Lease) async throws -> Int {
      state.withLock { $0.renewals.append((kind, lease)) }
      return holds
    }
    func release(_ kind: LeaseKind, owner: String?, ids: [Int64]?) async throws {}
    func claimLaunch(task: String, lease: Lease) async throws -> Bool {
      state.withLock { $0.claims.append((task, lease)) }
      return grants
    }
    var renewalCount: Int { state.withLock { $0.renewals.count } }
  }

  static let task = TaskDefinition(
    id: "t.crawl", kind: .processing, every: .seconds(600), budget: .seconds(60), sources: ["s"])

  /// Waits (yielding, bounded) until `store` has seen `count` renewals.
  static func untilRenewed(_ store: RecordingLeases, _ count: Int) async throws {
    for _ in 0..<20_000 where store.renewalCount < count { try await Task.sleep(for: .milliseconds(1)) }
    #expect(store.renewalCount >= count, "the claim was not renewed \(count) times")
  }

  @Test func test_take_claimsTheTasksLaunchForHalfItsInterval_asTheDaemonAndTask() async throws {
    let store = RecordingLeases()
    let now = Date(timeIntervalSince1970: 1_000_000)
    let claim = try #require(try await LaunchClaim.take(task: Self.task, daemon: "daemon-a", store: store, now: now))
    let taken = try #require(store.state.withLock { $0.claims.first })
    #expect(taken.task == "t.crawl")
    #expect(taken.lease.owner == "daemon-a t.crawl")
    #expect(taken.lease.length == .seconds(300))
    #expect(taken.lease.at == now)
    #expect(claim.owner == taken.lease.owner)
  }

  @Test func test_take_isNil_whenAnotherDaemonHoldsTheLaunch() async throws {
    let store = RecordingLeases(grants: false)
    #expect(try await LaunchClaim.take(task: Self.task, daemon: "daemon-a", store: store, now: .now) == nil)
  }

  @Test func test_ownersOfTwoTasks_differ_soThatRenewingOneLeavesTheOther() {
    #expect(LaunchClaim.owner(daemon: "d", task: "a") != LaunchClaim.owner(daemon: "d", task: "b"))
  }

  @Test func test_renewalInterval_isTheFleetsOrAThirdOfAShortClaim_butNeverUnder100ms() {
    let store = RecordingLeases()
    let long = LaunchClaim(task: "t", owner: "o", length: .seconds(300), store: store)
    #expect(long.renewalInterval == EngineDefaults.fleetLeaseRenewal)
    let short = LaunchClaim(task: "t", owner: "o", length: .seconds(3), store: store)
    #expect(short.renewalInterval == .seconds(1))
    let none = LaunchClaim(task: "t", owner: "o", length: .zero, store: store)
    #expect(none.renewalInterval == .milliseconds(100))
  }

  @Test func test_hold_renewsTheClaimWhileTheLaunchRuns_andNoMoreAfter() async throws {
    let store = RecordingLeases()
    let claim = try #require(try await LaunchClaim.take(task: Self.task, daemon: "d", store: store, now: .now))
    let lines = Locked<[String]>([])
    let result = try await claim.hold(
      renewEvery: .milliseconds(2), log: SchedulerLog { line in lines.withLock { $0.append(line) } }, now: { .now }
    ) {
      try await Self.untilRenewed(store, 3)
      return 7
    }
    #expect(result == 7)
    let after = store.renewalCount
    let renewals = store.state.withLock { $0.renewals }
    #expect(renewals.allSatisfy { $0.kind == .launch && $0.lease.owner == "d t.crawl" && $0.lease.length == .seconds(300) })
    // The renewals stopped when `hold` returned: none comes later.
    try await Task.sleep(for: .milliseconds(30))
    #expect(store.renewalCount == after)
    #expect(lines.withLock { $0 }.isEmpty)
  }

  @Test func test_hold_stopsRenewing_whenTheLaunchThrows() async throws {
    struct Failed: Error {}
    let store = RecordingLeases()
    let claim = LaunchClaim(task: "t", owner: "o", length: .seconds(60), store: store)
    await #expect(throws: Failed.self) {
      try await claim.hold(renewEvery: .milliseconds(2), log: .silent, now: { .now }) {
        try await Self.untilRenewed(store, 1)
        throw Failed()
      }
    }
    let after = store.renewalCount
    try await Task.sleep(for: .milliseconds(30))
    #expect(store.renewalCount == after)
  }

  @Test func test_hold_aClaimAnotherDaemonTook_isLoggedOnce_andTheLaunchGoesOn() async throws {
    let store = RecordingLeases(holds: 0)
    let claim = LaunchClaim(task: "t.crawl", owner: "o", length: .seconds(60), store: store)
    let lines = Locked<[String]>([])
    try await claim.hold(renewEvery: .milliseconds(2), log: SchedulerLog { line in lines.withLock { $0.append(line) } }, now: { .now }) {
      try await Self.untilRenewed(store, 3)
    }
    let logged = lines.withLock { $0 }
    #expect(logged.count == 1)
    #expect(logged.first?.hasPrefix("t.crawl: another daemon of the fleet took this launch's claim") == true)
  }
}
