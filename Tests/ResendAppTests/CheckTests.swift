import CharacterLCD
import HAL
import HALLinux
import HALMock
import ResendApp
import ResendDevice
import ResendSimulator
import Testing

/// A /dev node this user may use, owned by `group`.
func node(_ path: String, accessible: Bool = true, group: String = "gpio", listed: Bool = true, inSession: Bool = true) -> DeviceNodeAccess {
    DeviceNodeAccess(
        path: path, exists: true, accessible: accessible,
        group: GroupMembership(name: group, gid: 997, processHasGroup: inSession, userIsListed: listed))
}

/// A Pi 4's first chip, lines 0-27 named GPIO0-GPIO27, all free.
func piChip() -> GPIOChipInfo {
    GPIOChipInfo(
        path: "/dev/gpiochip0", name: "gpiochip0", label: "pinctrl-bcm2711",
        lines: (0..<28).map { offset in
            GPIOLineInfo(offset: UInt32(offset), name: "GPIO\(offset)", consumer: nil, isUsed: false, isOutput: false, isActiveLow: false)
        })
}

/// A healthy Pi: one chip, bus 1 on the bcm2835 adapter, a backpack answering at 0x27.
func piFacts(answered: [UInt8] = [0x27]) -> CheckFacts {
    CheckFacts(
        libgpiodVersion: "1.6.3", libgpiodGeneration: 1, gpioChipNodes: [node("/dev/gpiochip0")],
        gpioScan: GPIOScan(chips: [piChip()], failures: []),
        i2cBuses: [I2CBusInfo(number: 1, adapterName: "bcm2835 (i2c@7e804000)", node: node("/dev/i2c-1", group: "i2c"), clockHz: 100_000)],
        scan: I2CScan(answered: answered.compactMap { I2CAddress($0) }))
}

struct CheckScenario: Sendable, CustomTestStringConvertible {
    var name: String
    var modify: @Sendable (inout CheckOptions, inout CheckFacts) -> Void
    var code: ExitCode
    /// A line the findings must contain.
    var line: String
    var testDescription: String { name }
}

func holdLine(_ facts: inout CheckFacts, offset: Int, consumer: String?) {
    facts.gpioScan.chips[0].lines[offset].isUsed = true
    facts.gpioScan.chips[0].lines[offset].consumer = consumer
}

