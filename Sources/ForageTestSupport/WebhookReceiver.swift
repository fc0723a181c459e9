import ForageSupport
import Foundation

/// A webhook endpoint for tests that fails, hangs and recovers on cue, and
/// keeps every delivery it saw (also those it then failed).
///
///     let receiver = try WebhookReceiver(script: [.fail(status: 500), .hang(seconds: 30)])
///     defer { receiver.stop() }
///     // … point a "webhook" channel at receiver.url and deliver …
///     #expect(Set(receiver.deliveries.map(\.id)).count == receiver.deliveries.count - 2)
///
/// The n-th request gets `script[n]`; requests past the script get `then`.
public final class WebhookReceiver: Sendable {
  /// What the receiver does with one request.
  public enum Behaviour: Sendable, Hashable {
    /// 200 OK.
    case accept
    /// An error status (500, 404…).
    case fail(status: Int)
    /// 429 Too Many Requests with `Retry-After: seconds`.
    case throttle(retryAfter: Int)
    /// Answers nothing for `seconds` (or until the receiver stops).
    case hang(seconds: Double)
    /// Closes the connection without a byte.
    case reset
    /// 410 Gone: the endpoint is no more.
    case gone
  }

  /// One request the receiver saw.
  public struct Delivery: Sendable, Hashable {
    /// `webhook-id`.
    public var id: String?
    /// `webhook-timestamp`.
    public var timestamp: String?
    /// `webhook-signature`.
    public var signature: String?
    public var contentType: String?
    public var body: [UInt8]
    /// What the receiver did with it.
    public var behaviour: Behaviour

    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }
  }

  private struct State {
    var script: [Behaviour]
    var then: Behaviour
    var deliveries: [Delivery] = []
  }

  private let state: Locked<State>
  private let server: TestServer

  /// Starts a receiver on 127.0.0.1 answering at ``url``.
  ///
  /// - Throws: ``TestServerError`` when the socket cannot be set up.
  public init(script: [Behaviour] = [], then: Behaviour = .accept) throws {
    let state = Locked(State(script: script, then: then))
    self.state = state
    server = try TestServer(routes: [
      "/hook": .choosing { request in
        let behaviour = state.withLock { s -> Behaviour in
          let b = s.script.isEmpty ? s.then : s.script.removeFirst()
          s.deliveries.append(
            Delivery(
              id: request.header("webhook-id"), timestamp: request.header("webhook-timestamp"),
              signature: request.header("webhook-signature"), contentType: request.header("Content-Type"),
              body: request.body, behaviour: b))
          return b
        }
        switch behaviour {
        case .accept: return .response(.text("ok"))
        case .fail(let status): return .response(.text("failed", status: status))
        case .throttle(let seconds):
          return .response(.text("slow down", status: 429, headers: [("Retry-After", String(seconds))]))
        case .hang(let seconds): return .fault(.slowHeaders(seconds: seconds))
        case .reset: return .fault(.emptyResponse)
        case .gone: return .response(.text("gone", status: 410))
        }
      }
    ])
  }

  /// `http://127.0.0.1:PORT/hook`.
  public var url: String { server.url("/hook") }

  /// Every request so far, in arrival order.
  public var deliveries: [Delivery] { state.withLock { $0.deliveries } }

  /// Requests answered with `.accept`.
  public var accepted: [Delivery] { deliveries.filter { $0.behaviour == .accept } }

  /// Replaces what the coming requests get.
  public func script(_ script: [Behaviour], then: Behaviour = .accept) {
    state.withLock {
      $0.script = script
      $0.then = then
    }
  }

  /// Stops listening and wakes any hanging request.
  public func stop() { server.stop() }
}
