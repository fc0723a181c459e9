/// The basic URL parser of the URL Standard, over UTF-8 bytes, without state
/// override (setters are not supported).
///
/// - SeeAlso: <https://url.spec.whatwg.org/#concept-basic-url-parser>
enum URLParser {
  /// https://url.spec.whatwg.org/#concept-basic-url-parser (the states)
  enum State {
    case schemeStart, scheme, noScheme, specialRelativeOrAuthority, pathOrAuthority
    case relative, relativeSlash, specialAuthoritySlashes, specialAuthorityIgnoreSlashes
    case authority, host, port, file, fileSlash, fileHost, pathStart, path
    case opaquePath, query, fragment
  }

  static func parse(_ string: String, base: WebURL?) throws(URLParseError) -> WebURL {
    if let url = FastPath.parse(string, base: base) { return url }
    return try parseFully(string, base: base)
  }

  /// The full parser, without the fast path (tests compare the two).
  static func parseFully(_ string: String, base: WebURL?) throws(URLParseError) -> WebURL {
    // Strip leading and trailing C0 control or space; remove tab and newline.
    var input = [UInt8]()
    var s = string
    s.withUTF8 { raw in
      var lo = 0, hi = raw.count
      while lo < hi, raw[lo] <= 0x20 { lo += 1 }
      while hi > lo, raw[hi - 1] <= 0x20 { hi -= 1 }
      input.reserveCapacity(hi - lo)
      for i in lo..<hi {
        let b = raw[i]
        if b == 0x09 || b == 0x0A || b == 0x0D { continue }
        input.append(b)
      }
    }
    return try parse(bytes: input, base: base.map { URLRecord($0) })
  }

