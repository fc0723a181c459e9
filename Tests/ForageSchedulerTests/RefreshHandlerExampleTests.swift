import Foundation
import Testing

@testable import ForageScheduler

/// An app's own tests of its refresh handler, as a user writes them (the
/// README shows the second): the device changed now, a forced launch held
/// and expired at the chosen moment, the reason read as an enum. No polling
/// side task, no timeline written in advance.
@Suite struct RefreshHandlerExampleTests {
  /// The app's refresh: submit the next request first, then fetch pages
  /// until done or told to stop (one page on a metered network).
  final class PriceRefresh: Sendable {
    static let identifier = "com.example.refresh"
    let scheduler: SimulatedScheduler
    let fetched = Collector<String>()
    let pages = ["prices/1", "prices/2", "prices/3"]

    init(scheduler: SimulatedScheduler) {
      self.scheduler = scheduler
      scheduler.register(Self.identifier) { task in try await self.run(task) }
      scheduler.finishLaunching()
    }

    func run(_ task: BackgroundTask) async throws {
      try scheduler.submit(AppRefreshTaskRequest(identifier: Self.identifier, earliestBeginDate: scheduler.now.addingTimeInterval(15 * 60)))
      let wanted = task.conditions.network.isExpensive ? pages.prefix(1) : pages[...]
      for page in wanted {
        try await Task.sleep(for: .milliseconds(20))  // the fetch; cancelled at expiration
        fetched.append(page)
      }
      task.reportRefreshed(sources: ["prices"])
    }
  }

  @Test func test_refresh_onCellular_fetchesOnePage_andOfflineWaits() async throws {
    let scheduler = SimulatedScheduler(device: .chargingOnWiFi)
    let refresh = PriceRefresh(scheduler: scheduler)
    try scheduler.submit(AppRefreshTaskRequest(identifier: PriceRefresh.identifier))

    scheduler.device.network(.none)
    #expect(await scheduler.launch(PriceRefresh.identifier) == .deferred(.noNetwork))

    scheduler.device.unplug()
    scheduler.device.network(.cellular)
    #expect(await scheduler.launch(PriceRefresh.identifier) == .launched(1))
    #expect(refresh.fetched.all == ["prices/1"])
    let launched = try #require(scheduler.trace.events(for: PriceRefresh.identifier).first { $0.kind == .launched })
    #expect(launched.conditions?.isCharging == false)
    #expect(launched.conditions?.network == .cellular)
  }

  @Test func test_refresh_expiredMidway_failsKeepsNextRequest_andIsNotKilled() async throws {
    let scheduler = SimulatedScheduler(device: .chargingOnWiFi)
    let refresh = PriceRefresh(scheduler: scheduler)
    try scheduler.submit(AppRefreshTaskRequest(identifier: PriceRefresh.identifier))

    let launch = scheduler.forceLaunch(PriceRefresh.identifier)
    #expect(launch.expire())
    #expect(await launch.outcome() == .completed(success: false))
    #expect(launch.task?.expirationReason == .forced)
    #expect(refresh.fetched.all.count < refresh.pages.count)

    let trace = scheduler.trace.events(for: PriceRefresh.identifier)
    #expect(trace.filter { $0.kind != .submitted }.map(\.kind) == [.launched, .expired, .completed])
    #expect(trace.filter { $0.kind == .submitted }.count == 2, "the handler submitted its next request first")
    #expect(trace.first { $0.kind == .expired }?.expirationReason == .forced)
    #expect(await scheduler.pendingTaskRequests().map(\.identifier) == [PriceRefresh.identifier])
    #expect(launch.expire() == false, "a launch that ended cannot expire again")
  }
}
