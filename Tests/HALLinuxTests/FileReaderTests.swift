import Glibc
import HAL
import Testing

@testable import HALLinux

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
