import Glibc
import HAL
import HALLinux
import Testing

@Suite("errno table and the syscall seam")
struct SyscallTests {
    @Test(
        "each errno maps to its kind",
        arguments: [
            (ENOENT, HALError.Kind.notFound),
            (ENODEV, .notFound),
            (EACCES, .permission),
            (EPERM, .permission),
            (EBUSY, .busy),
            (ENXIO, .noDevice),
            (EREMOTEIO, .noDevice),
            (EIO, .io),
            (ETIMEDOUT, .timeout),
            (EOPNOTSUPP, .unsupported),
            (ENOTTY, .unsupported),
            (EAGAIN, .io),
        ])
    func errnoTable(errno: Int32, kind: HALError.Kind) {
        #expect(classify(errno: errno) == kind)
    }

    @Test(
        "an errno is described by name, number and meaning",
        arguments: [
            (EREMOTEIO, "EREMOTEIO (121): no device answered"),
            (ENXIO, "ENXIO (6): no device answered"),
            (ENOENT, "ENOENT (2): no such file or directory"),
            (EACCES, "EACCES (13): permission denied"),
            (EBUSY, "EBUSY (16): in use by another program or driver"),
            (ETIMEDOUT, "ETIMEDOUT (110): timed out"),
            (EISDIR, "EISDIR (21): is a directory"),
            (ELOOP, "ELOOP (40): too many levels of symbolic links"),
            (ENOSPC, "ENOSPC (28): no space left on device"),
            (EXFULL, "EXFULL (54): exchange full"),  // outside the table: the C library's name and text, same shape
        ])
    func errnoDescription(errno: Int32, text: String) {
        #expect(describe(HALError(classify(errno: errno), operation: "write /dev/i2c-1", errno: errno)) == text)
    }

    @Test("an error without an errno is described by its kind")
    func kindDescription() {
        #expect(describe(HALError(.invalidArgument, operation: "address 0x80")) == "invalid argument")
    }

    @Test("an EINTR is retried once and the retry's result returned")
    func eintrRetriedOnce() throws {
        var calls = 0
        let value = try Syscall.run("read something") { () -> Int32 in
            calls += 1
            if calls == 1 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(value == 7)
        #expect(calls == 2)
    }

    @Test("a second EINTR surfaces as an error carrying EINTR and the operation")
    func secondEintrSurfaces() {
        var calls = 0
        let error = thrownError {
            _ = try Syscall.run("poll") { () -> Int32 in
                calls += 1
                errno = EINTR
                return -1
            }
        }
        #expect(error == HALError(.io, operation: "poll", errno: EINTR))
        #expect(calls == 2)
    }

    @Test("an injected EINTR is retried with the real call")
    func injectedEintrThenRealCall() throws {
        var realCalls = 0
        let (value, unused) = try Syscall.withInjectedErrors([EINTR]) {
            try Syscall.run("ioctl") { () -> Int32 in
                realCalls += 1
                return 5
            }
        }
        #expect(value == 5)
        #expect(realCalls == 1)
        #expect(unused == 0)
    }

    @Test(
        "an injected errno after an EINTR is classified",
        arguments: [
            (EBUSY, HALError.Kind.busy), (EREMOTEIO, .noDevice), (EIO, .io), (EACCES, .permission),
        ])
    func injectedErrnoAfterEintr(errno: Int32, kind: HALError.Kind) {
        var realCalls = 0
        let (error, unused) = Syscall.withInjectedErrors([EINTR, errno]) {
            thrownError {
                _ = try Syscall.run("ioctl I2C_SLAVE") { () -> Int32 in
                    realCalls += 1; return 0
                }
            }
        }
        #expect(error == HALError(kind, operation: "ioctl I2C_SLAVE", errno: errno))
        #expect(realCalls == 0)
        #expect(unused == 0)
    }

    @Test("a failure other than EINTR is not retried")
    func otherErrorsNotRetried() {
        var calls = 0
        let error = thrownError {
            _ = try Syscall.run("open /dev/gpiochip0") { () -> Int32 in
                calls += 1
                errno = EACCES
                return -1
            }
        }
        #expect(error?.kind == .permission)
        #expect(calls == 1)
    }
}
