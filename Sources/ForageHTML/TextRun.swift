/// A run of character data: `Document.textBytes[start ..< start + count]`.
///
/// The tokenizer writes character data straight into the document's text
/// buffer and hands the tree builder each run; text nodes keep runs, and
/// Strings are made only when asked for (`Document.data(_:)`). As the
/// buffer is append-only, a run stays valid for the document's lifetime.
/// Offsets are 32-bit like node ids; a document holding 2 GiB of text
/// stops the program (checked conversion) rather than wrapping.
struct TextRun {
  var start: Int32
  var count: Int32

  static let empty = TextRun(start: 0, count: 0)

  var isEmpty: Bool { count == 0 }

  /// The run without its first `k` bytes (`k <= count`).
  @inline(__always) func dropFirst(_ k: Int32) -> TextRun {
    TextRun(start: start + k, count: count - k)
  }

  /// The first `k` bytes of the run (`k <= count`).
  @inline(__always) func prefix(_ k: Int32) -> TextRun {
    TextRun(start: start, count: k)
  }
}

extension Document {
  /// `run`'s bytes as a String (invalid UTF-8 is repaired, though the
  /// parser only writes valid UTF-8).
  func string(_ run: TextRun) -> String {
    guard run.count > 0 else { return "" }
    return withTextBytes(of: run) { String(decoding: $0, as: UTF8.self) }
  }

  /// Runs `body` over the bytes of `run`. `body` must not change the
  /// document's text (the buffer would move under the pointer).
  @inline(__always)
  func withTextBytes<R>(of run: TextRun, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    body(textBytes.bytes(run))
  }

  /// Appends `data`'s UTF-8 bytes to `textBytes`; returns their run.
  func appendText(_ data: String) -> TextRun {
    let start = textBytes.count
    var data = data
    data.withUTF8 { textBytes.append(contentsOf: $0) }
    return TextRun(start: Int32(start), count: Int32(textBytes.count - start))
  }

  /// Appends a copy of `run` to `textBytes`; returns the copy's start.
  /// (Byte by byte: the source lies in the buffer an append may move, so
  /// a bulk append from a pointer into it could read freed memory.)
  func copyText(_ run: TextRun) -> Int32 {
    let start = Int32(textBytes.count)
    var i = Int(run.start)
    let end = i + Int(run.count)
    while i < end {
      // Read before the append, which may move the buffer.
      let b = textBytes[i]
      textBytes.append(b)
      i += 1
    }
    return start
  }

  /// Appends the bytes of `run` that `keep` accepts, each replaced by
  /// `replace`'s bytes when it gives some; returns the new run.
  func filteredText(_ run: TextRun, replacingNUL replacement: [UInt8]?, keep: (UInt8) -> Bool) -> TextRun {
    let start = textBytes.count
    var i = Int(run.start)
    let end = i + Int(run.count)
    while i < end {
      let b = textBytes[i]
      if b == 0, let replacement {
        replacement.withUnsafeBufferPointer { textBytes.append(contentsOf: $0) }
      } else if keep(b) {
        textBytes.append(b)
      }
      i += 1
    }
    return TextRun(start: Int32(start), count: Int32(textBytes.count - start))
  }
}
