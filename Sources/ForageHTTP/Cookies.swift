import ForageSupport
import ForageURL

/// A small cookie jar for one job, used when a source sets `cookies: true`: keeps
/// `Set-Cookie` name/value pairs per domain and path, honours `Domain`, `Path`,
/// `Secure` and deletion through `Max-Age=0`; expiry dates are not tracked (a job
/// lasts minutes). Cookie values never appear in errors or descriptions.
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc6265>
final class CookieJar: Sendable {
  private struct Cookie: Sendable {
    var name: String
    var value: String
    var domain: String
    var hostOnly: Bool
    var path: String
    var secure: Bool
  }

  private let cookies = Locked<[Cookie]>([])

  /// Stores the `Set-Cookie` fields of a response from `url`.
  func store(_ headers: HTTPHeaders, from url: WebURL) {
    guard let host = url.host?.lowercased() else { return }
    for line in headers.values(for: "Set-Cookie") {
      let parts = line.split(separator: ";", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
      guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { continue }
      let name = String(pair[..<equals]).trimmingSpaces
      let value = String(pair[pair.index(after: equals)...]).trimmingSpaces
      guard !name.isEmpty else { continue }
      var cookie = Cookie(
        name: name, value: value, domain: host, hostOnly: true, path: Self.defaultPath(url.path),
        secure: false)
      var delete = false
      for attribute in parts.dropFirst() {
        let (key, attributeValue) = Self.split(attribute)
        switch key.lowercased() {
        case "domain":
          var domain = attributeValue.lowercased()
          if domain.hasPrefix(".") { domain.removeFirst() }
          // Only the host itself or a parent domain of it may be named, and no
          // top-level domain ("com"): the cookie would go to every site under it
          // (without a public suffix list, RFC 6265 §5.3 step 5 is kept this far).
          guard !domain.isEmpty, host == domain || (host.hasSuffix("." + domain) && domain.contains(".")) else {
            delete = true  // a foreign domain: ignore the cookie
            continue
          }
          cookie.domain = domain
          cookie.hostOnly = false
        case "path" where attributeValue.hasPrefix("/"): cookie.path = attributeValue
        case "secure": cookie.secure = true
        case "max-age": if let seconds = Int(attributeValue), seconds <= 0 { delete = true }
        default: break
        }
      }
      cookies.withLock { all in
        all.removeAll { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }
        if !delete { all.append(cookie) }
      }
    }
  }

  /// The `Cookie` header value for a request to `url`, or nil.
  func header(for url: WebURL) -> String? {
    guard let host = url.host?.lowercased() else { return nil }
    let path = url.path
    let secure = url.scheme == "https"
    let matching = cookies.withLock { all in
      all.filter { cookie in
        let domainOK = cookie.hostOnly ? host == cookie.domain : (host == cookie.domain || host.hasSuffix("." + cookie.domain))
        let pathOK = path == cookie.path || (path.hasPrefix(cookie.path) && (cookie.path.hasSuffix("/") || path.dropFirst(cookie.path.count).hasPrefix("/")))
        return domainOK && pathOK && (!cookie.secure || secure)
      }
    }
    guard !matching.isEmpty else { return nil }
    return matching.sorted { $0.path.count > $1.path.count }.map { "\($0.name)=\($0.value)" }
      .joined(separator: "; ")
  }

  private static func split(_ attribute: String) -> (String, String) {
    guard let equals = attribute.firstIndex(of: "=") else { return (attribute, "") }
    return (
      String(attribute[..<equals]).trimmingSpaces,
      String(attribute[attribute.index(after: equals)...]).trimmingSpaces
    )
  }

  private static func defaultPath(_ path: String) -> String {
    guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
    return String(path[..<slash])
  }
}
