import CharacterLCD
import HAL
import HALLinux
import HALMock
import ResendApp
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

/// Issue #11, the first day on a real Pi: `run` never writes to an address the user did not name,
/// starts without its LCD, says what to do about i2c-dev and a kernel driver owning the address,
/// and shows the bus clock.
struct PiFirstDayTests {
    // MARK: 1. auto is for check only

    @Test("run --address auto is a usage error (64) that sends the user to check")
    func runRefusesAutoFlag() {
        let error = exitError { () throws(ExitError) in try RunOptions.parse(["--address", "auto"], readConfig: { _ in .missing }) }
        #expect(error?.code == .usage)
        #expect(error?.message == "run: --address auto: " + autoAddressRefusal)
        #expect(
            autoAddressRefusal.contains(
                "'resend-button check' finds the backpack and prints the line to use (lcd: { address: 0x27 } in the config, or --address 0x27)"))
    }

    @Test("lcd.address \"auto\" in the config file is a config error (78) for run and for config check")
    func runRefusesAutoConfig() throws {
        let file = "{ lcd: { address: 'auto' } }"
        let error = exitError { () throws(ExitError) in try RunOptions.parse(["--config", "/c.json5"], readConfig: { _ in .text(file) }) }
        #expect(error?.code == .config)
        #expect(error?.message == "/c.json5: lcd.address: \"auto\" is for 'resend-button check' only: " + autoAddressRefusal)
        let check = exitError { () throws(ExitError) in
            try runConfigCommand(["check", "/c.json5"], console: Console(out: { _ in }, err: { _ in }, readFile: { _ in file }))
        }
        #expect(check?.code == .config)
        // A flag naming the address settles it.
        let options = try RunOptions.parse(["--config", "/c.json5", "--address", "0x3f"], readConfig: { _ in .text(file) })
        #expect(options.config.lcd.address == .fixed(I2CAddress(0x3F)!))
    }

    @Test("run's default address is 0x27, the common backpack; check still scans both ranges")
    func defaults() throws {
        #expect(try RunOptions.parse([], readConfig: { _ in .missing }).config.lcd.address == .fixed(I2CAddress(0x27)!))
        #expect(CheckOptions().address == .auto)
    }

    @Test("check with one responder prints the exact config line for it, on another bus too")
    func checkPrintsConfigLine() {
        var options = CheckOptions()
        options.i2cBus = 3
        var facts = piFacts(answered: [0x3F])
        facts.i2cBuses[0].number = 3
        facts.i2cBuses[0].node = node("/dev/i2c-3", group: "i2c")
        let (findings, lcd) = checkFindings(options, facts)
        #expect(
            findings.map(\.line).contains(
                "NOTE run writes only to the address you name: put lcd: { bus: 3, address: 0x3f } in /etc/resend-button/config.json5 (or pass run --address 0x3f --i2c-bus 3)"
            ))
        #expect(lcd == I2CAddress(0x3F))
        #expect(checkExitCode(findings) == .ok)
    }

    @Test("check with no responder says so (69), naming claimed addresses")
    func checkNone() {
        var facts = piFacts(answered: [])
        facts.scan?.claimed = [I2CAddress(0x27)!]
        let (findings, lcd) = checkFindings(CheckOptions(), facts)
        #expect(lcd == nil)
        #expect(
            findings.map(\.line).contains {
                $0.hasPrefix("PROBLEM no device answered on /dev/i2c-1 at 0x20-0x27 (PCF8574) and 0x38-0x3f (PCF8574A) (claimed: 0x27, see above)")
            })
        #expect(checkExitCode(findings) == .unavailable)
    }

    // MARK: 4. no LCD at start with a fixed address

    @Test(
        "started without its LCD: the button, LED and countdown work at once, the screen appears when the device answers, and nothing is written to any other address"
    )
    func offlineStartHeals() throws {
        var rig = HealingRig()
        var lines: [String] = []
        rig.sampler.logger = EventLogger(format: .plain) { lines.append($0) }
        // Another chip (a BH1750 light sensor, say) answers at 0x23; the LCD is absent until 3.2 s.
        let other = HD44780Emulator(columns: 16, rows: 2, clock: rig.clock)
        rig.bus.attach(other, at: I2CAddress(0x23)!)
        rig.bus.fail(from: .origin, to: at(3.2), with: .noDevice)
        try rig.run(presses: [at(1)], stopAt: at(10), startOffline: true)

        // The press counts while the display is offline: LED off, countdown handed over on time.
        #expect(rig.led.history.first { !$0.on }?.time == at(1.02))
        #expect(rig.frame(at: at(2.5)) == frame16("Verification", "Resend (59)"))
        // Re-probes at 0.5, 1.5 and 3.5 s: the last one finds it, initialises and repaints.
        #expect(rig.record.services == [at(0.5), at(1.5), at(3.5)])
        #expect(lines.filter { $0.contains("display") } == ["3.500 display online"])
        let appeared = rig.sampler.samples.first { $0.time == at(3.5) }
        #expect(appeared?.screen == frame16("Verification", "Resend (58)").lines)
        #expect(rig.emulator.screen == frame16("Stopped", "").lines)
        #expect(rig.emulator.violations.isEmpty, "\(rig.emulator.violations)")
        // What was written where: only 0x27, never the other chip.
        #expect(Set(rig.bus.transactions.map(\.address)) == [I2CAddress(0x27)!])
        #expect(other.log.isEmpty)
    }

    // MARK: 2. and 7.: the messages

    @Test("run on a Pi whose I2C adapter exists without /dev/i2c-1: I2C is on, i2c-dev is not loaded, and what loads it at boot")
    func runI2CDevMissing() {
        let error = HALError(.notFound, operation: "open /dev/i2c-1", errno: 2)
        let without = StartupFacts(gpioChipCount: 1, i2cBusNumbers: [], i2cAdapterNumbers: [1])
        #expect(
            startupFailure(error, resource: .i2cBus(1), facts: without).message
                == "run: I2C bus 1: open /dev/i2c-1: ENOENT (2): no such file or directory; I2C is on but i2c-dev is not loaded: sudo modprobe i2c-dev (to load it at every boot: echo i2c-dev | sudo tee /etc/modules-load.d/i2c-dev.conf (scripts/install and the .deb install /usr/lib/modules-load.d/resend-button.conf))"
        )
        let installed = StartupFacts(gpioChipCount: 1, i2cBusNumbers: [], i2cAdapterNumbers: [1], i2cDevAtBoot: [Discovery.modulesLoadFile])
        #expect(
            startupFailure(error, resource: .i2cBus(1), facts: installed).message
                == "run: I2C bus 1: open /dev/i2c-1: ENOENT (2): no such file or directory; I2C is on but i2c-dev is not loaded: sudo modprobe i2c-dev (installed: /usr/lib/modules-load.d/resend-button.conf loads it at the next boot)"
        )
        // No adapter at all: I2C itself is off.
        let off = StartupFacts(gpioChipCount: 1, i2cBusNumbers: [])
        #expect(startupFailure(error, resource: .i2cBus(1), facts: off).message.hasSuffix("no I2C bus exists: " + Advice.enableI2C))
    }

    @Test("EBUSY on the LCD's address names the hd44780-i2c-lcd overlay and how to remove it, with the driver sysfs names")
    func kernelDriverOwnsAddress() {
        let error = HALError(.busy, operation: "I2C_SLAVE /dev/i2c-1 0x27", errno: 16)
        let failure = startupFailure(error, resource: .i2cBus(1), facts: StartupFacts(gpioChipCount: 1, i2cBusNumbers: [1]))
        #expect(failure.code == .unavailable)
        #expect(
            failure.message.hasSuffix(
                "a kernel driver owns the address (i2cdetect shows UU); if it is the LCD, the Raspberry Pi overlay dtoverlay=hd44780-i2c-lcd binds it to /dev/lcd: remove that line from /boot/firmware/config.txt and reboot"
            ))
        #expect(!failure.message.contains("gpioinfo"))
        let client = I2CClientInfo(sysfsName: "1-0027", deviceName: "pcf8574", driver: "pcf857x")
        #expect(
            Advice.kernelDriverOwns(I2CAddress(0x27)!, client: client)
                == "the kernel driver \"pcf857x\" (device \"pcf8574\", /sys/bus/i2c/devices/1-0027) owns 0x27; if it is the LCD, the Raspberry Pi overlay dtoverlay=hd44780-i2c-lcd binds it to /dev/lcd: remove that line from /boot/firmware/config.txt and reboot"
        )
    }

    @Test("check: a fixed address owned by a kernel driver is a problem (69) naming the driver; in auto it is a note")
    func checkClaimedFixed() {
        var options = CheckOptions()
        options.address = .fixed(I2CAddress(0x27)!)
        var facts = piFacts(answered: [])
        facts.scan?.claimed = [I2CAddress(0x27)!]
        facts.clients[I2CAddress(0x27)!] = I2CClientInfo(sysfsName: "1-0027", deviceName: "pcf8574", driver: "pcf857x")
        let (findings, lcd) = checkFindings(options, facts)
        #expect(lcd == nil)
        #expect(
            findings.last?.line
                == "PROBLEM 0x27 on /dev/i2c-1 is claimed by a kernel driver (i2cdetect shows UU): the kernel driver \"pcf857x\" (device \"pcf8574\", /sys/bus/i2c/devices/1-0027) owns 0x27; if it is the LCD, the Raspberry Pi overlay dtoverlay=hd44780-i2c-lcd binds it to /dev/lcd: remove that line from /boot/firmware/config.txt and reboot"
        )
        #expect(checkExitCode(findings) == .unavailable)
        let (auto, _) = checkFindings(CheckOptions(), facts)
        #expect(auto.map(\.line).contains { $0.hasPrefix("NOTE 0x27 on /dev/i2c-1 is claimed by a kernel driver") })
    }

    // MARK: 5. the bus clock

    @Test(
        "check shows the chosen bus's clock and warns above 100 kHz; unknown without device tree",
        arguments: [
            (100_000 as Int?, "OK I2C bus 1: /dev/i2c-1 [bcm2835 (i2c@7e804000)], clock 100 kHz", false),
            (400_000, "OK I2C bus 1: /dev/i2c-1 [bcm2835 (i2c@7e804000)], clock 400 kHz", true),
            (nil, "OK I2C bus 1: /dev/i2c-1 [bcm2835 (i2c@7e804000)], clock unknown (no device-tree clock-frequency)", false),
        ])
    func clock(hz: Int?, line: String, warned: Bool) {
        var facts = piFacts()
        facts.i2cBuses[0].clockHz = hz
        let (findings, _) = checkFindings(CheckOptions(), facts)
        let lines = findings.map(\.line)
        #expect(lines.contains(line))
        #expect(
            lines.contains(
                "NOTE I2C bus 1: clock 400 kHz is above the PCF8574's rated 100 kHz (Pi 3-family boards may run SCL up to 1.6x the setting); the driver pads its bytes to keep the HD44780's timing, but for a reliable bus set dtparam=i2c_arm_baudrate=100000 in /boot/firmware/config.txt and reboot"
            ) == warned)
        #expect(checkExitCode(findings) == .ok)
    }
}

