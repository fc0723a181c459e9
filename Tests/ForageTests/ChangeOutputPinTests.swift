import Foundation
import ForageStore
import Testing

@testable import Forage

/// The exact text every reader of a change's field diffs writes: `forage
/// changes` (lines and `--json`), a notification's document, the report's
/// list of changes, and a JSON Lines export. Pinned byte for byte, so that
/// how the diffs are found can change without what users see changing.
@Suite struct ChangeOutputPinTests {
  static let at = Date(timeIntervalSince1970: 1_764_580_000)
  static let long = "The lamp has a long cord and a linen shade; it stands on a walnut base and lights a small room well."
  static let longer = "The lamp has a short cord and a linen shade; it stands on a walnut base and lights a large room well."

  /// A changed record: a number changed, a field added, one dropped, a
  /// nested value changed, long text reworded, a key needing escapes, and
  /// a field whose value did not change.
  static let before =
    "{\"title\":\"Lamp\",\"price\":12.5,\"old\":true,\"dims\":{\"h\":30,\"w\":[1,2]},\"note\":\"\(long)\",\"a\\\"b\":null}"
  static let after =
    "{\"title\":\"Lamp\",\"price\":10,\"stock\":\"3 left\",\"dims\":{\"h\":31,\"w\":[1,2]},\"note\":\"\(longer)\",\"a\\\"b\":\"x\\ny\"}"

  static func change(_ kind: ChangeKind, before: String?, after: String?) -> RecordChange {
    RecordChange(
      id: 42, source: "shop", key: "lamp", kind: kind, url: "https://example.com/lamp", beforeJSON: before,
      afterJSON: after, at: at, run: 7)
  }

