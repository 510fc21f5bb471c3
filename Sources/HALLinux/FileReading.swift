import CLinuxOS
import HAL

/// What a path names, seen with lstat(2): a symbolic link is reported as itself, never followed.
public enum FileType: Hashable, Sendable {
    case regular
    case directory
    case symbolicLink
    case characterDevice
    case blockDevice
    case fifo
    case socket
    case unknown

    init(mode: mode_t) {
        // The S_IF* macros come through CLinuxOS as Int32 (the Glibc overlay's mode_t constants are
        // not there in Embedded Swift).
        switch mode & mode_t(S_IFMT) {
        case mode_t(S_IFREG): self = .regular
        case mode_t(S_IFDIR): self = .directory
        case mode_t(S_IFLNK): self = .symbolicLink
        case mode_t(S_IFCHR): self = .characterDevice
        case mode_t(S_IFBLK): self = .blockDevice
        case mode_t(S_IFIFO): self = .fifo
        case mode_t(S_IFSOCK): self = .socket
        default: self = .unknown
        }
    }

    /// "a directory", "a character device", ...: for "PATH is a directory, not a regular file".
    public var description: String {
        switch self {
        case .regular: "a regular file"
        case .directory: "a directory"
        case .symbolicLink: "a symbolic link"
        case .characterDevice: "a character device"
        case .blockDevice: "a block device"
        case .fifo: "a FIFO (named pipe)"
        case .socket: "a socket"
        case .unknown: "not a regular file"
        }
    }

    /// The type of what `path` names (lstat: links not followed); nil when nothing is there
    /// (ENOENT). Any other failure (permission on a directory on the way, ENOTDIR, ELOOP in a
    /// directory part) throws.
    public static func of(_ path: String) throws(HALError) -> FileType? {
        try statType("lstat \(path)") { lstat(path, $0) }
    }

    /// The type from `call` (stat or lstat into the buffer it is given), named `operation` in
    /// errors; nil when it fails with ENOENT. Any other failure throws.
    static func statType(_ operation: @autoclosure () -> String, _ call: (UnsafeMutablePointer<stat>) -> Int32) throws(HALError) -> FileType? {
        var info = stat()
        do throws(HALError) {
            _ = try Syscall.run(operation()) { call(&info) }
        } catch  where error.errno == ENOENT {
            return nil
        }
        return FileType(mode: info.st_mode)
    }
}

/// The permission bits of what `path` names (lstat: links not followed), e.g. 0o600; nil when
/// nothing is there.
public func permissionBits(of path: String) throws(HALError) -> UInt32? {
    var info = stat()
    do throws(HALError) {
        _ = try Syscall.run("lstat \(path)") { lstat(path, &info) }
    } catch  where error.errno == ENOENT {
        return nil
    }
    return UInt32(info.st_mode) & 0o7777
}

/// This machine's host name (gethostname); nil when it cannot be read or is empty.
public func currentHostName() -> String? {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
    let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return name.isEmpty ? nil : name
}

/// Why a file could not be read by `FileReader.read`: the path, and either the system call that
/// failed (with its errno) or the check that refused the file.
public struct FileReadError: Error, Hashable, Sendable {
    public enum Problem: Hashable, Sendable {
        /// A system call failed: `HALError` keeps the operation and the errno.
        case system(HALError)
        /// The path is a symbolic link, which is not followed.
        case symbolicLink
        /// The path is something other than a regular file (never opened, or refused after fstat).
        case notRegular(FileType)
        /// The file holds more than `limit` bytes.
        case tooLarge(limit: Int)
    }

    public let path: String
    public let problem: Problem

    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// Nothing is at the path (ENOENT).
    public var isMissing: Bool {
        if case .system(let error) = problem { return error.errno == ENOENT }
        return false
    }

    /// Why, in the product's words, without the path: "ENOENT (2): no such file or directory",
    /// "is a symbolic link (not followed: name the file itself)", "is a FIFO (named pipe), not a
    /// regular file", "is larger than 65536 bytes (the limit for ...)" with `what` naming the file's role.
    public func reason(limitFor what: String? = nil) -> String {
        switch problem {
        case .system(let error):
            return describe(error)
        case .symbolicLink:
            return "is a symbolic link (not followed: name the file itself)"
        case .notRegular(let type):
            return "is \(type.description), not a regular file"
        case .tooLarge(let limit):
            return "is larger than \(limit) bytes" + (what.map { " (the limit for \($0))" } ?? "")
        }
    }