/// Issue #11 item 3: a press whose settling edge the kernel dropped (libgpiod v1: a 16-event buffer
/// that drops the newest) still counts, because the loop reads the line.
struct LostEdgeTests {
    /// Runs the loop on the healing rig with `source` until it stops; returns the log lines.
    static func run(_ rig: inout HealingRig, _ source: VirtualEventSource) throws -> [String] {
        var lines: [String] = []
        rig.sampler.logger = EventLogger(format: .plain) { lines.append($0) }
        try rig.display.start(now: rig.clock.now())
        let environment = LoopEnvironment(
            source: source, display: RecordingDisplay(inner: rig.display, record: rig.record), outputs: Outputs(led: rig.led), commands: .none,
            clock: rig.clock, wallClock: NoWallClock(), observer: rig.sampler, store: NoStateStorage?.none)
        var loop = EventLoop(
            environment: environment,
            coordinator: deviceCoordinator(controller: rig.settings.controllerConfig, button: rig.settings.makeDebouncer(), keypad: nil))
        try loop.run()
        rig.display = loop.display.inner
        return lines
    }

    @Test(
        "a bounce burst of 17 edges while the loop was busy: the kernel kept 16 (the last a bounce release) and dropped the settling press; with the overflow reported the press counts, without it the press is lost",
        arguments: [true, false])
    func droppedSettlingEdge(reported: Bool) throws {
        var rig = HealingRig()
        var source = VirtualEventSource(clock: rig.clock)
        // Pressed at 1 s, bouncing every 0.5 ms, settling pressed at 1.008 s; released at 2 s.
        let burst = ButtonScript.bouncyPress(at: at(1), bounces: 8, spacing: .microseconds(500), holdFor: .milliseconds(992))
        #expect(burst.count == 18)
        source.schedule(edges: Array(burst[0..<16]))
        source.drop(burst[16])
        // The loop drains the full buffer 2 ms later: a read of 16 events, so edges may be lost.
        if reported { source.schedule(.edgesMayBeLost, at: at(1.010)) }
        source.schedule(edges: [burst[17]])
        source.schedule(.stop, at: at(5))
        let lines = try Self.run(&rig, source)

        let atPress = rig.sampler.samples.first { $0.time == at(1.030) }?.screen
        if reported {
            // Read at 1.010: pressed; the 20 ms window holds; the press is accepted at 1.030.
            #expect(lines.contains("1.010 edges lost line=pressed"))
            #expect(lines.contains("1.030 press accepted"))
            #expect(atPress == frame16("Verification", "Resend (60)").lines)
            #expect(rig.emulator.screen == frame16("Stopped", "").lines)
            #expect(rig.led.history.map(\.on) == [true, false])  // on at start, off at the press
        } else {
            #expect(!lines.contains { $0.contains("press accepted") })
            #expect(rig.frame(at: at(4)) == frame16("Verification", "Send code"))
        }
    }

    @Test("a glitch whose closing edge was dropped: the read when the window closes finds the line released, so no phantom press")
    func droppedClosingEdge() throws {
        var rig = HealingRig()
        var source = VirtualEventSource(clock: rig.clock)
        source.schedule(edges: [ButtonEdge(pressed: true, time: at(1))])
        source.drop(ButtonEdge(pressed: false, time: at(1.003)))
        source.schedule(.stop, at: at(3))
        let lines = try Self.run(&rig, source)
        #expect(lines.contains("1.020 edges lost line=released"))
        #expect(!lines.contains { $0.contains("press accepted") })
        #expect(rig.frame(at: at(2.5)) == frame16("Verification", "Send code"))
    }
}
