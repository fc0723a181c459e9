import ForageSupport
import Foundation

/// The demo shop as time passes, for `forage demo`: product pages from a
/// ``DemoSite`` on the day of its life that the (simulated) clock has reached,
/// so prices change and products go away, and a news feed at `/news.xml`
/// with an entry every eight hours up to that time. While the clock is in
/// `redesignedDuring` the shop is redesigned (see ``DemoSite/redesigned``).
///
///     let shop = try LiveDemoShop(products: 60, start: start)
///     shop.setTime(start + 36 * 3600)    // day 1: some prices changed
///     // crawl shop.baseURL … and shop.feedURL
public final class LiveDemoShop: Sendable {
  /// The site on day 0.
  public let site: DemoSite
  /// Day 0 begins here.
  public let start: Date
  let server: TestServer
  private let now: Locked<Date>

  /// While the shop's clock is in this span, the product pages are redesigned.
  public let redesignedDuring: Range<Date>?

  /// Starts serving on 127.0.0.1 (`port` 0: a free one), at `start`;
  /// redesigned while its clock is in `redesignedDuring`.
  ///
  /// - Throws: ``TestServerError`` when the socket cannot be set up.
  public init(
    products: Int = 60, seed: UInt64 = 1, start: Date, port: UInt16 = 0, redesignedDuring: Range<Date>? = nil
  ) throws {
    let site = DemoSite(products: products, seed: seed)
    let now = Locked(start)
    let origin = Locked("")
    self.site = site
    self.start = start
    self.now = now
    self.redesignedDuring = redesignedDuring
    server = try TestServer(
      routes: [
        "/news.xml": Route { _ in
          TestResponse(
            status: 200, headers: [("Content-Type", "application/rss+xml; charset=utf-8")],
            body: Array(LiveDemoShop.news(site: site, start: start, until: now.withLock { $0 }).utf8))
        },
        "/*": Route { request in
          let time = now.withLock { $0 }
          let day = Int(max(0, time.timeIntervalSince(start)) / 86_400)
          var shown = site.on(day: day)
          shown.redesigned = redesignedDuring?.contains(time) ?? false
          return shown.response(for: request.target, origin: origin.withLock { $0 })
            ?? .notFound(request.path)
        },
      ], port: port)
    let base = server.baseURL
    origin.withLock { $0 = base }
  }

  /// `http://127.0.0.1:PORT`.
  public var baseURL: String { server.baseURL }

  /// The news feed's URL.
  public var feedURL: String { server.url("/news.xml") }

  /// Moves the shop's clock: later requests see the site on that day.
  public func setTime(_ date: Date) { now.withLock { $0 = max($0, date) } }

  /// The shop's current time.
  public var time: Date { now.withLock { $0 } }

  /// Stops serving.
  public func stop() { server.stop() }

  /// An RSS 2.0 feed with an entry every eight hours from `start` up to
  /// `until`, newest first, at most 20.
  static func news(site: DemoSite, start: Date, until: Date) -> String {
    let slots = Int(max(0, until.timeIntervalSince(start)) / (8 * 3600))
    var items = ""
    for k in stride(from: slots, through: max(0, slots - 19), by: -1) {
      let day = k / 3
      let n = (k * 37) % site.productCount + 1
      let product = site.on(day: day).expectedProduct(n)
      let date = start.addingTimeInterval(Double(k) * 8 * 3600)
      items += """
        <item><title>\(LiveDemoShop.escape("Day \(day + 1): \(product.title) now \(product.price)"))</title>
        <link>\(site.productPath(n))</link><guid isPermaLink="false">news-\(k)</guid>
        <pubDate>\(LiveDemoShop.rfc822(date))</pubDate></item>

        """
    }
    return """
      <?xml version="1.0" encoding="utf-8"?>
      <rss version="2.0"><channel><title>\(DemoSite.siteName) news</title><link>/</link>
      <description>What changed in the shop</description>
      \(items)</channel></rss>

      """
  }

  static func escape(_ s: String) -> String { MarkupText.escaped(s, quotes: .none) }

  static func rfc822(_ date: Date) -> String { HTTPDate.format(Int(date.timeIntervalSince1970)) }
}