  @Test func test_changeLines_ofChangedNewAndRemovedRecords() {
    let changed = ChangeText.lines(Self.change(.changed, before: Self.before, after: Self.after))
    #expect(
      changed == [
        "2025-12-01 09:06:40Z  changed  shop  lamp  https://example.com/lamp",
        "  price: 12.5 → 10",
        #"  stock: (none) → "3 left""#,
        #"  dims: {"h":30,"w":[1,2]} → {"h":31,"w":[1,2]}"#,
        "  note: The lamp has a [-long -]{+short +}cord and a linen shade; it stands on a walnut base and lights a "
          + "[-small -]{+large +}room well.",
        #"  a"b: null → "x\ny""#,
        "  old: true → (none)",
      ])
    let new = ChangeText.lines(Self.change(.new, before: nil, after: #"{"b":[1,"two"],"a":null}"#))
    #expect(new == ["2025-12-01 09:06:40Z  new  shop  lamp  https://example.com/lamp", #"  b: [1,"two"]"#, "  a: null"])
    let removed = ChangeText.lines(Self.change(.removed, before: #"{"b":1,"a":"x"}"#, after: nil))
    #expect(removed == ["2025-12-01 09:06:40Z  removed  shop  lamp  https://example.com/lamp", "  b: 1", #"  a: "x""#])
  }

  @Test func test_changeJSON_ofAChangedRecord() {
    let json = ChangeText.json(Self.change(.changed, before: #"{"p":1,"q":[2],"r":"s"}"#, after: #"{"p":1.5,"q":[2],"t":{}}"#))
    #expect(
      json
        == #"{"id":42,"kind":"changed","source":"shop","key":"lamp","url":"https://example.com/lamp","#
        + #""at":"2025-12-01T09:06:40.000Z","run":7,"before":{"p":1,"q":[2],"r":"s"},"after":{"p":1.5,"q":[2],"t":{}},"#
        + #""changes":[{"field":"p","before":1,"after":1.5},{"field":"t","before":null,"after":{}},"#
        + #"{"field":"r","before":"s","after":null}]}"#)
  }

  @Test func test_notificationDocument_ofAChangedRecord() {
    let doc = NotificationPayload.document(
      id: "msg_1", change: Self.change(.changed, before: #"{"p":1,"q":[2],"r":"s"}"#, after: #"{"p":1.5,"q":[2],"t":{}}"#))
    #expect(
      doc.serialized()
        == #"{"type":"record.changed","id":"msg_1","source":"shop","key":"lamp","url":"https://example.com/lamp","#
        + #""at":"2025-12-01T09:06:40.000Z","before":{"p":1,"q":[2],"r":"s"},"after":{"p":1.5,"q":[2],"t":{}},"#
        + #""changes":[{"field":"p","before":1,"after":1.5},{"field":"t","before":null,"after":{}},"#
        + #"{"field":"r","before":"s","after":null}]}"#)
    let new = NotificationPayload.document(id: "m", change: Self.change(.new, before: nil, after: #"{"b":"x","a":2}"#))
    #expect(
      new.serialized()
        == #"{"type":"record.new","id":"m","source":"shop","key":"lamp","url":"https://example.com/lamp","#
        + #""at":"2025-12-01T09:06:40.000Z","before":null,"after":{"b":"x","a":2},"#
        + #""changes":[{"field":"b","before":null,"after":"x"},{"field":"a","before":null,"after":2}]}"#)
  }

  /// One crawl gives two records, the next changes one and no longer
  /// gives the other: the report lists the new, changed and removed ones.
  @Test func test_reportChangesSection_ofNewChangedAndRemovedRecords() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    func crawl(_ records: [(key: String, fields: String, hash: UInt64)], at now: Date) async throws {
      let crawl = try await store.openCrawl(
        source: "s", seeds: [FrontierSeed(url: "https://x.org/", fingerprint: 1, depth: 0)], now: now)
      let item = try #require(
        try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "o", for: .seconds(60), at: now)).first)
      let inputs = records.map {
        RecordInput(source: "s", key: $0.key, url: "https://x.org/", fieldsJSON: $0.fields, contentHash: $0.hash)
      }
      _ = try await store.commit([PageCommit(item: item, outcome: .done, records: inputs, now: now)])
      _ = try await store.completeCrawl(crawl.id, maxPages: nil, router: nil, now: now)
    }
    try await crawl([("a", Self.before, 1), ("b", #"{"name":"Bowl <b>","n":[1]}"#, 2)], at: Self.at)
    try await crawl([("a", Self.after, 3)], at: Self.at + 60)
    let html = try await HTMLReport.render(store: store, now: Self.at + 120)
    let start = try #require(html.range(of: "<section id=\"changes\">"))
    let end = try #require(html.range(of: "</section>", range: start.upperBound..<html.endIndex))
    let section = String(html[start.lowerBound..<end.upperBound])
    let changed = """
      <article class="change">
      <div class="head"><span class="badge k-changed">changed</span> <b class="name">s</b> <code class="key">a</code> \
      <time class="muted">2025-12-01 09:07:40Z</time></div>
      <div class="url">https://x.org/</div>
      <table class="diff"><tbody>
      <tr><th>price</th><td><del>12.5</del> → <ins>10</ins></td></tr>
      <tr><th>stock</th><td><del>(none)</del> → <ins>3 left</ins></td></tr>
      <tr><th>dims</th><td><del>{&quot;h&quot;:30,&quot;w&quot;:[1,2]}</del> → <ins>{&quot;h&quot;:31,&quot;w&quot;:[1,2]}</ins></td></tr>
      <tr><th>note</th><td><div class="words">The lamp has a <del>long </del><ins>short </ins>cord and a linen shade; \
      it stands on a walnut base and lights a <del>small </del><ins>large </ins>room well.</div></td></tr>
      <tr><th>a&quot;b</th><td><del>null</del> → <ins>x
      y</ins></td></tr>
      <tr><th>old</th><td><del>true</del> → <ins>(none)</ins></td></tr>
      </tbody></table>
      </article>

      """
    let removed = """
      <article class="change">
      <div class="head"><span class="badge k-removed">removed</span> <b class="name">s</b> <code class="key">b</code> \
      <time class="muted">2025-12-01 09:07:40Z</time></div>
      <div class="url">https://x.org/</div>
      <p class="fields"><span><span class="fn">name</span> <del>Bowl &lt;b&gt;</del></span> \
      <span><span class="fn">n</span> <del>[1]</del></span></p>
      </article>

      """
    let newB = """
      <article class="change">
      <div class="head"><span class="badge k-new">new</span> <b class="name">s</b> <code class="key">b</code> \
      <time class="muted">2025-12-01 09:06:40Z</time></div>
      <div class="url">https://x.org/</div>
      <p class="fields"><span><span class="fn">name</span> <ins>Bowl &lt;b&gt;</ins></span> \
      <span><span class="fn">n</span> <ins>[1]</ins></span></p>
      </article>

      """
    #expect(section.contains(changed), "\(section)")
    #expect(section.contains(removed), "\(section)")
    #expect(section.contains(newB), "\(section)")
    #expect(section.components(separatedBy: "<article").count == 5)
  }

  @Test func test_jsonlExport_writesEachRecordsFieldsAsStored() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let crawl = try await store.openCrawl(
      source: "s", seeds: [FrontierSeed(url: "https://x.org/", fingerprint: 1, depth: 0)], now: Self.at)
    let item = try #require(
      try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "o", for: .seconds(60), at: Self.at)).first)
    let records = [
      RecordInput(source: "s", key: "a", url: "https://x.org/a", fieldsJSON: Self.after, contentHash: 1),
      RecordInput(
        source: "s", key: "b\"", url: "https://x.org/b", fieldsJSON: #"{"n":-0.5,"big":1e+20,"e":"\u001f"}"#,
        contentHash: 2),
    ]
    _ = try await store.commit([PageCommit(item: item, outcome: .done, records: records, now: Self.at)])
    var text = ""
    try await Exporter(store: store).export(format: .jsonl) { text += $0 }
    let dates = #""firstSeen":"2025-12-01T09:06:40.000Z","lastSeen":"2025-12-01T09:06:40.000Z"}"#
    #expect(
      text
        == #"{"source":"s","key":"a","url":"https://x.org/a","fields":"# + Self.after + "," + dates + "\n"
        + #"{"source":"s","key":"b\"","url":"https://x.org/b","fields":{"n":-0.5,"big":1e+20,"e":"\u001f"},"#
        + dates + "\n")
  }
}
