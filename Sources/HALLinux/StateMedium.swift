import CLinuxOS
import HAL

/// Whether the file system holding a directory keeps what is written there through a power cut:
/// tmpfs, ramfs, a RAM block device (zram, brd) and an overlay whose upper layer is one of those
/// (Raspberry Pi OS's "Overlay File System": the root is an overlay over a tmpfs at
/// /media/root-rw) forget everything at every power cut or reboot.
///
/// Found with statfs(2) (the file system's magic number) and stat(2) (its device, matched with
/// the `major:minor` of /proc/self/mountinfo, which names the mount, its source and an overlay's
/// `upperdir`). Every call goes through `Syscall`, so tests script the answers.
public struct StateMedium: Hashable, Sendable {
    public enum Verdict: Hashable, Sendable {
        /// On a disk (or anything that is not known to be in RAM).
        case durable
        /// In RAM: forgotten at a power cut or a reboot.
        case forgets
        /// Not known: an overlay whose upper layer cannot be found from here (e.g. in a container).
        case unknown
    }

    public var verdict: Verdict
    /// The directory looked at: the state file's, or its nearest existing parent.
    public var directory: String
    /// The mount holding it, from mountinfo (nil when no entry matched).
    public var mount: MountEntry?
    /// The file system type: statfs's when known ("tmpfs", "ramfs", "overlay"), else mountinfo's.
    public var fileSystem: String
    /// For an overlay: its upper layer's directory and the file system that holds it, when found.
    public var upperDirectory: String?
    public var upperFileSystem: String?

    public init(
        verdict: Verdict, directory: String, mount: MountEntry?, fileSystem: String, upperDirectory: String? = nil, upperFileSystem: String? = nil
    ) {
        self.verdict = verdict
        self.directory = directory
        self.mount = mount
        self.fileSystem = fileSystem
        self.upperDirectory = upperDirectory
        self.upperFileSystem = upperFileSystem
    }

    /// One line for `check` and the log: "/var/lib/resend-button is on tmpfs (mount /var/lib, source
    /// tmpfs)" or "... on overlay (mount /, source overlayroot) whose upper layer
    /// /media/root-rw/overlay is on tmpfs".
    public var summary: String {
        var text = "\(directory) is on \(fileSystem)"
        if let mount { text += " (mount \(mount.mountPoint), source \(mount.source))" }
        if fileSystem == "overlay" {
            if let upperDirectory {
                text += " whose upper layer \(upperDirectory) is on \(upperFileSystem ?? "an unknown file system")"
            } else {
                text += " whose upper layer was not found"
            }
        }
        return text
    }

    // Magic numbers of statfs's f_type, from <linux/magic.h>.
    static let tmpfsMagic: Int64 = 0x0102_1994  // TMPFS_MAGIC
    static let ramfsMagic: Int64 = 0x8584_58f6  // RAMFS_MAGIC
    static let overlayMagic: Int64 = 0x794c_7630  // OVERLAYFS_SUPER_MAGIC

    static func name(ofMagic magic: Int64) -> String? {
        switch magic {
        case tmpfsMagic: "tmpfs"
        case ramfsMagic: "ramfs"
        case overlayMagic: "overlay"
        default: nil
        }
    }

    /// A file system that lives in RAM: by type, or a block device that is RAM (zram, brd).
    static func isRAM(fileSystem: String, source: String?) -> Bool {
        if fileSystem == "tmpfs" || fileSystem == "ramfs" || fileSystem == "rootfs" { return true }
        guard let source else { return false }
        return source.hasPrefix("/dev/zram") || source.hasPrefix("/dev/ram")
    }

