/// A growable byte buffer the tokenizer owns and frees itself.
///
/// Unlike `[UInt8]` it has no copy-on-write or uniqueness checks on each
/// append, and clearing it is a store; the tokenizer appends to a few of
/// these for every byte it keeps, so that matters. It is a plain struct
/// over a pointer: the owner calls `free()` exactly once (in its deinit)
/// and never copies it.
struct ByteBuffer {
  private(set) var base: UnsafeMutablePointer<UInt8>
  private(set) var count = 0
  private var capacity: Int

  init(capacity: Int) {
    self.capacity = max(capacity, 16)
    base = .allocate(capacity: self.capacity)
  }

  /// An empty buffer that allocates on its first append: for buffers most
  /// documents never use (a parse allocated several, each a malloc and a
  /// free on a small page). Until then `base` is a dangling, never
  /// dereferenced pointer (`count` and `capacity` are 0), as for an empty
  /// buffer pointer; `grow` and `free` do not deallocate it.
  init() {
    capacity = 0
    base = UnsafeMutablePointer(bitPattern: MemoryLayout<UInt8>.alignment)!
  }

  func free() { if capacity > 0 { base.deallocate() } }

  var isEmpty: Bool { count == 0 }

  @inline(never)
  private mutating func grow(to needed: Int) {
    // A first allocation (of a buffer made with `init()`) gets room for a
    // typical comment or value at once rather than regrowing from 16.
    let newCapacity = max(needed, capacity * 2, 128)
    let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
    if capacity > 0 {
      fresh.initialize(from: base, count: count)
      base.deallocate()
    }
    base = fresh
    capacity = newCapacity
  }

  @inline(__always)
  mutating func append(_ c: UInt8) {
    if count == capacity { grow(to: count + 1) }
    base[count] = c
    count += 1
  }

  @inline(__always)
  mutating func append(contentsOf b: UnsafeBufferPointer<UInt8>) {
    guard let p = b.baseAddress, b.count > 0 else { return }
    if count + b.count > capacity { grow(to: count + b.count) }
    (base + count).update(from: p, count: b.count)
    count += b.count
  }

  /// Appends the UTF-8 encoding of scalar `v`, which is not ASCII, with
  /// one capacity check (the decoders' path for CJK text).
  @inline(__always)
  mutating func appendNonASCII(_ v: UInt32) {
    if count + 4 > capacity { grow(to: count + 4) }
    let p = base + count
    if v < 0x800 {
      p[0] = UInt8(truncatingIfNeeded: 0xC0 | (v >> 6))
      p[1] = UInt8(truncatingIfNeeded: 0x80 | (v & 0x3F))
      count += 2
    } else if v < 0x10000 {
      p[0] = UInt8(truncatingIfNeeded: 0xE0 | (v >> 12))
      p[1] = UInt8(truncatingIfNeeded: 0x80 | ((v >> 6) & 0x3F))
      p[2] = UInt8(truncatingIfNeeded: 0x80 | (v & 0x3F))
      count += 3
    } else {
      p[0] = UInt8(truncatingIfNeeded: 0xF0 | (v >> 18))
      p[1] = UInt8(truncatingIfNeeded: 0x80 | ((v >> 12) & 0x3F))
      p[2] = UInt8(truncatingIfNeeded: 0x80 | ((v >> 6) & 0x3F))
      p[3] = UInt8(truncatingIfNeeded: 0x80 | (v & 0x3F))
      count += 4
    }
  }

  /// Appends up to three bytes packed in `packed` (see
  /// `EncodingIndex.packedUTF8`): one four-byte store, then the count moves
  /// by the length in the top byte.
  @inline(__always)
  mutating func appendPacked(_ packed: UInt32) {
    if count + 4 > capacity { grow(to: count + 4) }
    UnsafeMutableRawPointer(base + count).storeBytes(of: packed.littleEndian, as: UInt32.self)
    count += Int(packed >> 24)
  }

  @inline(__always)
  mutating func append(contentsOf other: ByteBuffer) {
    append(contentsOf: UnsafeBufferPointer(start: other.base, count: other.count))
  }

  mutating func append<S: Sequence>(contentsOf s: S) where S.Element == UInt8 {
    for c in s { append(c) }
  }

  @inline(__always)
  mutating func removeAll(keepingCapacity: Bool = true) { count = 0 }

  /// The byte at `i` (bounds-checked).
  subscript(i: Int) -> UInt8 {
    @inline(__always) get {
      precondition(UInt(bitPattern: i) < UInt(bitPattern: count), "index out of range")
      return base[i]
    }
  }

  /// The bytes of `run` (bounds-checked), valid until the buffer next
  /// grows or is freed.
  @inline(__always)
  func bytes(_ run: TextRun) -> UnsafeBufferPointer<UInt8> {
    let start = Int(run.start), n = Int(run.count)
    precondition(start >= 0 && n >= 0 && start + n <= count, "run out of range")
    return UnsafeBufferPointer(start: base + start, count: n)
  }

  /// Appends `n` copies of `c`.
  mutating func append(repeating c: UInt8, count n: Int) {
    guard n > 0 else { return }
    if count + n > capacity { grow(to: count + n) }
    (base + count).initialize(repeating: c, count: n)
    count += n
  }

  /// Writes `b` over the bytes from `offset` on, which must exist.
  mutating func overwrite(at offset: Int, with b: UnsafeBufferPointer<UInt8>) {
    guard let p = b.baseAddress, b.count > 0 else { return }
    precondition(offset >= 0 && offset + b.count <= count, "writing past the end")
    (base + offset).update(from: p, count: b.count)
  }

  /// Drops the bytes from `newCount` on.
  mutating func truncate(to newCount: Int) {
    precondition(newCount >= 0 && newCount <= count, "truncating past the end")
    count = newCount
  }

  /// Makes room for `n` bytes in all.
  mutating func reserve(_ n: Int) {
    if n > capacity { grow(to: n) }
  }

  /// The bytes as a String (they are valid UTF-8 by construction).
  func string() -> String {
    String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
  }

  var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

  func equals(_ other: ByteBuffer) -> Bool {
    guard count == other.count else { return false }
    for i in 0..<count where base[i] != other.base[i] { return false }
    return true
  }

  func equals(_ s: StaticString) -> Bool {
    guard count == s.utf8CodeUnitCount else { return false }
    let p = s.utf8Start
    for i in 0..<count where base[i] != p[i] { return false }
    return true
  }
}

/// Something bytes are appended to: the tokenizer's `ByteBuffer` and the
/// decoder's `[UInt8]`, so one UTF-8 encoder serves both.
protocol ByteSink {
  mutating func append(_ c: UInt8)
}

extension ByteBuffer: ByteSink {}
extension Array: ByteSink where Element == UInt8 {}

/// Appends the UTF-8 encoding of scalar `v` to `buf`.
@inline(__always)
func appendUTF8<Sink: ByteSink>(_ v: UInt32, to buf: inout Sink) {
  if v < 0x80 {
    buf.append(UInt8(v))
  } else if v < 0x800 {
    buf.append(UInt8(0xC0 | (v >> 6)))
    buf.append(UInt8(0x80 | (v & 0x3F)))
  } else if v < 0x10000 {
    buf.append(UInt8(0xE0 | (v >> 12)))
    buf.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
    buf.append(UInt8(0x80 | (v & 0x3F)))
  } else {
    buf.append(UInt8(0xF0 | (v >> 18)))
    buf.append(UInt8(0x80 | ((v >> 12) & 0x3F)))
    buf.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
    buf.append(UInt8(0x80 | (v & 0x3F)))
  }
}
