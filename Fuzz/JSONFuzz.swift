// libFuzzer entry point for the JSON parser and the config reader (Forage).
//
// Built by Fuzz/run-fuzz.sh (target `json`) against the modules compiled with
// -enable-testing. The input is parsed as JSON; when it parses:
// - its compact, sorted-key and indented serializations each parse back to an
//   equal value (with sorted keys: equal once both are sorted), and writing the
//   value again gives the same text;
// - a JSON Pointer built from each path into the value (keys escaped) resolves
//   to the value at that path.
// The input is also read as a config: `ForageConfig.parse` gives a config or a
// `ConfigError` with problems, never a crash; a config it accepts, written back
// as JSON (`jsonText`), is accepted again and written the same way.

@testable import Forage

/// Stops with the message (-O drops the messages of `precondition`).
func require(_ condition: Bool, _ message: @autoclosure () -> String = "") {
  if !condition { fatalError(message()) }
}

extension JSONValue {
  /// The value with every object's members in code-point order of their keys.
  var sortingKeys: JSONValue {
    switch self {
    case .array(let items): return .array(items.map(\.sortingKeys))
    case .object(let members):
      return .object(
        members.sorted { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) }
          .map { ($0.key, $0.value.sortingKeys) })
    default: return self
    }
  }
}

private func reparse(_ text: String, _ what: String) -> JSONValue {
  do {
    return try JSONValue.parse(text)
  } catch {
    fatalError("\(what) does not parse (\(error)): \(text.debugDescription)")
  }
}

private func escape(_ key: String) -> String {
  key.replacingOccurrences("~", with: "~0").replacingOccurrences("/", with: "~1")
}

/// Checks the pointers to the first `budget` nodes, breadth first.
private func checkPointers(_ root: JSONValue) {
  var queue: [(String, JSONValue)] = [("", root)]
  var index = 0
  while index < queue.count, index < 256 {
    let (pointer, value) = queue[index]
    index += 1
    require(JSONPointer.validate(pointer) == nil, "pointer \(pointer.debugDescription) called invalid")
    require(JSONPointer.resolve(pointer, in: root) == value, "pointer \(pointer.debugDescription) resolves elsewhere")
    switch value {
    case .array(let items): for (i, item) in items.enumerated() { queue.append(("\(pointer)/\(i)", item)) }
    case .object(let members): for m in members { queue.append(("\(pointer)/\(escape(m.key))", m.value)) }
    default: break
    }
  }
}

private func checkJSON(_ bytes: [UInt8]) {
  guard let value = try? JSONValue.parse(bytes) else { return }
  let compact = value.serialized()
  require(reparse(compact, "serialized()") == value, "serialized() changes the value: \(compact.debugDescription)")
  require(reparse(compact, "serialized()").serialized() == compact, "serialized() is not stable")
  let sorted = value.serialized(sortedKeys: true)
  require(reparse(sorted, "serialized(sortedKeys:)") == value.sortingKeys, "serialized(sortedKeys: true) changes the value: \(sorted.debugDescription)")
  let pretty = value.pretty()
  require(reparse(pretty, "pretty()") == value, "pretty() changes the value: \(pretty.debugDescription)")
  checkPointers(value)
}

private func checkConfig(_ bytes: [UInt8]) {
  let config: ForageConfig
  do {
    config = try ForageConfig.parse(bytes, file: "fuzz.json")
  } catch {
    require(!error.problems.isEmpty, "a ConfigError without problems")
    _ = error.description
    return
  }
  let text = config.jsonText
  let again: ForageConfig
  do {
    again = try ForageConfig.parse(Array(text.utf8), file: "written.json")
  } catch {
    fatalError("the written config is rejected: \(error)\n\(text)")
  }
  require(again.jsonText == text, "the written config reads back differently:\n\(text)\n---\n\(again.jsonText)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  checkJSON(bytes)
  checkConfig(bytes)
  return 0
}
