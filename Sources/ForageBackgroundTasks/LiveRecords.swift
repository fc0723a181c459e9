import Foundation
import Observation
import Forage
import ForageStore

/// A source's current records for a SwiftUI screen, kept current from the
/// store's change stream: an `@Observable` model on the main actor.
///
///     struct Product: Decodable, Sendable { let title: String; let price: Double?; let sku: String }
///
///     @State private var products = LiveRecords(Product.self, source: "catalog", engine: engine)
///
///     List(products.records) { Text($0.value.title) }
///       .task { await products.follow() }
///
/// ``follow()`` reads the records, then waits for changes of the source
/// (`Engine.changes(source:after:)` from `.latest`, taken before the first
/// read, so a commit landing in between is not missed) and reads them
/// again after each: a launch of this app, the daemon or another process on
/// the same store. Changes that land while a read is under way are folded
/// into one more read. It returns when its task is cancelled (SwiftUI's
/// `.task` does that when the view goes away), or when the stream fails,
/// with ``problem`` saying why.
///
/// Records whose fields do not decode as `Value` are left out of
/// ``records`` and listed in ``failures``, so one bad record does not hide
/// a source.
@MainActor @Observable
public final class LiveRecords<Value: Decodable & Sendable> {
  /// The source's current records, decoded, in the order the store added them.
  public private(set) var records: [Stored<Value>] = []
  /// The records of the last read that did not decode, naming key and field.
  public private(set) var failures: [RecordDecodingError] = []
  /// Why the last read or the stream failed, for a person; nil while all is well.
  public private(set) var problem: String?
  /// When ``records`` was last read from the store; nil before the first read.
  public private(set) var readAt: Date?
  /// How many times the records were read (the first read and one for each
  /// burst of changes).
  public private(set) var reads = 0
  /// The source whose records these are.
  public let source: String

  @ObservationIgnored private let engine: Engine

  /// A model of `source`'s records in `engine`'s store, decoded as `Value`;
  /// empty until ``follow()`` or ``reload()`` reads them.
  public init(_ type: Value.Type = Value.self, source: String, engine: Engine) {
    self.source = source
    self.engine = engine
  }

  /// Reads the records now.
  public func reload() async {
    do {
      let decoded = try await engine.decodedRecords(Value.self, source: source)
      records = decoded.records
      failures = decoded.failures
      problem = nil
    } catch {
      problem = "Could not read the records of \"\(source)\": \(error)"
    }
    readAt = Date()
    reads += 1
  }

  /// Reads the records, then keeps them current until the calling task is
  /// cancelled or the change stream fails (see the type's documentation).
  public func follow() async {
    let stream = engine.changes(source: source, after: .latest)
    // The stream is read off the main actor; each change only rings, and a
    // ring waiting to be taken absorbs the next ones.
    let (rings, ring) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    let reader = Task.detached { [source] () -> String? in
      defer { ring.finish() }
      do {
        for try await _ in stream { ring.yield() }
        return nil
      } catch is CancellationError {
        return nil
      } catch {
        return "Stopped following the changes of \"\(source)\": \(error)"
      }
    }
    await withTaskCancellationHandler {
      await reload()
      for await _ in rings { await reload() }
    } onCancel: {
      reader.cancel()
    }
    reader.cancel()
    if let stopped = await reader.value, !Task.isCancelled { problem = stopped }
  }
}
