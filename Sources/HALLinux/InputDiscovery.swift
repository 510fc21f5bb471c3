import CLinuxOS
import HAL

/// An input device (evdev) as `check` lists it.
public struct InputDeviceInfo: Hashable, Sendable {
    /// /dev/input/eventN (or the path asked about when it is no eventN there).
    public var path: String
    /// The /dev/input/by-path and by-id links that lead to it (udev's stable names), full paths.
    public var links: [String]
    /// The device's name (EVIOCGNAME), nil when it could not be opened.
    public var name: String?
    /// The keypad's keys it can report (EVIOCGBIT(EV_KEY) mapped by `EvdevKeys`), `Key.all` order.
    public var keys: [Key]
    /// Why it could not be opened or asked (permission, not an input device), nil when it could.
    public var error: HALError?
    /// The node's group and this user's standing in it (for permission advice).
    public var node: DeviceNodeAccess

    public init(path: String, links: [String] = [], name: String? = nil, keys: [Key] = [], error: HALError? = nil, node: DeviceNodeAccess) {
        self.path = path
        self.links = links
        self.name = name
        self.keys = keys
        self.error = error
        self.node = node
    }

    /// Whether it can type a code: all ten digits.
    public var hasDigitKeys: Bool { Key.digits.allSatisfy { keys.contains($0) } }

    /// Whether `path` names this device (its node or one of its links).
    public func isNamed(_ path: String) -> Bool { self.path == path || links.contains(path) }
}

extension Discovery {
    /// Every /dev/input/eventN (in `directory`), ascending, each opened read-only without taking
    /// it (no grab: nothing is taken from the console) to ask its name and keys, with the by-path
    /// and by-id links pointing at it. Opening needs read access (the `input` group); a device
    /// that cannot be opened is listed with the error.
    public static func inputDevices(directory: String = "/dev/input") -> [InputDeviceInfo] {
        var links: [String: [String]] = [:]
        for sub in ["by-path", "by-id"] {
            let linkDirectory = directory + "/" + sub
            for name in entries(in: linkDirectory).sorted() {
                guard let target = linkTarget(linkDirectory + "/" + name),
                    let node = target.split(separator: "/").last, node.hasPrefix("event")
                else { continue }
                links[String(node), default: []].append(linkDirectory + "/" + name)
            }
        }
        return numberedEntries(prefix: "event", in: directory).map { number in
            inputDevice(path: "\(directory)/event\(number)", links: links["event\(number)"] ?? [])
        }
    }

    /// One input device at `path` (a node or a link), asked as `inputDevices` does.
    public static func inputDevice(path: String, links: [String] = []) -> InputDeviceInfo {
        var info = InputDeviceInfo(path: path, links: links, node: readAccess(path: path))
        do throws(HALError) {
            let device = try EvdevKeypad(path: path, grab: false)
            info.name = try device.name()
            info.keys = try device.supportedKeys()
        } catch {
            info.error = error
        }
        return info
    }

    /// `access(path:)` for a node that only needs reading (input devices are opened read-only).
    static func readAccess(path: String) -> DeviceNodeAccess {
        var node = access(path: path)
        if node.exists { node.accessible = CLinuxOS.access(path, R_OK) == 0 }
        return node
    }
}
