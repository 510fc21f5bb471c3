import CLinuxOS
import HAL

/// Unbuffered writes to standard output and standard error (the simulator redraws in place, so
/// nothing may sit in a stdio buffer). A short write is continued; EINTR is retried by the seam.
/// Errors (a closed pipe) are returned, never printed.
public enum StandardStreams {
    public static func writeOutput(_ text: String) throws(HALError) { try write(text, to: STDOUT_FILENO, name: "standard output") }
    public static func writeError(_ text: String) throws(HALError) { try write(text, to: STDERR_FILENO, name: "standard error") }

    static func write(_ text: String, to fd: Int32, name: String) throws(HALError) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = try Syscall.run("write \(name)") {
                bytes.withUnsafeBytes { buffer in
                    guard let base = buffer.baseAddress else { return 0 }
                    return CLinuxOS.write(fd, base + offset, buffer.count - offset)
                }
            }
            offset += written
        }
    }

    /// Writes `bytes` to `path` (created 0644, or truncated), never through a symbolic link planted
    /// there (O_NOFOLLOW). For the program's own output files (the simulator's picture of the glass),
    /// not the state file, which is replaced atomically by `StateFile`.
    public static func replaceFile(_ path: String, with bytes: [UInt8]) throws(HALError) {
        let fd = try Syscall.run("open \(path)") { rb_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644) }
        defer { _ = close(fd) }
        var offset = 0
        while offset < bytes.count {
            offset += try Syscall.run("write \(path)") {
                bytes.withUnsafeBytes { buffer in
                    guard let base = buffer.baseAddress else { return 0 }
                    return CLinuxOS.write(fd, base + offset, buffer.count - offset)
                }
            }
        }
    }

    /// The whole regular file at `path` as UTF-8 text (invalid bytes become U+FFFD), read with
    /// `FileReader.read`: no link followed, nothing but a regular file opened, at most `limit` bytes.
    public static func readTextFile(_ path: String, limit: Int) throws(FileReadError) -> String {
        String(decoding: try FileReader.read(path, limit: limit), as: UTF8.self)
    }
}
