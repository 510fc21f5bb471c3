import Glibc
import HAL

/// Read-only facts about the machine for `resend-button check`: which GPIO chips and I2C buses
/// exist, whether this process may open them, and which groups would grant access.
/// Nothing here opens a device for I/O except `GPIOScan` (to read line information). Never prints.
public enum Discovery {
    /// Device nodes in `directory` whose name is `prefix` followed by a number ("gpiochip0",
    /// "i2c-1"), as full paths in ascending number order.
    public static func deviceNodes(prefix: String, in directory: String = "/dev") -> [String] {
        numberedEntries(prefix: prefix, in: directory).map { "\(directory)/\(prefix)\($0)" }
    }

    /// The I2C adapters the kernel knows with an i2c-dev node, from
    /// /sys/class/i2c-dev/i2c-N/name (falling back to /sys/bus/i2c/devices/i2c-N/name), merged
    /// with the /dev/i2c-N nodes present, in bus order.
    public static func i2cBuses(sysfs: String = "/sys", deviceDirectory: String = "/dev") -> [I2CBusInfo] {
        let fromSysfs = numberedEntries(prefix: "i2c-", in: "\(sysfs)/class/i2c-dev")
        let fromDev = numberedEntries(prefix: "i2c-", in: deviceDirectory)
        let numbers = Set(fromSysfs).union(fromDev).sorted()
        return numbers.map { number in
            let name = readFirstLine("\(sysfs)/class/i2c-dev/i2c-\(number)/name")
                ?? readFirstLine("\(sysfs)/bus/i2c/devices/i2c-\(number)/name")
            return I2CBusInfo(
                number: number, adapterName: name,
                node: access(path: "\(deviceDirectory)/i2c-\(number)"))
        }
    }

    /// Whether `path` exists and whether this process may read and write it (access(2)), and the
    /// group that owns it with this user's membership.
    public static func access(path: String) -> DeviceNodeAccess {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return DeviceNodeAccess(path: path, exists: false, accessible: false, group: nil)
        }
        let accessible = Glibc.access(path, R_OK | W_OK) == 0
        return DeviceNodeAccess(path: path, exists: true, accessible: accessible, group: membership(gid: info.st_gid))
    }

    /// This user's standing in the group called `name` ("gpio", "i2c"); nil when no such group.
    public static func membership(group name: String) -> GroupMembership? {
        guard let entry = getgrnam(name) else { return nil }
        return membership(gid: entry.pointee.gr_gid)
    }

    static func membership(gid: gid_t) -> GroupMembership {
        var name = "\(gid)"
        var listed = false
        let user = getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) }
        if let entry = getgrgid(gid) {
            name = String(cString: entry.pointee.gr_name)
            var member = entry.pointee.gr_mem
            while let m = member?.pointee {
                if String(cString: m) == user { listed = true }
                member = member! + 1
            }
        }
        if let primary = getpwuid(geteuid())?.pointee.pw_gid, primary == gid { listed = true }
        return GroupMembership(name: name, gid: gid, processHasGroup: processGroups().contains(gid), userIsListed: listed)
    }

    /// The effective group and supplementary groups of this process.
    static func processGroups() -> Set<gid_t> {
        var groups = Set([getegid()])
        let count = getgroups(0, nil)
        guard count > 0 else { return groups }
        var list = [gid_t](repeating: 0, count: Int(count))
        let filled = getgroups(count, &list)
        if filled > 0 { groups.formUnion(list.prefix(Int(filled))) }
        return groups
    }

    /// The N of every "<prefix>N" entry in `directory`, ascending; empty when it cannot be read.
    static func numberedEntries(prefix: String, in directory: String) -> [Int] {
        guard let dir = opendir(directory) else { return [] }
        defer { _ = closedir(dir) }
        var numbers: [Int] = []
        while let entry = readdir(dir) {
            let name = string(fromTuple: entry.pointee.d_name)
            guard name.hasPrefix(prefix), let number = Int(name.dropFirst(prefix.count)), number >= 0 else { continue }
            numbers.append(number)
        }
        return numbers.sorted()
    }

    /// The first line of a small text file (sysfs attribute), without the newline; nil if unreadable.
    /// Read like every other file (`FileReader`): a sysfs attribute is a regular file of at most a page.
    static func readFirstLine(_ path: String) -> String? {
        guard let bytes = try? FileReader.read(path, limit: 4096), !bytes.isEmpty else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        return String(text.prefix { $0 != "\n" })
    }
}

/// An I2C adapter as seen by `check`.
public struct I2CBusInfo: Hashable, Sendable {
    public var number: Int
    /// The adapter name ("bcm2835 (i2c@7e804000)", "SMBus stub driver"), nil if sysfs has none.
    public var adapterName: String?
    /// The /dev/i2c-N node (missing when i2c-dev is not loaded).
    public var node: DeviceNodeAccess

    public init(number: Int, adapterName: String?, node: DeviceNodeAccess) {
        self.number = number
        self.adapterName = adapterName
        self.node = node
    }
}

/// A device node and whether this process can use it.
public struct DeviceNodeAccess: Hashable, Sendable {
    public var path: String
    public var exists: Bool
    /// Readable and writable by this process (access(2), R_OK | W_OK).
    public var accessible: Bool
    /// The group owning the node and this user's standing in it; nil when the node is missing.
    public var group: GroupMembership?

    public init(path: String, exists: Bool, accessible: Bool, group: GroupMembership?) {
        self.path = path
        self.exists = exists
        self.accessible = accessible
        self.group = group
    }
}

/// A group and whether the current user is in it.
public struct GroupMembership: Hashable, Sendable {
    public var name: String
    public var gid: UInt32
    /// This process runs with the group (effective or supplementary): access through it works now.
    public var processHasGroup: Bool
    /// /etc/group lists the user (or it is the user's primary group). Listed but not held by the
    /// process means: log out and in again (or reboot) after `usermod -aG`.
    public var userIsListed: Bool

    public init(name: String, gid: UInt32, processHasGroup: Bool, userIsListed: Bool) {
        self.name = name
        self.gid = gid
        self.processHasGroup = processHasGroup
        self.userIsListed = userIsListed
    }
}
