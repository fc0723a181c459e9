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
    let audio = patternedBytes(40_000)
    let server = try TestServer(routes: [
      "/ep1.mp3": ServedFile(audio).route,
      "/notes.pdf": ServedFile([1, 2, 3]).route,
    ])
    defer { server.stop() }
    let rss = """
      <?xml version="1.0"?><rss version="2.0"><channel><title>Pod</title>
      <item><guid>1</guid><title>One</title><enclosure url="\(server.url("/ep1.mp3"))" type="audio/mpeg" length="1"/></item>
      <item><guid>2</guid><title>Notes</title><enclosure url="\(server.url("/notes.pdf"))" type="application/pdf" length="3"/></item>
      </channel></rss>
      """
    let feedServer = try TestServer(routes: ["/rss": Route { _ in .text(rss) }])
    defer { feedServer.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var source = Source(name: "pod", feed: feedServer.url("/rss"))
    source.downloadEnclosures = EnclosureDownloads(folder: "episodes", types: ["audio/*"])
    var config = ForageConfig(
      fetch: noDelayFetch(),
      tasks: [TaskDefinition(id: "t.pod", kind: .processing, every: .seconds(3600), budget: .seconds(60),
                             requiresNetwork: false, sources: ["pod"])],
      sources: [source])
    config.directory = dir.path
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
