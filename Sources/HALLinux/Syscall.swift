import CLinuxOS
import HAL

/// The one place HALLinux runs a system call (or a libgpiod/libi2c call with the same convention).
///
/// Convention: the call returns a negative value on failure and leaves the cause in `errno` (the
/// C shims return -1 with errno; libi2c's SMBus helpers return -errno and keep errno set). A call
/// failing with EINTR is retried once; a second EINTR, like any other errno, becomes a `HALError`
/// classified by `classify(errno:)`, carrying the raw errno and `operation`.
///
/// Tests swap in outcomes with `Syscall.withScript(_:_:)` (or `withInjectedErrors`): each call
/// through the seam takes the next scripted outcome instead of running the real call. The script
/// is thread-local (the body is synchronous, so it runs on the thread that installed it), so tests
/// running in parallel do not see each other's script. (Thread-local through CLinuxOS rather than
/// a @TaskLocal with a Mutex: Embedded Swift for the ARM targets has neither.)
public enum Syscall {
    /// What a scripted call does instead of the real one.
    public enum Outcome: Hashable, Sendable {
        /// Fail with this errno (the real call is not made).
        case fail(Int32)
        /// Return this value (the real call is not made).
        case succeed(Int)
        /// Make the real call.
        case passThrough
    }

    /// A scripted sequence of outcomes for the calls made through the seam.
    /// Used only by the thread that installed it.
    public final class Script {
        private var pending: [Outcome]

        public init(_ outcomes: [Outcome]) { pending = outcomes }

        /// How many scripted outcomes are left.
        public var remaining: Int { pending.count }

        /// The next scripted outcome, or nil when the script is used up (then calls are real).
        func next() -> Outcome? {
            pending.isEmpty ? nil : pending.removeFirst()
        }
    }

