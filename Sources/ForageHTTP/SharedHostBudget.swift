/// Per-host politeness shared by several processes: a fleet of workers on one
/// database keeps each host's request starts `delay` apart and its requests in
/// flight under `concurrency`, as one process would.
///
/// A ``Fetcher`` given one asks it after its own ``HostSlot`` admits a
/// request, and gives the ticket back when the request ends. A ticket of a
/// process that died is freed when its `lease` passes.
///
///     let fetcher = Fetcher(transport: transport, hostBudget: budget)
public protocol SharedHostBudget: Sendable {
  /// Takes one of `host`'s `concurrency` request slots when the host's next
  /// start has come, moving that start `delay` later; returns the ticket, or
  /// nil when the host is busy now (ask again shortly).
  ///
  /// - Throws: when the budget cannot be asked for a while (its database
  ///   keeps failing); the request then fails with the error's description
  ///   as its reason (its `debugDescription` behind `--verbose`), rather
  ///   than waiting for a deadline it may not have.
  func take(host: String, concurrency: Int, delay: Duration, lease: Duration) async throws -> Int64?
  /// Gives a ticket back: its request ended.
  func give(host: String, ticket: Int64) async
}
