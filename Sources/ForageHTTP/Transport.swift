/// Something that performs one HTTP exchange: no redirects followed, no retries.
///
/// ``CurlTransport`` is the Linux default, ``URLSessionTransport`` the Apple default;
/// both pass the same test suite. The ``Fetcher`` adds redirects, robots.txt,
/// politeness and retries on top.
///
///     let transport: any Transport = CurlTransport()
///     let response = try await transport.fetch(Request(url: url))
public protocol Transport: Sendable {
  /// Performs `request` and returns the response, whatever its status.
  ///
  /// Cancelling the calling task aborts the exchange.
  ///
  /// - Throws: ``FetchError`` when no complete response arrived within the request's
  ///   ``TransferLimits`` (the error's ``FetchError/kind`` names the limit).
  func fetch(_ request: Request) async throws -> Response
}
