#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ForageSupport

/// A download's `.part` file, open for reading and writing, and the file operations
/// that make a download land once: an exclusive lock (one writer across processes),
/// truncation to what the store recorded, fsync, hashing, and the no-replace rename
/// into place.
///
/// Opened with `O_NOFOLLOW`: a symbolic link, folder, FIFO or device put where the
/// part file goes is refused, never written through. Sendable: its state is the
/// path and the descriptor, both constant.
final class PartFile: Sendable {
  let path: String
  let fd: Int32

  private init(path: String, fd: Int32) {
    self.path = path
    self.fd = fd
  }

  deinit { close(fd) }

  /// Opens (creating it if needed) the regular file at `path`.
  ///
  /// - Throws: ``DownloadError`` of kind `partFile` when something else is there,
  ///   `folder` when the file cannot be created.
  static func open(_ path: String) throws(DownloadError) -> PartFile {
    let fd = openFile(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o644)
    guard fd >= 0 else {
      let err = errno
      if err == ELOOP || err == EISDIR || err == ENXIO || err == EWOULDBLOCK {
        throw DownloadError(.partFile, "\(path) is not a regular file (a link, folder or device is there); nothing was written")
      }
      throw DownloadError(.folder, "cannot create \(path): \(String(cString: strerror(err)))")
    }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
      close(fd)
      throw DownloadError(.partFile, "\(path) is not a regular file; nothing was written")
    }
    // Blocking writes from here on (O_NONBLOCK only kept a FIFO from hanging the open).
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
    return PartFile(path: path, fd: fd)
  }

  /// Takes the exclusive lock without waiting; false when another process (or another
  /// open file here) holds it. Released when the file is closed or the process ends.
  func tryLock() -> Bool {
    flock(fd, LOCK_EX | LOCK_NB) == 0
  }

  /// True when no process holds the lock of the part file at `path` (or there is no
  /// such file): nobody is writing it. Never creates the file.
  static func isUnlocked(_ path: String) -> Bool {
    let fd = openFile(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0)
    guard fd >= 0 else { return errno == ENOENT }
    defer { close(fd) }
    return flock(fd, LOCK_EX | LOCK_NB) == 0
  }

  /// The file's length now.
  var size: Int {
    var info = stat()
    return fstat(fd, &info) == 0 ? Int(info.st_size) : 0
  }

  /// Cuts (or extends) the file to `length` bytes and moves the write position there.
  func truncate(to length: Int) throws(DownloadError) {
    guard ftruncate(fd, off_t(length)) == 0, lseek(fd, off_t(length), SEEK_SET) >= 0 else {
      throw ioError("cannot truncate")
    }
  }

  /// Flushes the file's data to disk.
  func sync() throws(DownloadError) {
    guard fsync(fd) == 0 else { throw ioError("cannot flush to disk") }
  }

  /// The SHA-256 of the file's first `length` bytes, as lowercase hex, read in
  /// 1 MiB pieces.
  func sha256(length: Int) throws(DownloadError) -> String {
    var hasher = SHA256()
    let chunk = 1 << 20
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
    defer { buffer.deallocate() }
    var offset = 0
    while offset < length {
      let n = pread(fd, buffer.baseAddress, min(chunk, length - offset), off_t(offset))
      if n < 0 {
        if errno == EINTR { continue }
        throw ioError("cannot read back")
      }
      if n == 0 { break }
      hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
      offset += n
    }
    return hex(hasher.finalize())
  }

  /// Puts the file at `destination` without replacing anything there: a hard link
  /// (atomic, fails when the name exists, whatever is there), then the part's name is
  /// removed. Where links are not supported, a rename after checking the name is free.
  ///
  /// - Returns: false when `destination` is taken (try another name).
  /// - Throws: ``DownloadError`` when neither works.
  func land(at destination: String) throws(DownloadError) -> Bool {
    if link(path, destination) == 0 {
      unlink(path)
      return true
    }
    let err = errno
    if err == EEXIST { return false }
    guard err == EPERM || err == ENOTSUP || err == EOPNOTSUPP || err == EMLINK || err == EXDEV else {
      throw DownloadError(.folder, "cannot put the file at \(destination): \(String(cString: strerror(err)))")
    }
    // No hard links here: rename, once the name is checked to be free (a
    // check, then the rename: another program could take the name in between).
    var info = stat()
    if lstat(destination, &info) == 0 { return false }
    guard rename(path, destination) == 0 else {
      let err = errno
      throw DownloadError(.folder, "cannot put the file at \(destination): \(String(cString: strerror(err)))")
    }
    return true
  }

  /// Removes the part file's name (its content goes when it is closed).
  func remove() {
    unlink(path)
  }

  private func ioError(_ what: String) -> DownloadError {
    let err = errno
    if err == ENOSPC || err == EDQUOT {
      return DownloadError(.diskFull, "the disk is full: \(what) \(path) (\(String(cString: strerror(err))))")
    }
    return DownloadError(.folder, "\(what) \(path): \(String(cString: strerror(err)))")
  }
}

/// Flushes a folder's entries to disk (after a file was renamed into it).
func syncFolder(_ path: String) {
  let fd = openFile(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
  guard fd >= 0 else { return }
  _ = fsync(fd)
  close(fd)
}

/// Whether `path` is an existing folder (following links: a link to a folder is the
/// folder the user named).
func isFolder(_ path: String) -> Bool {
  var info = stat()
  return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
}

/// The device and inode of the file at `path` (not following a link), nil when none.
func fileIdentity(_ path: String) -> (device: UInt64, inode: UInt64, size: Int, regular: Bool)? {
  var info = stat()
  guard lstat(path, &info) == 0 else { return nil }
  return (UInt64(info.st_dev), UInt64(info.st_ino), Int(info.st_size), (info.st_mode & S_IFMT) == S_IFREG)
}

/// Lowercase hex digits of `bytes`.
func hex(_ bytes: [UInt8]) -> String {
  let digits = Array("0123456789abcdef".utf8)
  var out: [UInt8] = []
  out.reserveCapacity(bytes.count * 2)
  for b in bytes {
    out.append(digits[Int(b >> 4)])
    out.append(digits[Int(b & 15)])
  }
  return String(decoding: out, as: UTF8.self)
}

private func openFile(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
  #if canImport(Glibc)
  return Glibc.open(path, flags, mode)
  #else
  return Darwin.open(path, flags, mode)
  #endif
}
