#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif
import Foundation
import ForageHTTP
import ForageSupport
import ForageURL

/// How one delivery attempt ended.
enum DeliveryResult: Sendable, Hashable {
  /// The receiver accepted it.
  case delivered
  /// It failed and may succeed later; `retryAfter` is the receiver's wish.
  case failed(String, retryAfter: Duration? = nil)
  /// The receiver said it is gone for good (HTTP 410): the channel turns off.
  case gone(String)
}

/// One way of delivering a notification document. The Apple adapter adds
/// local notifications through the same protocol.
protocol DeliveryChannel: Sendable {
  /// Delivers `body` (one JSON document, without a trailing newline) under
  /// the idempotency key `messageID`. Cancelling the calling task abandons
  /// the attempt (it ends as failed).
  func deliver(_ body: [UInt8], messageID: String, at date: Date) async -> DeliveryResult
}

extension NotifyChannel {
  /// The channel's target as text: what a 410 turns off, and what must
  /// change for the channel to work again. Never holds a secret.
  var targetText: String {
    switch target {
    case .webhook(let url, _): return url
    case .command(let argv): return argv.joined(separator: " ")
    case .file(let path): return path
    case .stdout: return "stdout"
    case .local: return "local notifications"
    }
  }

  /// The channel that delivers for this config entry.
  ///
  /// - Parameters:
  ///   - directory: the config file's folder, for relative file paths.
  ///   - environment: where a webhook's signing secret is read, and what a
  ///     command's program may be given of it (see ``CommandChannel``).
  ///   - localNotifications: what shows a `local` channel's notifications.
  func deliveryChannel(
    transport: any Transport, directory: String?, environment: [String: String],
    localNotifications: (any LocalNotificationPresenter)? = nil
  ) -> any DeliveryChannel {
    switch target {
    case .webhook(let url, let secretEnv):
      return WebhookChannel(
        url: url, secret: secretEnv.map { WebhookChannel.secret(named: $0, in: environment) }, timeout: timeout,
        transport: transport)
    case .command(let argv):
      return CommandChannel(argv: argv, timeout: timeout, parent: environment, env: env, passEnv: passEnv)
    case .file(let path):
      let full = path.hasPrefix("/") || directory == nil || directory!.isEmpty
        ? path : (directory! as NSString).appendingPathComponent(path)
      return FileChannel(path: full)
    case .stdout:
      return FileChannel(path: nil)
    case .local:
      return LocalChannel(presenter: localNotifications)
    }
  }
}

/// POSTs the document to a URL the Standard Webhooks way: `webhook-id` (the
/// same on every retry), `webhook-timestamp` (Unix seconds) and, with a
/// secret, `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.
/// 2xx is delivered; 410 turns the channel off; anything else, a redirect
/// included, is retried (a 429's or 503's `Retry-After` is respected).
///
/// - SeeAlso: <https://www.standardwebhooks.com>,
///   <https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md>
struct WebhookChannel: DeliveryChannel {
  let url: String
  /// The signing key, or why there is none (a sentence naming the variable).
  let secret: Result<[UInt8], SecretProblem>?
  let timeout: Duration
  let transport: any Transport

  /// Why a secret could not be had; never holds the secret.
  struct SecretProblem: Error, Hashable {
    let message: String
  }

  /// The key in environment variable `name`: `whsec_` then base64 (a value
  /// without the prefix is read as base64 too).
  static func secret(named name: String, in environment: [String: String]) -> Result<[UInt8], SecretProblem> {
    guard let value = environment[name], !value.isEmpty else {
      return .failure(SecretProblem(
        message: "the environment variable \(name), which holds this webhook's signing secret, is not set"))
    }
    let encoded = value.hasPrefix("whsec_") ? String(value.dropFirst(6)) : value
    guard let key = Data(base64Encoded: encoded), !key.isEmpty else {
      return .failure(SecretProblem(
        message: "the environment variable \(name) does not hold a signing secret (\"whsec_\" and base64)"))
    }
    return .success(Array(key))
  }

  /// The `webhook-signature` value of a message.
  static func signature(key: [UInt8], messageID: String, timestamp: Int, body: [UInt8]) -> String {
    let signed = Array("\(messageID).\(timestamp).".utf8) + body
    return "v1," + Data(HMAC.sha256(key: key, message: signed)).base64EncodedString()
  }

  func deliver(_ body: [UInt8], messageID: String, at date: Date) async -> DeliveryResult {
    guard let target = WebURL(url) else { return .failed("\(url) is not a URL") }
    let timestamp = Int(date.timeIntervalSince1970)
    var headers: HTTPHeaders = [:]
    headers["Content-Type"] = "application/json"
    headers["User-Agent"] = FetchDefaults.userAgent
    headers["webhook-id"] = messageID
    headers["webhook-timestamp"] = String(timestamp)
    switch secret {
    case .none: break
    case .success(let key)?:
      headers["webhook-signature"] = Self.signature(key: key, messageID: messageID, timestamp: timestamp, body: body)
    case .failure(let problem)?:
      return .failed(problem.message)
    }
    let limits = TransferLimits(
      timeout: timeout, connectTimeout: min(timeout, FetchDefaults.connectTimeout),
      maxBodySize: 64 * 1024, truncateBody: true)
    let request = Request(url: target, method: "POST", headers: headers, body: body, limits: limits)
    let response: Response
    do {
      response = try await transport.fetch(request)
    } catch let error as FetchError {
      return .failed("\(url): \(error)")
    } catch {
      return .failed("\(url): \(error.localizedDescription)")
    }
    switch response.status {
    case 200..<300:
      return .delivered
    case 410:
      return .gone("\(url) answered 410 Gone")
    case 300..<400:
      let location = response.headers["Location"].map { " to \($0)" } ?? ""
      return .failed(
        "\(url) answered \(response.status) (a redirect\(location)); webhooks are not redirected: point the channel at the new URL")
    default:
      var retryAfter: Duration?
      if response.status == 429 || response.status == 503 {
        retryAfter = response.headers["Retry-After"].flatMap { RetryPolicy.parseRetryAfter($0) }
      }
      return .failed("\(url) answered HTTP \(response.status)", retryAfter: retryAfter)
    }
  }
}

