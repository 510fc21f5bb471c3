import CLinuxOS
import HAL

/// The directory of one send and its checks, given to both commands as `RESEND_SESSION_DIR` (a send
/// can leave an id there for the check). Private to the service (mode 0700), emptied before each
/// send (`ProcessRunner` does it: contents removed without following symbolic links).
///
/// Under systemd the unit's `RuntimeDirectory=` gives `$RUNTIME_DIRECTORY`; the session directory
/// is its subdirectory `session` (made if missing, kept at exit: systemd removes the runtime
/// directory). Elsewhere (the simulator, a manual `run`) it is a new private directory under
/// `$TMPDIR` (else /tmp), removed with its contents when this value goes away (`remove()`).
public final class SessionDirectory {
    public let path: String
    /// True for a temporary directory this program made and removes.
    public let isTemporary: Bool
    private var removed = false

    /// `runtimeDirectory` is `$RUNTIME_DIRECTORY` (nil or empty: none); `temporaryBase` where a
    /// temporary one goes (nil: `$TMPDIR`, else /tmp).
    public init(runtimeDirectory: String?, temporaryBase: String? = nil) throws(HALError) {
        // systemd may list several directories separated by ':'; the first is ours.
        if let runtime = runtimeDirectory?.split(separator: ":").first.map(String.init), !runtime.isEmpty {
            let session = runtime + "/session"
            do throws(HALError) {
                _ = try Syscall.run("mkdir " + session) { mkdir(session, 0o700) }
            } catch  where error.errno == EEXIST {
                // Kept from an earlier run of the service: emptied at the first send.
            }
            _ = try Syscall.run("chmod " + session) { chmod(session, 0o700) }
            path = session
            isTemporary = false
        } else {
            let base = temporaryBase ?? (getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp")
            var template = Array((base + "/resend-session-XXXXXX").utf8CString)
            _ = try Syscall.run("mkdtemp " + base + "/resend-session-XXXXXX") {
                template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } } == nil ? Int32(-1) : 0
            }
            path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            isTemporary = true
        }
    }

    /// The session directory for this process: `$RUNTIME_DIRECTORY/session` or a temporary one.
    public static func forThisProcess() throws(HALError) -> SessionDirectory {
        try SessionDirectory(runtimeDirectory: getenv("RUNTIME_DIRECTORY").map { String(cString: $0) })
    }

    /// Removes everything inside `path` without following symbolic links (a link is removed, never
    /// its target).
    public static func empty(_ path: String) throws(HALError) {
        _ = try Syscall.run("empty the session directory " + path) { rb_empty_directory(path) }
    }

    /// A temporary directory: its contents and itself are removed. Nothing for systemd's.
    public func remove() {
        guard isTemporary && !removed else { return }
        removed = true
        _ = rb_empty_directory(path)
        _ = rmdir(path)
    }

    deinit { remove() }
}
