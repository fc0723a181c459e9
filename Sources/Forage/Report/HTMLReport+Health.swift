import Foundation
import ForageStore

/// The report's extraction health (issue 29): per source, each crawl's
/// record count and field coverage, the crawls that held changes, and the
/// episodes of held changes marked from their start to their end.
extension Report {
  /// Where on a source's health chart (1000 wide, one slot per crawl,
  /// oldest first) an episode starts and ends.
  struct EpisodeSpan {
    var start: Double
    var end: Double
  }

  /// The x of the slot of the first crawl of `crawls` (oldest first) from
  /// crawl `id` on: its centre; or, with `after`, the left edge of the
  /// first crawl after `id` (an acceptance comes between crawls). The
  /// right edge when there is none.
  static func healthX(crawl id: Int64, in crawls: [CrawlHealth], slot: Double, after: Bool = false) -> Double {
    guard let i = crawls.firstIndex(where: { after ? $0.crawl > id : $0.crawl >= id }) else { return 1000 }
    return Double(i) * slot + (after ? 0 : slot / 2)
  }

  /// An episode's span, placed by the crawls it started and ended at (not
  /// by dates: a clock that stood still or went back between crawls would
  /// misplace it).
  static func span(of e: HealthEpisode, in crawls: [CrawlHealth], slot: Double) -> EpisodeSpan {
    let start = healthX(crawl: e.startCrawl, in: crawls, slot: slot)
    let end = e.endCrawl.map { healthX(crawl: $0, in: crawls, slot: slot, after: e.resolution == .accepted) } ?? 1000
    return EpisodeSpan(start: start, end: max(start, end))
  }

  /// One line about an episode: when, what, the evidence, what it held, how it ended.
  static func episodeText(_ e: HealthEpisode) -> (when: String, what: String, end: String) {
    let kind: String
    switch e.kind {
    case .removals: kind = "removals held"
    case .pages: kind = "pages no longer match"
    case .field: kind = "field coverage collapsed"
    }
    let when = "from \(dateText(e.startedAt)) " + (e.endedAt.map { "to \(dateText($0))" } ?? "(open)")
    let end: String
    switch e.resolution {
    case .recovered?: end = "Ended: a later crawl was healthy; what it held that was real was applied."
    case .accepted?: end = "Ended: the held changes were accepted (forage health accept)."
    case nil:
      end = "Open: holding \(e.held) change\(e.held == 1 ? "" : "s") until a healthy crawl or forage health accept."
    }
    return (when, "\(kind): \(e.evidence)", end)
  }