/// Runs a program (argv, no shell) with the document on stdin; exit status
/// 0 is delivered.
///
/// The program's environment is not Forage's: a daemon's environment holds
/// secrets (database URLs, other channels' signing keys) the program has no
/// business seeing. It gets `PATH` (Forage's, else
/// ``CommandRunner/defaultSearchPath``), `HOME`, `LANG`, `LC_ALL` and `TZ`
/// (those Forage has), the channel's `passEnv` variables, its `env`
/// variables (which win over the basic ones), and `FORAGE_MESSAGE_ID`.
struct CommandChannel: DeliveryChannel {
  let argv: [String]
  let timeout: Duration
  /// The program's environment but `FORAGE_MESSAGE_ID`.
  let environment: [String: String]
  /// The `passEnv` variables Forage's environment does not have: each
  /// attempt fails, naming the first.
  let missing: [String]

  /// The variables of Forage's environment every program gets.
  static let basicVariables = ["PATH", "HOME", "LANG", "LC_ALL", "TZ"]

  /// - Parameters:
  ///   - parent: Forage's environment.
  ///   - env: the channel's `env`; they win over the basic variables.
  ///   - passEnv: the channel's `passEnv`: names of `parent`'s variables.
  init(
    argv: [String], timeout: Duration, parent: [String: String], env: [String: String] = [:], passEnv: [String] = []
  ) {
    self.argv = argv
    self.timeout = timeout
    var environment: [String: String] = [:]
    for name in Self.basicVariables { if let value = parent[name] { environment[name] = value } }
    if environment["PATH"]?.isEmpty ?? true { environment["PATH"] = CommandRunner.defaultSearchPath }
    var missing: [String] = []
    for name in passEnv {
      if let value = parent[name] { environment[name] = value } else { missing.append(name) }
    }
    for (name, value) in env { environment[name] = value }
    self.environment = environment
    self.missing = missing
  }

  func deliver(_ body: [UInt8], messageID: String, at date: Date) async -> DeliveryResult {
    let name = argv.first ?? ""
    if let variable = missing.first {
      return .failed(
        "the environment variable \(variable), which this command channel passes to \(name) (passEnv), is not set")
    }
    var environment = self.environment
    environment["FORAGE_MESSAGE_ID"] = messageID
    let outcome = await CommandRunner.run(argv, input: body + [0x0A], timeout: timeout, environment: environment)
    let tail = outcome.stderrTail.trimmingCharacters(in: .whitespacesAndNewlines)
    let said = tail.isEmpty ? "" : ": \(tail.split(separator: "\n").last.map(String.init) ?? tail)"
    switch outcome.end {
    case .exited(0):
      return .delivered
    case .exited(let status):
      return .failed("the command \(name) exited with status \(status)\(said)")
    case .signalled(let signal):
      return .failed("the command \(name) was killed by signal \(signal)\(said)")
    case .timedOut:
      return .failed("the command \(name) did not finish within \(Units.format(timeout)) and was stopped")
    case .couldNotStart(let reason):
      return .failed(reason)
    }
  }
}

/// Appends the document as one JSON line, in one write, then fsyncs: a
/// line is in the file whole or not at all. Nil `path` writes to standard
/// output. Only a regular file is appended to (created when missing).
struct FileChannel: DeliveryChannel {
  let path: String?

  func deliver(_ body: [UInt8], messageID: String, at date: Date) async -> DeliveryResult {
    let line = body + [0x0A]
    guard let path else {
      // Standard output is often a terminal: the 8-bit controls (U+009B,
      // a CSI) are escaped as JSON escaped the 7-bit ones.
      let shown = TerminalText.escapingJSON(body) + [0x0A]
      let error = shown.withUnsafeBufferPointer { writeAll(1, $0) }
      return error == 0 ? .delivered : .failed("cannot write to standard output: \(String(cString: strerror(error)))")
    }
    let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0o644)
    guard fd >= 0 else {
      let e = errno
      if e == EISDIR { return .failed("\(path) is a folder, not a regular file; notifications are appended only to one") }
      return .failed("cannot open \(path) to append notifications: \(String(cString: strerror(e)))")
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
      return .failed("\(path) is not a regular file; notifications are appended only to one")
    }
    let error = line.withUnsafeBufferPointer { writeAll(fd, $0) }
    guard error == 0 else { return .failed("cannot append to \(path): \(String(cString: strerror(error)))") }
    guard fsync(fd) == 0 else {
      let e = errno
      return .failed("cannot flush \(path) to disk: \(String(cString: strerror(e)))")
    }
    return .delivered
  }
}