    /// The calling thread's script, if a `withScript` body is running on it.
    static var script: Script? {
        rb_thread_script().map { Unmanaged<Script>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Runs `body` with `outcomes` scripted for the calls it makes through the seam; returns its
    /// result and how many outcomes were left unused (a test checks every one was consumed).
    public static func withScript<R, E: Error>(_ outcomes: [Outcome], _ body: () throws(E) -> R) throws(E) -> (result: R, unused: Int) {
        let script = Script(outcomes)
        let outer = rb_thread_script()
        rb_set_thread_script(Unmanaged.passUnretained(script).toOpaque())
        defer { rb_set_thread_script(outer) }
        let result = try withExtendedLifetime(script) { () throws(E) -> R in try body() }
        return (result, script.remaining)
    }

    /// `withScript` with every outcome a failure with the given errno.
    public static func withInjectedErrors<R, E: Error>(_ errnos: [Int32], _ body: () throws(E) -> R) throws(E) -> (result: R, unused: Int) {
        try withScript(errnos.map { .fail($0) }, body)
    }

    /// Runs `call`; returns its non-negative result or throws the classified error.
    /// Blocks as long as `call` blocks.
    public static func run<T: BinaryInteger>(
        _ operation: @autoclosure () -> String, _ call: () -> T
    ) throws(HALError) -> T {
        var interrupted = false
        while true {
            let (result, error) = attempt(call)
            if result >= 0 { return result }
            if error == EINTR && !interrupted {
                interrupted = true
                continue
            }
            throw HALError(classify(errno: error), operation: operation(), errno: error)
        }
    }

    private static func attempt<T: BinaryInteger>(_ call: () -> T) -> (T, Int32) {
        switch script?.next() {
        case .fail(let errno)?: return (-1, errno)
        case .succeed(let value)?: return (T(value), 0)
        case .passThrough?, nil: break
        }
        let result = call()
        return (result, result < 0 ? rb_errno() : 0)
    }
}

/// The errno table: the one place an OS error number becomes a `HALError.Kind`.
public func classify(errno: Int32) -> HALError.Kind {
    switch errno {
    case ENOENT, ENODEV: .notFound
    case ENXIO, EREMOTEIO: .noDevice
    case EBUSY: .busy
    case EACCES, EPERM: .permission
    case ETIMEDOUT: .timeout
    case EOPNOTSUPP, ENOTTY, EINVAL, ENOSYS: .unsupported
    default: .io
    }
}

/// The errno's symbolic name and a short meaning in this product's terms, e.g.
/// "EREMOTEIO (121): no device answered". For an error without an errno (`errno == 0`) it
/// describes the kind. Callers prefix `error.operation` when they log.
public func describe(_ error: HALError) -> String {
    guard error.errno != 0 else { return describe(kind: error.kind) }
    return describe(errno: error.errno)
}

/// What a missing file reads like in messages: "ENOENT (2): no such file or directory" (for
/// modules that do not import the C library).
public var missingFileDescription: String { describe(errno: ENOENT) }

/// "NAME (number): meaning" for an errno value: the one wording of OS errors everywhere (logs,
/// start-up failures, `config check`, the send command's reasons). Values outside the table use
/// the C library's name and text in the same shape ("EXFULL (54): exchange full").
public func describe(errno: Int32) -> String {
    if let known = errnoTable[errno] {
        return "\(known.name) (\(errno)): \(known.meaning)"
    }
    let name = rb_errno_name(errno).map { String(cString: $0) } ?? "errno"
    var text = strerror(errno).map { String(cString: $0) } ?? "unknown error"
    // strerror capitalises ("Is a directory"); the table's meanings are lower case mid-sentence.
    if let first = text.first, first.isUppercase, text.dropFirst().first?.isLowercase ?? true {
        text = first.lowercased() + text.dropFirst()
    }
    return "\(name) (\(errno)): \(text)"
}

private func describe(kind: HALError.Kind) -> String {
    switch kind {
    case .notFound: "not found"
    case .noDevice: "no device answered"
    case .busy: "in use by another program"
    case .permission: "permission denied"
    case .timeout: "timed out"
    case .io: "input/output error"
    case .unsupported: "not supported"
    case .invalidArgument: "invalid argument"
    case .injected: "injected fault"
    }
}

private let errnoTable: [Int32: (name: String, meaning: String)] = [
    EPERM: ("EPERM", "operation not permitted"),
    ENOENT: ("ENOENT", "no such file or directory"),
    ESRCH: ("ESRCH", "no such process"),
    EINTR: ("EINTR", "interrupted by a signal"),
    EIO: ("EIO", "input/output error on the bus or device"),
    ENXIO: ("ENXIO", "no device answered"),
    E2BIG: ("E2BIG", "argument list too long"),
    ENOEXEC: ("ENOEXEC", "not a program the kernel can run (a script needs a #! line)"),
    EBADF: ("EBADF", "bad file descriptor"),
    ECHILD: ("ECHILD", "no child process"),
    EAGAIN: ("EAGAIN", "try again"),
    ENOMEM: ("ENOMEM", "out of memory"),
    EACCES: ("EACCES", "permission denied"),
    EBUSY: ("EBUSY", "in use by another program or driver"),
    EEXIST: ("EEXIST", "already exists"),
    EXDEV: ("EXDEV", "not on the same file system"),
    ENODEV: ("ENODEV", "no such device"),
    ENOTDIR: ("ENOTDIR", "a part of the path is not a directory"),
    EISDIR: ("EISDIR", "is a directory"),
    EINVAL: ("EINVAL", "invalid argument or not supported by the driver"),
    ENFILE: ("ENFILE", "too many open files in the system"),
    EMFILE: ("EMFILE", "too many open files"),
    ENOTTY: ("ENOTTY", "not supported by this device"),
    ETXTBSY: ("ETXTBSY", "the program file is being written"),
    EFBIG: ("EFBIG", "file too large"),
    ENOSPC: ("ENOSPC", "no space left on device"),
    EROFS: ("EROFS", "read-only file system"),
    EPIPE: ("EPIPE", "the reader went away (broken pipe)"),
    ENAMETOOLONG: ("ENAMETOOLONG", "file name too long"),
    ENOSYS: ("ENOSYS", "not implemented by the kernel"),
    ENOTEMPTY: ("ENOTEMPTY", "directory not empty"),
    ELOOP: ("ELOOP", "too many levels of symbolic links"),
    EPROTO: ("EPROTO", "protocol error"),
    EOPNOTSUPP: ("EOPNOTSUPP", "operation not supported"),
    ETIMEDOUT: ("ETIMEDOUT", "timed out"),
    EDQUOT: ("EDQUOT", "disk quota exceeded"),
    EREMOTEIO: ("EREMOTEIO", "no device answered"),
]

/// "0x27": addresses and offsets in messages.
func hex(_ value: UInt8) -> String {
    let digits = String(value, radix: 16, uppercase: false)
    return "0x" + (digits.count < 2 ? "0" + digits : digits)
}
