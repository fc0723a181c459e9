/// The tokenizer's output queue: a first-in first-out buffer of tokens that
/// moves each token out when it is taken.
///
/// A `[BuilderToken]` with a read index copied every token out (a retain of
/// its strings and attributes) and released it again when the array was
/// cleared; here `pop()` moves the token to the caller, and an empty queue
/// restarts at slot 0, so nothing is copied, destroyed twice or reallocated
/// in steady state. A step of the tokenizer queues at most a few tokens
/// (a character run, then a tag, comment or end of file).
///
/// Like `ByteBuffer` it is a plain struct over a pointer: the owner calls
/// `free()` exactly once (in its deinit) and never copies it.
struct TokenQueue {
  private var base: UnsafeMutablePointer<BuilderToken>
  private var head = 0
  private(set) var count = 0
  private var capacity: Int

  init(capacity: Int = 4) {
    self.capacity = max(capacity, 2)
    base = .allocate(capacity: self.capacity)
  }

  /// Destroys the tokens still queued and frees the storage.
  func free() {
    (base + head).deinitialize(count: count)
    base.deallocate()
  }

  var isEmpty: Bool { count == 0 }

  @inline(never)
  private mutating func grow() {
    let newCapacity = capacity * 2
    let fresh = UnsafeMutablePointer<BuilderToken>.allocate(capacity: newCapacity)
    fresh.moveInitialize(from: base + head, count: count)
    base.deallocate()
    base = fresh
    head = 0
    capacity = newCapacity
  }

  /// Appends `token` at the back.
  @inline(__always)
  mutating func push(_ token: consuming BuilderToken) {
    if head + count == capacity { grow() }
    (base + head + count).initialize(to: token)
    count += 1
  }

  /// Removes and returns the front token; the queue must not be empty.
  @inline(__always)
  mutating func pop() -> BuilderToken {
    let t = (base + head).move()
    count -= 1
    head = count == 0 ? 0 : head + 1
    return t
  }
}
