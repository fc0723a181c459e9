/// Fingerprints known to be on crawls' frontiers, in bounded memory.
///
/// Frontier rows are never deleted while a crawl runs, so "known present"
/// stays true; a link found here needs no index lookup. Each crawl keeps
/// two generations of at most `capacity` fingerprints: when the current
/// one fills, it becomes the previous one and the oldest is dropped, so
/// memory stays bounded however many URLs a crawl sees (a forgotten
/// fingerprint only costs a lookup again). Only committed fingerprints
/// are added: a rolled-back batch must not leave entries here.
struct KnownFingerprints {
  private struct Generations {
    var current: Set<UInt64> = []
    var previous: Set<UInt64> = []
  }

  let capacity: Int
  private var crawls: [Int64: Generations] = [:]

  init(capacity: Int) {
    self.capacity = capacity
  }

  /// True when `fingerprint` is known to be on `crawl`'s frontier.
  func contains(_ fingerprint: UInt64, crawl: Int64) -> Bool {
    guard let generations = crawls[crawl] else { return false }
    return generations.current.contains(fingerprint)
      || generations.previous.contains(fingerprint)
  }

  /// Remembers committed fingerprints of `crawl`.
  mutating func insert(_ fingerprints: Set<UInt64>, crawl: Int64) {
    guard capacity > 0, !fingerprints.isEmpty else { return }
    var generations = crawls.removeValue(forKey: crawl) ?? Generations()
    for fingerprint in fingerprints where !generations.previous.contains(fingerprint) {
      if generations.current.count >= capacity {
        generations.previous = generations.current
        generations.current = Set(minimumCapacity: capacity)
      }
      generations.current.insert(fingerprint)
    }
    crawls[crawl] = generations
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
