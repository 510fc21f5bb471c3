import Glibc
import HAL
import Testing
@testable import HALLinux

/// Hostile things at a path: made in a temporary directory, never the real /dev nodes.
extension TemporaryDirectory {
    /// A character device node with /dev/null's numbers (1, 3); nil when this process may not
    /// create device nodes (not root, or no CAP_MKNOD).
    func deviceNode(_ name: String, minor: UInt = 3) -> String? {
        let node = "\(path)/\(name)"
        // makedev(1, minor): glibc keeps small device numbers in the low 16 bits.
        let device = dev_t((1 << 8) | minor)
        return mknod(node, S_IFCHR | 0o644, device) == 0 ? node : nil
    }

    func fifo(_ name: String) -> String {
        let node = "\(path)/\(name)"
        precondition(mkfifo(node, 0o644) == 0, "mkfifo failed")
        return node
    }

    func symlink(_ name: String, to target: String) -> String {
        let link = "\(path)/\(name)"
        precondition(Glibc.symlink(target, link) == 0, "symlink failed")
        return link
    }

    func directory(_ name: String) -> String {
        let made = "\(path)/\(name)"
        precondition(mkdir(made, 0o755) == 0, "mkdir failed")
        return made
    }

    /// A regular file of `size` bytes that takes no space (a hole).
    func sparseFile(_ name: String, size: Int) -> String {
        let file = "\(path)/\(name)"
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        precondition(fd >= 0 && ftruncate(fd, off_t(size)) == 0, "cannot make \(file)")
        _ = close(fd)
        return file
    }
}

/// What lstat says of `path`: type bits, device numbers, size, link target; for "left exactly as it was".
func identity(_ path: String) -> String {
    var info = stat()
    guard lstat(path, &info) == 0 else { return "missing" }
    var target = [CChar](repeating: 0, count: 4096)
    let length = readlink(path, &target, target.count - 1)
    let link = length > 0 ? String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    return "mode=\(String(info.st_mode, radix: 8)) rdev=\(info.st_rdev) ino=\(info.st_ino) size=\(info.st_size) link=\(link)"
}

/// The reason `FileReader.read` gives for `path`, or nil when it read the file.
private func readFailure(_ path: String, limit: Int = 1 << 20) -> String? {
    do throws(FileReadError) {
        _ = try FileReader.read(path, limit: limit)
        return nil
    } catch {
        return error.reason(limitFor: "a test file")
    }
}

@Suite("reading a file safely", .timeLimit(.minutes(1)))
struct FileReaderTests {
    @Test("a regular file is read whole, up to and including the limit")
    func regular() throws {
        let directory = TemporaryDirectory()
        directory.write("a.txt", "hello")
        #expect(try FileReader.read(directory.path + "/a.txt", limit: 5) == Array("hello".utf8))
        #expect(readFailure(directory.path + "/a.txt", limit: 4) == "is larger than 4 bytes (the limit for a test file)")
    }

    @Test("an endless or huge file is refused at the limit instead of filling memory")
    func tooLarge() {
        let directory = TemporaryDirectory()
        let big = directory.sparseFile("big", size: (1 << 20) + 1)
        #expect(readFailure(big) == "is larger than 1048576 bytes (the limit for a test file)")
        // /proc files report size 0 and are read until end of file, still within the cap.
        #expect(readFailure("/proc/self/status", limit: 16) == "is larger than 16 bytes (the limit for a test file)")
    }

    @Test("nothing at the path is ENOENT, told apart as missing")
    func missing() throws {
        let directory = TemporaryDirectory()
        do throws(FileReadError) {
            _ = try FileReader.read(directory.path + "/none", limit: 10)
            Issue.record("read a missing file")
        } catch {
            #expect(error.isMissing)
            #expect(error.reason() == "ENOENT (2): no such file or directory")
        }
    }

    @Test("a FIFO, a directory, a symbolic link and a symlink loop are refused at once, never opened, and stay as they were")
    func notRegular() {
        let directory = TemporaryDirectory()
        directory.write("target", "content")
        let cases: [(String, String)] = [
            (directory.fifo("fifo"), "is a FIFO (named pipe), not a regular file"),
            (directory.directory("dir"), "is a directory, not a regular file"),
            (directory.symlink("link", to: directory.path + "/target"), "is a symbolic link (not followed: name the file itself)"),
            (directory.symlink("loop", to: "loop"), "is a symbolic link (not followed: name the file itself)"),
        ]
        for (path, reason) in cases {
            let before = identity(path)
            #expect(readFailure(path) == reason, "\(path)")
            #expect(identity(path) == before)
        }
        #expect(readFailure(directory.path + "/loop/x") == "ELOOP (40): too many levels of symbolic links")
    }

    @Test("a device node (a mknod copy of /dev/zero) is refused without being opened", .enabled(if: getuid() == 0, "mknod needs root"))
    func deviceNode() throws {
        let directory = TemporaryDirectory()
        let zero = try #require(directory.deviceNode("zero", minor: 5))
        let before = identity(zero)
        #expect(readFailure(zero) == "is a character device, not a regular file")
        #expect(identity(zero) == before)
    }
}
