import Foundation
import ForageScheduler
import ForageStore
import ForageSupport

extension Engine {
  /// Applies every change the sink named `name` has not applied yet, oldest
  /// first, in batches of `batchSize`, and moves the sink's cursor (kept in
  /// the store) after each `apply` returns.
  ///
  ///     // When the app comes to the front, and after a launch:
  ///     let report = try await engine.deliver(to: ProductSink(), as: "coredata")
  ///     print(report)   // sink "coredata": 120 changes in 1 batch, up to change 4410
  ///
  /// A new name starts with the oldest change kept. A kill, a crash or an
  /// `apply` that throws between an `apply` and its cursor leaves the cursor
  /// before that batch, so the next delivery applies it again (nothing else
  /// twice): see ``RecordSink``. Deliveries of one name in this process take
  /// turns; processes sharing a store should each use their own name.
  ///
  /// Sinks registered with ``registerSink(_:as:source:)`` are delivered to
  /// by every task launch of this process, after its crawl, within its budget.
  ///
  /// - Parameters:
  ///   - source: only the changes of this source; nil for every source. The
  ///     cursor moves to the last change delivered, so the other sources'
  ///     changes before it are passed for good: give a sink of one source a
  ///     name of its own.
  ///   - batchSize: changes per `apply`, at least 1.
  ///   - deadline: no batch starts after it (the one in flight finishes).
  ///   - stop: no batch starts once it is requested.
  /// - Returns: what was delivered, and whether it caught up.
  /// Pruning keeps every change a sink has not applied while it is
  /// delivered to within its sources' retention (``HistoryRetention/sinkHold``:
  /// the `maxAge`, else 30 days); a sink left longer may find changes after
  /// its cursor pruned, and its delivery then throws rather than skip them.
  ///
  /// - Throws: what `apply` throws (the cursor stays before that batch);
  ///   ``ChangeHistoryPruned`` naming the oldest cursor kept when changes
  ///   after the sink's cursor were pruned (see ``moveSink(named:to:)``);
  ///   store errors.
  @discardableResult
  public func deliver(
    to sink: some RecordSink, as name: String, source: String? = nil, batchSize: Int = RecordDefaults.deliveryBatch,
    until deadline: ContinuousClock.Instant? = nil, stop: StopRequest? = nil
  ) async throws -> SinkDelivery {
    try await deliver(
      to: sink, as: name, source: source, batchSize: batchSize, until: deadline, stop: stop, afterApply: nil)
  }

  /// ``deliver(to:as:source:batchSize:until:stop:)``, calling `afterApply`
  /// with each batch's number (1, 2, …) after its `apply` returned and
  /// before its cursor is written: where a test kills the process.
  package func deliver(
    to sink: some RecordSink, as name: String, source: String?, batchSize: Int,
    until deadline: ContinuousClock.Instant?, stop: StopRequest?, afterApply: (@Sendable (Int) -> Void)?
  ) async throws -> SinkDelivery {
    try await Engine.deliver(
      from: store, to: sink, as: name, source: source, batchSize: batchSize, until: deadline, stop: stop,
      afterApply: afterApply)
  }

  /// The delivery itself, over any store (a launch has no engine).
  static func deliver(
    from store: any Store, to sink: some RecordSink, as name: String, source: String?, batchSize: Int,
    until deadline: ContinuousClock.Instant?, stop: StopRequest?, afterApply: (@Sendable (Int) -> Void)?
  ) async throws -> SinkDelivery {
    await SinkTurns.shared.enter(name)
    do {
      let report = try await deliverInTurn(
        from: store, to: sink, as: name, source: source, batchSize: max(1, batchSize), until: deadline, stop: stop,
        afterApply: afterApply)
      await SinkTurns.shared.leave(name)
      return report
    } catch {
      await SinkTurns.shared.leave(name)
      throw error
    }
  }

  private static func deliverInTurn(
    from store: any Store, to sink: some RecordSink, as name: String, source: String?, batchSize: Int,
    until deadline: ContinuousClock.Instant?, stop: StopRequest?, afterApply: (@Sendable (Int) -> Void)?
  ) async throws -> SinkDelivery {
    var report = SinkDelivery(
      sink: name, delivered: 0, batches: 0, cursor: try await store.sinkCursor(name), caughtUp: false)
    while true {
      let batch = try await store.changes(source: source, afterID: report.cursor, limit: batchSize)
      // Read after the batch: pruning past the cursor (of a sink that was
      // not delivered to for longer than the retention holds it) since then
      // shows here. A sink at 0 starts with the oldest change kept.
      let pruned = try await store.historyPrunedThrough(source: source)
      if report.cursor > 0 && pruned > report.cursor {
        throw ChangeHistoryPruned(
          source: source, cursor: ChangeCursor(changeID: report.cursor), oldestKept: ChangeCursor(changeID: pruned),
          sink: name)
      }
      guard let last = batch.last else {
        // Delivered to now, with nothing new: the sink keeps holding the
        // history after its cursor (see `HistoryRetention.sinkHold`).
        if report.batches == 0 { try await store.setSinkCursor(name, to: report.cursor, now: Date()) }
        report.caughtUp = true
        return report
      }
      if stop?.isRequested == true { return report }
      if let deadline, ContinuousClock.now >= deadline { return report }
      try await sink.apply(batch)
      report.batches += 1
      afterApply?(report.batches)
      try await store.setSinkCursor(name, to: last.id, now: Date())
      report.delivered += batch.count
      report.cursor = last.id
      if batch.count < batchSize {
        report.caughtUp = true
        return report
      }
    }
  }

