import Glibc
import HAL
import Testing
@testable import HALLinux

extension TemporaryDirectory {
    /// The names in the directory (not recursive), sorted.
    var files: [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

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
        #expect(directory.files == ["state.json"])
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
        #expect(directory.files == ["state.json"])
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
        #expect(directory.files == ["state.json.corrupt-1", "state.json.corrupt-2"])
        #expect(try StateFile(path: directory.path + "/state.json.corrupt-2").read() == Array("garbage 2".utf8))
    }

    @Test("the directory synced after a rename is the file's own", arguments: [
        ("/var/lib/resend-button/state.json", "/var/lib/resend-button"), ("state.json", "."), ("/state.json", "/"),
    ])
    func directoryOfPath(path: String, directory: String) {
        #expect(StateFile(path: path).directory == directory)
    }
}