struct CheckTests {
    @Test("on a machine without GPIO chips and I2C buses: what is missing and how to enable it, exit 69")
    func nothingHere() {
        let facts = CheckFacts(
            libgpiodVersion: "1.6.3", libgpiodGeneration: 1, gpioChipNodes: [], gpioScan: GPIOScan(chips: [], failures: []), i2cBuses: [])
        let (findings, lcd) = checkFindings(CheckOptions(), facts)
        #expect(
            findings.map(\.line) == [
                "OK libgpiod 1.6.3 (API v1)",
                "PROBLEM no GPIO chip (/dev/gpiochip*): this is not a Raspberry Pi, or the kernel lacks GPIO character device support (CONFIG_GPIO_CDEV); on a Pi, /dev/gpiochip0 appears at boot",
                "PROBLEM no I2C bus (/dev/i2c-*): enable I2C: add dtparam=i2c_arm=on to /boot/firmware/config.txt (or raspi-config: Interface Options, I2C) and reboot",
            ])
        #expect(lcd == nil)
        #expect(checkExitCode(findings) == .unavailable)
    }

    @Test("a healthy Pi: every finding OK, the single backpack is the LCD, exit 0")
    func healthyPi() {
        var options = CheckOptions()
        options.led = .named("GPIO27")
        let (findings, lcd) = checkFindings(options, piFacts())
        #expect(
            findings.map(\.line) == [
                "OK libgpiod 1.6.3 (API v1)",
                "OK GPIO chip /dev/gpiochip0: gpiochip0 [pinctrl-bcm2711] (28 lines)",
                "OK button GPIO17: line 17 of /dev/gpiochip0 [pinctrl-bcm2711] named GPIO17, free",
                "OK LED GPIO27: line 27 of /dev/gpiochip0 [pinctrl-bcm2711] named GPIO27, free",
                "OK I2C bus 1: /dev/i2c-1 [bcm2835 (i2c@7e804000)], clock 100 kHz",
                "OK 0x27 answers on /dev/i2c-1 (PCF8574 range); a read cannot tell a backpack from another chip there (MCP23008, PCA95xx, BH1750, AHT20, OLED): confirm with --test-pattern --address 0x27",
                "NOTE run writes only to the address you name: put lcd: { address: 0x27 } in /etc/resend-button/config.json5 (or pass run --address 0x27)",
            ])
        #expect(lcd == I2CAddress(0x27))
        #expect(checkExitCode(findings) == .ok)
    }

    static let scenarios: [CheckScenario] = [
        CheckScenario(
            name: "the button line held by the service", modify: { _, facts in holdLine(&facts, offset: 17, consumer: "resend-button") },
            code: .unavailable,
            line:
                "PROBLEM button GPIO17: line 17 of /dev/gpiochip0 [pinctrl-bcm2711] named GPIO17 is held by \"resend-button\"; resend-button itself holds it: is the service running? (sudo systemctl stop resend-button)"
        ),
        CheckScenario(
            name: "the button line held by another program", modify: { _, facts in holdLine(&facts, offset: 17, consumer: "pigpiod") },
            code: .unavailable,
            line:
                "PROBLEM button GPIO17: line 17 of /dev/gpiochip0 [pinctrl-bcm2711] named GPIO17 is held by \"pigpiod\"; stop the program holding it or choose another line"
        ),
        CheckScenario(
            name: "the LED line held by a kernel driver",
            modify: { options, facts in
                options.led = .chipOffset(chip: 0, offset: 4)
                holdLine(&facts, offset: 4, consumer: nil)
            }, code: .unavailable,
            line:
                "PROBLEM LED gpiochip0:4: line 4 of /dev/gpiochip0 [pinctrl-bcm2711] named GPIO4 is held by a kernel driver or another program; stop the program holding it or choose another line"
        ),
        CheckScenario(
            name: "a line name no chip has", modify: { options, _ in options.button = .named("GPIO99") }, code: .unavailable,
            line:
                "PROBLEM button GPIO99: no line of that name; searched gpiochip0 [pinctrl-bcm2711] (28 lines); list the lines with gpioinfo and pass --button with a name or gpiochipN:OFFSET"
        ),
        CheckScenario(
            name: "a chip that does not exist", modify: { options, _ in options.button = .chipOffset(chip: 4, offset: 17) }, code: .unavailable,
            line: "PROBLEM button gpiochip4:17: /dev/gpiochip4 does not exist (chips: gpiochip0)"),
        CheckScenario(
            name: "an offset beyond the chip", modify: { options, _ in options.led = .chipOffset(chip: 0, offset: 40) }, code: .unavailable,
            line: "PROBLEM LED gpiochip0:40: gpiochip0 has 28 lines (offsets 0-27)"),
        CheckScenario(
            name: "a GPIO chip this user may not open",
            modify: { _, facts in
                facts.gpioChipNodes = [node("/dev/gpiochip0", accessible: false, listed: false, inSession: false)]
                facts.gpioScan = GPIOScan(chips: [], failures: [HALError(.permission, operation: "open /dev/gpiochip0", errno: 13)])
            }, code: .noPermission,
            line:
                "PROBLEM open /dev/gpiochip0: EACCES (13): permission denied; add the user to group gpio: sudo usermod -aG gpio $USER, then log in again"
        ),
        CheckScenario(
            name: "in the gpio group, but not in this login session",
            modify: { _, facts in
                facts.gpioChipNodes = [node("/dev/gpiochip0", accessible: false, listed: true, inSession: false)]
                facts.gpioScan = GPIOScan(chips: [], failures: [HALError(.permission, operation: "open /dev/gpiochip0", errno: 13)])
            }, code: .noPermission,
            line:
                "PROBLEM open /dev/gpiochip0: EACCES (13): permission denied; you are in group gpio but this login session is not yet: log out and in again (or reboot)"
        ),
        CheckScenario(
            name: "the lines cannot be checked without a readable chip",
            modify: { _, facts in
                facts.gpioScan = GPIOScan(chips: [], failures: [HALError(.permission, operation: "open /dev/gpiochip0", errno: 13)])
            }, code: .noPermission,
            line: "PROBLEM button GPIO17: not checked, no GPIO chip could be read (see above)"),
        CheckScenario(
            name: "an I2C node owned by root",
            modify: { _, facts in
                facts.i2cBuses[0].node = node("/dev/i2c-1", accessible: false, group: "root", listed: false, inSession: false)
            }, code: .noPermission,
            line:
                "PROBLEM /dev/i2c-1 is not readable and writable by this user; /dev/i2c-1 belongs to group root: install the udev rules that give it to the gpio/i2c group (Raspberry Pi OS has them), or run as root"
        ),
        CheckScenario(
            name: "another bus than the one asked for", modify: { options, _ in options.i2cBus = 3 }, code: .unavailable,
            line:
                "PROBLEM I2C bus 3: /dev/i2c-3 does not exist (buses: 1); pass --i2c-bus with the LCD's, or enable I2C: add dtparam=i2c_arm=on to /boot/firmware/config.txt (or raspi-config: Interface Options, I2C) and reboot"
        ),
        CheckScenario(
            name: "an adapter without i2c-dev",
            modify: { _, facts in
                facts.i2cBuses[0].node = DeviceNodeAccess(path: "/dev/i2c-1", exists: false, accessible: false, group: nil)
                facts.scan = nil
            }, code: .unavailable,
            line:
                "PROBLEM I2C bus 1 [bcm2835 (i2c@7e804000)] has no /dev/i2c-1: I2C is on but i2c-dev is not loaded: sudo modprobe i2c-dev (to load it at every boot: echo i2c-dev | sudo tee /etc/modules-load.d/i2c-dev.conf (scripts/install and the .deb install /usr/lib/modules-load.d/resend-button.conf))"
        ),
        CheckScenario(
            name: "nothing answers", modify: { _, facts in facts.scan = I2CScan() }, code: .unavailable,
            line:
                "PROBLEM no device answered on /dev/i2c-1 at 0x20-0x27 (PCF8574) and 0x38-0x3f (PCF8574A); check the wiring (SDA to GPIO2, SCL to GPIO3, VCC to 5 V, GND) and the address jumpers; 'resend-button check' lists what answers"
        ),
        CheckScenario(
            name: "two backpacks answer", modify: { _, facts in facts.scan = I2CScan(answered: [I2CAddress(0x27)!, I2CAddress(0x3F)!]) },
            code: .usage,
            line:
                "PROBLEM several devices answered on /dev/i2c-1: 0x27, 0x3f; run writes only to the address you name: find the LCD with --test-pattern --address 0x27 (and the others), then put lcd: { address: 0x27 } with its address in /etc/resend-button/config.json5"
        ),
        CheckScenario(
            name: "the fixed address does not answer, another does",
            modify: { options, facts in
                options.address = .fixed(I2CAddress(0x27)!)
                facts.scan = I2CScan(answered: [I2CAddress(0x3F)!])
            }, code: .unavailable,
            line:
                "PROBLEM no device answered at 0x27 on /dev/i2c-1; answered instead: 0x3f; check the wiring (SDA to GPIO2, SCL to GPIO3, VCC to 5 V, GND) and the address jumpers; 'resend-button check' lists what answers"
        ),
        CheckScenario(
            name: "a bus error while probing",
            modify: { _, facts in
                facts.scan = nil
                facts.busError = HALError(.timeout, operation: "probe /dev/i2c-1 0x20", errno: 110)
            }, code: .ioError,
            line:
                "PROBLEM probe /dev/i2c-1 0x20: ETIMEDOUT (110): timed out; check the wiring (SDA to GPIO2, SCL to GPIO3, VCC to 5 V, GND) and the address jumpers; 'resend-button check' lists what answers"
        ),
        CheckScenario(
            name: "a missing chip outranks a permission problem",
            modify: { options, facts in
                options.i2cBus = 3
                facts.gpioScan = GPIOScan(chips: [], failures: [HALError(.permission, operation: "open /dev/gpiochip0", errno: 13)])
            }, code: .unavailable, line: "PROBLEM button GPIO17: not checked, no GPIO chip could be read (see above)"),
    ]

    @Test("each problem: one PROBLEM line saying what to do, and the exit code", arguments: scenarios)
    func problem(_ scenario: CheckScenario) {
        var options = CheckOptions()
        var facts = piFacts()
        scenario.modify(&options, &facts)
        let (findings, _) = checkFindings(options, facts)
        #expect(findings.map(\.line).contains(scenario.line), "\(findings.map(\.line))")
        #expect(checkExitCode(findings) == scenario.code)
    }

    @Test("a fixed address that answers is the LCD, claimed addresses are noted")
    func fixedAddressAnswers() {
        var options = CheckOptions()
        options.address = .fixed(I2CAddress(0x3F)!)
        var facts = piFacts(answered: [0x27, 0x3F])
        facts.scan?.claimed = [I2CAddress(0x3C)!]
        let (findings, lcd) = checkFindings(options, facts)
        #expect(lcd == I2CAddress(0x3F))
        #expect(findings.map(\.line).contains("OK 0x3f answers on /dev/i2c-1 (PCF8574A range)"))
        #expect(
            findings.map(\.line).contains(
                "NOTE 0x3c on /dev/i2c-1 is claimed by a kernel driver (i2cdetect shows UU): a kernel driver owns 0x3c; if it is the LCD, the Raspberry Pi overlay dtoverlay=hd44780-i2c-lcd binds it to /dev/lcd: remove that line from /boot/firmware/config.txt and reboot"
            ))
        #expect(checkExitCode(findings) == .ok)
    }

    @Test("a fixed address outside the backpack ranges is probed too")
    func probeList() {
        #expect(CheckFacts.probeList(for: .auto).count == 16)
        #expect(CheckFacts.oledAddresses.allSatisfy(CheckFacts.probeList(for: .auto).contains))
        #expect(CheckFacts.probeList(for: .fixed(I2CAddress(0x50)!)).last == I2CAddress(0x50))
        #expect(CheckFacts.probeList(for: .fixed(I2CAddress(0x27)!)).count == 16)
    }

    @Test("a device at 0x3C: found, and named as the OLED address too, with the OLED's configuration line")
    func oledFound() {
        let (findings, _) = checkFindings(CheckOptions(), piFacts(answered: [0x3C]))
        let lines = findings.map(\.line)
        #expect(lines.contains { $0.hasPrefix("OK 0x3c answers on /dev/i2c-1 (PCF8574A range, and the SSD1306/SH1106 OLED address)") }, "\(lines)")
        #expect(
            lines.contains(
                #"NOTE 0x3c is also the SSD1306/SH1106 OLED address: for an OLED put display: { kind: "ssd1306" ("sh1106" on most 1.3" modules), address: 0x3c } in /etc/resend-button/config.json5"#
            ), "\(lines)")
        #expect(checkExitCode(findings) == .ok)
    }

    @Test(
        "test pattern text: address, bus and size, one item per row, cut to the width",
        arguments: [
            (LCDGeometry.lcd16x2, ["I2C 0x27 bus 1  ", "LCD 16x2 OK     "]),
            (.lcd20x4, ["I2C 0x27 bus 1      ", "LCD 20x4 OK         ", "row 3 of 4          ", "row 4 of 4          "]),
            (.lcd8x1, ["I2C 0x27"]),
            (.lcd40x2, ["I2C 0x27 bus 1" + String(repeating: " ", count: 26), "LCD 40x2 OK" + String(repeating: " ", count: 29)]),
        ])
    func patternLines(geometry: LCDGeometry, expected: [String]) {
        #expect(testPatternLines(address: I2CAddress(0x27)!, bus: 1, geometry: geometry) == expected)
    }

    /// Notes what the emulated LCD shows when the pattern holds its first screen.
    struct SnapshotDelay: Delay {
        var inner: VirtualDelay
        let emulator: HD44780Emulator
        let snapshots: Snapshots
        final class Snapshots { var screens: [[String]] = [] }

        mutating func delay(_ span: TimeSpan) {
            if span == testPatternHold { snapshots.screens.append(emulator.screen) }
            inner.delay(span)
        }
    }

    @Test("the test pattern darkens every cell for 2 s, then shows the address and size, by the book", arguments: [LCDGeometry.lcd16x2, .lcd20x4])
    func testPattern(geometry: LCDGeometry) throws {
        let clock = ManualClock()
        let bus = RecordingI2CBus(clock: clock, blocking: true)
        let emulator = HD44780Emulator(columns: geometry.columns, rows: geometry.rows, clock: clock)
        bus.attach(emulator, at: I2CAddress(0x27)!)
        let delay = SnapshotDelay(inner: VirtualDelay(clock: clock), emulator: emulator, snapshots: SnapshotDelay.Snapshots())
        try drawTestPattern(bus: bus, address: I2CAddress(0x27)!, busNumber: 1, geometry: geometry, delay: delay)
        let allDark = Array(repeating: String(repeating: "█", count: geometry.columns), count: geometry.rows)
        #expect(delay.snapshots.screens == [allDark])
        #expect(emulator.screen == testPatternLines(address: I2CAddress(0x27)!, bus: 1, geometry: geometry))
        #expect(emulator.violations.isEmpty)
        #expect(clock.now() >= .origin + testPatternHold)
    }

    @Test("the test pattern on a missing device throws the bus error")
    func testPatternMissing() {
        let clock = ManualClock()
        let bus = RecordingI2CBus(clock: clock, blocking: true)
        #expect(throws: HALError.self) {
            try drawTestPattern(bus: bus, address: I2CAddress(0x27)!, busNumber: 1, geometry: .lcd16x2, delay: VirtualDelay(clock: clock))
        }
    }
}
