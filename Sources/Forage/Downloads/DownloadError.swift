/// Why a download could not be queued or finished. The message is a sentence for a
/// person that names the URL or file; ``kind`` tells the cases apart.
public struct DownloadError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What went wrong.
  public enum Kind: String, Sendable, Hashable {
    /// The URL is not an absolute http(s) URL.
    case invalidURL
    /// The expected SHA-256 is not 64 hex digits.
    case invalidChecksum
    /// The destination folder is missing, not a folder, or not writable.
    case folder
    /// Something other than a regular file is where the part file goes.
    case partFile
    /// The server answered with an error status (404, 410, 500 after retries…).
    case http
    /// The file's size or SHA-256 differs from the expected one on every attempt.
    case verification
    /// The disk is full; the part file is kept for the next attempt.
    case diskFull
    /// The transfer failed (connection, limits, TLS) on every attempt.
    case transfer
  }

  /// What went wrong.
  public let kind: Kind
  /// A sentence for a person.
  public let message: String

  /// Creates an error.
  public init(_ kind: Kind, _ message: String) {
    self.kind = kind
    self.message = message
  }

  /// The sentence for a person (`message`).
  public var description: String { message }
}
