import Foundation
import Testing

@testable import ForageTestSupport

@Suite struct DemoSiteTests {
  /// Decodes the few character references the demo site uses.
  func decode(_ html: String) -> String {
    var text = html
    for (reference, character) in [("&eacute;", "é"), ("&egrave;", "è"), ("&#251;", "û"), ("&#39;", "'"), ("&#36;", "$"),
                                   ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")] {
      text = text.replacingOccurrences(of: reference, with: character)
    }
    return text
  }

  /// The text between the first `open` (case-insensitive) and the next `<`.
  func text(after open: String, in html: String) -> String? {
    guard let start = html.range(of: open, options: .caseInsensitive) else { return nil }
    let rest = html[start.upperBound...]
    return String(rest[..<(rest.firstIndex(of: "<") ?? rest.endIndex)])
  }

  /// `href` values of `<a>` tags, quoted or not, outside comments.
  func links(in html: String) -> [String] {
    var html = html
    while let start = html.range(of: "<!--"), let end = html.range(of: "-->", range: start.upperBound..<html.endIndex) {
      html.removeSubrange(start.lowerBound..<end.upperBound)
    }
    var result: [String] = []
    var rest = html[...]
    while let a = rest.range(of: "href=", options: .caseInsensitive) {
      rest = rest[a.upperBound...]
      if rest.first == "\"" {
        rest = rest.dropFirst()
        let end = rest.firstIndex(of: "\"") ?? rest.endIndex
        result.append(String(rest[..<end]))
      } else {
        let end = rest.firstIndex(where: { $0 == " " || $0 == ">" }) ?? rest.endIndex
        result.append(String(rest[..<end]))
      }
    }
    return result.map { $0.replacingOccurrences(of: "&amp;", with: "&") }
  }

  @Test func test_sameSeed_givesTheSamePages_otherSeedsDiffer() {
    let a = DemoSite(products: 50, seed: 7)
    let b = DemoSite(products: 50, seed: 7)
    let c = DemoSite(products: 50, seed: 8)
    #expect(a.response(for: "/product/3")?.body == b.response(for: "/product/3")?.body)
    #expect(a.response(for: "/category/1")?.body == b.response(for: "/category/1")?.body)
    #expect((1...50).contains { a.expectedProduct($0).title != c.expectedProduct($0).title })
  }