  static func parse(bytes input: [UInt8], base: URLRecord?) throws(URLParseError) -> WebURL {
    var url = URLRecord()
    var state = State.schemeStart
    var buffer = [UInt8]()
    var atSignSeen = false, insideBrackets = false, passwordTokenSeen = false
    var authorityStart = 0
    let n = input.count
    var p = 0

    @inline(__always) func at(_ i: Int) -> Int { i < n ? Int(input[i]) : -1 }
    @inline(__always) func remainingStarts(_ b: UInt8) -> Bool { p + 1 < n && input[p + 1] == b }

    while true {
      let c = p < n ? Int(input[p]) : -1  // -1 is the EOF code point
      switch state {
      // § https://url.spec.whatwg.org/#scheme-start-state
      case .schemeStart:
        if c >= 0, isASCIIAlpha(UInt8(c)) {
          buffer.append(asciiLower(UInt8(c)))
          state = .scheme
        } else {
          state = .noScheme
          p -= 1
        }

      // § https://url.spec.whatwg.org/#scheme-state
      case .scheme:
        if c >= 0, isASCIIAlpha(UInt8(c)) || isASCIIDigit(UInt8(c)) || c == 0x2B || c == 0x2D
          || c == 0x2E
        {
          buffer.append(asciiLower(UInt8(c)))
        } else if c == 0x3A {
          url.scheme = buffer
          url.special = SpecialScheme(bytes: buffer)
          buffer.removeAll(keepingCapacity: true)
          if url.special == .file {
            state = .file
          } else if let sp = url.special, let base, base.special == sp {
            state = .specialRelativeOrAuthority
          } else if url.special != nil {
            state = .specialAuthoritySlashes
          } else if remainingStarts(0x2F) {
            state = .pathOrAuthority
            p += 1
          } else {
            url.hasOpaquePath = true
            state = .opaquePath
          }
        } else {
          buffer.removeAll(keepingCapacity: true)
          state = .noScheme
          p = -1
        }

      // § https://url.spec.whatwg.org/#no-scheme-state
      case .noScheme:
        guard let base, !base.hasOpaquePath || c == 0x23 else {
          throw URLParseError(.missingSchemeNonRelativeURL, at: max(p, 0))
        }
        if base.hasOpaquePath {
          url.scheme = base.scheme
          url.special = base.special
          url.path = base.path
          url.hasOpaquePath = true
          url.query = base.query
          url.fragment = []
          state = .fragment
        } else if base.special != .file {
          state = .relative
          p -= 1
        } else {
          state = .file
          p -= 1
        }

      // § https://url.spec.whatwg.org/#special-relative-or-authority-state
      case .specialRelativeOrAuthority:
        if c == 0x2F, remainingStarts(0x2F) {
          state = .specialAuthorityIgnoreSlashes
          p += 1
        } else {
          state = .relative
          p -= 1
        }

      // § https://url.spec.whatwg.org/#path-or-authority-state
      case .pathOrAuthority:
        if c == 0x2F {
          state = .authority
          authorityStart = p + 1
        } else {
          state = .path
          p -= 1
        }

      // § https://url.spec.whatwg.org/#relative-state
      case .relative:
        let base = base!
        url.scheme = base.scheme
        url.special = base.special
        if c == 0x2F || (url.special != nil && c == 0x5C) {
          state = .relativeSlash
        } else {
          url.username = base.username
          url.password = base.password
          url.host = base.host
          url.port = base.port
          url.path = base.path
          url.query = base.query
          if c == 0x3F {
            url.query = []
            state = .query
          } else if c == 0x23 {
            url.fragment = []
            state = .fragment
          } else if c != -1 {
            url.query = nil
            url.shortenPath()
            state = .path
            p -= 1
          }
        }

      // § https://url.spec.whatwg.org/#relative-slash-state
      case .relativeSlash:
        if url.special != nil, c == 0x2F || c == 0x5C {
          state = .specialAuthorityIgnoreSlashes
        } else if c == 0x2F {
          state = .authority
          authorityStart = p + 1
        } else {
          let base = base!
          url.username = base.username
          url.password = base.password
          url.host = base.host
          url.port = base.port
          state = .path
          p -= 1
        }

      // § https://url.spec.whatwg.org/#special-authority-slashes-state
      case .specialAuthoritySlashes:
        if c == 0x2F, remainingStarts(0x2F) {
          state = .specialAuthorityIgnoreSlashes
          p += 1
        } else {
          state = .specialAuthorityIgnoreSlashes
          p -= 1
        }

      // § https://url.spec.whatwg.org/#special-authority-ignore-slashes-state
      case .specialAuthorityIgnoreSlashes:
        if c != 0x2F && c != 0x5C {
          state = .authority
          authorityStart = p
          p -= 1
        }

      // § https://url.spec.whatwg.org/#authority-state
      // The buffer is input[authorityStart..<p]; it is never copied.
      case .authority:
        if c == 0x40 {
          if atSignSeen {
            if passwordTokenSeen {
              url.password += [0x25, 0x34, 0x30]
            } else {
              url.username += [0x25, 0x34, 0x30]
            }
          }
          atSignSeen = true
          for i in authorityStart..<p {
            let b = input[i]
            if b == 0x3A && !passwordTokenSeen {
              passwordTokenSeen = true
              continue
            }
            if passwordTokenSeen {
              url.password.appendEncoding(b, .userinfo)
            } else {
              url.username.appendEncoding(b, .userinfo)
            }
          }
          authorityStart = p + 1
        } else if c == -1 || c == 0x2F || c == 0x3F || c == 0x23
          || (url.special != nil && c == 0x5C)
        {
          if atSignSeen && authorityStart == p {
            throw URLParseError(.hostMissing, at: p)
          }
          p = authorityStart - 1
          state = .host
        }

      // § https://url.spec.whatwg.org/#host-state
      case .host:
        if c == 0x3A && !insideBrackets {
          if buffer.isEmpty { throw URLParseError(.hostMissing, at: p) }
          url.host = try HostParser.parse(buffer, isOpaque: url.special == nil, at: p)
          buffer.removeAll(keepingCapacity: true)
          state = .port
        } else if c == -1 || c == 0x2F || c == 0x3F || c == 0x23
          || (url.special != nil && c == 0x5C)
        {
          p -= 1
          if url.special != nil && buffer.isEmpty { throw URLParseError(.hostMissing, at: p + 1) }
          url.host = try HostParser.parse(buffer, isOpaque: url.special == nil, at: p + 1)
          buffer.removeAll(keepingCapacity: true)
          state = .pathStart
        } else {
          if c == 0x5B { insideBrackets = true }
          if c == 0x5D { insideBrackets = false }
          buffer.append(UInt8(c))
        }

      // § https://url.spec.whatwg.org/#port-state
      case .port:
        if c >= 0, isASCIIDigit(UInt8(c)) {
          buffer.append(UInt8(c))
        } else if c == -1 || c == 0x2F || c == 0x3F || c == 0x23
          || (url.special != nil && c == 0x5C)
        {
          if !buffer.isEmpty {
            var port = 0
            for d in buffer {
              port = port * 10 + Int(d - 0x30)
              if port > 65535 { throw URLParseError(.portOutOfRange, at: p) }
            }
            url.port = port == url.special?.defaultPort ? nil : port
            buffer.removeAll(keepingCapacity: true)
          }
          state = .pathStart
          p -= 1
        } else {
          throw URLParseError(.portInvalid, at: p)
        }

      // § https://url.spec.whatwg.org/#file-state
      case .file:
        url.scheme = Array("file".utf8)
        url.special = .file
        url.host = []
        if c == 0x2F || c == 0x5C {
          state = .fileSlash
        } else if let base, base.special == .file {
          url.host = base.host
          url.path = base.path
          url.query = base.query
          if c == 0x3F {
            url.query = []
            state = .query
          } else if c == 0x23 {
            url.fragment = []
            state = .fragment
          } else if c != -1 {
            url.query = nil
            if !startsWithWindowsDriveLetter(input[p...]) {
              url.shortenPath()
            } else {
              url.path = []
            }
            state = .path
            p -= 1
          }
        } else {
          state = .path
          p -= 1
        }

      // § https://url.spec.whatwg.org/#file-slash-state
      case .fileSlash:
        if c == 0x2F || c == 0x5C {
          state = .fileHost
        } else {
          if let base, base.special == .file {
            url.host = base.host
            if !startsWithWindowsDriveLetter(input[min(p, n)...]),
              base.firstSegmentIsNormalizedDriveLetter
            {
              url.path += base.path[0..<3]
            }
          }
          state = .path
          p -= 1
        }

      // § https://url.spec.whatwg.org/#file-host-state
      case .fileHost:
        if c == -1 || c == 0x2F || c == 0x5C || c == 0x3F || c == 0x23 {
          p -= 1
          if isWindowsDriveLetter(buffer) {
            // The buffer is kept and becomes the first path segment.
            state = .path
          } else if buffer.isEmpty {
            url.host = []
            state = .pathStart
          } else {
            var host = try HostParser.parse(buffer, isOpaque: false, at: p + 1)
            if host.elementsEqual("localhost".utf8) { host = [] }
            url.host = host
            buffer.removeAll(keepingCapacity: true)
            state = .pathStart
          }
        } else {
          buffer.append(UInt8(c))
        }

      // § https://url.spec.whatwg.org/#path-start-state
      case .pathStart:
        if url.special != nil {
          state = .path
          if c != 0x2F && c != 0x5C { p -= 1 }
        } else if c == 0x3F {
          url.query = []
          state = .query
        } else if c == 0x23 {
          url.fragment = []
          state = .fragment
        } else if c != -1 {
          state = .path
          if c != 0x2F { p -= 1 }
        }

      // § https://url.spec.whatwg.org/#path-state
      case .path:
        let slash = c == 0x2F || (url.special != nil && c == 0x5C)
        if slash || c == -1 || c == 0x3F || c == 0x23 {
          if isDoubleDot(buffer) {
            url.shortenPath()
            if !slash { url.path.append(0x2F) }
          } else if isSingleDot(buffer) {
            if !slash { url.path.append(0x2F) }
          } else {
            if url.isFile, url.path.isEmpty, isWindowsDriveLetter(buffer) {
              buffer[1] = 0x3A
            }
            url.path.append(0x2F)
            url.path += buffer
          }
          buffer.removeAll(keepingCapacity: true)
          if c == 0x3F {
            url.query = []
            state = .query
          } else if c == 0x23 {
            url.fragment = []
            state = .fragment
          }
        } else {
          buffer.appendEncoding(UInt8(c), .path)
        }

      // § https://url.spec.whatwg.org/#cannot-be-a-base-url-path-state
      case .opaquePath:
        if c == 0x3F {
          url.query = []
          state = .query
        } else if c == 0x23 {
          url.fragment = []
          state = .fragment
        } else if c == 0x20 {
          let next = at(p + 1)
          if next == 0x3F || next == 0x23 {
            url.path += [0x25, 0x32, 0x30]
          } else {
            url.path.append(0x20)
          }
        } else if c != -1 {
          url.path.appendEncoding(UInt8(c), .c0Control)
        }

      // § https://url.spec.whatwg.org/#query-state
      case .query:
        if c == 0x23 {
          url.fragment = []
          state = .fragment
        } else if c != -1 {
          url.query!.appendEncoding(UInt8(c), url.special != nil ? .specialQuery : .query)
        }

      // § https://url.spec.whatwg.org/#fragment-state
      case .fragment:
        if c != -1 {
          url.fragment!.appendEncoding(UInt8(c), .fragment)
        }
      }
      if p >= n { break }
      p += 1
    }
    return try url.serialize()
  }
}
