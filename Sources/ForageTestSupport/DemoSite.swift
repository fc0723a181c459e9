import ForageSupport

/// A deterministic generated shop site, served from memory: the same `products` and
/// `seed` always give the same pages, byte for byte.
///
///     let site = DemoSite(products: 200, seed: 1)
///     let server = try TestServer(site: site)
///     // crawl server.url("/") … then compare each record with
///     site.expectedProduct(42)   // (title: "…", price: "$…", sku: "SKU-42")
///
/// Pages (``Layout/dynamic``; ``Layout/staticFiles`` uses file names, see ``Layout``):
/// - `/`: the home page, listing categories and a few featured products.
/// - `/category/C` and `/category/C?page=K`: listings of 20 products with pagination.
/// - `/product/N` for N in 1…products: `<div class="product" data-sku="SKU-N">` holding
///   `<h1 class="product-title">` and `<span class="price">`.
/// - `/about`, `/private/staff` (disallowed by `/robots.txt`), `/robots.txt`.
///
/// The HTML is messy on purpose, as real shops are: unclosed `<p>` and `<li>`, upper-case
/// tags, unquoted attributes, character references (`&amp;`, `&eacute;`, `&#36;`), a
/// script containing `<` and a tag in a string, a commented-out link. Links are relative
/// (`../product/7`, `?page=2`), absolute-path, and absolute URLs when an origin is known;
/// some carry fragments or `utm_` parameters (duplicates of other links); nav and footer
/// links repeat on every page; a few lead to 404s (`/discontinued/1`, the product after
/// the last) or off the site (`https://partner.example/`, `mailto:`, `javascript:`).
/// Every product is reachable from `/` through the category listings.
public struct DemoSite: Sendable {
  /// How URLs look.
  public enum Layout: Sendable {
    /// `/category/3?page=2`, `/product/7`: served by ``TestServer``.
    case dynamic
    /// `/category/3/`, `/category/3/page-2.html`, `/product/7.html`, `/about.html`,
    /// `/private/staff.html`: one file each, for a plain static server such as nginx.
    case staticFiles
  }

  /// Number of products, numbered 1…productCount.
  public let productCount: Int
  /// The seed every page derives from.
  public let seed: UInt64
  /// How URLs look.
  public let layout: Layout
  /// Number of categories, numbered 1…categoryCount (product N is in category
  /// `(N - 1) % categoryCount + 1`).
  public let categoryCount: Int
  /// Products per listing page.
  public let pageSize = 20
  /// The day of the shop's life the pages show (0: the first). From day 1
  /// on, about one product in eight changes its price each day and about
  /// three in a hundred are discontinued (their pages answer 404), so a demo run over
  /// several days has changes to report. Day 0 is the site as it always was.
  public private(set) var day = 0

  /// True when the shop is redesigned: each product page's container is
  /// `<div class="product-card">` instead of `<div class="product">`, so a
  /// `div.product` selector finds nothing while every page still answers 200.
  public var redesigned = false

  /// The same shop on `day` of its life (see ``day``).
  public func on(day: Int) -> DemoSite {
    var copy = self
    copy.day = max(0, day)
    return copy
  }

  /// A site with `products` products (at least 1).
  public init(products: Int = 200, seed: UInt64 = 1) {
    self.init(products: products, seed: seed, layout: .dynamic)
  }

  /// A site with `products` products and the given URL layout.
  public init(products: Int, seed: UInt64, layout: Layout) {
    productCount = max(1, products)
    self.seed = seed
    self.layout = layout
    categoryCount = min(DemoSite.categoryNames.count, max(1, (productCount + 49) / 50))
  }

  // MARK: - Expected content

