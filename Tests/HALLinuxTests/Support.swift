import Glibc
import HAL
import Testing
@testable import HALLinux

/// Runs `body` and returns the HALError it threw, or nil when it returned normally.
func thrownError(_ body: () throws -> Void) -> HALError? {
    do {
        try body()
        return nil
    } catch let error as HALError {
        return error
    } catch {
        Issue.record("not a HALError: \(error)")
        return nil
    }
}

/// A pipe whose ends close when the value goes away.
final class Pipe {
    let readEnd: Int32
    private(set) var writeEnd: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        let result = pipe(&fds)
        precondition(result == 0, "pipe failed")
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    func write(_ bytes: [UInt8]) {
        let written = Glibc.write(writeEnd, bytes, bytes.count)
        precondition(written == bytes.count, "pipe write failed")
    }

    func closeWriteEnd() {
        _ = close(writeEnd)
        writeEnd = -1
    }

    deinit {
        _ = close(readEnd)
        if writeEnd >= 0 { _ = close(writeEnd) }
    }
}

/// A fresh empty directory under /tmp, removed (with its files, one level) when the value goes away.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/hallinux-test-XXXXXX".utf8CString)
        let made = mkdtemp(&template)
        precondition(made != nil, "mkdtemp failed")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Creates `relative` (and its parent directories) holding `contents`.
    func write(_ relative: String, _ contents: String) {
        let full = "\(path)/\(relative)"
        var parent = ""
        for component in full.split(separator: "/").dropLast() {
            parent += "/\(component)"
            _ = mkdir(parent, 0o755)
        }
        let fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        precondition(fd >= 0, "cannot create \(full)")
        let bytes = Array(contents.utf8)
        _ = Glibc.write(fd, bytes, bytes.count)
        _ = close(fd)
    }

    deinit {
        // Test trees are tiny; let the shell remove them.
        var pid: pid_t = 0
        let args = ["/bin/rm", "-rf", path]
        var argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        if posix_spawn(&pid, "/bin/rm", nil, nil, &argv, nil) == 0 {
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        argv.forEach { free($0) }
    }
}

/// A fake I2C bus whose devices answer at `responders`; `claimed` addresses are held by a driver.
struct FakeProbeBus: I2CBus {
    var responders: Set<UInt8>
    var claimed: Set<UInt8> = []
    var failure: HALError?
    var probed: [UInt8] = []

    var supportsMultiByteWrite: Bool { true }

    mutating func write(_ bytes: [UInt8], to address: I2CAddress) throws(HALError) {}

    mutating func probe(_ address: I2CAddress) throws(HALError) -> Bool {
        probed.append(address.rawValue)
        if let failure { throw failure }
        if claimed.contains(address.rawValue) { throw HALError(.busy, operation: "I2C_SLAVE", errno: EBUSY) }
        return responders.contains(address.rawValue)
    }
}