  func healthSection() -> String {
    var h = "<section id=\"health\">\n<h2>Extraction health</h2>\n"
    h += "<p class=\"muted\">Each source's last crawls, oldest first: the records its pages gave (bars; a crawl that "
    h += "held changes in red) and each field's coverage, the share of records with it (lines, 0 to 100%). A shaded "
    h += "band marks an episode of held changes, from the crawl that found it to the one that ended it.</p>\n"
    let sources = status.sources.map(\.name).filter { name in
      !(crawlHealth[name] ?? []).isEmpty || episodes.contains { $0.source == name }
    }
    if sources.isEmpty { return h + "<p>No crawl has read pages for health yet.</p>\n</section>\n" }
    for source in sources {
      let crawls = Array((crawlHealth[source] ?? []).reversed())
      let mine = episodes.filter { $0.source == source }.sorted { $0.startedAt < $1.startedAt }
      var facts = "\(crawls.count) crawl\(crawls.count == 1 ? "" : "s")"
      if let last = crawls.last { facts += ", last: \(last.records) records" }
      if mine.contains(where: \.isOpen) { facts += ", changes held now" }
      h += "<div class=\"row\">\n<div class=\"label\"><b class=\"name\">\(esc(source))</b>"
      h += "<div class=\"muted\">\(esc(facts))</div></div>\n<div>\n"
      let top = Double(max(1, crawls.map(\.records).max() ?? 1))
      let slot = 1000 / Double(max(options.launchesPerSource, crawls.count, 1))
      h += "<div class=\"scale\">top: \(Int(top)) records</div>"
      h += "<svg class=\"chart\" viewBox=\"0 0 1000 100\" preserveAspectRatio=\"none\" role=\"img\" "
      h += "aria-label=\"records and field coverage of \(esc(source))\"><rect class=\"lane\" x=\"0\" y=\"0\" "
      h += "width=\"1000\" height=\"100\"/>"
      for e in mine {
        let s = Report.span(of: e, in: crawls, slot: slot)
        h += "<g class=\"episode\" data-episode=\"\(e.id)\"><title>\(esc(Report.episodeText(e).when))</title>"
        h += "<rect class=\"ep-band\" x=\"\(coord(s.start))\" y=\"0\" width=\"\(coord(max(2, s.end - s.start)))\" height=\"100\"/>"
        h += "<line class=\"ep-start\" vector-effect=\"non-scaling-stroke\" x1=\"\(coord(s.start))\" y1=\"0\" "
        h += "x2=\"\(coord(s.start))\" y2=\"100\"/>"
        if e.endedAt != nil {
          h += "<line class=\"ep-end\" vector-effect=\"non-scaling-stroke\" x1=\"\(coord(s.end))\" y1=\"0\" "
          h += "x2=\"\(coord(s.end))\" y2=\"100\"/>"
        }
        h += "</g>"
      }
      for (i, c) in crawls.enumerated() {
        let height = Double(c.records) / top * 96
        let held = c.healthy == false
        var title = "crawl \(c.crawl) \(dateText(c.startedAt)): \(c.records) records"
        if c.lostPages > 0 { title += ", \(c.lostPages) pages matched nothing" }
        if held { title += ", held changes" }
        for name in c.fields.keys.sorted() {
          if let share = c.share(name) { title += ", \(name) \(Int((share * 100).rounded()))%" }
        }
        h += "<g class=\"crawl\"><title>\(esc(title))</title><rect class=\"\(held ? "h-held" : "h-records")\" "
        h += "x=\"\(coord(Double(i) * slot + slot * 0.2))\" y=\"\(coord(100 - height))\" width=\"\(coord(slot * 0.6))\" "
        h += "height=\"\(coord(height))\"/></g>"
      }
      let fields = Set(crawls.flatMap(\.fields.keys)).sorted()
      for name in fields {
        let points = crawls.enumerated().compactMap { i, c in
          c.share(name).map { "\(coord(Double(i) * slot + slot / 2)),\(coord(98 - $0 * 96))" }
        }
        guard !points.isEmpty else { continue }
        h += "<g class=\"coverage\"><title>\(esc("coverage of \(name)"))</title>"
        h += "<polyline class=\"cov\" vector-effect=\"non-scaling-stroke\" points=\"\(points.joined(separator: " "))\"/></g>"
      }
      h += "</svg>\n"
      if !fields.isEmpty {
        h += "<div class=\"muted\">Coverage, last crawl: "
        h += fields.map { name in
          "\(esc(name)) " + (crawls.last?.share(name).map { "\(Int(($0 * 100).rounded()))%" } ?? "none")
        }.joined(separator: ", ")
        h += "</div>\n"
      }
      if !mine.isEmpty {
        h += "<ul class=\"episodes\">\n"
        for e in mine.reversed() {
          let t = Report.episodeText(e)
          h += "<li class=\"episode\(e.isOpen ? " open" : "")\" data-episode=\"\(e.id)\"><b>\(esc(t.when))</b>: "
          h += "\(esc(t.what)). \(esc(t.end))"
          if !e.examples.isEmpty {
            h += " <span class=\"muted\">For example: </span>"
            h += e.examples.map { "<span class=\"url\">\(esc($0))</span>" }.joined(separator: ", ")
          }
          h += "</li>\n"
        }
        h += "</ul>\n"
      }
      h += "</div>\n</div>\n"
    }
    return h + "</section>\n"
  }
}
