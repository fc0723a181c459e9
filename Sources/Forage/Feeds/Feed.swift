/// A feed as Forage reads it: RSS 0.9x/2.0, RSS 1.0 (RDF), Atom 0.3 and 1.0,
/// or JSON Feed 1.0/1.1, all mapped to one shape.
///
///     let feed = try Feed.parse(bytes, url: WebURL("https://example.com/rss")!)
///     feed.entries.first?.title      // "Hello"
///     feed.problems                  // why the document was malformed, if it was
///
/// The format comes from the content, never from the URL or Content-Type.
public struct Feed: Sendable, Hashable {
  /// The feed's format, as detected.
  public var format: FeedFormat
  /// The format's version as the document states it (`"2.0"`, `"0.91"`,
  /// `"https://jsonfeed.org/version/1.1"`), if it does.
  public var version: String?
  /// The feed's title, as text (markup removed).
  public var title: String?
  /// The feed's subtitle (Atom 1.0 `subtitle`, Atom 0.3 `tagline`, RSS
  /// channel `description`): HTML when `subtitleIsHTML`, else text.
  public var subtitle: String?
  /// Whether `subtitle` is HTML.
  public var subtitleIsHTML = false
  /// The feed's rights statement (Atom 1.0 `rights`, Atom 0.3 `copyright`,
  /// RSS `copyright` or `dc:rights`): HTML when `rightsIsHTML`, else text.
  public var rights: String?
  /// Whether `rights` is HTML.
  public var rightsIsHTML = false
  /// The feed's home page, absolute.
  public var link: String?
  /// The feed's identifier (Atom `id`), if any.
  public var id: String?
  /// When the feed last changed, ISO 8601 UTC.
  public var updated: String?
  /// The feed's author (the name), if any.
  public var author: String?
  /// The entries, in document order.
  public var entries: [FeedEntry] = []
  /// What was wrong with the document (an undeclared entity, a truncated
  /// document…); empty for a well-formed feed. Entries are still read.
  public var problems: [String] = []
  /// The character encoding the document was decoded with (an Encoding Standard name).
  public var encoding: String = "UTF-8"

  /// True when the document had problems (it was read leniently).
  public var isMalformed: Bool { !problems.isEmpty }

  /// A feed of the given format with nothing in it yet.
  public init(format: FeedFormat) { self.format = format }
}

/// The feed formats Forage reads.
public enum FeedFormat: String, Sendable, Hashable {
  /// RSS 0.9x and 2.0 (root `<rss>`).
  case rss
  /// RSS 1.0 and 0.90 (root `<rdf:RDF>`).
  case rdf
  /// Atom 0.3 (namespace `http://purl.org/atom/ns#`).
  case atom03
  /// Atom 1.0 (RFC 4287).
  case atom
  /// JSON Feed 1.0 and 1.1.
  case jsonFeed
}

/// One entry (an RSS item, an Atom entry, a JSON Feed item).
public struct FeedEntry: Sendable, Hashable {
  /// The guid (RSS), id (Atom, JSON Feed) or `rdf:about` (RSS 1.0).
  public var id: String?
  /// The title, as text (markup removed).
  public var title: String?
  /// The entry's page, absolute (`xml:base`, then the feed's URL).
  public var link: String?
  /// First published, ISO 8601 UTC.
  public var published: String?
  /// Last updated, ISO 8601 UTC.
  public var updated: String?
  /// The summary: HTML when `summaryIsHTML`, else text.
  public var summary: String?
  /// Whether `summary` is HTML.
  public var summaryIsHTML = false
  /// The full content: HTML when `contentIsHTML`, else text.
  public var content: String?
  /// Whether `content` is HTML.
  public var contentIsHTML = false
  /// The entry's rights statement (Atom `rights`, Atom 0.3 `copyright`, RSS
  /// `dc:rights`): HTML when `rightsIsHTML`, else text.
  public var rights: String?
  /// Whether `rights` is HTML.
  public var rightsIsHTML = false
  /// The author's name (or, when only an address is given, the address).
  public var author: String?
  /// The author's e-mail address, when given.
  public var authorEmail: String?
  /// The author's home page, absolute, when given.
  public var authorURL: String?
  /// Category terms, in order.
  public var categories: [String] = []
  /// Attached media (podcast episodes…).
  public var enclosures: [FeedEnclosure] = []
  /// What each extension path asked of the parse reached in this entry, by
  /// the path as written (texts from XML feeds, values from JSON Feed).
  public var extensions: [String: [JSONValue]] = [:]

  /// An empty entry.
  public init() {}
}

/// A file attached to an entry.
public struct FeedEnclosure: Sendable, Hashable {
  /// Where the file is, absolute.
  public var url: String
  /// Its media type, when given.
  public var type: String?
  /// Its size in bytes, when given.
  public var length: Int?

  /// An enclosure.
  public init(url: String, type: String? = nil, length: Int? = nil) {
    self.url = url
    self.type = type
    self.length = length
  }
}

/// Why a document could not be read as a feed at all.
public struct FeedError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong, for a person.
  public var description: String

  init(_ description: String) { self.description = description }
}
