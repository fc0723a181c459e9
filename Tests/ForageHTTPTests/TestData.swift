import Foundation

/// Locates `../shared/testdata` from this file: up to the folder holding
/// Package.swift, then its sibling `shared/testdata`. Nil when absent.
enum TestData {
  static func folder(_ name: String, file: String = #filePath) -> URL? {
    // Symlinks resolved: dev packages link the test folder from the checkout.
    var dir = URL(fileURLWithPath: file).resolvingSymlinksInPath().deletingLastPathComponent()
    while dir.path != "/" {
      if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
        let candidate = dir.deletingLastPathComponent()
          .appendingPathComponent("shared/testdata").appendingPathComponent(name)
        return FileManager.default.fileExists(atPath: candidate.path) ? candidate : nil
      }
      dir = dir.deletingLastPathComponent()
    }
    return nil
  }
}

/// A small reader for the Protocol Buffers text format, enough for the robots.txt
/// specification files: messages, repeated fields in `[...]`, adjacent C-escaped
/// strings joined, identifiers (enum values), `#` comments, optional commas.
enum TextProto {
  indirect enum Value {
    case bytes([UInt8])
    case identifier(String)
    case message([(String, Value)])

    var bytes: [UInt8]? { if case .bytes(let b) = self { return b } else { return nil } }
    var string: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }
    var identifier: String? { if case .identifier(let s) = self { return s } else { return nil } }
    var fields: [(String, Value)] { if case .message(let f) = self { return f } else { return [] } }
    func all(_ name: String) -> [Value] { fields.filter { $0.0 == name }.map(\.1) }
    func first(_ name: String) -> Value? { all(name).first }
  }

  struct ParseError: Error, CustomStringConvertible {
    var description: String
  }

  static func parse(_ data: [UInt8]) throws -> Value {
    var parser = Parser(data: data)
    return .message(try parser.fields(until: nil))
  }

  private struct Parser {
    let data: [UInt8]
    var i = 0

    mutating func skipSpace() {
      while i < data.count {
        let c = data[i]
        if c == UInt8(ascii: "#") {
          while i < data.count, data[i] != 0x0A { i += 1 }
        } else if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 || c == UInt8(ascii: ",") {
          i += 1
        } else {
          return
        }
      }
    }

    mutating func identifier() throws -> String {
      let start = i
      while i < data.count,
        data[i] == UInt8(ascii: "_") || (data[i] | 0x20 >= 0x61 && data[i] | 0x20 <= 0x7A)
          || (data[i] >= 0x30 && data[i] <= 0x39)
      { i += 1 }
      guard i > start else { throw ParseError(description: "identifier expected at \(i)") }
      return String(decoding: data[start..<i], as: UTF8.self)
    }

    mutating func fields(until end: UInt8?) throws -> [(String, Value)] {
      var result: [(String, Value)] = []
      while true {
        skipSpace()
        if i >= data.count {
          if end == nil { return result }
          throw ParseError(description: "unexpected end")
        }
        if let end, data[i] == end {
          i += 1
          return result
        }
        let name = try identifier()
        skipSpace()
        if i < data.count, data[i] == UInt8(ascii: ":") { i += 1 }
        skipSpace()
        if i < data.count, data[i] == UInt8(ascii: "[") {
          i += 1
          while true {
            skipSpace()
            if i < data.count, data[i] == UInt8(ascii: "]") {
              i += 1
              break
            }
            result.append((name, try value()))
          }
        } else {
          result.append((name, try value()))
        }
      }
    }

    mutating func value() throws -> Value {
      skipSpace()
      guard i < data.count else { throw ParseError(description: "value expected") }
      if data[i] == UInt8(ascii: "{") {
        i += 1
        return .message(try fields(until: UInt8(ascii: "}")))
      }
      if data[i] == UInt8(ascii: "\"") || data[i] == UInt8(ascii: "'") {
        var bytes: [UInt8] = []
        while i < data.count, data[i] == UInt8(ascii: "\"") || data[i] == UInt8(ascii: "'") {
          bytes += try string()
          skipSpaceOnly()
        }
        return .bytes(bytes)
      }
      return .identifier(try identifier())
    }

    mutating func skipSpaceOnly() {
      while i < data.count {
        let c = data[i]
        if c == UInt8(ascii: "#") {
          while i < data.count, data[i] != 0x0A { i += 1 }
        } else if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 {
          i += 1
        } else {
          return
        }
      }
    }

    mutating func string() throws -> [UInt8] {
      let quote = data[i]
      i += 1
      var out: [UInt8] = []
      while i < data.count, data[i] != quote {
        if data[i] == UInt8(ascii: "\\"), i + 1 < data.count {
          i += 1
          let c = data[i]
          switch c {
          case UInt8(ascii: "n"): out.append(0x0A); i += 1
          case UInt8(ascii: "r"): out.append(0x0D); i += 1
          case UInt8(ascii: "t"): out.append(0x09); i += 1
          case UInt8(ascii: "x"):
            i += 1
            var v = 0, n = 0
            while n < 2, i < data.count, let d = hexValue(data[i]) { v = v * 16 + d; i += 1; n += 1 }
            out.append(UInt8(v))
          case UInt8(ascii: "0")...UInt8(ascii: "7"):
            var v = 0, n = 0
            while n < 3, i < data.count, data[i] >= 0x30, data[i] <= 0x37 {
              v = v * 8 + Int(data[i] - 0x30); i += 1; n += 1
            }
            out.append(UInt8(truncatingIfNeeded: v))
          default: out.append(c); i += 1
          }
        } else {
          out.append(data[i])
          i += 1
        }
      }
      guard i < data.count else { throw ParseError(description: "unterminated string") }
      i += 1
      return out
    }

    func hexValue(_ b: UInt8) -> Int? {
      switch b {
      case 0x30...0x39: Int(b - 0x30)
      case 0x61...0x66: Int(b - 0x61 + 10)
      case 0x41...0x46: Int(b - 0x41 + 10)
      default: nil
      }
    }
  }
}
