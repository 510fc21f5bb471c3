import Glibc
import HAL
import Testing

@testable import HALLinux

@Suite("the state file")
struct StateFileTests {
    @Test("a missing file reads as nothing stored")
    func missing() throws {
        let directory = TemporaryDirectory()
        #expect(try StateFile(path: directory.path + "/state.json").read() == nil)
    }

    @Test("what is written is read back, replacing the old content, with no temporary file left")
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        var file = StateFile(path: directory.path + "/state.json")
        try file.write(Array("first, longer content\n".utf8))
        try file.write(Array("second\n".utf8))
        #expect(try file.read() == Array("second\n".utf8))
        #expect(directory.names == ["state.json"])
    }

    @Test("a failed fsync leaves the old content in place and removes the temporary file")
    func failedWriteKeepsOld() throws {
        let directory = TemporaryDirectory()
        var file = StateFile(path: directory.path + "/state.json")
        try file.write(Array("old\n".utf8))
        // open (real), write (real), fsync fails with EIO.
        let error = Syscall.withScript([.passThrough, .passThrough, .fail(EIO)]) {
            thrownError { try file.write(Array("new\n".utf8)) }
        }.result
        #expect(error == HALError(.io, operation: "fsync \(directory.path)/state.json.tmp", errno: EIO))
        #expect(try file.read() == Array("old\n".utf8))
        #expect(directory.names == ["state.json"])
    }

    @Test("writing into a missing directory throws notFound naming the temporary file")
    func missingDirectory() {
        var file = StateFile(path: "/nonexistent-resend-dir/state.json")
        let error = thrownError { try file.write([0x7B, 0x7D]) }
        #expect(error?.kind == .notFound)
        #expect(error?.operation == "create /nonexistent-resend-dir/state.json.tmp")
    }

    @Test("an unreadable state is moved to the first free .corrupt-N")
    func moveAside() throws {
        let directory = TemporaryDirectory()
        var file = StateFile(path: directory.path + "/state.json")
        try file.write(Array("garbage 1".utf8))
        #expect(try file.moveAside() == directory.path + "/state.json.corrupt-1")
        #expect(try file.read() == nil)
        try file.write(Array("garbage 2".utf8))
        #expect(try file.moveAside() == directory.path + "/state.json.corrupt-2")
        #expect(directory.names == ["state.json.corrupt-1", "state.json.corrupt-2"])
        #expect(try StateFile(path: directory.path + "/state.json.corrupt-2").read() == Array("garbage 2".utf8))
    }

    @Test(
        "the directory synced after a rename is the file's own",
        arguments: [
            ("/var/lib/resend-button/state.json", "/var/lib/resend-button"), ("state.json", "."), ("/state.json", "/"),
        ])
    func directoryOfPath(path: String, directory: String) {
        #expect(StateFile(path: path).directory == directory)
    }

    /// Reads the whole regular file at `path` (test helper; the file is small).
    private func contents(_ path: String) -> String? {
        guard let bytes = try? FileReader.read(path, limit: 1 << 16) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Something not a regular file at PATH: never read, moved aside or replaced.
    private func checkLeftAlone(_ path: String, in directory: TemporaryDirectory, reason: String) {
        let before = identity(path)
        let names = directory.names
        var file = StateFile(path: path)
        #expect(file.checkPath() == reason)
        let readError = thrownError { _ = try file.read() }
        #expect(readError?.kind == .invalidArgument)
        #expect(readError?.operation == "read \(path): \(reason)")
        #expect(readError.map(file.isUnreadableContent) == false, "not ours: never moved aside")
        let writeError = thrownError { try file.write(Array("{}".utf8)) }
        #expect(writeError?.kind == .invalidArgument)
        #expect(writeError?.operation.hasPrefix("replace \(path): it ") == true)
        let moveError = thrownError { _ = try file.moveAside() }
        #expect(moveError?.operation.hasPrefix("move aside \(path): it ") == true)
        #expect(identity(path) == before, "left exactly as it was")
        #expect(directory.names == names, "no temporary file or corrupt copy left")
    }

    @Test(
        "a device node as the state file (a mknod copy of /dev/null) is never read, moved aside or replaced",
        .enabled(if: getuid() == 0, "mknod needs root"))
    func deviceNode() throws {
        let directory = TemporaryDirectory()
        let node = try #require(directory.deviceNode("null"))
        checkLeftAlone(node, in: directory, reason: "is a character device, not a regular file")
    }

    @Test("a FIFO, a directory or a symbolic link as the state file is never read, moved aside or replaced")
    func otherTypes() {
        let directory = TemporaryDirectory()
        directory.write("elsewhere", "not the state\n")
        checkLeftAlone(directory.fifo("fifo"), in: directory, reason: "is a FIFO (named pipe), not a regular file")
        checkLeftAlone(directory.directory("dir"), in: directory, reason: "is a directory, not a regular file")
        checkLeftAlone(
            directory.symlink("link", to: directory.path + "/elsewhere"), in: directory,
            reason: "is a symbolic link (not followed: name the file itself)")
        #expect(contents(directory.path + "/elsewhere") == "not the state\n")
    }

    @Test("a symbolic link planted at PATH.tmp is not followed: its target and the link stay as they were, and nothing is written")
    func plantedLink() throws {
        let directory = TemporaryDirectory()
        directory.write("victim", "precious\n")
        let victim = directory.path + "/victim"
        let link = directory.symlink("state.json.tmp", to: victim)
        let before = (identity(victim), identity(link))
        var file = StateFile(path: directory.path + "/state.json")
        let error = thrownError { try file.write(Array("{\"version\": 1}".utf8)) }
        #expect(
            error
                == HALError(
                    .invalidArgument, operation: "create \(link): it exists and is a symbolic link; left alone (remove it by hand)", errno: EEXIST))
        #expect(contents(victim) == "precious\n")
        #expect((identity(victim), identity(link)) == before)
        #expect(directory.names == ["state.json.tmp", "victim"])
    }

    @Test("a regular PATH.tmp left by a crash is removed by name (a hard link's other name keeps its content) and the write goes on")
    func leftoverTemporary() throws {
        let directory = TemporaryDirectory()
        directory.write("victim", "precious\n")
        #expect(link(directory.path + "/victim", directory.path + "/state.json.tmp") == 0)
        var file = StateFile(path: directory.path + "/state.json")
        try file.write(Array("new\n".utf8))
        #expect(try file.read() == Array("new\n".utf8))
        #expect(contents(directory.path + "/victim") == "precious\n")
        #expect(directory.names == ["state.json", "victim"])
    }

    @Test("moving aside never replaces an existing name, not even a dangling link")
    func moveAsideKeepsExisting() throws {
        let directory = TemporaryDirectory()
        let dangling = directory.symlink("state.json.corrupt-1", to: directory.path + "/nowhere")
        var file = StateFile(path: directory.path + "/state.json")
        try file.write(Array("garbage".utf8))
        #expect(try file.moveAside() == directory.path + "/state.json.corrupt-2")
        #expect(identity(dangling).hasSuffix("link=\(directory.path)/nowhere"))
    }

    @Test(
        "a state file larger than 64 KiB is not read: an error naming the limit, which marks it unreadable content (moved aside like a corrupt state)"
    )
    func oversized() throws {
        let directory = TemporaryDirectory()
        let big = directory.sparseFile("state.json", size: StateFile.maximumSize + 1)
        var file = StateFile(path: big)
        let error = try #require(thrownError { _ = try file.read() })
        #expect(error.operation == "read \(big): is larger than 65536 bytes")
        #expect(error.errno == EFBIG)
        #expect(file.isUnreadableContent(error))
        #expect(try file.moveAside() == big + ".corrupt-1")
        #expect(directory.names == ["state.json.corrupt-1"])
    }
}
