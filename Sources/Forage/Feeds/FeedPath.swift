/// A path to extension data inside a feed entry, for fields beyond the fixed
/// ones (iTunes, Media RSS, Dublin Core…):
///
///     itunes:duration                   the text of <itunes:duration>
///     itunes:image/@href                the href attribute of <itunes:image>
///     media:group/media:content/@url    a nested element's attribute
///     /_custom/rating                   a JSON Feed item's member (a JSON Pointer)
///
/// A step `p:name` matches an element named `name` whose prefix is `p` as
/// written, or whose namespace is the one `p` conventionally stands for
/// (`itunes`, `media`, `dc`, `content`, `atom`, `georss`, `podcast`), so a
/// feed that picked another prefix still matches. A step without a prefix
/// matches the local name alone. Every element a path reaches counts, in
/// document order (a field with `all` keeps them all).
public struct FeedPath: Sendable, Hashable, CustomStringConvertible {
  /// One element step: its prefix (nil for none) and local name.
  struct Step: Sendable, Hashable {
    var prefix: String?
    var local: String
  }

  /// The path as written.
  public let description: String
  let steps: [Step]
  /// The attribute the last step reads, if any.
  let attribute: String?
  /// A JSON Pointer into a JSON Feed item (the path starts with `/`).
  let pointer: String?

  /// The namespaces of common feed extensions, by their usual prefix.
  static let wellKnown: [String: String] = [
    "itunes": "http://www.itunes.com/dtds/podcast-1.0.dtd",
    "media": "http://search.yahoo.com/mrss/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "content": "http://purl.org/rss/1.0/modules/content/",
    "atom": "http://www.w3.org/2005/Atom",
    "georss": "http://www.georss.org/georss",
    "podcast": "https://podcastindex.org/namespace/1.0",
  ]

  /// Reads a path; nil with the reason when it is not one.
  public static func parse(_ text: String) -> Result<FeedPath, FeedPathError> {
    if text.hasPrefix("/") {
      return .success(FeedPath(description: text, steps: [], attribute: nil, pointer: text))
    }
    let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    guard !text.isEmpty, !parts.contains(where: \.isEmpty) else {
      return .failure(FeedPathError("a path has element names between slashes, such as itunes:image/@href"))
    }
    var steps: [Step] = []
    var attribute: String?
    for (i, part) in parts.enumerated() {
      if part.hasPrefix("@") {
        guard i == parts.count - 1, part.count > 1 else {
          return .failure(FeedPathError("an attribute (@name) can only end a path"))
        }
        attribute = String(part.dropFirst())
        continue
      }
      let names = part.split(separator: ":", omittingEmptySubsequences: false)
      guard names.count <= 2, names.allSatisfy({ !$0.isEmpty && !$0.contains(where: \.isWhitespace) }) else {
        return .failure(FeedPathError("\"\(part)\" is not an element name (name or prefix:name)"))
      }
      steps.append(names.count == 2 ? Step(prefix: String(names[0]), local: String(names[1])) : Step(prefix: nil, local: part))
    }
    guard !steps.isEmpty else { return .failure(FeedPathError("a path starts with an element name")) }
    return .success(FeedPath(description: text, steps: steps, attribute: attribute, pointer: nil))
  }

  /// The texts this path reaches under `element`, in document order.
  func values(in element: XMLElement) -> [String] {
    guard pointer == nil else { return [] }
    var current = [element]
    for step in steps {
      current = current.flatMap { $0.elements.filter { matches($0, step) } }
      if current.isEmpty { return [] }
    }
    if let attribute {
      return current.compactMap { $0.attribute(attribute) }
    }
    return current.compactMap { Feed.text($0) }
  }

  /// The values this path reaches in a JSON Feed item.
  func values(in item: JSONValue) -> [JSONValue] {
    guard let pointer, let found = JSONPointer.resolve(pointer, in: item), found != .null else { return [] }
    return [found]
  }

  private func matches(_ e: XMLElement, _ step: Step) -> Bool {
    guard e.local == step.local else { return false }
    guard let prefix = step.prefix else { return true }
    return e.prefix == prefix || (FeedPath.wellKnown[prefix].map { $0 == e.namespace } ?? false)
  }
}

/// Why a feed path is not one.
public struct FeedPathError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong with the path, as a sentence.
  public let description: String
  init(_ description: String) { self.description = description }
}
