/// Splits HTTP/1.1 requests out of a byte stream; no I/O.
///
///     var parser = HTTPRequestParser()
///     parser.append(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
///     if case .request(let r) = parser.next() { r.target }   // "/"
///
/// Pipelined requests come out one `next()` at a time. Anything malformed ends in
/// `.failure` with the status to answer before closing.
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9112#name-message-format>
struct HTTPRequestParser {
  enum Outcome: Equatable {
    case request(ParsedRequest)
    case needMore
    case failure(status: Int, reason: String)
  }

  /// A request without the Sendable wrapper, so `Outcome` can be `Equatable` in tests.
  struct ParsedRequest: Equatable {
    var method: String
    var target: String
    var version: String
    var fields: [HTTPField]
    var body: [UInt8]

    var recorded: RecordedRequest {
      RecordedRequest(method: method, target: target, version: version, fields: fields, body: body)
    }
  }

  /// Largest request line plus header section accepted (431 beyond it).
  var maxHeaderBytes = 64 * 1024
  /// Largest body accepted (413 beyond it).
  var maxBodyBytes = 16 * 1024 * 1024

  private var buffer: [UInt8] = []
  private var start = 0
  /// Where to resume looking for the end of the header section.
  private var scanned = 0

  mutating func append(_ bytes: some Collection<UInt8>) {
    if start > 0 && start == buffer.count {
      buffer.removeAll(keepingCapacity: true)
      start = 0
      scanned = 0
    } else if start > 65_536 {
      buffer.removeSubrange(0..<start)
      scanned -= start
      start = 0
    }
    buffer.append(contentsOf: bytes)
  }

  /// True when bytes of an unfinished request are waiting.
  var hasPartialRequest: Bool { start < buffer.count }

