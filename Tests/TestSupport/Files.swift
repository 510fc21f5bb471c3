import Glibc

/// A fresh empty directory under /tmp, removed with everything in it when the value goes away;
/// it makes the files, links and hostile things (FIFOs, device nodes, sparse files) a test puts
/// at a path, never touching the real ones.
public final class TemporaryDirectory {
    public let path: String

    public init(prefix: String = "resend-test") {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        precondition(mkdtemp(&template) != nil, "mkdtemp failed")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { removeTree(path) }

    /// `path/name`.
    public func subpath(_ name: String) -> String { path + "/" + name }

    /// The state file's path in the directory (not created).
    public var stateFile: String { subpath("state.json") }

    /// Creates `relative` (and its parent directories) holding `contents`, replacing what was
    /// there; its path.
    @discardableResult
    public func write(_ relative: String, _ contents: String) -> String {
        var parent = ""
        for component in subpath(relative).split(separator: "/").dropLast() {
            parent += "/\(component)"
            _ = mkdir(parent, 0o755)
        }
        let fd = open(subpath(relative), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        precondition(fd >= 0, "cannot create \(subpath(relative))")
        let bytes = Array(contents.utf8)
        precondition(Glibc.write(fd, bytes, bytes.count) == bytes.count, "cannot write \(subpath(relative))")
        _ = close(fd)
        return subpath(relative)
    }

    /// The text of `name`, nil when it cannot be read.
    public func read(_ name: String) -> String? {
        fileBytes(subpath(name)).map { String(decoding: $0, as: UTF8.self) }
    }

    public func exists(_ name: String) -> Bool { access(subpath(name), F_OK) == 0 }

    /// An executable shell script `name` running `body`; its path.
    public func script(_ name: String, _ body: String) -> String {
        write(name, "#!/bin/sh\n" + body)
        precondition(chmod(subpath(name), 0o755) == 0, "chmod failed")
        return subpath(name)
    }

    /// A symbolic link `name` (its parent directory made when missing) pointing at `target`; its path.
    @discardableResult
    public func symlink(_ name: String, to target: String) -> String {
        if let slash = name.lastIndex(of: "/") { _ = mkdir(subpath(String(name[..<slash])), 0o755) }
        precondition(Glibc.symlink(target, subpath(name)) == 0, "symlink failed")
        return subpath(name)
    }

    /// A subdirectory `name`; its path.
    public func directory(_ name: String) -> String {
        precondition(mkdir(subpath(name), 0o755) == 0, "mkdir failed")
        return subpath(name)
    }

    /// A FIFO `name`; its path.
    public func fifo(_ name: String) -> String {
        precondition(mkfifo(subpath(name), 0o644) == 0, "mkfifo failed")
        return subpath(name)
    }

    /// A character device node with the numbers of /dev/null (minor 3) or /dev/zero (minor 5);
    /// nil when this process may not create device nodes (not root, or no CAP_MKNOD).
    public func deviceNode(_ name: String, minor: UInt = 3) -> String? {
        // makedev(1, minor): glibc keeps small device numbers in the low 16 bits.
        mknod(subpath(name), S_IFCHR | 0o666, dev_t((1 << 8) | minor)) == 0 ? subpath(name) : nil
    }

    /// A regular file of `size` bytes that takes no space (a hole); its path.
    public func sparseFile(_ name: String, size: Int) -> String {
        let fd = open(subpath(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        precondition(fd >= 0 && ftruncate(fd, off_t(size)) == 0, "cannot make \(subpath(name))")
        _ = close(fd)
        return subpath(name)
    }

    /// The names in the directory, sorted.
    public var names: [String] { directoryNames(path).sorted() }
}

/// The name the persistence tests give a temporary directory.
public typealias StateDirectory = TemporaryDirectory

/// What lstat says of `path`: type bits, device numbers, inode, size, link target; for "left
/// exactly as it was".
public func identity(_ path: String) -> String {
    var info = stat()
    guard lstat(path, &info) == 0 else { return "missing" }
    var target = [CChar](repeating: 0, count: 4096)
    let length = readlink(path, &target, target.count - 1)
    let link = length > 0 ? String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    return "mode=\(String(info.st_mode, radix: 8)) rdev=\(info.st_rdev) ino=\(info.st_ino) size=\(info.st_size) link=\(link)"
}

/// The bytes of the file at `path` (up to `limit`), nil when it cannot be opened.
public func fileBytes(_ path: String, limit: Int = 1 << 20) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { _ = close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while bytes.count < limit {
        let count = Glibc.read(fd, &buffer, min(buffer.count, limit - bytes.count))
        guard count > 0 else { break }
        bytes += buffer[..<count]
    }
    return bytes
}

/// The names in `directory` but "." and "..", unsorted; empty when it cannot be read.
private func directoryNames(_ directory: String) -> [String] {
    guard let handle = opendir(directory) else { return [] }
    defer { closedir(handle) }
    var names: [String] = []
    while let entry = readdir(handle) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// Removes `path` and, when it is a directory (not a link to one), everything below it.
private func removeTree(_ path: String) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    if info.st_mode & S_IFMT == S_IFDIR {
        for name in directoryNames(path) { removeTree(path + "/" + name) }
        _ = rmdir(path)
    } else {
        _ = unlink(path)
    }
}
