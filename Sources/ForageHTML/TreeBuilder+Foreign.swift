/// Foreign content (SVG and MathML): the rules, integration points and the
/// name adjustments.
extension TreeBuilder {
  /// https://html.spec.whatwg.org/#mathml-text-integration-point
  func isMathMLTextIntegrationPoint(_ e: OpenElement) -> Bool {
    e.ns == .mathml && (e.code == T.mi || e.code == T.mo || e.code == T.mn || e.code == T.ms || e.code == T.mtext)
  }

  /// https://html.spec.whatwg.org/#html-integration-point
  func isHTMLIntegrationPoint(_ e: OpenElement) -> Bool {
    if e.ns == .svg { return e.code == T.foreignObject || e.code == T.desc || e.code == T.title }
    if e.ns == .mathml && e.code == T.annotationXml {
      if let enc = doc.attribute(NodeID(raw: e.node), "encoding")?.lowercased() {
        return enc == "text/html" || enc == "application/xhtml+xml"
      }
    }
    return false
  }

  /// https://html.spec.whatwg.org/#parsing-main-inforeign
  func processForeign(_ token: BuilderToken) -> BuilderToken? {
    switch token {
    case .chars(var s):
      if framesetOK && hasVisibleCharacter(s) { framesetOK = false }
      if charsMayHaveNUL && containsNUL(s) {
        error("unexpected-null-character")
        s = replacingNUL(s)
      }
      insertCharacters(s)
      return nil
    case .comment(let s):
      insertComment(s)
      return nil
    case .doctype:
      error("unexpected-doctype")
      return nil
    case .start(var t):
      let breakout = T.foreignBreakout.contains(t.code)
        || (t.code == T.font && doc.attributes(in: t.attributes).contains { $0.name == A.color || $0.name == A.face || $0.name == A.size })
      if breakout {
        error("unexpected-html-in-foreign-content")
        while let c = stack.last, c.ns != .html, !isMathMLTextIntegrationPoint(c), !isHTMLIntegrationPoint(c) {
          pop()
        }
        return processInMode(token)
      }
      let ns = adjustedCurrentNode?.ns ?? .html
      if ns == .svg, let adjusted = Self.svgTagNames[doc.names[Int(t.code)]] {
        t.code = doc.intern(adjusted)
      }
      adjustForeignAttributes(&t, ns)
      insertElement(t, ns)
      if t.selfClosing { pop() }
      return nil
    case .end(let t) where t.code == T.br || t.code == T.p:
      error("unexpected-html-in-foreign-content")
      while let c = stack.last, c.ns != .html, !isMathMLTextIntegrationPoint(c), !isHTMLIntegrationPoint(c) {
        pop()
      }
      return processInMode(token)
    case .end(let t):
      let name = doc.names[Int(t.code)]
      var i = stack.count - 1
      if !Self.lowercasedName(doc.names[Int(stack[i].code)], equals: name) { error("unexpected-end-tag") }
      while i > 0 {
        let node = stack[i]
        if Self.lowercasedName(doc.names[Int(node.code)], equals: name) {
          while stack.count > i { pop() }
          return nil
        }
        i -= 1
        if stack[i].ns == .html { return processInMode(token) }
      }
      return nil
    case .eof:
      return processInMode(token)
    }
  }

  static func lowercasedName(_ name: String, equals lower: String) -> Bool {
    let a = name.utf8, b = lower.utf8
    guard a.count == b.count else { return false }
    return zip(a, b).allSatisfy { toLower($0) == $1 }
  }

