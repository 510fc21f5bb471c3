import Glibc
import HAL
import HALLinux
import Testing

@Suite("The session directory")
struct SessionDirectoryTests {
    private func mode(_ path: String) -> UInt32? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return UInt32(info.st_mode) & 0o7777
    }

    private func exists(_ path: String) -> Bool { access(path, F_OK) == 0 || mode(path) != nil }

    private func write(_ path: String, _ text: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        _ = close(fd)
    }

    @Test func withoutSystemdItIsAPrivateTemporaryDirectoryRemovedWithItsContents() throws {
        let session = try SessionDirectory(runtimeDirectory: nil, temporaryBase: "/tmp")
        let path = session.path
        #expect(path.hasPrefix("/tmp/resend-session-"))
        #expect(mode(path) == 0o700)
        _ = mkdir(path + "/sub", 0o700)
        write(path + "/sub/id", "VE123")
        session.remove()
        #expect(!exists(path))
    }

    @Test func underSystemdItIsTheSessionSubdirectoryOfTheRuntimeDirectoryAndStays() throws {
        let runtime = try SessionDirectory(runtimeDirectory: nil, temporaryBase: "/tmp")
        do {
            let session = try SessionDirectory(runtimeDirectory: runtime.path + ":/elsewhere")
            #expect(session.path == runtime.path + "/session")
            #expect(mode(session.path) == 0o700)
            #expect(!session.isTemporary)
            session.remove()
        }
        #expect(exists(runtime.path + "/session"), "systemd removes its runtime directory, not the program")
    }

    @Test func emptyingRemovesLinksButNeverWhatTheyPointTo() throws {
        let outside = try SessionDirectory(runtimeDirectory: nil, temporaryBase: "/tmp")
        write(outside.path + "/precious", "keep")
        let session = try SessionDirectory(runtimeDirectory: nil, temporaryBase: "/tmp")
        write(session.path + "/sid", "VE123")
        _ = symlink(outside.path + "/precious", session.path + "/file-link")
        _ = symlink(outside.path, session.path + "/dir-link")
        _ = mkdir(session.path + "/nested", 0o700)
        _ = mkdir(session.path + "/nested/deeper", 0o700)
        write(session.path + "/nested/deeper/x", "x")
        try SessionDirectory.empty(session.path)
        for name in ["sid", "file-link", "dir-link", "nested"] { #expect(!exists(session.path + "/" + name), "\(name)") }
        #expect(exists(session.path))
        #expect(exists(outside.path + "/precious"))
    }

    @Test func aSymbolicLinkInPlaceOfTheDirectoryIsNotFollowed() throws {
        let outside = try SessionDirectory(runtimeDirectory: nil, temporaryBase: "/tmp")
        write(outside.path + "/precious", "keep")
        let holder = try SessionDirectory(runtimeDirectory: nil, temporaryBase: "/tmp")
        _ = symlink(outside.path, holder.path + "/link")
        #expect(throws: HALError.self) { try SessionDirectory.empty(holder.path + "/link") }
        #expect(exists(outside.path + "/precious"))
    }
}
