#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ForageStore
import ForageSupport

/// A file that a command writes at a path the user named (`export --out`,
/// later reports and downloads), replaced only when that is safe.
///
/// The one rule for every user-named output: a path that does not exist is
/// created; an existing **regular file** is replaced (through a symbolic link,
/// the file it points to is replaced and the link kept); anything else is
/// refused before a byte is written: a folder, a device, a FIFO or socket, a
/// link to one of those, a link that leads nowhere, any of the
/// `protecting` files (the store itself, whatever spelling of its path or
/// hard link names it), an existing SQLite database, and a name SQLite would
/// take for a database's side file (`forage.sqlite-wal`: the next open of
/// `forage.sqlite` would delete or replay it; see `SQLiteSideFiles`).
///
///     let output = try OutputFile(path: "records.jsonl", protecting: ["forage.sqlite"])
///     let writer = try output.open()
///     try writer.write("{…}\n")
///     try writer.commit()        // fsync, then rename over the old file
///
/// The data goes to a new temporary file beside the target (created with
/// `O_EXCL`, so nothing else is ever opened for writing), which replaces the
/// target only in ``Writer/commit()``: a failed or interrupted write leaves
/// the previous file as it was. The temporary file is the only path this type
/// ever removes.
package struct OutputFile: Sendable {
  /// The path as the user wrote it.
  package let path: String
  /// The path written: `path`, or the regular file a symbolic link at `path`
  /// leads to.
  package let target: String
  /// True when the target exists and will be replaced.
  package let replacesExistingFile: Bool
  private let protected: [FileIdentity]
  /// The `protecting` paths with their folders resolved, for those that do
  /// not exist yet.
  private let protectedPaths: [String]

  /// Checks that `path` may be written.
  ///
  /// - Parameter protecting: files that must never be replaced (the store, its
  ///   `-wal` and `-shm` files are added by the caller or by
  ///   ``protectingStore(_:)``). Paths that do not exist are ignored.
  /// - Throws: ``OutputFileError`` naming the path and what it is.
  package init(path: String, protecting: [String] = []) throws(OutputFileError) {
    guard !path.isEmpty else { throw OutputFileError(path: path, "the output path is empty") }
    self.path = path
    protected = protecting.compactMap { FileIdentity(path: $0, followingLinks: true) }
    protectedPaths = protecting.map(SQLiteSideFiles.canonical)
    var resolved = path
    var info = stat()
    if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK {
      // Follow the link to what it names; refuse one that leads nowhere.
      guard let real = realpath(path, nil) else {
        throw OutputFileError(path: path, "it is a symbolic link that leads nowhere; name a file instead")
      }
      resolved = String(cString: real)
      free(real)
    }
    target = resolved
    if stat(resolved, &info) == 0 {
      let type = info.st_mode & S_IFMT
      switch type {
      case S_IFREG: break
      case S_IFDIR:
        throw OutputFileError(path: path, "it is a folder; name a file to write (nothing was changed)")
      default:
        throw OutputFileError(path: path, "it is a device or special file, not a regular file; name a file to write")
      }
      let identity = FileIdentity(info)
      if protected.contains(identity) {
        throw OutputFileError(
          path: path, "it is the store this command reads; writing there would destroy it. Name another file")
      }
      replacesExistingFile = true
    } else {
      let err = errno
      guard err == ENOENT else {
        throw OutputFileError(path: path, "it cannot be checked (\(String(cString: strerror(err))))")
      }
      let folder = OutputFile.folder(of: resolved)
      guard stat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
        throw OutputFileError(path: path, "its folder \(folder) does not exist")
      }
      replacesExistingFile = false
    }
    // A name SQLite reads as a database's side file, under the name given or
    // the one a link leads to, and an existing database, are never written.
    for name in Set([path, resolved]) {
      if let side = SQLiteSideFiles.reservation(ofPath: name, store: nil) {
        throw OutputFileError(path: path, "it \(side.explanation). Name another file (nothing was changed)")
      }
    }
    if protectedPaths.contains(SQLiteSideFiles.canonical(resolved)) {
      throw OutputFileError(
        path: path, "it is the store this command reads, or a file Forage keeps beside it. Name another file")
    }
  }

  /// The paths of a SQLite store that an output must never replace: the
  /// file, its `-wal`, `-shm` and `-journal` companions, and the
  /// `.pending.json` an earlier Forage kept beside it (the daemon imports it).
  package static func protectingStore(_ location: String) -> [String] {
    guard SQLiteSideFiles.isFilePath(location) else { return [] }
    return [location, location + "-wal", location + "-shm", location + "-journal", location + ".pending.json"]
  }

  /// Creates the temporary file beside the target and returns a writer.
  ///
  /// - Throws: ``OutputFileError`` when the folder is not writable.
  package func open() throws(OutputFileError) -> Writer {
    let folder = OutputFile.folder(of: target)
    let name = target.split(separator: "/").last.map(String.init) ?? "output"
    var template = ((folder == "/" ? "/" : folder + "/") + "." + name + ".forage-XXXXXX").utf8CString
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard fd >= 0 else {
      let err = errno
      let why: String
      switch err {
      case EACCES, EPERM: why = "the folder is not writable"
      case EROFS: why = "the folder is on a read-only disk"
      case ENOSPC, EDQUOT: why = "the disk is full"
      default: why = String(cString: strerror(err)).lowercased()
      }
      throw OutputFileError(path: path, "cannot create a file in \(folder): \(why) (nothing was changed)")
    }
    let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    // mkstemp creates 0600; give the new file the mode an ordinary file
    // would get, or keep the mode of the file it replaces.
    var info = stat()
    if stat(target, &info) == 0 {
      _ = fchmod(fd, info.st_mode & 0o7777)
    } else {
      let mask = umask(0)
      umask(mask)
      _ = fchmod(fd, 0o666 & ~mask)
    }
    return Writer(output: self, fd: fd, temporary: temporary)
  }

  static func folder(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
  }

  /// Writes the temporary file and renames it over the target.
  package final class Writer {
    let output: OutputFile
    private var fd: Int32
    private let temporary: String
    private var committed = false

    init(output: OutputFile, fd: Int32, temporary: String) {
      self.output = output
      self.fd = fd
      self.temporary = temporary
    }

    /// Appends `text` (UTF-8).
    package func write(_ text: String) throws(OutputFileError) {
      var copy = text
      var failure: OutputFileError?
      copy.withUTF8 { buffer in
        do throws(OutputFileError) { try write(buffer) } catch { failure = error }
      }
      if let failure { throw failure }
    }

    /// Appends `bytes`.
    package func write(_ bytes: UnsafeBufferPointer<UInt8>) throws(OutputFileError) {
      guard fd >= 0 else { throw OutputFileError(path: output.path, "the file was already closed") }
      let err = writeAll(fd, bytes)
      if err != 0 { throw OutputFileError(path: output.path, "writing failed (\(String(cString: strerror(err))))") }
    }

    /// Flushes the data to disk and renames the file into place, then
    /// flushes the folder, so the new file survives a power loss whole.
    ///
    /// The target is checked again just before the rename: if something
    /// else (a folder, the store) appeared there meanwhile, nothing is
    /// replaced.
    package func commit() throws(OutputFileError) {
      guard fd >= 0 else { throw OutputFileError(path: output.path, "the file was already closed") }
      if fsync(fd) != 0 {
        let err = errno
        throw OutputFileError(path: output.path, "flushing to disk failed (\(String(cString: strerror(err))))")
      }
      close(fd)
      fd = -1
      // Still safe to replace? (A check, not a lock: the window is small and
      // rename(2) cannot replace a folder with a file in any case.)
      _ = try OutputFile(path: output.target, protecting: [])
      var info = stat()
      if stat(output.target, &info) == 0, output.protected.contains(FileIdentity(info)) {
        throw OutputFileError(path: output.path, "it is now the store this command reads; nothing was replaced")
      }
      guard rename(temporary, output.target) == 0 else {
        let err = errno
        throw OutputFileError(path: output.path, "it could not be replaced (\(String(cString: strerror(err))))")
      }
      committed = true
      let folder = Glibc_open(OutputFile.folder(of: output.target))
      if folder >= 0 {
        _ = fsync(folder)
        close(folder)
      }
    }

    deinit {
      if fd >= 0 { close(fd) }
      // The temporary file is ours (created with O_EXCL): remove it unless it
      // became the output.
      if !committed { unlink(temporary) }
    }
  }
}

/// Why an output path was refused or could not be written.
package struct OutputFileError: Error, Sendable, CustomStringConvertible {
  /// The path as the user wrote it.
  package let path: String
  /// What is wrong, as a sentence about the path.
  package let reason: String

  init(path: String, _ reason: String) {
    self.path = path
    self.reason = reason
  }

  package var description: String { "cannot write \(path): \(reason)" }
}

/// A file's device and inode: two paths name the same file when these match
/// (another spelling of the path, a hard link, a symbolic link).
private struct FileIdentity: Hashable, Sendable {
  let device: UInt64
  let inode: UInt64

  init(_ info: stat) {
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
  }

  init?(path: String, followingLinks: Bool) {
    var info = stat()
    guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
    self.init(info)
  }
}

private func Glibc_open(_ path: String) -> Int32 {
  #if canImport(Glibc)
  return Glibc.open(path, O_RDONLY)
  #else
  return Darwin.open(path, O_RDONLY)
  #endif
}