  /// Adjusts MathML or SVG attribute names and the foreign (xlink, xml,
  /// xmlns) attributes of a tag inserted in namespace `ns`.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#adjust-mathml-attributes>,
  ///   <https://html.spec.whatwg.org/#adjust-svg-attributes>,
  ///   <https://html.spec.whatwg.org/#adjust-foreign-attributes>
  func adjustForeignAttributes(_ t: inout TagToken, _ ns: Namespace) {
    guard t.attributes.count > 0 else { return }
    // Adjusted copies go to the end of `doc.attributes`: the token's range
    // may be shared (with the active formatting list), so it is not
    // changed in place.
    var attributes = doc.attributes(in: t.attributes).map(doc.attribute)
    var changed = false
    for i in attributes.indices {
      let name = attributes[i].name
      if ns == .mathml && name == "definitionurl" {
        attributes[i].name = "definitionURL"
        changed = true
      } else if ns == .svg, let adjusted = Self.svgAttributeNames[name] {
        attributes[i].name = adjusted
        changed = true
      }
      if let (prefix, local, space) = Self.foreignAttributes[name] {
        attributes[i].name = local
        attributes[i].prefix = prefix
        attributes[i].namespace = space
        changed = true
      }
    }
    if changed { t.attributes = doc.appendAttributes(attributes) }
  }

  static let foreignAttributes: [String: (String?, String, AttributeNamespace)] = [
    "xlink:actuate": ("xlink", "actuate", .xlink), "xlink:arcrole": ("xlink", "arcrole", .xlink),
    "xlink:href": ("xlink", "href", .xlink), "xlink:role": ("xlink", "role", .xlink),
    "xlink:show": ("xlink", "show", .xlink), "xlink:title": ("xlink", "title", .xlink),
    "xlink:type": ("xlink", "type", .xlink), "xml:lang": ("xml", "lang", .xml),
    "xml:space": ("xml", "space", .xml), "xmlns": (nil, "xmlns", .xmlns),
    "xmlns:xlink": ("xmlns", "xlink", .xmlns),
  ]

  /// https://html.spec.whatwg.org/#parsing-main-inforeign (SVG tag names)
  static let svgTagNames: [String: String] = {
    var d: [String: String] = [:]
    for n in [
      "altGlyph", "altGlyphDef", "altGlyphItem", "animateColor", "animateMotion", "animateTransform",
      "clipPath", "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feConvolveMatrix",
      "feDiffuseLighting", "feDisplacementMap", "feDistantLight", "feDropShadow", "feFlood", "feFuncA",
      "feFuncB", "feFuncG", "feFuncR", "feGaussianBlur", "feImage", "feMerge", "feMergeNode",
      "feMorphology", "feOffset", "fePointLight", "feSpecularLighting", "feSpotLight", "feTile",
      "feTurbulence", "foreignObject", "glyphRef", "linearGradient", "radialGradient", "textPath",
    ] { d[n.lowercased()] = n }
    return d
  }()

  /// https://html.spec.whatwg.org/#adjust-svg-attributes
  static let svgAttributeNames: [String: String] = {
    var d: [String: String] = [:]
    for n in [
      "attributeName", "attributeType", "baseFrequency", "baseProfile", "calcMode", "clipPathUnits",
      "diffuseConstant", "edgeMode", "filterUnits", "glyphRef", "gradientTransform", "gradientUnits",
      "kernelMatrix", "kernelUnitLength", "keyPoints", "keySplines", "keyTimes", "lengthAdjust",
      "limitingConeAngle", "markerHeight", "markerUnits", "markerWidth", "maskContentUnits", "maskUnits",
      "numOctaves", "pathLength", "patternContentUnits", "patternTransform", "patternUnits", "pointsAtX",
      "pointsAtY", "pointsAtZ", "preserveAlpha", "preserveAspectRatio", "primitiveUnits", "refX", "refY",
      "repeatCount", "repeatDur", "requiredExtensions", "requiredFeatures", "specularConstant",
      "specularExponent", "spreadMethod", "startOffset", "stdDeviation", "stitchTiles", "surfaceScale",
      "systemLanguage", "tableValues", "targetX", "targetY", "textLength", "viewBox", "viewTarget",
      "xChannelSelector", "yChannelSelector", "zoomAndPan",
    ] { d[n.lowercased()] = n }
    return d
  }()
}
