/// The tree builder's insertion modes, one case per mode of the spec.
///
/// The spec's former "in select" and "in select in table" modes are gone:
/// since customizable `<select>`, its content parses in body.
///
/// - SeeAlso: <https://html.spec.whatwg.org/#insertion-mode>
enum InsertionMode: UInt8, Sendable {
  /// https://html.spec.whatwg.org/#the-initial-insertion-mode
  case initial
  /// https://html.spec.whatwg.org/#the-before-html-insertion-mode
  case beforeHTML
  /// https://html.spec.whatwg.org/#the-before-head-insertion-mode
  case beforeHead
  /// https://html.spec.whatwg.org/#parsing-main-inhead
  case inHead
  /// https://html.spec.whatwg.org/#parsing-main-inheadnoscript
  case inHeadNoscript
  /// https://html.spec.whatwg.org/#the-after-head-insertion-mode
  case afterHead
  /// https://html.spec.whatwg.org/#parsing-main-inbody
  case inBody
  /// https://html.spec.whatwg.org/#parsing-main-incdata
  case text
  /// https://html.spec.whatwg.org/#parsing-main-intable
  case inTable
  /// https://html.spec.whatwg.org/#parsing-main-intabletext
  case inTableText
  /// https://html.spec.whatwg.org/#parsing-main-incaption
  case inCaption
  /// https://html.spec.whatwg.org/#parsing-main-incolgroup
  case inColumnGroup
  /// https://html.spec.whatwg.org/#parsing-main-intbody
  case inTableBody
  /// https://html.spec.whatwg.org/#parsing-main-intr
  case inRow
  /// https://html.spec.whatwg.org/#parsing-main-intd
  case inCell
  /// https://html.spec.whatwg.org/#parsing-main-intemplate
  case inTemplate
  /// https://html.spec.whatwg.org/#parsing-main-afterbody
  case afterBody
  /// https://html.spec.whatwg.org/#parsing-main-inframeset
  case inFrameset
  /// https://html.spec.whatwg.org/#parsing-main-afterframeset
  case afterFrameset
  /// https://html.spec.whatwg.org/#the-after-after-body-insertion-mode
  case afterAfterBody
  /// https://html.spec.whatwg.org/#the-after-after-frameset-insertion-mode
  case afterAfterFrameset
}
