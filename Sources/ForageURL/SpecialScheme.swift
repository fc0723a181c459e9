/// The special schemes and their default ports.
///
/// - SeeAlso: <https://url.spec.whatwg.org/#special-scheme>
enum SpecialScheme: UInt8, Sendable {
  case ftp, file, http, https, ws, wss

  init?(_ scheme: String) {
    switch scheme {
    case "ftp": self = .ftp
    case "file": self = .file
    case "http": self = .http
    case "https": self = .https
    case "ws": self = .ws
    case "wss": self = .wss
    default: return nil
    }
  }

  init?<C: Collection<UInt8>>(bytes: C) {
    switch bytes.count {
    case 2: if bytes.elementsEqual("ws".utf8) { self = .ws; return }
    case 3:
      if bytes.elementsEqual("ftp".utf8) { self = .ftp; return }
      if bytes.elementsEqual("wss".utf8) { self = .wss; return }
    case 4:
      if bytes.elementsEqual("http".utf8) { self = .http; return }
      if bytes.elementsEqual("file".utf8) { self = .file; return }
    case 5: if bytes.elementsEqual("https".utf8) { self = .https; return }
    default: break
    }
    return nil
  }

  var defaultPort: Int? {
    switch self {
    case .ftp: 21
    case .file: nil
    case .http, .ws: 80
    case .https, .wss: 443
    }
  }
}