  @Test(arguments: [DemoSite.Layout.dynamic, .staticFiles])
  func test_productPages_holdTheExpectedProduct(layout: DemoSite.Layout) throws {
    let site = DemoSite(products: 300, seed: 3, layout: layout)
    for n in 1...site.productCount {
      let html = String(decoding: try #require(site.response(for: site.productPath(n))).body, as: UTF8.self)
      let expected = site.expectedProduct(n)
      #expect(decode(text(after: "class=\"product-title\">", in: html) ?? "") == expected.title, "product \(n)")
      let price = text(after: "class=\"price\">", in: html) ?? text(after: "class=price>", in: html)
      #expect(decode(price ?? "") == expected.price, "product \(n)")
      #expect(html.contains("data-sku=\"\(expected.sku)\"") || html.contains("DATA-SKU=\(expected.sku)>"))
      #expect(expected.sku == "SKU-\(n)")
    }
  }

  @Test func test_html_isMessyOnPurpose() throws {
    let site = DemoSite(products: 100, seed: 1)
    let pages = (1...100).map { String(decoding: site.response(for: "/product/\($0)")!.body, as: UTF8.self) }
    #expect(pages.contains { $0.contains("<H1 CLASS=") })
    #expect(pages.contains { $0.contains("<DIV CLASS=product DATA-SKU=") })
    #expect(pages.contains { $0.contains("&eacute;") || $0.contains("&#39;") })
    #expect(pages.contains { $0.contains("&amp;") })
    #expect(pages.allSatisfy { $0.contains("<!-- <a href=") })
  }

  @Test(arguments: [DemoSite.Layout.dynamic, .staticFiles])
  func test_everyProduct_isReachableFromTheHomePage(layout: DemoSite.Layout) throws {
    let site = DemoSite(products: 250, seed: 5, layout: layout)
    let origin = "http://127.0.0.1:1"
    var seen: Set<String> = ["/"]
    var queue = ["/"]
    var notFound: Set<String> = []
    var utmLinks = 0
    var fragmentLinks = 0
    while let path = queue.popLast() {
      guard let response = site.response(for: path, origin: origin) else {
        notFound.insert(path)
        continue
      }
      guard response.header("content-type")?.hasPrefix("text/html") == true else { continue }
      let base = URL(string: origin + path)!
      for href in links(in: String(decoding: response.body, as: UTF8.self)) {
        if href.contains("utm_") { utmLinks += 1 }
        if href.contains("#") { fragmentLinks += 1 }
        guard let url = URL(string: href, relativeTo: base)?.absoluteURL, url.absoluteString.hasPrefix(origin + "/")
        else { continue }
        var target = url.path
        if url.absoluteString.hasPrefix(origin + "/") && url.absoluteString.hasSuffix("/") && !target.hasSuffix("/") { target += "/" }
        if let query = url.query, !query.hasPrefix("utm_") { target += "?" + query }
        if seen.insert(target).inserted { queue.append(target) }
      }
    }
    for n in 1...site.productCount { #expect(seen.contains(site.productPath(n)), "product \(n)") }
    for path in site.pagePaths where path != "/robots.txt" { #expect(seen.contains(path), "\(path)") }
    #expect(notFound.contains("/discontinued/1"))
    #expect(notFound.contains(site.productPath(site.productCount + 1)))
    #expect(utmLinks > 0)
    #expect(fragmentLinks > 0)
  }

  @Test func test_outOfRangeTargets_areNotPartOfTheSite() {
    let site = DemoSite(products: 10, seed: 1)
    #expect(site.response(for: "/product/0") == nil)
    #expect(site.response(for: "/product/11") == nil)
    #expect(site.response(for: "/category/1?page=99") == nil)
    #expect(site.response(for: "/product/3.html") == nil)
    #expect(site.response(for: "/product/3#reviews") != nil)
  }

  @Test func test_robotsTxt_disallowsPrivate() throws {
    let body = try #require(DemoSite().response(for: "/robots.txt")).body
    #expect(String(decoding: body, as: UTF8.self).contains("Disallow: /private/"))
  }

  @Test func test_server_servesTheSite_withAbsoluteLinksOnItsOrigin() throws {
    let site = DemoSite(products: 40, seed: 2)
    let server = try TestServer(site: site)
    defer { server.stop() }
    let home = try fetch(server.port, "/")
    #expect(home.status == 200)
    #expect(home.bodyText.contains("Forage Demo Shop"))
    let product = try fetch(server.port, "/product/9")
    #expect(product.bodyText.contains(site.expectedProduct(9).sku))
    #expect(product.bodyText.contains("href=\"\(server.baseURL)/product/9\""))  // canonical
    #expect(try fetch(server.port, "/discontinued/1").status == 404)
  }

  @Test func test_writeStaticSite_writesTheSameSite_servedFromFiles() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("forage-site-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try DemoSite.writeStaticSite(to: folder, products: 120, seed: 4)
    let site = DemoSite(products: 120, seed: 4, layout: .staticFiles)
    let server = try TestServer(directory: folder)
    defer { server.stop() }
    for path in site.pagePaths {
      let response = try fetch(server.port, path)
      #expect(response.status == 200, "\(path)")
      #expect(response.body == site.response(for: path)?.body, "\(path)")
    }
    #expect(try fetch(server.port, site.productPath(121)).status == 404)
  }

  @Test func test_writeStaticSite_handlesTenThousandProducts() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("forage-site-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try DemoSite.writeStaticSite(to: folder, products: 10_000, seed: 1)
    let products = try FileManager.default.contentsOfDirectory(atPath: folder + "/product")
    #expect(products.count == 10_000)
    let html = try String(contentsOfFile: folder + "/product/10000.html", encoding: .utf8)
    #expect(html.contains("SKU-10000"))
  }
}