  /// Moves the cursor of the sink `name`: `.start` delivers every change
  /// kept again, `.after(cursor)` the changes after that one, `.latest`
  /// only changes committed from now on. An app that rebuilt its own
  /// database, or whose delivery threw ``ChangeHistoryPruned``, moves it
  /// (to the error's `oldestKept`, knowing that some changes were lost).
  ///
  ///     try await engine.moveSink(named: "coredata", to: error.oldestKept)
  ///
  /// - Throws: store errors.
  public func moveSink(named name: String, to cursor: ChangeCursor) async throws {
    let id: Int64
    if let change = cursor.changeID {
      id = change
    } else if cursor == .latest {
      id = try await store.changes(matching: ChangeQuery(limit: 1)).first?.id ?? 0
    } else {
      id = 0
    }
    await SinkTurns.shared.enter(name)
    do {
      try await store.setSinkCursor(name, to: id, now: Date())
      await SinkTurns.shared.leave(name)
    } catch {
      await SinkTurns.shared.leave(name)
      throw error
    }
  }

  // MARK: Sinks every launch delivers to

  /// Registers `sink` under `name`: every task launch of this process (an
  /// app's background refresh, `engine.run(task:)`) delivers to it after its
  /// crawl, within what is left of its budget, as
  /// ``deliver(to:as:source:batchSize:until:stop:)`` does. Registering a
  /// name again replaces its sink. Call it before launches can start (when
  /// the app starts, beside `registerLaunchHandlers()`).
  ///
  ///     Engine.registerSink(ProductSink(container: container), as: "swiftdata")
  public static func registerSink(_ sink: any RecordSink, as name: String, source: String? = nil) {
    registeredSinks.withLock { sinks in
      sinks.removeAll { $0.name == name }
      sinks.append(RegisteredSink(name: name, source: source, sink: sink))
    }
  }

  /// Removes the sink registered under `name`; its cursor stays in the store.
  public static func unregisterSink(named name: String) {
    registeredSinks.withLock { $0.removeAll { $0.name == name } }
  }

  /// The sinks of ``registerSink(_:as:source:)``, in registration order.
  static var sinks: [RegisteredSink] { registeredSinks.withLock { $0 } }

  private static let registeredSinks = Locked<[RegisteredSink]>([])
}

/// A sink a launch delivers to.
struct RegisteredSink: Sendable {
  var name: String
  var source: String?
  var sink: any RecordSink
}

extension TaskRunner {
  /// Delivers to the registered sinks (``Engine/registerSink(_:as:source:)``)
  /// after a launch's crawl, until `remaining` runs out (less the stop
  /// margin); logs one line per sink that received changes or failed.
  static func deliverToSinks(
    store: any Store, remaining: @Sendable () -> Duration, log: SchedulerLog
  ) async {
    let sinks = Engine.sinks
    guard !sinks.isEmpty else { return }
    let deadline = ContinuousClock.now + remaining() - EngineDefaults.stopMargin
    for registered in sinks {
      do {
        let report = try await Engine.deliver(
          from: store, to: registered.sink, as: registered.name, source: registered.source,
          batchSize: RecordDefaults.deliveryBatch, until: deadline, stop: nil, afterApply: nil)
        if report.delivered > 0 || !report.caughtUp { log.write(report.description) }
      } catch {
        log.write("sink \"\(registered.name)\": delivery stopped: \(error)")
      }
    }
  }
}

/// Deliveries to one sink name take turns within a process: an app that
/// comes to the front while a launch delivers waits for it, and then finds
/// the cursor it left.
actor SinkTurns {
  static let shared = SinkTurns()
  private var busy: Set<String> = []
  private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

  /// Returns once `name` is this caller's.
  func enter(_ name: String) async {
    guard busy.contains(name) else {
      busy.insert(name)
      return
    }
    await withCheckedContinuation { waiting[name, default: []].append($0) }
  }

  /// Hands `name` to the next waiter, or frees it.
  func leave(_ name: String) {
    if var queue = waiting[name], !queue.isEmpty {
      let next = queue.removeFirst()
      waiting[name] = queue.isEmpty ? nil : queue
      next.resume()
    } else {
      busy.remove(name)
    }
  }
}