  mutating func next() -> Outcome {
    // https://www.rfc-editor.org/rfc/rfc9112#section-2.2: ignore empty lines before a request.
    while start < buffer.count && (buffer[start] == 0x0D || buffer[start] == 0x0A) {
      start += 1
      scanned = max(scanned, start)
    }
    guard let headerEnd = findHeaderEnd() else {
      if buffer.count - start > maxHeaderBytes {
        return .failure(status: 431, reason: "header section larger than \(maxHeaderBytes) bytes")
      }
      return .needMore
    }
    if headerEnd.linesEnd - start > maxHeaderBytes {
      return .failure(status: 431, reason: "header section larger than \(maxHeaderBytes) bytes")
    }
    var lines = splitLines(buffer[start..<headerEnd.linesEnd])
    guard !lines.isEmpty, let requestLine = validUTF8(lines.removeFirst()) else {
      return .failure(status: 400, reason: "request line is not UTF-8")
    }
    // https://www.rfc-editor.org/rfc/rfc9112#name-request-line
    let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
    guard parts.count == 3, isToken(parts[0]), !parts[1].isEmpty,
      parts[1].allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "\u{7F}" })
    else {
      return .failure(status: 400, reason: "malformed request line")
    }
    let version = String(parts[2])
    guard version.hasPrefix("HTTP/") else { return .failure(status: 400, reason: "malformed HTTP version") }
    guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
      return .failure(status: 505, reason: "unsupported version \(version)")
    }

    var fields: [HTTPField] = []
    for line in lines {
      // https://www.rfc-editor.org/rfc/rfc9112#name-obsolete-line-folding
      if line.first == 0x20 || line.first == 0x09 { return .failure(status: 400, reason: "obsolete line folding") }
      guard let colon = line.firstIndex(of: 0x3A) else { return .failure(status: 400, reason: "header line without a colon") }
      let name = line[line.startIndex..<colon]
      // https://www.rfc-editor.org/rfc/rfc9112#name-field-syntax: no space before the colon.
      guard let nameText = validUTF8(name), isToken(Substring(nameText)) else {
        return .failure(status: 400, reason: "invalid header field name")
      }
      var value = line[(colon + 1)...]
      while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
      while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
      if value.contains(where: { $0 == 0 || $0 == 0x0D || $0 == 0x0A }) {
        return .failure(status: 400, reason: "invalid character in header value")
      }
      // Non-UTF-8 bytes (obsolete ISO-8859-1 text) become U+FFFD.
      let valueText = String(decoding: value, as: UTF8.self)
      fields.append(HTTPField(name: nameText, value: valueText))
    }
    let lowered = fields.map { $0.name.lowercased() }
    if version == "HTTP/1.1" && !lowered.contains("host") {
      return .failure(status: 400, reason: "missing Host header")
    }
    if lowered.contains("transfer-encoding") {
      return .failure(status: 501, reason: "request bodies with Transfer-Encoding are not supported")
    }
    var bodyLength = 0
    let lengths = zip(lowered, fields).filter { $0.0 == "content-length" }.map { $0.1.value }
    if let first = lengths.first {
      // https://www.rfc-editor.org/rfc/rfc9112#name-content-length
      guard lengths.allSatisfy({ $0 == first }), !first.isEmpty, first.count <= 18,
        first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(first)
      else { return .failure(status: 400, reason: "invalid Content-Length") }
      guard n <= maxBodyBytes else { return .failure(status: 413, reason: "body larger than \(maxBodyBytes) bytes") }
      bodyLength = n
    }
    guard buffer.count - headerEnd.bodyStart >= bodyLength else { return .needMore }
    let body = Array(buffer[headerEnd.bodyStart..<(headerEnd.bodyStart + bodyLength)])
    start = headerEnd.bodyStart + bodyLength
    scanned = start
    return .request(ParsedRequest(method: String(parts[0]), target: String(parts[1]),
                                  version: version, fields: fields, body: body))
  }

  /// Finds the empty line ending the header section (CRLF CRLF, or bare LFs).
  private mutating func findHeaderEnd() -> (linesEnd: Int, bodyStart: Int)? {
    var i = max(scanned, start)
    while i < buffer.count {
      if buffer[i] == 0x0A {
        // An LF followed by LF or CR LF ends the section.
        if i + 1 < buffer.count && buffer[i + 1] == 0x0A { return (i + 1, i + 2) }
        if i + 2 < buffer.count && buffer[i + 1] == 0x0D && buffer[i + 2] == 0x0A { return (i + 1, i + 3) }
        if i + 2 >= buffer.count {
          scanned = i
          return nil
        }
      }
      i += 1
    }
    scanned = max(start, buffer.count - 2)
    return nil
  }

  /// Splits on LF, dropping a CR before it; the last empty piece is dropped.
  private func splitLines(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
    var lines: [ArraySlice<UInt8>] = []
    var lineStart = bytes.startIndex
    for i in bytes.indices where bytes[i] == 0x0A {
      var end = i
      if end > lineStart && bytes[end - 1] == 0x0D { end -= 1 }
      lines.append(bytes[lineStart..<end])
      lineStart = i + 1
    }
    return lines
  }

  /// https://www.rfc-editor.org/rfc/rfc9110#name-tokens
  private func isToken(_ s: Substring) -> Bool {
    !s.isEmpty && s.unicodeScalars.allSatisfy { c in
      c.isASCII && (("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c)
        || "!#$%&'*+-.^_`|~".unicodeScalars.contains(c))
    }
  }
}

/// `bytes` as a string when they are valid UTF-8, else nil. (The standard
/// library's `String(validating:as:)` needs macOS 15 / iOS 18; the package
/// supports macOS 14 / iOS 17.) Invalid bytes decode to U+FFFD, whose UTF-8
/// differs from them, so a round trip tells.
func validUTF8<C: Collection<UInt8>>(_ bytes: C) -> String? {
  let text = String(decoding: bytes, as: UTF8.self)
  return text.utf8.elementsEqual(bytes) ? text : nil
}
