/// The HTML of each demo-site page. Messy on purpose; see ``DemoSite``.
extension DemoSite {
  static let siteName = "Forage Demo Shop"

  // MARK: - Pieces shared by every page

  func head(_ title: String, canonical: String? = nil, uppercase: Bool = false) -> String {
    var html = uppercase ? "<!doctype HTML>\n<HTML LANG=en>\n<HEAD>\n" : "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
    html += "<meta charset=utf-8>\n<title>\(title)</title>\n"
    html += "<meta name=viewport content=\"width=device-width, initial-scale=1\">\n"
    if let canonical { html += "<link rel=canonical href=\"\(canonical)\">\n" }
    html += "<style>body{font-family:sans-serif} .price{color:#080}</style>\n"
    html += uppercase ? "</HEAD>\n<BODY>\n" : "</head>\n<body>\n"
    return html
  }

  /// The navigation bar: absolute paths, a fragment-only link, repeated on every page.
  func nav() -> String {
    var html = "<header><nav class=top>\n<a href=\"/\">Home</a> |\n"
    for c in 1...min(categoryCount, 4) { html += "<a href=\"\(categoryPath(c))\">\(categoryName(c))</a> |\n" }
    html += "<a href=\(aboutPath)>About</a> | <a href=\"#main\">Skip to content</a>\n</nav></header>\n"
    return html
  }

  /// The footer: links to a 404, off-site links, and the robots-disallowed page.
  func footer() -> String {
    """
    <footer>
    <p>&copy; 2026 \(DemoSite.siteName) &middot; <a href="\(aboutPath)">About us</a>
    &middot; <a href="\(staffPath)">Staff</a>
    &middot; <a href="/discontinued/1">Clearance</a>
    &middot; <a href="https://partner.example/shop">Partner shop</a>
    &middot; <a href="mailto:shop@example.com">Write to us</a>
    &middot; <a href="javascript:void(0)">Back to top</a>
    </footer>
    </body>
    </html>

    """
  }

  /// Text with character references: `&`, `<`, `>` always; accents and apostrophes
  /// as references when `references` is set, raw UTF-8 otherwise.
  func encode(_ text: String, references: Bool) -> String {
    var out = ""
    for c in text {
      switch c {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "é" where references: out += "&eacute;"
      case "è" where references: out += "&egrave;"
      case "û" where references: out += "&#251;"
      case "'" where references: out += "&#39;"
      default: out.append(c)
      }
    }
    return out
  }

  /// A link to product `n` from a listing page, in one of several spellings.
  func productLinkFromListing(_ n: Int, variant: Int, origin: String?) -> String {
    switch variant {
    case 0: return productPath(n)
    case 1: return layout == .dynamic ? "../product/\(n)" : "../../product/\(n).html"
    case 2: return (origin ?? "") + productPath(n)
    default: return productPath(n) + "#reviews"
    }
  }

  /// A link to product `m` from product page, relative to `/product/`.
  func productLinkFromProduct(_ m: Int, variant: Int) -> String {
    let file = layout == .dynamic ? "\(m)" : "\(m).html"
    return variant == 0 ? file : "../product/\(file)"
  }

  // MARK: - Pages

  func homePage(origin: String?) -> String {
    var rng = rng(0x484F_4D45, 0)  // "HOME"
    var html = head(DemoSite.siteName, canonical: "/")
    html += nav()
    html += "<div id=main>\n<h1>\(DemoSite.siteName)</h1>\n"
    html += "<p>Everything for home &amp; garden, shipped from our warehouse.\n"
    html += "<p>Browse by category:\n<ul class=categories>\n"
    for c in 1...categoryCount {
      let href = c % 2 == 0 ? String(categoryPath(c).dropFirst()) : categoryPath(c)  // relative or absolute-path
      let count = productCount(inCategory: c)
      html += "<li><a href=\"\(href)\">\(categoryName(c))</a> (\(count))\n"
    }
    html += "</ul>\n<h2>Featured</h2>\n<UL CLASS=featured>\n"
    for _ in 0..<min(5, productCount) {
      let n = 1 + rng.below(productCount)
      let title = encode(expectedProduct(n).title, references: rng.chance(2))
      html += "<LI><A HREF=\"\(productPath(n))?utm_source=home&amp;utm_medium=featured\">\(title)</A>\n"
    }
    html += "</UL>\n</div>\n"
    return html + footer()
  }

