import Foundation
import Testing
@testable import ForageTestSupport

@Suite struct LiveDemoShopTests {
  @Test func test_dayZero_isTheSiteAsItWas_laterDaysChangePricesAndDropProducts() {
    let site = DemoSite(products: 300, seed: 1)
    #expect(site.on(day: 0).expectedProduct(7) == site.expectedProduct(7))
    let day3 = site.on(day: 3)
    let changed = (1...300).filter { day3.expectedProduct($0).price != site.expectedProduct($0).price }
    let gone = (1...300).filter { day3.isDiscontinued($0) }
    // About one in eight a day changes price; about three in a hundred a day go away.
    #expect(changed.count > 30 && changed.count < 200)
    #expect(!gone.isEmpty && gone.count < 60)
    #expect(day3.response(for: site.productPath(gone[0])) == nil)
    #expect(site.response(for: site.productPath(gone[0])) != nil)
    // The same day is the same shop.
    #expect(site.on(day: 3).expectedProduct(changed[0]) == day3.expectedProduct(changed[0]))
  }

  @Test func test_shopFollowsItsClock_andTheFeedGrows() throws {
    let start = Date(timeIntervalSince1970: 1_767_571_200)
    let shop = try LiveDemoShop(products: 40, start: start)
    defer { shop.stop() }
    func get(_ path: String) throws -> (Int, String) {
      let client = try RawClient(port: shop.server.port)
      client.request(path)
      let response = try #require(client.readResponse())
      return (response.status, response.bodyText)
    }
    let early = try get("/news.xml").1
    shop.setTime(start.addingTimeInterval(2 * 86_400 + 1))
    let later = try get("/news.xml").1
    #expect(early.components(separatedBy: "<item>").count == 2)
    #expect(later.components(separatedBy: "<item>").count == 8)
    // Time does not go back.
    shop.setTime(start)
    #expect(shop.time == start.addingTimeInterval(2 * 86_400 + 1))
    let day2 = shop.site.on(day: 2)
    let n = (1...40).first { !day2.isDiscontinued($0) }!
    let (status, body) = try get(shop.site.productPath(n))
    #expect(status == 200)
    #expect(body.contains(String(day2.expectedProduct(n).price.dropFirst())))
  }
}