    /// The same as a `HALError` (for `StateStorage` and callers that branch on the kind): the
    /// system error itself, or `.invalidArgument` with the reason in the operation.
    public var halError: HALError {
        switch problem {
        case .system(let error):
            return error
        case .symbolicLink:
            return HALError(.invalidArgument, operation: "read \(path): \(reason())", errno: ELOOP)
        case .notRegular(let type):
            return HALError(.invalidArgument, operation: "read \(path): \(reason())", errno: type == .directory ? EISDIR : 0)
        case .tooLarge:
            return HALError(.invalidArgument, operation: "read \(path): \(reason())", errno: EFBIG)
        }
    }
}

/// The one way HALLinux reads a file it is given (every outside input is hostile: no links followed, regular files only, a size cap): the configuration file,
/// the headless script, the state file.
///
/// - The path is checked with lstat(2) first: a symbolic link is refused (not followed), and so is
///   anything but a regular file, which is never even opened (opening a device node can have
///   effects: /dev/watchdog arms the watchdog; a FIFO without a writer blocks open(2)).
/// - It is opened O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC and checked again with fstat(2)
///   (the path may have changed between the two calls).
/// - At most `limit` bytes are read; a file with more is refused (`.tooLarge`), so an endless
///   file cannot exhaust memory.
///
/// Blocks only for the read of a regular file. EINTR is retried by the seam.
public enum FileReader {
    public static func read(_ path: String, limit: Int) throws(FileReadError) -> [UInt8] {
        precondition(limit >= 0, "FileReader.read: negative limit")
        func fail(_ problem: FileReadError.Problem) -> FileReadError { FileReadError(path: path, problem: problem) }
        let found: FileType?
        do throws(HALError) {
            found = try FileType.of(path)
        } catch {
            throw fail(.system(error))
        }
        switch found {
        case nil: throw fail(.system(HALError(.notFound, operation: "open \(path)", errno: ENOENT)))
        case .regular?: break
        case .symbolicLink?: throw fail(.symbolicLink)
        case let other?: throw fail(.notRegular(other))
        }
        let fd: Int32
        do throws(HALError) {
            fd = try Syscall.run("open \(path)") { rb_open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0) }
        } catch {
            // ELOOP from O_NOFOLLOW: the path became a link after the lstat.
            throw fail(error.errno == ELOOP ? .symbolicLink : .system(error))
        }
        defer { _ = close(fd) }  // read-only: nothing to lose on close
        var info = stat()
        do throws(HALError) {
            _ = try Syscall.run("fstat \(path)") { fstat(fd, &info) }
        } catch {
            throw fail(.system(error))
        }
        let type = FileType(mode: info.st_mode)
        guard type == .regular else { throw fail(.notRegular(type)) }
        guard info.st_size <= limit else { throw fail(.tooLarge(limit: limit)) }
        // Read up to one byte more than the limit: a file growing meanwhile, or one whose size
        // says nothing (some /proc files show 0), is still caught.
        var data = [UInt8](repeating: 0, count: min(limit, max(Int(info.st_size), 4096)) + 1)
        var count = 0
        while true {
            if count == data.count {
                guard data.count <= limit else { throw fail(.tooLarge(limit: limit)) }
                data += [UInt8](repeating: 0, count: min(limit + 1, data.count * 2) - data.count)
            }
            let got: Int
            do throws(HALError) {
                let offset = count
                got = try Syscall.run("read \(path)") {
                    data.withUnsafeMutableBytes { buffer in
                        guard let base = buffer.baseAddress else { return 0 }
                        return CLinuxOS.read(fd, base + offset, buffer.count - offset)
                    }
                }
            } catch {
                throw fail(.system(error))
            }
            if got == 0 { break }
            count += got
            if count > limit { throw fail(.tooLarge(limit: limit)) }
        }
        data.removeSubrange(count...)
        return data
    }
}
