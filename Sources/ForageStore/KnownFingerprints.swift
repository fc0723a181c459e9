/// Fingerprints known to be on crawls' frontiers, with the depth they have
/// there, in bounded memory.
///
/// Frontier rows are never deleted while a crawl runs, so "known present"
/// stays true; a link found here at the same depth or deeper needs no index
/// lookup (a shorter path still does: it may lower the entry's depth). Each
/// crawl keeps two generations of at most `capacity` fingerprints: when the
/// current one fills, it becomes the previous one and the oldest is dropped,
/// so memory stays bounded however many URLs a crawl sees (a forgotten
/// fingerprint only costs a lookup again). Only committed fingerprints are
/// added: a rolled-back batch must not leave entries here.
struct KnownFingerprints {
  private struct Generations {
    var current: [UInt64: UInt16] = [:]
    var previous: [UInt64: UInt16] = [:]
  }

  let capacity: Int
  private var crawls: [Int64: Generations] = [:]

  init(capacity: Int) {
    self.capacity = capacity
  }

  /// True when `fingerprint` is known to be on `crawl`'s frontier.
  func contains(_ fingerprint: UInt64, crawl: Int64) -> Bool {
    depth(of: fingerprint, crawl: crawl) != nil
  }

  /// The depth `fingerprint` is known to have on `crawl`'s frontier; nil when
  /// it is not known.
  func depth(of fingerprint: UInt64, crawl: Int64) -> Int? {
    guard let generations = crawls[crawl] else { return nil }
    return (generations.current[fingerprint] ?? generations.previous[fingerprint]).map(Int.init)
  }

  /// Remembers committed fingerprints of `crawl` with their frontier depths.
  mutating func insert(_ depths: [UInt64: Int], crawl: Int64) {
    guard capacity > 0, !depths.isEmpty else { return }
    var generations = crawls.removeValue(forKey: crawl) ?? Generations()
    for (fingerprint, depth) in depths {
      let stored = UInt16(clamping: depth)
      if generations.previous[fingerprint] != nil {
        generations.previous[fingerprint] = stored
        continue
      }
      if generations.current[fingerprint] == nil && generations.current.count >= capacity {
        generations.previous = generations.current
        generations.current = Dictionary(minimumCapacity: capacity)
      }
      generations.current[fingerprint] = stored
    }
    crawls[crawl] = generations
  }

  /// Remembers committed fingerprints of `crawl` at depth 0 (tests).
  mutating func insert(_ fingerprints: Set<UInt64>, crawl: Int64) {
    insert(Dictionary(uniqueKeysWithValues: fingerprints.map { ($0, 0) }), crawl: crawl)
  }

  /// Forgets a crawl (it completed).
  mutating func forget(crawl: Int64) {
    crawls[crawl] = nil
  }

  /// Fingerprints held, for tests.
  func count(crawl: Int64) -> Int {
    crawls[crawl].map { $0.current.count + $0.previous.count } ?? 0
  }
}
