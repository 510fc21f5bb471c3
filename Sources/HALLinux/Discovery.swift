import CLinuxOS
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

    /// Every I2C adapter the kernel registered (/sys/bus/i2c/devices/i2c-N, present whether or not
    /// i2c-dev is loaded), every adapter with an i2c-dev node (/sys/class/i2c-dev/i2c-N) and every
    /// /dev/i2c-N node, merged in bus order, with the adapter's name and configured clock.
    /// An adapter without a node means i2c-dev is not loaded (Raspberry Pi kernels build it as a
    /// module: `dtparam=i2c_arm=on` makes the adapter, the node needs `modprobe i2c-dev`).
    public static func i2cBuses(sysfs: String = "/sys", deviceDirectory: String = "/dev") -> [I2CBusInfo] {
        let fromSysfs = numberedEntries(prefix: "i2c-", in: "\(sysfs)/class/i2c-dev")
        let adapters = numberedEntries(prefix: "i2c-", in: "\(sysfs)/bus/i2c/devices")
        let fromDev = numberedEntries(prefix: "i2c-", in: deviceDirectory)
        let numbers = Set(fromSysfs).union(adapters).union(fromDev).sorted()
        return numbers.map { number in
            let name =
                readFirstLine("\(sysfs)/class/i2c-dev/i2c-\(number)/name")
                ?? readFirstLine("\(sysfs)/bus/i2c/devices/i2c-\(number)/name")
            return I2CBusInfo(
                number: number, adapterName: name,
                node: access(path: "\(deviceDirectory)/i2c-\(number)"),
                clockHz: i2cClockHz(bus: number, sysfs: sysfs))
        }
    }

    /// N of every I2C adapter the kernel registered (/sys/bus/i2c/devices/i2c-N), ascending.
    public static func i2cAdapterNumbers(sysfs: String = "/sys") -> [Int] {
        numberedEntries(prefix: "i2c-", in: "\(sysfs)/bus/i2c/devices")
    }

    /// The adapter's configured SCL clock in Hz: the device-tree property `clock-frequency` of its
    /// node, a big-endian u32 (Documentation/devicetree/bindings/i2c/i2c.txt; set on a Pi by
    /// `dtparam=i2c_arm_baudrate=`). Nil where the adapter has no device-tree node or no such
    /// property (x86, i2c-stub): the driver then picks its default, 100 kHz for i2c-bcm2835
    /// (drivers/i2c/busses/i2c-bcm2835.c: I2C_MAX_STANDARD_MODE_FREQ when the property is missing).
    public static func i2cClockHz(bus: Int, sysfs: String = "/sys") -> Int? {
        let bytes = readBytes("\(sysfs)/bus/i2c/devices/i2c-\(bus)/of_node/clock-frequency", limit: 8)
        guard let bytes, bytes.count == 4 else { return nil }
        let value = bytes.reduce(0) { $0 << 8 | Int($1) }
        return value > 0 ? value : nil
    }

    /// The kernel's I2C client at `address` on bus `bus` (/sys/bus/i2c/devices/N-00AA), when one
    /// was instantiated (device tree, overlay, new_device): its name and the driver bound to it.
    /// A bound driver makes i2c-dev refuse I2C_SLAVE with EBUSY (drivers/i2c/i2c-dev.c,
    /// `i2cdev_check`), and i2cdetect shows "UU".
    public static func i2cClient(bus: Int, address: UInt8, sysfs: String = "/sys") -> I2CClientInfo? {
        let hexDigits = Array("0123456789abcdef")
        let name = "\(bus)-00" + String([hexDigits[Int(address >> 4)], hexDigits[Int(address & 0x0F)]])
        let directory = "\(sysfs)/bus/i2c/devices/\(name)"
        var info = stat()
        guard stat(directory, &info) == 0 else { return nil }
        return I2CClientInfo(
            sysfsName: name, deviceName: readFirstLine("\(directory)/name"),
            driver: linkTarget("\(directory)/driver").map { String($0.split(separator: "/").last ?? Substring($0)) })
    }

    /// The files under `root` that load i2c-dev at boot: /etc/modules (raspi-config's `do_i2c`
    /// adds the line there) and the modules-load.d directories systemd-modules-load reads
    /// (modules-load.d(5)): /etc, /run, /usr/lib, /lib. A line "i2c-dev" or "i2c_dev" counts.
    public static func i2cDevLoadedAtBoot(root: String = "") -> [String] {
        var candidates = ["/etc/modules"]
        for directory in ["/etc/modules-load.d", "/run/modules-load.d", "/usr/lib/modules-load.d", "/lib/modules-load.d"] {
            candidates += entries(in: root + directory).filter { $0.hasSuffix(".conf") }.sorted().map { "\(directory)/\($0)" }
        }
        return candidates.filter { path in
            guard let bytes = readBytes(root + path, limit: 65_536) else { return false }
            let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == "\n" })
            return lines.contains { line in
                let word = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "#" }).first
                return !line.hasPrefix("#") && (word == "i2c-dev" || word == "i2c_dev")
            }
        }
    }

    /// The file scripts/install and the .deb put in place to load i2c-dev at boot.
    public static let modulesLoadFile = "/usr/lib/modules-load.d/resend-button.conf"

    /// Whether `path` exists and whether this process may read and write it (access(2)), and the
    /// group that owns it with this user's membership.
    public static func access(path: String) -> DeviceNodeAccess {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return DeviceNodeAccess(path: path, exists: false, accessible: false, group: nil)
        }
        let accessible = CLinuxOS.access(path, R_OK | W_OK) == 0
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
            while let current = member, let m = current.pointee {
                if String(cString: m) == user { listed = true }
                member = current + 1
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

    /// The names in `directory` (not "." and ".."); empty when it cannot be read.
    static func entries(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { _ = closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = string(fromTuple: entry.pointee.d_name)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// A small file (a sysfs attribute, a modules-load file) of at most `limit` bytes, read like
    /// every other file (`FileReader`: regular files only, no links followed); nil if unreadable.
    static func readBytes(_ path: String, limit: Int) -> [UInt8]? {
        try? FileReader.read(path, limit: limit)
    }

    /// Where a symbolic link points, or nil when `path` is no link.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
    /// The configured SCL clock (device-tree `clock-frequency`), nil when unknown.
    public var clockHz: Int?

    public init(number: Int, adapterName: String?, node: DeviceNodeAccess, clockHz: Int? = nil) {
        self.number = number
        self.adapterName = adapterName
        self.node = node
        self.clockHz = clockHz
    }
}

/// A kernel I2C client (a device the kernel instantiated at an address).
public struct I2CClientInfo: Hashable, Sendable {
    /// "1-0027"
    public var sysfsName: String
    /// The device's name attribute ("pcf8574"), nil if unreadable.
    public var deviceName: String?
    /// The bound driver's name ("pcf857x"), nil when no driver is bound.
    public var driver: String?

    public init(sysfsName: String, deviceName: String?, driver: String?) {
        self.sysfsName = sysfsName
        self.deviceName = deviceName
        self.driver = driver
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
