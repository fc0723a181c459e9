// libFuzzer entry point for what Forage reads from HTTP response headers
// (ForageHTTP, and ForageHTML's Content-Type charset).
//
// Built by Fuzz/run-fuzz.sh (target `http`) against the modules compiled with
// -enable-testing. The input is a response head: each line (split after "\n",
// as libcurl hands them over) goes to the transport's header callback
// (`CurlEasy.receiveHeader`); then
// - no value holds CR, LF or NUL (RFC 9110 §5.5);
// - `HTTPHeaders` lookups, `replaceOrAdd` and `remove` keep their promises;
// - the `Set-Cookie` fields go to a cookie jar, as from two URLs, and the
//   `Cookie` headers it would send hold no CR, LF or NUL, nothing for another
//   site, and no `Secure` cookie over http;
// - every value is read as a `Retry-After` (never negative; delay-seconds as
//   given) and as an HTTP date (checked against a plain calendar computation
//   for ordinary dates), and as a `Content-Type` charset.

import Foundation
@testable import ForageHTML
@testable import ForageHTTP
import ForageURL

/// Stops with the message (-O drops the messages of `precondition`).
func require(_ condition: Bool, _ message: @autoclosure () -> String = "") {
  if !condition { fatalError(message()) }
}

private let now = Date(timeIntervalSince1970: 1_700_000_000)
private let origins = [WebURL("https://www.example.com/a/b/page")!, WebURL("http://example.com/")!]
private let requests = [
  "https://www.example.com/a/b/c", "http://www.example.com/", "https://example.com/a", "https://sub.www.example.com/",
  "https://other.org/a/b", "http://notexample.com/",
].map { WebURL($0)! }
private let plainRequests = ["http://www.example.com/a/b/c", "http://example.com/a/b"].map { WebURL($0)! }
private let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

/// Days from 1970-01-01 to a proleptic Gregorian date (month 1...12).
func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
  let y = month <= 2 ? year - 1 : year
  let era = (y >= 0 ? y : y - 399) / 400
  let yoe = y - era * 400
  let mp = (month + 9) % 12
  let doy = (153 * mp + 2) / 5 + day - 1
  let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
  return era * 146_097 + doe - 719_468
}

/// The seconds since 1970 of an IMF-fixdate with ordinary fields (any day
/// name: the parser does not check it), or nil.
func referenceHTTPDate(_ text: String) -> Int? {
  let parts = text.split(separator: " ", omittingEmptySubsequences: false)
  let dayNames = ["Mon,", "Tue,", "Wed,", "Thu,", "Fri,", "Sat,", "Sun,"]
  guard parts.count == 6, dayNames.contains(String(parts[0])), parts[5] == "GMT", parts[1].count == 2,
    parts[1].allSatisfy(\.isASCII), let day = Int(parts[1]),
    let year = Int(parts[3]), (1600...9999).contains(year), parts[3].count == 4,
    let month = months.firstIndex(of: String(parts[2])).map({ $0 + 1 })
  else { return nil }
  let clock = parts[4].split(separator: ":", omittingEmptySubsequences: false)
  guard clock.count == 3, clock.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) }),
    let h = Int(clock[0]), let m = Int(clock[1]), let s = Int(clock[2]),
    (0..<24).contains(h), (0..<60).contains(m), (0..<60).contains(s), (1...28).contains(day)
  else { return nil }
  return daysFromCivil(year, month, day) * 86_400 + h * 3600 + m * 60 + s
}

private func checkHeaders(_ headers: HTTPHeaders) {
  for field in headers.fields.prefix(32) {
    require(!field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }),
      "the value of \(field.name.debugDescription) holds CR, LF or NUL: \(field.value.debugDescription)")
    let values = headers.values(for: field.name)
    require(!values.isEmpty && headers.contains(field.name), "field \(field.name.debugDescription) not found")
    require(headers[field.name] == values.first, "first value of \(field.name.debugDescription)")
    let upper = String(decoding: field.name.utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }, as: UTF8.self)
    require(HTTPHeaders.same(field.name, upper) && headers.contains(upper), "case-insensitive match of \(field.name.debugDescription)")
    var copy = headers
    copy.replaceOrAdd(field.name, "x")
    require(copy.values(for: field.name) == ["x"], "replaceOrAdd(\(field.name.debugDescription))")
    require(copy.count == headers.count - values.count + 1, "replaceOrAdd count")
    copy.remove(field.name)
    require(!copy.contains(field.name) && copy.count == headers.count - values.count, "remove(\(field.name.debugDescription))")
  }
}

private func checkCookies(_ headers: HTTPHeaders) {
  let jar = CookieJar()
  for origin in origins { jar.store(headers, from: origin) }
  for url in requests {
    guard let header = jar.header(for: url) else { continue }
    require(!header.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }),
      "Cookie header for \(url.href) holds CR, LF or NUL: \(header.debugDescription)")
    require(url.host!.hasSuffix("example.com") && url.host != "notexample.com", "cookie sent to \(url.href)")
  }
  // A Secure cookie is never sent over http.
  let secure = CookieJar()
  let setCookies = headers.values(for: "Set-Cookie")
  secure.store(HTTPHeaders(setCookies.map { ("Set-Cookie", $0 + "; Secure") }), from: origins[0])
  for url in plainRequests {
    require(secure.header(for: url) == nil, "a Secure cookie sent over http to \(url.href)")
  }
}

private func checkValue(_ value: String) {
  if let wait = RetryPolicy.parseRetryAfter(value, now: now) {
    require(wait >= .zero, "negative Retry-After \(wait) from \(value.debugDescription)")
    if let seconds = Int(value.trimmingSpaces) {
      require(wait == .seconds(seconds), "Retry-After \(value.debugDescription) read as \(wait)")
    }
  }
  let date = RetryPolicy.parseHTTPDate(value)
  if let expected = referenceHTTPDate(value) {
    require(date.map { Int($0.timeIntervalSince1970) } == expected,
      "HTTP date \(value.debugDescription) read as \(String(describing: date)), expected \(expected)")
  }
  _ = InputDecoder.charsetParameter(value)
  _ = InputDecoder.sniff([0x3C, 0x70, 0x3E], transportEncoding: value)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func httpFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeRawBufferPointer(start: data, count: size)
  guard let easy = CurlEasy() else { fatalError("curl_easy_init failed") }
  var start = 0
  while start < bytes.count {
    var end = start
    while end < bytes.count, bytes[end] != 0x0A { end += 1 }
    end = min(end + 1, bytes.count)
    let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    if easy.receiveHeader(line) != line.count { break }  // headers too large
    start = end
  }
  let headers = easy.headers
  checkHeaders(headers)
  checkCookies(headers)
  for field in headers.fields.prefix(32) { checkValue(field.value) }
  checkValue(String(decoding: bytes.prefix(256), as: UTF8.self))
  let response = Response(url: origins[0], status: 301, headers: headers)
  if response.isRedirect, let location = response.headers["Location"] { _ = origins[0].resolving(location) }
  return 0
}