  /// What product `n`'s page holds, as text after decoding character references:
  /// `h1.product-title`, `span.price`, and `div.product[data-sku]`.
  public func expectedProduct(_ n: Int) -> (title: String, price: String, sku: String) {
    var rng = rng(0x5052_4F44, n)  // "PROD"
    let adjective = DemoSite.adjectives[rng.below(DemoSite.adjectives.count)]
    let material = DemoSite.materials[rng.below(DemoSite.materials.count)]
    let noun = DemoSite.nouns[rng.below(DemoSite.nouns.count)]
    var cents = 199 + rng.below(250_000)
    if day > 0 {
      for d in 1...day {
        var change = self.rng(0x4441_5953, n &* 7919 &+ d)  // "DAYS"
        // One product in eight changes its price each day, by -20%…+10%.
        if change.below(8) == 0 { cents = max(99, cents * (80 + change.below(31)) / 100) }
      }
    }
    return ("\(adjective) \(material) \(noun)", DemoSite.formatPrice(cents: cents), "SKU-\(n)")
  }

  /// True when product `n` is discontinued by ``day``: its page answers 404.
  public func isDiscontinued(_ n: Int) -> Bool {
    guard day > 0 else { return false }
    return (1...day).contains { d in
      var draw = rng(0x474F_4E45, n &* 7919 &+ d)  // "GONE"
      return draw.below(100) < 3
    }
  }

  /// The category product `n` is listed in.
  public func category(ofProduct n: Int) -> Int { (n - 1) % categoryCount + 1 }

  /// The category's display name.
  public func categoryName(_ c: Int) -> String { DemoSite.categoryNames[(c - 1) % DemoSite.categoryNames.count] }

  /// Products in category `c`, in listing order.
  public func products(inCategory c: Int) -> StrideThrough<Int> {
    stride(from: c, through: c <= productCount ? productCount : 0, by: categoryCount)
  }

  /// Number of products in category `c`.
  public func productCount(inCategory c: Int) -> Int {
    c <= productCount ? (productCount - c) / categoryCount + 1 : 0
  }

  /// Number of listing pages of category `c`.
  public func pageCount(category c: Int) -> Int {
    max(1, (productCount(inCategory: c) + pageSize - 1) / pageSize)
  }

  // MARK: - URLs

  /// The path of product `n`'s page: `/product/N` (or `/product/N.html`).
  public func productPath(_ n: Int) -> String {
    layout == .dynamic ? "/product/\(n)" : "/product/\(n).html"
  }

  /// The path of a listing page; page 1 has no `page` part.
  public func categoryPath(_ c: Int, page: Int = 1) -> String {
    switch layout {
    case .dynamic: page == 1 ? "/category/\(c)" : "/category/\(c)?page=\(page)"
    case .staticFiles: page == 1 ? "/category/\(c)/" : "/category/\(c)/page-\(page).html"
    }
  }

  var aboutPath: String { layout == .dynamic ? "/about" : "/about.html" }
  var staffPath: String { layout == .dynamic ? "/private/staff" : "/private/staff.html" }

  /// Every page that answers 200, by its canonical path: home, listings, products,
  /// about, staff, robots.txt.
  public var pagePaths: [String] {
    var paths = ["/"]
    for c in 1...categoryCount {
      for page in 1...pageCount(category: c) { paths.append(categoryPath(c, page: page)) }
    }
    for n in 1...productCount { paths.append(productPath(n)) }
    paths += [aboutPath, staffPath, "/robots.txt"]
    return paths
  }

  // MARK: - Serving

