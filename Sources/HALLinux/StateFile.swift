import CLinuxOS
import HAL

/// The controller's state in a file, replaced atomically and durably on every write:
/// the bytes go to `PATH.tmp` in the same directory, which is fsync'ed, renamed over `PATH`
/// (rename(2) is atomic), and then the directory is fsync'ed so the rename itself survives a power
/// cut. A crash at any point leaves the old or the new state, never a mix. One writer per path.
///
/// Every call blocks for its I/O (a write includes two fsyncs: milliseconds on an SD card, done
/// only when the state changes, not per countdown tick). Errors are typed, never printed.
public struct StateFile: StateStorage, Sendable {
    public let path: String

    /// Unreadable states are moved to `PATH.corrupt-1`, `-2`, ... up to this many.
    public static let maximumCorruptCopies = 1000

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

    /// The stored bytes; nil when the file does not exist (a fresh start).
    public func read() throws(HALError) -> [UInt8]? {
        let path = self.path
        let fd: Int32
        do throws(HALError) {
            fd = try Syscall.run("open \(path)") { rb_open(path, O_RDONLY | O_CLOEXEC, 0) }
        } catch where error.errno == ENOENT {
            return nil
        }
        defer { _ = close(fd) }  // read-only: nothing to lose on close
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = try Syscall.run("read \(path)") { CLinuxOS.read(fd, &chunk, chunk.count) }
            if count == 0 { return data }
            data += chunk[0..<count]
        }
    }

    /// Replaces the file's content with `bytes`, atomically and durably (see the type).
    public mutating func write(_ bytes: [UInt8]) throws(HALError) {
        let temporary = temporaryPath
        let fd = try Syscall.run("create \(temporary)") { rb_open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        do throws(HALError) {
            var offset = 0
            while offset < bytes.count {
                offset += try Syscall.run("write \(temporary)") {
                    bytes.withUnsafeBytes { CLinuxOS.write(fd, $0.baseAddress! + offset, $0.count - offset) }
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
            _ = try Syscall.run("rename \(temporary) to \(path)") { rename(temporary, path) }
        } catch {
            _ = unlink(temporary)
            throw error
        }
        try syncDirectory()
    }

    /// Renames the file to the first free `PATH.corrupt-N` and returns that path.
    public mutating func moveAside() throws(HALError) -> String {
        for n in 1...StateFile.maximumCorruptCopies {
            let candidate = path + ".corrupt-" + String(n)
            if access(candidate, F_OK) == 0 { continue }
            let path = self.path
            _ = try Syscall.run("rename \(path) to \(candidate)") { rename(path, candidate) }
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
