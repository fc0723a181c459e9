import Foundation

/// The simulated time of a ``SimulatedScheduler``: it moves only when the
/// simulation advances, in jumps from one interesting instant to the next.
///
///     let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_767_571_200))
///     let scheduler = SimulatedScheduler(clock: clock, device: .chargingOnWiFi)
///
/// Internally time is whole milliseconds since `start`, so runs are exact and
/// the same on every machine. Profile times of day count from `start` (the
/// default start is Monday 2026-01-05 00:00 UTC).
public struct VirtualClock: Sendable, Hashable, Codable {
  /// The instant the simulation starts.
  public let start: Date

  /// A clock starting at `start`.
  public init(start: Date = SchedulerDefaults.simulationStart) {
    self.start = start
  }

  /// The date `offset` milliseconds after the start.
  func date(_ offset: Int64) -> Date {
    start.addingTimeInterval(Double(offset) / 1000)
  }

  /// Milliseconds from the start to `date` (negative before it).
  func offset(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince(start) * 1000).rounded())
  }
}

/// A min-heap of timed events; ties keep insertion order, so runs are deterministic.
struct EventQueue<Event: Sendable>: Sendable {
  private var heap: [(time: Int64, seq: UInt64, event: Event)] = []
  private var seq: UInt64 = 0

  var isEmpty: Bool { heap.isEmpty }
  var peekTime: Int64? { heap.first?.time }

  private static func less(_ a: (time: Int64, seq: UInt64, event: Event), _ b: (time: Int64, seq: UInt64, event: Event)) -> Bool {
    a.time < b.time || (a.time == b.time && a.seq < b.seq)
  }

  /// - Complexity: O(log n)
  mutating func push(_ time: Int64, _ event: Event) {
    heap.append((time, seq, event))
    seq += 1
    var i = heap.count - 1
    while i > 0 {
      let parent = (i - 1) / 2
      if !EventQueue.less(heap[i], heap[parent]) { break }
      heap.swapAt(i, parent)
      i = parent
    }
  }

  /// - Complexity: O(log n)
  mutating func pop() -> (Int64, Event)? {
    guard !heap.isEmpty else { return nil }
    heap.swapAt(0, heap.count - 1)
    let top = heap.removeLast()
    var i = 0
    while true {
      let l = 2 * i + 1, r = l + 1
      var m = i
      if l < heap.count && EventQueue.less(heap[l], heap[m]) { m = l }
      if r < heap.count && EventQueue.less(heap[r], heap[m]) { m = r }
      if m == i { break }
      heap.swapAt(i, m)
      i = m
    }
    return (top.time, top.event)
  }
}
