import Foundation

/// Where a ``ChangeStream`` starts: at the beginning of the history kept, at
/// its end, or after a change an earlier stream yielded.
///
///     var cursor = ChangeCursor(savedText) ?? .latest       // kept across launches
///     for try await change in engine.changes(source: "catalog", after: cursor) {
///       apply(change)
///       cursor = change.cursor
///       save(cursor.description)                              // "1234"
///     }
///
/// A cursor after a change is that change's id in the store, which never
/// changes: ``changeID`` and ``description`` are its stable integer and
/// textual forms, and `Codable` writes the integer (`.start` and `.latest`
/// as the strings `"start"` and `"latest"`). A cursor belongs to the store
/// whose change it names.
public struct ChangeCursor: Sendable, Hashable {
  enum Position: Hashable {
    case start
    case latest
    case after(Int64)
  }

  let position: Position

  /// Every change the store still keeps, oldest first.
  public static let start = ChangeCursor(position: .start)

  /// Only changes committed after the stream was made (the newest change is
  /// looked up when ``ChangeStream`` is made, not when it is first read).
  public static let latest = ChangeCursor(position: .latest)

  /// The changes after the one `cursor` was taken from (`change.cursor`):
  /// where an earlier stream stopped. The same cursor as `cursor` itself;
  /// written out for the reader of `engine.changes(source:after: .after(saved))`.
  public static func after(_ cursor: ChangeCursor) -> ChangeCursor { cursor }

  /// The cursor after the change whose id in the store is `changeID`
  /// (``RecordChange/id``); 0 is before the first change ever written.
  public init(changeID: Int64) { position = .after(max(0, changeID)) }

  init(position: Position) { self.position = position }

  /// The id of the change this cursor is after; nil for ``start`` and ``latest``.
  public var changeID: Int64? {
    if case .after(let id) = position { return id }
    return nil
  }
}

extension ChangeCursor: LosslessStringConvertible {
  /// The cursor's stable text: the change id (`"1234"`), `"start"` or `"latest"`.
  public var description: String {
    switch position {
    case .start: "start"
    case .latest: "latest"
    case .after(let id): String(id)
    }
  }

  /// Reads a cursor's ``description`` back; nil for any other text.
  public init?(_ description: String) {
    switch description {
    case "start": self = .start
    case "latest": self = .latest
    default:
      guard let id = Int64(description), id >= 0 else { return nil }
      self.init(changeID: id)
    }
  }
}

extension ChangeCursor: Codable {
  /// Reads the form ``encode(to:)`` writes: an integer, `"start"` or
  /// `"latest"` (a change id written as a string is read too).
  ///
  /// - Throws: `DecodingError.dataCorrupted` for anything else.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let id = try? container.decode(Int64.self), id >= 0 {
      self.init(changeID: id)
      return
    }
    guard let text = try? container.decode(String.self), let cursor = ChangeCursor(text) else {
      throw DecodingError.dataCorrupted(
        .init(
          codingPath: decoder.codingPath,
          debugDescription: "A change cursor is a change id (a whole number from 0), \"start\" or \"latest\"."))
    }
    self = cursor
  }

  /// Writes the change id as an integer; `.start` and `.latest` as strings.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch position {
    case .after(let id): try container.encode(id)
    default: try container.encode(description)
    }
  }
}

extension RecordChange {
  /// The cursor after this change: a stream made with `after: change.cursor`
  /// yields the changes committed after it (keep it to resume there).
  public var cursor: ChangeCursor { ChangeCursor(changeID: id) }
}
