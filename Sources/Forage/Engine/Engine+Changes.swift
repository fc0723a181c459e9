import Foundation
import ForageStore

extension Engine {
  /// The changes of the records of `source` (every source when nil) after
  /// `cursor`, as a live ``ChangeStream``: first the changes the store keeps
  /// after it, oldest first, then each new one as its commit lands.
  ///
  ///     for try await change in engine.changes(source: "catalog", after: .latest) {
  ///       print(change.kind, change.key, change.cursor)
  ///     }
  ///
  /// `.start` replays everything kept, `.latest` yields only changes
  /// committed after this call returns, and `.after(change.cursor)` resumes
  /// where an earlier stream stopped (keep `change.cursor.description` to
  /// resume after a relaunch). Commits of this engine's store wake the
  /// stream at once; commits of another process on the same store (the
  /// daemon, `forage run`) within a second. Breaking out of the loop, or
  /// cancelling its task, ends the stream and closes its connection.
  ///
  /// - Throws (from the stream): `EngineError` of kind `.unknownSource` when
  ///   the config has no source `source`; ``ChangeHistoryPruned`` when the
  ///   changes after the cursor were pruned from the history (it names the
  ///   oldest cursor kept); `StoreError` when the store fails.
  public func changes(source: String?, after cursor: ChangeCursor) -> ChangeStream {
    if let source {
      do {
        _ = try config.sources(named: [source], configName: configName)
      } catch {
        return ChangeStream(source: source, after: cursor) { throw error }
      }
    }
    return store.changes(source: source, after: cursor)
  }
}
