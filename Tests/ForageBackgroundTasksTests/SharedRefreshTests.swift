import Foundation
import Testing
@testable import ForageBackgroundTasks

/// The one refresh request every `appRefresh` task rides (issue 26): what it
/// is due at and which tasks a launch runs.
@Suite struct SharedRefreshTests {
  let now = Date(timeIntervalSince1970: 1_000_000)

  @Test func test_theRequestIsDueAtTheSoonestMember() {
    var shared = SharedRefresh(members: ["prices", "news"])
    #expect(shared.carrier == "prices")
    let first = shared.submit("news", earliest: now + 3600)
    let second = shared.submit("prices", earliest: now + 900)
    #expect(first == now + 3600 && second == now + 900)
    #expect(shared.pending.map(\.identifier) == ["prices", "news"])
    let asap = shared.submit("prices", earliest: nil)
    #expect(asap == nil, "as soon as possible")
  }

  @Test func test_aLaunchRunsTheDueMembers_orTheSoonest_orAllWhenNothingIsKnown() {
    var shared = SharedRefresh(members: ["prices", "news", "weather"])
    let cold = shared.launch(now: now)
    #expect(cold == ["prices", "news", "weather"], "a new process knows nothing: all run")
    _ = shared.submit("prices", earliest: now)
    _ = shared.submit("news", earliest: now + 3600)
    _ = shared.submit("weather", earliest: now - 60)
    let due = shared.launch(now: now)
    #expect(due == ["prices", "weather"])
    #expect(shared.pending.map(\.identifier) == ["news"])
    let early = shared.launch(now: now)
    #expect(early == ["news"], "launched early (the debugger): the soonest runs")
    #expect(!shared.hasPending)
  }

  @Test func test_cancellingAMember_keepsTheOthers() {
    var shared = SharedRefresh(members: ["prices", "news"])
    _ = shared.submit("prices", earliest: now + 900)
    _ = shared.submit("news", earliest: now + 3600)
    let othersAfterPrices = shared.cancel("prices")
    #expect(othersAfterPrices)
    #expect(shared.soonest == now + 3600)
    let othersAfterNews = shared.cancel("news")
    #expect(!othersAfterNews)
    shared.seed("prices", earliest: now)
    shared.seed("prices", earliest: now + 5)
    #expect(shared.soonest == now, "a request found at iOS counts only when nothing is known of it")
  }
}