  func categoryPage(_ c: Int, page: Int, origin: String?) -> String {
    var rng = rng(0x4341_5445, c * 100_003 + page)  // "CATE"
    let pages = pageCount(category: c)
    let name = categoryName(c)
    var html = head("\(name) — page \(page) of \(pages) | \(DemoSite.siteName)", canonical: categoryPath(c, page: page),
                    uppercase: rng.chance(3))
    html += nav()
    html += "<p class=crumbs><a href=\"/\">Home</a> &gt; \(name)\n"
    html += "<div id=main>\n<h1>\(name)</h1>\n<ul class=listing>\n"
    let all = Array(products(inCategory: c))
    let first = (page - 1) * pageSize
    for n in all[min(first, all.count)..<min(first + pageSize, all.count)] {
      let product = expectedProduct(n)
      let href = productLinkFromListing(n, variant: rng.below(4), origin: origin)
      let title = encode(product.title, references: rng.chance(2))
      html += "<li class=item><a href=\"\(href)\">\(title)</a> <span class=listing-price>\(product.price)</span>\n"
      if rng.chance(5) {
        html += "  <a href=\"\(productPath(n))?utm_source=listing&amp;utm_campaign=c\(c)\">More</a>\n"
      }
    }
    if page == pages && c == 1 {
      let next = productPath(productCount + 1)
      html += "<li class=item><a href=\"\(next)\">Coming soon</a>\n"
    }
    html += "</ul>\n<div class=pagination>\n"
    let pageLink: (Int) -> String = { k in
      switch self.layout {
      case .dynamic: return k == 1 ? "/category/\(c)?page=1" : "?page=\(k)"
      case .staticFiles: return k == 1 ? "./" : "page-\(k).html"
      }
    }
    if page > 1 { html += "<a href=\"\(pageLink(page - 1))\" rel=prev>&laquo; Previous</a>\n" }
    for k in Swift.max(1, page - 2)...Swift.min(pages, page + 2) {
      html += k == page ? "<b>\(k)</b>\n" : "<a href=\(pageLink(k))>\(k)</a>\n"
    }
    if page < pages { html += "<a href=\"\(pageLink(page + 1))\" rel=next>Next &raquo;</a>\n" }
    html += "</div>\n</div>\n"
    return html + footer()
  }

  func productPage(_ n: Int, origin: String?) -> String {
    var rng = rng(0x5041_4745, n)  // "PAGE"
    let product = expectedProduct(n)
    let c = category(ofProduct: n)
    let references = rng.chance(2)
    let uppercase = rng.chance(3)
    let unquoted = rng.chance(3)
    var html = head("\(encode(product.title, references: references)) | \(DemoSite.siteName)",
                    canonical: (origin ?? "") + productPath(n), uppercase: uppercase)
    html += "<script>var stock = \(rng.below(9)); if (stock < 3 && \"</p>\".length) { document.title += ' (low)'; }</script>\n"
    html += nav()
    let categoryLink = layout == .dynamic ? "../category/\(c)" : "../category/\(c)/"
    html += "<P CLASS=crumbs><a href=\"/\">Home</a> &gt; <a href=\(categoryLink)>\(categoryName(c))</a>\n"
    // Redesigned: the container's class renamed, the rest as it was.
    let container = redesigned ? "product-card" : "product"
    html += unquoted
      ? "<DIV CLASS=\(container) DATA-SKU=\(product.sku)>\n"
      : "<div class=\"\(container)\" data-sku=\"\(product.sku)\">\n"
    let title = encode(product.title, references: references)
    html += uppercase ? "<H1 CLASS=\"product-title\">\(title)</H1>\n" : "<h1 class=\"product-title\">\(title)</h1>\n"
    let price = rng.chance(4) ? "&#36;" + product.price.dropFirst() : product.price
    html += unquoted ? "<SPAN class=price>\(price)</SPAN>\n" : "<span class=\"price\">\(price)</span>\n"
    html += "<p class=description>A \(encode(product.title.lowercased(), references: references)) for everyday use.\n"
    html += "<p>Ships in \(1 + rng.below(9)) days &ndash; free returns.\n"
    html += "<ul class=features>\n<li>Weight: \(1 + rng.below(40)) kg\n<li>Colour: \(["red", "blue", "oak", "grey"][rng.below(4)])\n</ul>\n"
    html += "<!-- <a href=\"\(productPath(productCount + 1000))\">old link, commented out</a> -->\n"
    html += "</div>\n"
    html += "<h2 id=reviews>Reviews</h2>\n<p>\(rng.below(50)) reviews, \(1 + rng.below(5)) &#9733; average\n"
    html += "<h3>Related products</h3>\n<ul class=related>\n"
    for _ in 0..<3 {
      let m = 1 + rng.below(productCount)
      let href = productLinkFromProduct(m, variant: rng.below(2))
      html += "<li><a href=\"\(href)\">\(encode(expectedProduct(m).title, references: false))</a>\n"
    }
    let next = n % productCount + 1
    html += "<li><a href=\"\(productPath(next))?utm_source=related&utm_medium=web\">Next product</a>\n"
    html += "</ul>\n"
    return html + footer()
  }

  func aboutPage() -> String {
    head("About | \(DemoSite.siteName)") + nav()
      + "<h1>About us</h1>\n<p>A shop that does not exist, made for testing crawlers.\n<p>It has \(productCount) products.\n"
      + footer()
  }

  func staffPage() -> String {
    head("Staff | \(DemoSite.siteName)") + nav()
      + "<h1>Staff only</h1>\n<p>robots.txt disallows this page.\n" + footer()
  }

  func robotsTxt(origin: String?) -> String {
    "User-agent: *\nDisallow: /private/\n\nUser-agent: BadBot\nDisallow: /\n"
  }
}
