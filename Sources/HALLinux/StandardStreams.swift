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

    /// The whole regular file at `path` as UTF-8 text (invalid bytes become U+FFFD), read with
    /// `FileReader.read`: no link followed, nothing but a regular file opened, at most `limit` bytes.
    public static func readTextFile(_ path: String, limit: Int) throws(FileReadError) -> String {
        String(decoding: try FileReader.read(path, limit: limit), as: UTF8.self)
    }
}
