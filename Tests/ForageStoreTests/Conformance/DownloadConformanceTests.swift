import Foundation
import Testing
@testable import ForageStore

/// `DownloadStore` on every store: queueing (once per URL and folder, and
/// what a repeated request does), claims and their filters and leases,
/// updates by the claim's holder only, releases and listings.
@Suite struct DownloadConformanceTests {
  static func request(
    _ n: Int, folder: String = "/srv/data", size: Int? = nil, sha256: String? = nil, source: String? = nil
  ) -> DownloadRequest {
    DownloadRequest(
      url: "https://files.example.com/\(n).bin", folder: folder, expectedSize: size, expectedSHA256: sha256,
      source: source)
  }

  /// Claims download `id` alone and ends its claim in `state` with `change` applied.
  private func settle(
    _ store: any Store, _ id: Int64, _ state: DownloadState, at now: Date = t0,
    _ change: (inout DownloadEntry) -> Void = { _ in }
  ) async throws -> DownloadEntry {
    var entry = try #require(try await claimDownloads(store, ids: [id], owner: "settler", at: now).first)
    entry.state = state
    change(&entry)
    #expect(try await updateClaimedDownload(store, entry, owner: "settler", lease: nil, at: now))
    return try #require(try await store.download(id: id))
  }

  @Test(arguments: StoreKind.all) func test_enqueue_keepsTheRequest_andADownloadPerURLAndFolder(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let sha = String(repeating: "ab", count: 32)
      let first = try await store.enqueueDownload(
        Self.request(1, size: 10, sha256: sha, source: "feed"), repeat: .keep, now: t0)
      #expect(first.url == "https://files.example.com/1.bin" && first.folder == "/srv/data")
      #expect(first.expectedSize == 10 && first.expectedSHA256 == sha && first.source == "feed")
      #expect(first.state == .queued && first.bytesWritten == 0 && first.attempts == 0 && first.name == nil)
      #expect(first.createdAt == t0 && first.updatedAt == t0 && first.finishedAt == nil)
      #expect(try await store.download(id: first.id) == first)

      let again = try await store.enqueueDownload(Self.request(1), repeat: .keep, now: t0 + 5)
      #expect(again == first, "the same URL and folder: the kept download, untouched")
      let otherFolder = try await store.enqueueDownload(Self.request(1, folder: "/srv/other"), repeat: .keep, now: t0 + 6)
      let otherURL = try await store.enqueueDownload(Self.request(2), repeat: .keep, now: t0 + 7)
      #expect(Set([first.id, otherFolder.id, otherURL.id]).count == 3)
      #expect(otherFolder.source == nil && otherFolder.expectedSize == nil)
      #expect(try await store.downloads(state: nil, limit: 10).map(\.id) == [first.id, otherFolder.id, otherURL.id])
      #expect(try await store.download(id: 999_999) == nil)
    }
  }

  /// An unfinished download takes a repeated request's expected size and
  /// hash; a done one keeps its own.
  @Test(arguments: StoreKind.all) func test_enqueue_again_updatesWhatAnUnfinishedDownloadExpects(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let queued = try await store.enqueueDownload(Self.request(1), repeat: .keep, now: t0)
      let sha = String(repeating: "0f", count: 32)
      let updated = try await store.enqueueDownload(Self.request(1, size: 99, sha256: sha), repeat: .keep, now: t0 + 5)
      #expect(updated.id == queued.id && updated.expectedSize == 99 && updated.expectedSHA256 == sha)
      #expect(updated.updatedAt == t0 + 5)
      #expect(try await store.download(id: queued.id) == updated)

      let done = try await store.enqueueDownload(Self.request(2, size: 5), repeat: .keep, now: t0)
      _ = try await settle(store, done.id, .done, at: t0 + 1) { $0.bytesWritten = 5; $0.finishedAt = t0 + 1 }
      let asked = try await store.enqueueDownload(Self.request(2, size: 6), repeat: .keep, now: t0 + 2)
      #expect(asked.state == .done && asked.expectedSize == 5)
    }
  }

  /// `keep` leaves a failed download failed; `retryFailed` queues it with
  /// fresh attempts and its bytes written, and leaves a done one done;
  /// `again` starts a done one over from scratch.
  @Test(arguments: StoreKind.all) func test_enqueue_repeat_keep_retryFailed_again(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let failing = try await store.enqueueDownload(Self.request(1, size: 100), repeat: .keep, now: t0)
      let failed = try await settle(store, failing.id, .failed) {
        $0.attempts = 3
        $0.lastError = "HTTP 500"
        $0.bytesWritten = 40
      }
      #expect(failed.state == .failed && failed.attempts == 3 && failed.bytesWritten == 40)
      #expect(try await store.enqueueDownload(Self.request(1), repeat: .keep, now: t0 + 1) == failed)
      let retried = try await store.enqueueDownload(Self.request(1), repeat: .retryFailed, now: t0 + 2)
      #expect(retried.id == failed.id && retried.state == .queued && retried.attempts == 0)
      #expect(retried.bytesWritten == 40, "the part file is kept")
      #expect(try await store.download(id: failed.id) == retried)

      let finished = try await settle(store, retried.id, .done, at: t0 + 3) {
        $0.name = "1.bin"
        $0.bytesWritten = 100
        $0.totalSize = 100
        $0.etag = "\"e\""
        $0.path = "/srv/data/1.bin"
        $0.sha256 = String(repeating: "cd", count: 32)
        $0.finishedAt = t0 + 3
      }
      #expect(try await store.enqueueDownload(Self.request(1), repeat: .retryFailed, now: t0 + 4) == finished)
      let over = try await store.enqueueDownload(Self.request(1), repeat: .again, now: t0 + 5)
      #expect(over.id == finished.id && over.state == .queued)
      #expect(over.name == nil && over.path == nil && over.sha256 == nil && over.finishedAt == nil && over.etag == nil)
      #expect(over.bytesWritten == 0 && over.totalSize == nil && over.attempts == 0 && over.lastError == nil)
      #expect(over.expectedSize == 100 && over.createdAt == t0 && over.updatedAt == t0 + 5)
      #expect(try await store.download(id: over.id) == over)
    }
  }

  /// Claims come in id order after `afterID`, up to the limit, only queued
  /// ones; a claim is the owner's until its lease passes.
  @Test(arguments: StoreKind.all) func test_claim_inIDOrderAfterAnID_andALeasePassed(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      var ids: [Int64] = []
      for n in 1...5 { ids.append(try await store.enqueueDownload(Self.request(n), repeat: .keep, now: t0).id) }
      let first = try await claimDownloads(store, limit: 2, owner: "a", lease: 60, at: t0)
      #expect(first.map(\.id) == Array(ids[0..<2]))
      #expect(first.allSatisfy { $0.state == .claimed && $0.updatedAt == t0 })
      let after = try await claimDownloads(store, after: ids[2], limit: 5, owner: "b", lease: 60, at: t0)
      #expect(after.map(\.id) == Array(ids[3...]))
      #expect(try await claimDownloads(store, limit: 0, owner: "c", at: t0).isEmpty)
      #expect(try await claimDownloads(store, ids: [], owner: "c", at: t0).isEmpty)
      // Live claims are nobody else's; the one queued is.
      #expect(try await claimDownloads(store, limit: 5, owner: "c", lease: 60, at: t0 + 30).map(\.id) == [ids[2]])
      #expect(try await store.downloads(state: .claimed, limit: 10).count == 5)
      // At t0 + 61, a's and b's leases have passed (c's has not).
      let taken = try await claimDownloads(store, limit: 10, owner: "d", lease: 60, at: t0 + 61)
      #expect(taken.map(\.id) == [ids[0], ids[1], ids[3], ids[4]])
      #expect(try await updateClaimedDownload(store, first[0], owner: "a", lease: 60, at: t0 + 62) == false)
    }
  }

  /// With `ids`, only those; with `maxRemaining`, only downloads of known
  /// size (expected, or the server's) with at most that many bytes to go.
  @Test(arguments: StoreKind.all) func test_claim_filters_byIDs_andByBytesRemaining(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let unknown = try await store.enqueueDownload(Self.request(1), repeat: .keep, now: t0)
      let small = try await store.enqueueDownload(Self.request(2, size: 100), repeat: .keep, now: t0)
      let big = try await store.enqueueDownload(Self.request(3, size: 10_000), repeat: .keep, now: t0)
      let started = try await store.enqueueDownload(Self.request(4), repeat: .keep, now: t0)
      // The server said 5,000 bytes, 4,950 of which are written.
      var entry = try #require(try await claimDownloads(store, ids: [started.id], owner: "a", at: t0).first)
      entry.totalSize = 5_000
      entry.bytesWritten = 4_950
      #expect(try await updateClaimedDownload(store, entry, owner: "a", lease: nil, at: t0))
      #expect(try await store.download(id: started.id)?.state == .queued)

      let short = try await claimDownloads(store, maxRemaining: 100, owner: "b", at: t0 + 1)
      #expect(short.map(\.id) == [small.id, started.id])
      #expect(try await claimDownloads(store, ids: [unknown.id, small.id], owner: "c", at: t0 + 1).map(\.id) == [unknown.id])
      #expect(try await claimDownloads(store, ids: [big.id], maxRemaining: 9_999, owner: "c", at: t0 + 1).isEmpty)
      #expect(try await claimDownloads(store, ids: [big.id], maxRemaining: 10_000, owner: "c", at: t0 + 1).map(\.id) == [big.id])
    }
  }

  /// The holder writes every field but URL, folder, source and creation
  /// date; a lease keeps the claim, none ends it in the entry's state.
  @Test(arguments: StoreKind.all) func test_update_byTheHolder_writesTheEntry_andEndsOrKeepsTheClaim(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      let queued = try await store.enqueueDownload(Self.request(1, source: "feed"), repeat: .keep, now: t0)
      var entry = try #require(try await claimDownloads(store, owner: "a", lease: 60, at: t0).first)
      entry.name = "report.pdf"
      entry.bytesWritten = 1_024
      entry.totalSize = 4_096
      entry.etag = "\"v1\""
      entry.lastModified = "Tue, 14 Nov 2023 22:13:20 GMT"
      entry.url = "https://elsewhere.example/x"
      entry.folder = "/tmp/elsewhere"
      entry.source = "other"
      entry.createdAt = t0 + 999
      #expect(try await updateClaimedDownload(store, entry, owner: "b", lease: 60, at: t0 + 1) == false, "not b's")
      #expect(try await store.download(id: queued.id)?.bytesWritten == 0)
      #expect(try await updateClaimedDownload(store, entry, owner: "a", lease: 60, at: t0 + 1))
      var stored = try #require(try await store.download(id: queued.id))
      #expect(stored.state == .claimed && stored.name == "report.pdf" && stored.bytesWritten == 1_024)
      #expect(stored.totalSize == 4_096 && stored.etag == "\"v1\"" && stored.lastModified == "Tue, 14 Nov 2023 22:13:20 GMT")
      #expect(stored.url == queued.url && stored.folder == queued.folder && stored.source == "feed")
      #expect(stored.createdAt == t0 && stored.updatedAt == t0 + 1)
      // The renewed lease holds past the first one.
      #expect(try await claimDownloads(store, owner: "c", at: t0 + 60.5).isEmpty)

      entry.state = .done
      entry.bytesWritten = 4_096
      entry.path = "/srv/data/report.pdf"
      entry.sha256 = String(repeating: "ef", count: 32)
      entry.finishedAt = t0 + 2
      #expect(try await updateClaimedDownload(store, entry, owner: "a", lease: nil, at: t0 + 2))
      stored = try #require(try await store.download(id: queued.id))
      #expect(stored.state == .done && stored.path == "/srv/data/report.pdf" && stored.finishedAt == t0 + 2)
      #expect(stored.sha256 == entry.sha256 && stored.bytesWritten == 4_096)
      // Ended: no longer a's to write.
      #expect(try await updateClaimedDownload(store, entry, owner: "a", lease: nil, at: t0 + 3) == false)
      #expect(try await claimDownloads(store, owner: "c", at: t0 + 100).isEmpty, "a done download is not claimed")
    }
  }

  /// Releases put claims back in the queue, bytes written kept: one owner's,
  /// only some ids, or all; a released claim's holder can no longer write.
  @Test(arguments: StoreKind.all) func test_release_byOwner_byIDs_andAll_keepsBytes(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      var ids: [Int64] = []
      for n in 1...4 { ids.append(try await store.enqueueDownload(Self.request(n), repeat: .keep, now: t0).id) }
      let a = try await claimDownloads(store, limit: 2, owner: "a", at: t0)
      let b = try await claimDownloads(store, limit: 2, owner: "b", at: t0)
      var progress = a[0]
      progress.bytesWritten = 512
      #expect(try await updateClaimedDownload(store, progress, owner: "a", lease: 60, at: t0))

      try await releaseDownloads(store, owner: "a", ids: [ids[1]])
      #expect(try await store.downloads(state: .queued, limit: 10).map(\.id) == [ids[1]])
      try await releaseDownloads(store, owner: "b")
      #expect(try await store.downloads(state: .queued, limit: 10).map(\.id) == [ids[1]] + b.map(\.id))
      try await releaseDownloads(store, owner: "a", ids: [])
      #expect(try await store.downloads(state: .claimed, limit: 10).map(\.id) == [ids[0]])
      try await releaseDownloads(store, owner: nil)
      #expect(try await store.downloads(state: .claimed, limit: 10).isEmpty)
      #expect(try await store.download(id: ids[0])?.bytesWritten == 512)
      #expect(try await updateClaimedDownload(store, progress, owner: "a", lease: 60, at: t0 + 1) == false)
      #expect(try await claimDownloads(store, limit: 10, owner: "c", at: t0 + 1).map(\.id) == ids)
    }
  }

  @Test(arguments: StoreKind.all) func test_downloads_byState_oldestFirst_uptoTheLimit(_ kind: StoreKind) async throws {
    try await withStore(kind) { store in
      var ids: [Int64] = []
      for n in 1...4 { ids.append(try await store.enqueueDownload(Self.request(n), repeat: .keep, now: t0 + Double(n)).id) }
      _ = try await settle(store, ids[1], .failed) { $0.lastError = "HTTP 404" }
      _ = try await settle(store, ids[3], .done)
      #expect(try await store.downloads(state: nil, limit: 10).map(\.id) == ids)
      #expect(try await store.downloads(state: nil, limit: 2).map(\.id) == Array(ids[0..<2]))
      #expect(try await store.downloads(state: .queued, limit: 10).map(\.id) == [ids[0], ids[2]])
      #expect(try await store.downloads(state: .failed, limit: 10).map(\.lastError) == ["HTTP 404"])
      #expect(try await store.downloads(state: .done, limit: 10).map(\.id) == [ids[3]])
      #expect(try await store.downloads(state: .claimed, limit: 10).isEmpty)
      #expect(try await store.downloads(state: nil, limit: 0).isEmpty)
    }
  }
}
