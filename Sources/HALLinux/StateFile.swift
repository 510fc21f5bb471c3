import CLinuxOS
import HAL

/// The controller's state in a file, replaced atomically and durably on every write:
/// the bytes go to `PATH.tmp` in the same directory, which is fsync'ed, renamed over `PATH`
/// (rename(2) is atomic), and then the directory is fsync'ed so the rename itself survives a power
/// cut. A crash at any point leaves the old or the new state, never a mix. One writer per path.
///
/// Only the program's own files are touched: `PATH` is read, moved aside or replaced only when it
/// is a regular file (a device node, FIFO, socket, directory or symbolic link there is an error and
/// is left exactly as it is; `checkPath` says so at start-up). `PATH.tmp` is created exclusively
/// (O_CREAT | O_EXCL | O_NOFOLLOW), never through a link planted there; a regular file left there
/// by a crash is unlinked (which removes the name only, never a link's target) and the create is
/// tried once more. Reads are capped at `maximumSize` bytes.
///
/// Every call blocks for its I/O (a write includes two fsyncs: milliseconds on an SD card, done
/// only when the state changes, not per countdown tick). Errors are typed, never printed.
public struct StateFile: StateStorage, Sendable {
    public let path: String

    /// Unreadable states are moved to `PATH.corrupt-1`, `-2`, ... up to this many.
    public static let maximumCorruptCopies = 1000
    /// The largest state file read: the state is about 250 bytes; more is not ours to parse.
    public static let maximumSize = 65_536

    public init(path: String) {
        self.path = path
    }

    /// The directory holding the file, for the fsync after a rename.
    var directory: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    var temporaryPath: String { path + ".tmp" }

    /// Why `path` cannot be the state file, or nil when it can: nothing there yet, or a regular
    /// file. For the start-up check, so that a wrong path is a configuration error rather than
    /// something found at the first press. A failing lstat (e.g. EACCES on a directory on the way)
    /// is not judged here: reading and writing report it.
    public func checkPath() -> String? {
        guard let type = try? FileType.of(path) else { return nil }
        switch type {
        case .regular: return nil
        case .symbolicLink: return "is a symbolic link (not followed: name the file itself)"
        default: return "is \(type.description), not a regular file"
        }
    }

    /// The stored bytes; nil when the file does not exist (a fresh start). Anything but a regular
    /// file throws (`.invalidArgument`, the reason in the operation) and is left alone; a regular
    /// file of more than `maximumSize` bytes throws `.invalidArgument` with EFBIG, which
    /// `isUnreadableContent` recognises (the loop then moves it aside).
    public func read() throws(HALError) -> [UInt8]? {
        do throws(FileReadError) {
            return try FileReader.read(path, limit: StateFile.maximumSize)
        } catch  where error.isMissing {
            return nil
        } catch {
            throw error.halError
        }
    }

    /// True for the error `read` throws when the file holds more than `maximumSize` bytes: a
    /// regular file at our path that cannot be our state, moved aside like any unreadable state.
    public func isUnreadableContent(_ error: HALError) -> Bool {
        error.kind == .invalidArgument && error.errno == EFBIG
    }

    /// Replaces the file's content with `bytes`, atomically and durably (see the type).
    public mutating func write(_ bytes: [UInt8]) throws(HALError) {
        let fd = try createTemporary()
        let temporary = temporaryPath
        do throws(HALError) {
            var offset = 0
            while offset < bytes.count {
                offset += try Syscall.run("write \(temporary)") {
                    bytes.withUnsafeBytes { buffer in
                        guard let base = buffer.baseAddress else { return 0 }
                        return CLinuxOS.write(fd, base + offset, buffer.count - offset)
                    }
                }
            }
            _ = try Syscall.run("fsync \(temporary)") { fsync(fd) }
            // close() after fsync() cannot lose data, but an error there still means trouble.
            _ = try Syscall.run("close \(temporary)") { close(fd) }
        } catch {
            _ = close(fd)  // already failing: the first error is the one to report
            _ = unlink(temporary)
            throw error
        }
        let path = self.path
        do throws(HALError) {
            try requireRegularOrNothing("replace")
            _ = try Syscall.run("rename \(temporary) to \(path)") { rename(temporary, path) }
        } catch {
            _ = unlink(temporary)
            throw error
        }
        try syncDirectory()
    }

    /// Creates `PATH.tmp` exclusively; a regular file left there by a crash is removed and the
    /// create tried once more. Anything else there (a link, a FIFO, ...) is left alone: an error.
    private func createTemporary() throws(HALError) -> Int32 {
        let temporary = temporaryPath
        var removedLeftover = false
        while true {
            do throws(HALError) {
                return try Syscall.run("create \(temporary)") {
                    rb_open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
                }
            } catch  where error.errno == EEXIST && !removedLeftover {
                let type = try FileType.of(temporary)
                if let type, type != .regular {
                    throw HALError(
                        .invalidArgument, operation: "create \(temporary): it exists and is \(type.description); left alone (remove it by hand)",
                        errno: EEXIST)
                }
                // unlink removes the name only: a hard link's other names keep their content.
                _ = try Syscall.run("remove the leftover \(temporary)") { unlink(temporary) }
                removedLeftover = true
            }
        }
    }

    /// Throws unless `path` is a regular file or absent: only our own file is replaced or moved.
    private func requireRegularOrNothing(_ action: String) throws(HALError) {
        let type = try FileType.of(path)
        if let type, type != .regular {
            let reason = type == .symbolicLink ? "is a symbolic link (not followed)" : "is \(type.description), not a regular file"
            throw HALError(.invalidArgument, operation: "\(action) \(path): it \(reason); left alone", errno: type == .directory ? EISDIR : 0)
        }
    }

    /// Renames the file to the first free `PATH.corrupt-N` and returns that path. Only a regular
    /// file is moved, and never over an existing name (RENAME_NOREPLACE; on a file system without
    /// it, names that exist per lstat are skipped).
    public mutating func moveAside() throws(HALError) -> String {
        try requireRegularOrNothing("move aside")
        let path = self.path
        for n in 1...StateFile.maximumCorruptCopies {
            let candidate = path + ".corrupt-" + String(n)
            do throws(HALError) {
                _ = try Syscall.run("rename \(path) to \(candidate)") { rb_rename_noreplace(path, candidate) }
            } catch  where error.errno == EEXIST {
                continue
            } catch  where error.errno == EINVAL || error.errno == ENOSYS {
                if try FileType.of(candidate) != nil { continue }
                _ = try Syscall.run("rename \(path) to \(candidate)") { rename(path, candidate) }
            }
            try syncDirectory()
            return candidate
        }
        throw HALError(.io, operation: "move \(path) aside: \(StateFile.maximumCorruptCopies) corrupt copies already exist", errno: EEXIST)
    }

    private func syncDirectory() throws(HALError) {
        let directory = self.directory
        let fd = try Syscall.run("open directory \(directory)") { rb_open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) }
        defer { _ = close(fd) }  // read-only descriptor: nothing to lose on close
        _ = try Syscall.run("fsync directory \(directory)") { fsync(fd) }
    }
}
