import Foundation
import Forage
import ForageHTTP
import ForageStore
import ForageSupport
import ForageTestSupport
import Testing

/// Issue 25: `forage run --task P` of a processing task whose feed source
/// has `downloadEnclosures` downloads them, as the daemon's launch does
/// (one code path: `TaskRunner.afterCrawl`).
@Suite struct Issue25RunDownloadsTests {
  @Test func test_issue25_runOfAProcessingTaskDownloadsEnclosures_asTheDaemonDoes() async throws {
    let pod = try PodcastSite()
    defer { pod.stop() }
    let (audio, server, store, config, dir) = (pod.audio, pod.server, pod.store, pod.config, pod.dir)
    let engine = Engine(config: config, store: store, transport: CurlTransport())
    let logged = Locked<[String]>([])
    let summary = try await engine.run(task: "t.pod", log: { line in logged.withLock { $0.append(line) } })
    #expect(summary.pagesFetched == 1)
    #expect(folderListing(dir.file("episodes")) == ["ep1.mp3"], "\(logged.withLock { $0 })")
    #expect(same(fileBytes(dir.file("episodes/ep1.mp3")), audio))
    #expect(try await store.downloads(state: .done, limit: 10).map(\.source) == ["pod"])
    #expect(server.requestCount(path: "/notes.pdf") == 0)
    #expect(logged.withLock { $0 }.isEmpty)
  }
}