  /// The response for a request target (path and query; a fragment is ignored), or nil
  /// when the target is not part of the site (the caller answers 404).
  ///
  /// - Parameter origin: `http://host:port` of the server; when given, some links are
  ///   absolute URLs on it.
  public func response(for target: String, origin: String? = nil) -> TestResponse? {
    var target = Substring(target)
    if let hash = target.firstIndex(of: "#") { target = target[..<hash] }
    let path: Substring
    var page = 1
    if let mark = target.firstIndex(of: "?") {
      path = target[..<mark]
      for pair in target[target.index(after: mark)...].split(separator: "&") where pair.hasPrefix("page=") {
        guard let k = Int(pair.dropFirst(5)) else { return nil }
        page = k
      }
    } else {
      path = target
    }
    let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
    if path == "/" || path == "/index.html" { return .html(homePage(origin: origin)) }
    if path == "/robots.txt" { return .text(robotsTxt(origin: origin)) }
    if path == aboutPath { return .html(aboutPage()) }
    if path == staffPath { return .html(staffPage()) }
    switch layout {
    case .dynamic:
      if parts.count == 2, parts.first == "product", let n = Int(parts.last!), (1...productCount).contains(n),
        !isDiscontinued(n)
      {
        return .html(productPage(n, origin: origin))
      }
      if parts.count == 2, parts.first == "category", let c = Int(parts.last!), (1...categoryCount).contains(c),
        (1...pageCount(category: c)).contains(page)
      {
        return .html(categoryPage(c, page: page, origin: origin))
      }
    case .staticFiles:
      if parts.count == 2, parts.first == "product", parts.last!.hasSuffix(".html"),
        let n = Int(parts.last!.dropLast(5)), (1...productCount).contains(n)
      {
        return .html(productPage(n, origin: origin))
      }
      if parts.count == 3, parts.first == "category", let c = Int(parts[2]), (1...categoryCount).contains(c) {
        let file = parts.last!
        if file == "" || file == "index.html" { return .html(categoryPage(c, page: 1, origin: origin)) }
        if file.hasPrefix("page-"), file.hasSuffix(".html"), let k = Int(file.dropFirst(5).dropLast(5)),
          (2...max(2, pageCount(category: c))).contains(k), k <= pageCount(category: c)
        {
          return .html(categoryPage(c, page: k, origin: origin))
        }
      }
    }
    return nil
  }

  /// A generator for one page, from the site seed, a page kind and a number.
  func rng(_ kind: UInt64, _ n: Int) -> SplitMix64 {
    SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 ^ kind &* 0xBF58_476D_1CE4_E5B9 ^ UInt64(truncatingIfNeeded: n))
  }

  static func formatPrice(cents: Int) -> String {
    let dollars = cents / 100
    let rest = cents % 100
    var whole = String(dollars)
    if dollars >= 1000 { whole = "\(dollars / 1000),\(String(dollars % 1000).leftPadded(to: 3))" }
    return "$\(whole).\(String(rest).leftPadded(to: 2))"
  }

  static let categoryNames = [
    "Kitchen", "Garden", "Tools", "Books", "Toys", "Outdoor", "Office", "Lighting", "Bath", "Pets",
    "Music", "Travel",
  ]
  static let adjectives = [
    "Rustic", "Modern", "Vintage", "Compact", "Deluxe", "Handmade", "Classic", "Sturdy", "Elegant",
    "Portable", "Chef's", "Café", "Nordic", "Tiny", "Grand", "Quiet",
  ]
  static let materials = [
    "Oak", "Copper", "Steel", "Linen", "Ceramic", "Bamboo", "Walnut", "Glass", "Wool", "Brass",
    "Cotton", "Slate",
  ]
  static let nouns = [
    "Kettle", "Lamp", "Chair", "Notebook", "Teapot", "Planter", "Knife", "Blanket", "Mug",
    "Salt & Pepper Mill", "Shelf", "Clock", "Vase", "Desk Organizer", "Bird Feeder", "Pen Set",
    "Cutting Board", "Bowl", "Mirror", "Crème Brûlée Set",
  ]
}

/// The demo shop's draws. They take the 64 bits modulo the bound (slightly
/// biased, unlike `Int.random(in:using:)`), which the generated site depends
/// on: keep them so, or every product changes.
extension SplitMix64 {
  /// A number in 0..<bound (bound > 0).
  mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

  /// True with probability 1 / `oneIn`.
  mutating func chance(_ oneIn: Int) -> Bool { below(oneIn) == 0 }
}

extension String {
  func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
