import ForageHTTP
import ForageTestSupport
import ForageURL
import Testing

/// The transports every shared test runs against.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case curl, urlSession

  func make() -> any Transport {
    switch self {
    #if canImport(CCurl)
    case .curl: CurlTransport()
    #else
    case .curl: URLSessionTransport()
    #endif
    case .urlSession: URLSessionTransport()
    }
  }

  var testDescription: String { rawValue }
}

protocol CustomTestStringConvertible {}

extension TestServer {
  /// The server URL of `path` as a WebURL.
  func webURL(_ path: String) -> WebURL {
    WebURL(url(path))!
  }
}

/// Small limits so that hostile cases end quickly.
func quickLimits(
  timeout: Duration = .seconds(3), lowSpeedLimit: Int = 0, lowSpeedTime: Duration = .seconds(1),
  maxBodySize: Int = 1 << 20, maxHeaderSize: Int = 64 << 10
) -> TransferLimits {
  TransferLimits(
    timeout: timeout, connectTimeout: .seconds(2), lowSpeedLimit: lowSpeedLimit,
    lowSpeedTime: lowSpeedTime, maxBodySize: maxBodySize, maxHeaderSize: maxHeaderSize)
}

/// The error a fetch ended with, or nil when it succeeded.
func fetchError(_ transport: any Transport, _ request: Request) async -> FetchError? {
  do {
    _ = try await transport.fetch(request)
    return nil
  } catch let error as FetchError {
    return error
  } catch {
    return FetchError(.transport, host: nil, "unexpected \(error)")
  }
}