    /// The medium of the directory holding `stateFile`. `mountinfo`: the text of
    /// /proc/self/mountinfo (read here when nil; unreadable counts as empty).
    public static func of(stateFile: String, mountinfo: String? = nil) -> StateMedium {
        var directory = parent(of: stateFile)
        // The nearest existing directory: the state directory may not exist yet.
        var magic: Int64?
        for _ in 0..<64 {
            do throws(HALError) {
                let dir = directory
                magic = Int64(try Syscall.run("statfs \(dir)") { rb_statfs_type(dir) })
                break
            } catch {
                guard error.errno == ENOENT, directory != "/", directory != "." else { break }
                directory = parent(of: directory)
            }
        }
        let dir = directory
        let device = try? Syscall.run("stat \(dir)") { rb_stat_device(dir) }
        let text = mountinfo ?? (try? FileReader.read("/proc/self/mountinfo", limit: 4 << 20)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let mounts = MountEntry.parse(text)
        let mount = MountEntry.holding(directory, device: device.map(MountEntry.Device.init(encoded:)), in: mounts)
        let fileSystem = magic.flatMap(name(ofMagic:)) ?? mount?.fileSystem ?? "an unknown file system"
        var medium = StateMedium(verdict: .durable, directory: directory, mount: mount, fileSystem: fileSystem)
        if isRAM(fileSystem: fileSystem, source: mount?.source) {
            medium.verdict = .forgets
        } else if fileSystem == "overlay" {
            medium.judgeUpperLayer(mounts: mounts)
        }
        return medium
    }

    /// An overlay forgets when its upper layer does; one without an upper layer is read-only (a
    /// write fails, which closes code entry anyway): durable here.
    private mutating func judgeUpperLayer(mounts: [MountEntry]) {
        guard let mount, let upper = mount.superOption("upperdir") else {
            verdict = mount == nil ? .unknown : .durable
            return
        }
        upperDirectory = upper
        if let magic = try? Syscall.run("statfs \(upper)", { rb_statfs_type(upper) }), let known = StateMedium.name(ofMagic: Int64(magic)),
            known != "overlay"
        {
            upperFileSystem = known
            verdict = StateMedium.isRAM(fileSystem: known, source: nil) ? .forgets : .durable
            return
        }
        // Not visible from here, or not one of the types statfs names: the mount holding the path.
        let others = mounts.filter { $0.id != mount.id }
        guard let holder = MountEntry.holding(upper, device: nil, in: others), holder.fileSystem != "overlay" else {
            verdict = .unknown
            return
        }
        upperFileSystem = holder.fileSystem
        verdict = StateMedium.isRAM(fileSystem: holder.fileSystem, source: holder.source) ? .forgets : .durable
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }
}

/// One line of /proc/self/mountinfo (proc(5)): `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 -
/// ext3 /dev/root rw,errors=continue`.
public struct MountEntry: Hashable, Sendable {
    public struct Device: Hashable, Sendable {
        public var major: Int64
        public var minor: Int64
        init(major: Int64, minor: Int64) {
            self.major = major
            self.minor = minor
        }
        /// From `rb_stat_device`'s (major << 32) | minor.
        init(encoded: Int64) { self.init(major: encoded >> 32, minor: encoded & 0xffff_ffff) }
    }

    public var id: Int
    public var device: Device
    public var mountPoint: String
    public var fileSystem: String
    public var source: String
    public var superOptions: String

    /// The value of `key=value` among the super options (an overlay's `upperdir`).
    public func superOption(_ key: String) -> String? {
        for option in superOptions.split(separator: ",") where option.hasPrefix(key + "=") {
            return String(option.dropFirst(key.count + 1))
        }
        return nil
    }

    /// Every well-formed line; others are skipped.
    public static func parse(_ text: String) -> [MountEntry] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 10, let id = Int(fields[0]), let separator = fields[6...].firstIndex(of: "-"),
                separator + 3 < fields.count
            else { return nil }
            let numbers = fields[2].split(separator: ":")
            guard numbers.count == 2, let major = Int64(numbers[0]), let minor = Int64(numbers[1]) else { return nil }
            return MountEntry(
                id: id, device: Device(major: major, minor: minor), mountPoint: unescape(fields[4]), fileSystem: fields[separator + 1],
                source: unescape(fields[separator + 2]), superOptions: fields[separator + 3])
        }
    }

    /// The mount holding `path`: among the mounts of `device` (when known, else all), the one with
    /// the longest mount point that is `path` or a parent of it; the later of equals (mounted on top).
    /// With a device but no such mount point (a path through a symbolic link), the last of that device.
    static func holding(_ path: String, device: Device?, in mounts: [MountEntry]) -> MountEntry? {
        let candidates = device.map { device in mounts.filter { $0.device == device } } ?? mounts
        var best: MountEntry?
        for mount in candidates where contains(mount.mountPoint, path) {
            if mount.mountPoint.count >= best?.mountPoint.count ?? 0 { best = mount }
        }
        if best == nil, device != nil { best = candidates.last }
        return best
    }

    private static func contains(_ mountPoint: String, _ path: String) -> Bool {
        mountPoint == "/" || path == mountPoint || path.hasPrefix(mountPoint + "/")
    }

    /// mountinfo writes space, tab, newline and backslash as octal escapes (`\040`).
    static func unescape(_ field: String) -> String {
        guard field.contains("\\") else { return field }
        var bytes: [UInt8] = []
        let utf8 = Array(field.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 4 <= utf8.count,
                let value = UInt8(String(decoding: utf8[(index + 1)..<(index + 4)], as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
