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
        #expect(
            Discovery.access(path: "\(dir.path)/i2c-9") == DeviceNodeAccess(path: "\(dir.path)/i2c-9", exists: false, accessible: false, group: nil))
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

/// What a Raspberry Pi's sysfs tells `check` about I2C before any device is opened (issue #11):
/// adapters without i2c-dev, the configured clock, kernel clients that own an address, and the
/// files that load i2c-dev at boot. The sysfs root and the file-system root are injected.
@Suite("discovery: I2C facts from sysfs")
struct I2CSysfsTests {
    @Test("an adapter registered without i2c-dev is listed without a node: I2C is on, i2c-dev is not loaded")
    func adapterWithoutI2CDev() {
        let sys = TemporaryDirectory()
        let dev = TemporaryDirectory()
        sys.write("bus/i2c/devices/i2c-1/name", "bcm2835 (i2c@7e804000)\n")
        let buses = Discovery.i2cBuses(sysfs: sys.path, deviceDirectory: dev.path)
        #expect(buses.map(\.number) == [1])
        #expect(buses.map(\.adapterName) == ["bcm2835 (i2c@7e804000)"])
        #expect(buses.map(\.node.exists) == [false])
        #expect(Discovery.i2cAdapterNumbers(sysfs: sys.path) == [1])
    }

    @Test(
        "the configured clock is the device tree's clock-frequency, a big-endian u32; absent means unknown",
        arguments: [([UInt8(0x00), 0x01, 0x86, 0xA0], 100_000 as Int?), ([0x00, 0x06, 0x1A, 0x80], 400_000), ([0x00, 0x01], nil)])
    func clockFrequency(bytes: [UInt8], hz: Int?) {
        let sys = TemporaryDirectory()
        sys.write("bus/i2c/devices/i2c-1/name", "bcm2835 (i2c@7e804000)\n")
        sys.write("bus/i2c/devices/i2c-1/of_node/clock-frequency", String(decoding: [], as: UTF8.self))
        let path = "\(sys.path)/bus/i2c/devices/i2c-1/of_node/clock-frequency"
        let fd = open(path, O_WRONLY | O_TRUNC)
        _ = Glibc.write(fd, bytes, bytes.count)
        _ = close(fd)
        #expect(Discovery.i2cClockHz(bus: 1, sysfs: sys.path) == hz)
        #expect(Discovery.i2cClockHz(bus: 2, sysfs: sys.path) == nil)
    }

    @Test("a kernel client at an address names its device and the bound driver")
    func clientWithDriver() {
        let sys = TemporaryDirectory()
        sys.write("bus/i2c/drivers/pcf857x/bind", "")
        sys.write("bus/i2c/devices/1-0027/name", "pcf8574\n")
        _ = symlink("../../../bus/i2c/drivers/pcf857x", "\(sys.path)/bus/i2c/devices/1-0027/driver")
        sys.write("bus/i2c/devices/1-003f/name", "pcf8574\n")
        #expect(
            Discovery.i2cClient(bus: 1, address: 0x27, sysfs: sys.path)
                == I2CClientInfo(sysfsName: "1-0027", deviceName: "pcf8574", driver: "pcf857x"))
        #expect(Discovery.i2cClient(bus: 1, address: 0x3F, sysfs: sys.path) == I2CClientInfo(sysfsName: "1-003f", deviceName: "pcf8574", driver: nil))
        #expect(Discovery.i2cClient(bus: 1, address: 0x20, sysfs: sys.path) == nil)
    }

    @Test("i2c-dev at boot: /etc/modules (raspi-config) and modules-load.d files that name it, comments ignored")
    func loadedAtBoot() {
        let root = TemporaryDirectory()
        #expect(Discovery.i2cDevLoadedAtBoot(root: root.path).isEmpty)
        root.write("etc/modules", "# /etc/modules\n#i2c-dev\nspi-dev\n")
        root.write("usr/lib/modules-load.d/resend-button.conf", "# loaded for /dev/i2c-N\ni2c-dev\n")
        root.write("etc/modules-load.d/other.conf", "snd-aloop\n")
        root.write("etc/modules-load.d/i2c.conf.disabled", "i2c-dev\n")
        #expect(Discovery.i2cDevLoadedAtBoot(root: root.path) == [Discovery.modulesLoadFile])
        root.write("etc/modules", "i2c_dev\n")
        #expect(Discovery.i2cDevLoadedAtBoot(root: root.path) == ["/etc/modules", Discovery.modulesLoadFile])
    }
}
