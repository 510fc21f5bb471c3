import Glibc
import HAL
import HALLinux
import Testing

@Suite("discovery for check")
struct DiscoveryTests {
    @Test("device nodes are listed in number order, ignoring other names")
    func deviceNodesSorted() {
        let dir = TemporaryDirectory()
        for name in ["gpiochip10", "gpiochip2", "gpiochip0", "gpiochipX", "gpiomem", "i2c-1"] {
            dir.write(name, "")
        }
        #expect(Discovery.deviceNodes(prefix: "gpiochip", in: dir.path) == ["0", "2", "10"].map { "\(dir.path)/gpiochip\($0)" })
        #expect(Discovery.deviceNodes(prefix: "i2c-", in: dir.path) == ["\(dir.path)/i2c-1"])
    }

    @Test("I2C buses come from sysfs and /dev, with their adapter names")
    func i2cBuses() {
        let sys = TemporaryDirectory()
        let dev = TemporaryDirectory()
        sys.write("class/i2c-dev/i2c-1/name", "bcm2835 (i2c@7e804000)\n")
        sys.write("bus/i2c/devices/i2c-20/name", "SMBus stub driver\n")
        sys.write("class/i2c-dev/i2c-20/dev", "89:20\n")
        dev.write("i2c-20", "")
        let buses = Discovery.i2cBuses(sysfs: sys.path, deviceDirectory: dev.path)
        #expect(buses.map(\.number) == [1, 20])
        #expect(buses.map(\.adapterName) == ["bcm2835 (i2c@7e804000)", "SMBus stub driver"])
        #expect(buses.map(\.node.exists) == [false, true])
        #expect(buses[0].node.path == "\(dev.path)/i2c-1")
    }

    @Test("this machine without buses or chips lists none")
    func noHardwareHere() {
        let empty = TemporaryDirectory()
        #expect(Discovery.i2cBuses(sysfs: empty.path, deviceDirectory: empty.path).isEmpty)
        #expect(GPIOScan.scan(deviceDirectory: empty.path) == GPIOScan(chips: [], failures: []))
    }

    @Test("a missing node is reported missing, an existing one with its owning group")
    func nodeAccess() {
        let dir = TemporaryDirectory()
        dir.write("i2c-1", "")
        #expect(Discovery.access(path: "\(dir.path)/i2c-9") == DeviceNodeAccess(path: "\(dir.path)/i2c-9", exists: false, accessible: false, group: nil))
        let node = Discovery.access(path: "\(dir.path)/i2c-1")
        #expect(node.exists)
        #expect(node.accessible == (Glibc.access(node.path, R_OK | W_OK) == 0))
        #expect(node.group?.gid == getegid())
        #expect(node.group?.processHasGroup == true)
    }

    @Test("an unknown group has no membership")
    func unknownGroup() {
        #expect(Discovery.membership(group: "no-such-group-resend") == nil)
    }
}
