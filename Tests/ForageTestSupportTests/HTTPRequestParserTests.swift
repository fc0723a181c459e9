import Testing

@testable import ForageTestSupport

@Suite struct HTTPRequestParserTests {
  func parse(_ text: String, maxHeaderBytes: Int = 64 * 1024) -> [HTTPRequestParser.Outcome] {
    var parser = HTTPRequestParser()
    parser.maxHeaderBytes = maxHeaderBytes
    parser.append(Array(text.utf8))
    var outcomes: [HTTPRequestParser.Outcome] = []
    while true {
      let outcome = parser.next()
      outcomes.append(outcome)
      if case .request = outcome { continue }
      return outcomes
    }
  }

  func status(_ outcome: HTTPRequestParser.Outcome?) -> Int? {
    if case .failure(let status, _) = outcome { return status }
    return nil
  }

  @Test func test_validUTF8_acceptsUTF8_andRefusesOtherBytes() {
    #expect(validUTF8(Array("GET /caf\u{E9} HTTP/1.1".utf8)) == "GET /caf\u{E9} HTTP/1.1")
    #expect(validUTF8([0x47, 0xFF, 0x54]) == nil)
    #expect(validUTF8([0xC3]) == nil, "a truncated sequence")
    #expect(validUTF8(Array("\u{FFFD}".utf8)) == "\u{FFFD}", "a real replacement character is kept")
    var parser = HTTPRequestParser()
    parser.append([0x47, 0x45, 0x54, 0x20, 0x2F, 0xFF, 0x20] + Array("HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
    #expect(status(parser.next()) == 400)
  }

  @Test func test_simpleGet_isParsed() throws {
    let outcomes = parse("GET /a?b=1 HTTP/1.1\r\nHost: x\r\nUser-Agent:  test/1 \r\n\r\n")
    guard case .request(let r) = outcomes.first else { Issue.record("no request: \(outcomes)"); return }
    #expect(r.method == "GET")
    #expect(r.target == "/a?b=1")
    #expect(r.recorded.header("user-agent") == "test/1")
    #expect(r.recorded.path == "/a")
    #expect(r.recorded.query("b") == "1")
    #expect(outcomes.last == .needMore)
  }

  @Test func test_pipelinedRequestsWithBodies_comeOutInOrder() {
    let outcomes = parse(
      "POST /one HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /two HTTP/1.1\r\nHost: x\r\n\r\n")
    guard case .request(let first) = outcomes[0], case .request(let second) = outcomes[1] else {
      Issue.record("expected two requests: \(outcomes)")
      return
    }
    #expect(first.body == Array("hello".utf8))
    #expect(second.target == "/two")
  }

  @Test func test_requestSplitAcrossReads_waitsForTheRest() {
    var parser = HTTPRequestParser()
    let text = Array("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc".utf8)
    var results: [HTTPRequestParser.Outcome] = []
    for byte in text {
      parser.append([byte])
      results.append(parser.next())
    }
    #expect(results.dropLast().allSatisfy { $0 == .needMore })
    if case .request(let r) = results.last { #expect(r.body == Array("abc".utf8)) } else { Issue.record("no request") }
  }

  @Test func test_bareLineFeeds_andLeadingEmptyLines_areAccepted() {
    let outcomes = parse("\r\n\nGET / HTTP/1.0\nX: 1\n\n")
    guard case .request(let r) = outcomes.first else { Issue.record("no request: \(outcomes)"); return }
    #expect(r.version == "HTTP/1.0")
    #expect(r.recorded.wantsClose)
  }

  @Test(arguments: [
    "garbage\r\n\r\n",
    "GET  / HTTP/1.1\r\nHost: x\r\n\r\n",
    "GET / FTP/1.1\r\nHost: x\r\n\r\n",
    "GET / HTTP/1.1\r\nHost x\r\n\r\n",
    "GET / HTTP/1.1\r\nHost : x\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
    "GET / HTTP/1.1\r\nX: y\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    "G(T / HTTP/1.1\r\nHost: x\r\n\r\n",
  ])
  func test_malformedRequest_is400(text: String) {
    #expect(status(parse(text).first) == 400)
  }

  @Test func test_otherVersion_is505() {
    #expect(status(parse("GET / HTTP/2.0\r\nHost: x\r\n\r\n").first) == 505)
  }

  @Test func test_chunkedRequestBody_is501() {
    #expect(status(parse("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n").first) == 501)
  }

  @Test func test_oversizedHeaderSection_is431() {
    let big = "GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "a", count: 2000) + "\r\n\r\n"
    #expect(status(parse(big, maxHeaderBytes: 1000).first) == 431)
    let unfinished = "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 2000)
    #expect(status(parse(unfinished, maxHeaderBytes: 1000).first) == 431)
  }
}
