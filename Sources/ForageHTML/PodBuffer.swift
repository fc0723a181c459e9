/// A growable array of plain values (no references) over memory its owner
/// frees.
///
/// The tree builder pushes and pops its stacks for nearly every token;
/// `Array` checked its buffer's uniqueness on each write and append, which
/// cost more than the write. Like `ByteBuffer` it is a plain struct over a
/// pointer: the owner calls `free()` exactly once (in its deinit), never
/// uses it after, and lets no copy outlive the owner or a change of the
/// original (a copy taken for a loop is fine while the original is left
/// alone). Reads and writes are bounds-checked like an array's.
struct PodBuffer<Element: BitwiseCopyable>: RandomAccessCollection, MutableCollection {
  private(set) var base: UnsafeMutablePointer<Element>
  private(set) var count = 0
  private var capacity: Int

  init(capacity: Int) {
    self.capacity = Swift.max(capacity, 4)
    base = .allocate(capacity: self.capacity)
  }

  /// A buffer holding `count` copies of `value`.
  init(repeating value: Element, count: Int) {
    self.init(capacity: count)
    base.initialize(repeating: value, count: count)
    self.count = count
  }

  /// Frees the storage (plain values need no deinitialization).
  func free() { base.deallocate() }

  var startIndex: Int { 0 }
  var endIndex: Int { count }
  var isEmpty: Bool { count == 0 }

  subscript(i: Int) -> Element {
    @inline(__always) get {
      precondition(UInt(bitPattern: i) < UInt(bitPattern: count), "index out of range")
      return base[i]
    }
    @inline(__always) set {
      precondition(UInt(bitPattern: i) < UInt(bitPattern: count), "index out of range")
      base[i] = newValue
    }
  }

  @inline(never)
  private mutating func grow(to needed: Int) {
    let newCapacity = Swift.max(needed, capacity * 2)
    let fresh = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
    fresh.initialize(from: base, count: count)
    base.deallocate()
    base = fresh
    capacity = newCapacity
  }

  mutating func reserveCapacity(_ n: Int) {
    if n > capacity { grow(to: n) }
  }

  @inline(__always)
  mutating func append(_ e: Element) {
    if count == capacity { grow(to: count + 1) }
    (base + count).initialize(to: e)
    count += 1
  }

  /// Appends `n` copies of `value`.
  mutating func append(repeating value: Element, count n: Int) {
    guard n > 0 else { return }
    if count + n > capacity { grow(to: count + n) }
    (base + count).initialize(repeating: value, count: n)
    count += n
  }

  /// Removes and returns the last element; the buffer must not be empty.
  @inline(__always) @discardableResult
  mutating func removeLast() -> Element {
    precondition(count > 0, "removeLast on an empty buffer")
    count -= 1
    return base[count]
  }

  /// Removes and returns the last element, or nil when empty.
  @inline(__always)
  mutating func popLast() -> Element? {
    guard count > 0 else { return nil }
    count -= 1
    return base[count]
  }

  /// Removes and returns the element at `i`, moving the later ones down.
  @discardableResult
  mutating func remove(at i: Int) -> Element {
    precondition(i >= 0 && i < count, "index out of range")
    let e = base[i]
    (base + i).update(from: base + i + 1, count: count - i - 1)
    count -= 1
    return e
  }

  /// Inserts `e` at `i` (0...count), moving the later elements up.
  mutating func insert(_ e: Element, at i: Int) {
    precondition(i >= 0 && i <= count, "index out of range")
    if count == capacity { grow(to: count + 1) }
    // Overlapping move: `moveInitialize` copies backwards when needed.
    (base + i + 1).moveInitialize(from: base + i, count: count - i)
    (base + i).initialize(to: e)
    count += 1
  }
}
