import CharacterLCD
import HAL
import HALLinux
import ResendConfig

/// One line of `resend-button check`: OK, a NOTE that changes nothing, or a PROBLEM with the exit
/// code it stands for (69 missing, 77 permission, 64 a flag the user must add).
public struct CheckFinding: Hashable, Sendable {
    public enum Status: Hashable, Sendable {
        case ok
        case note
        case problem(ExitCode)
    }

    public var status: Status
    public var text: String

    public init(_ status: Status, _ text: String) {
        self.status = status
        self.text = text
    }

    public static func ok(_ text: String) -> CheckFinding { CheckFinding(.ok, text) }
    public static func note(_ text: String) -> CheckFinding { CheckFinding(.note, text) }
    public static func problem(_ code: ExitCode, _ text: String) -> CheckFinding { CheckFinding(.problem(code), text) }

    /// "OK ...", "NOTE ..." or "PROBLEM ...".
    public var line: String {
        switch status {
        case .ok: return "OK " + text
        case .note: return "NOTE " + text
        case .problem: return "PROBLEM " + text
        }
    }

    public var code: ExitCode? {
        if case .problem(let code) = status { return code }
        return nil
    }
}

/// What `check` found out about the machine; gathered by `CheckFacts.gather`, judged by the pure
/// `checkFindings`.
public struct CheckFacts: Sendable {
    public var libgpiodVersion: String
    public var libgpiodGeneration: Int
    /// /dev/gpiochipN with this process's access to each.
    public var gpioChipNodes: [DeviceNodeAccess]
    /// The chips that could be read, and the errors of those that could not.
    public var gpioScan: GPIOScan
    public var i2cBuses: [I2CBusInfo]
    /// Opening or scanning the chosen bus failed (nil when it was not tried: no such bus).
    public var busError: HALError?
    /// What answered on the chosen bus (nil when it could not be scanned).
    public var scan: I2CScan?
    /// The kernel's clients at the claimed addresses of `scan` (name, bound driver).
    public var clients: [I2CAddress: I2CClientInfo]
    /// The files that load i2c-dev at boot (`Discovery.i2cDevLoadedAtBoot`).
    public var i2cDevAtBoot: [String]

    public init(
        libgpiodVersion: String, libgpiodGeneration: Int, gpioChipNodes: [DeviceNodeAccess], gpioScan: GPIOScan,
        i2cBuses: [I2CBusInfo], busError: HALError? = nil, scan: I2CScan? = nil,
        clients: [I2CAddress: I2CClientInfo] = [:], i2cDevAtBoot: [String] = []
    ) {
        self.libgpiodVersion = libgpiodVersion
        self.libgpiodGeneration = libgpiodGeneration
        self.gpioChipNodes = gpioChipNodes
        self.gpioScan = gpioScan
        self.i2cBuses = i2cBuses
        self.busError = busError
        self.scan = scan
        self.clients = clients
        self.i2cDevAtBoot = i2cDevAtBoot
    }

    /// The addresses of SSD1306/SH1106 OLED modules: 0x3C (SA0 low), 0x3D (SA0 high), inside the
    /// PCF8574A range (so probed with it): a read cannot tell the two apart.
    public static let oledAddresses = [I2CAddress(constant: 0x3C), I2CAddress(constant: 0x3D)]

    /// The addresses to probe: both backpack ranges (the OLED addresses among them), plus a fixed
    /// `--address` outside them.
    public static func probeList(for address: AddressChoice) -> [I2CAddress] {
        var list = PCF8574AddressRange.all
        if case .fixed(let fixed) = address, !list.contains(fixed) { list.append(fixed) }
        return list
    }

    /// Reads /dev and /sys (and the modules-load files under `root`), every GPIO chip's lines, and
    /// probes the chosen bus (one read per address). Returns the bus when it could be opened, for
    /// the test pattern.
    public static func gather(_ options: CheckOptions, deviceDirectory: String = "/dev", sysfs: String = "/sys", root: String = "") -> (
        facts: CheckFacts, bus: LinuxI2CBus?
    ) {
        let nodes = Discovery.deviceNodes(prefix: "gpiochip", in: deviceDirectory).map { Discovery.access(path: $0) }
        var facts = CheckFacts(
            libgpiodVersion: LibGPIOD.version, libgpiodGeneration: LibGPIOD.apiGeneration, gpioChipNodes: nodes,
            gpioScan: GPIOScan.scan(deviceDirectory: deviceDirectory),
            i2cBuses: Discovery.i2cBuses(sysfs: sysfs, deviceDirectory: deviceDirectory),
            i2cDevAtBoot: Discovery.i2cDevLoadedAtBoot(root: root))
        let path = "\(deviceDirectory)/i2c-\(options.i2cBus)"
        guard facts.i2cBuses.contains(where: { $0.number == options.i2cBus && $0.node.exists }) else { return (facts, nil) }
        do throws(HALError) {
            var bus = try LinuxI2CBus(path: path)
            let scan = try scanAddresses(probeList(for: options.address), on: &bus)
            facts.scan = scan
            for address in scan.claimed {
                facts.clients[address] = Discovery.i2cClient(bus: options.i2cBus, address: address.rawValue, sysfs: sysfs)
            }
            return (facts, bus)
        } catch {
            facts.busError = error
            return (facts, nil)
        }
    }
}

/// Judges the facts: one finding per chip, line, bus and address question, and the LCD address to
/// draw the test pattern on (the single backpack that answered, or the `--address` that answered).
public func checkFindings(_ options: CheckOptions, _ facts: CheckFacts) -> (findings: [CheckFinding], lcd: I2CAddress?) {
    var findings: [CheckFinding] = [.ok("libgpiod \(facts.libgpiodVersion) (API v\(facts.libgpiodGeneration))")]
    findings += gpioFindings(options, facts)
    let (i2c, lcd) = i2cFindings(options, facts)
    findings += i2c
    return (findings, lcd)
}

private func gpioFindings(_ options: CheckOptions, _ facts: CheckFacts) -> [CheckFinding] {
    guard !facts.gpioChipNodes.isEmpty else {
        return [.problem(.unavailable, Advice.noGPIOChip + "; on a Pi, /dev/gpiochip0 appears at boot")]
    }
    var findings: [CheckFinding] = []
    for chip in facts.gpioScan.chips {
        findings.append(.ok("GPIO chip \(chip.path): \(chip.summary)"))
    }
    for failure in facts.gpioScan.failures {
        let node = facts.gpioChipNodes.first { failure.operation.hasSuffix($0.path) }
        let advice = failure.kind == .permission ? accessAdvice(node) : "is the GPIO driver healthy? see dmesg"
        findings.append(.problem(startupExitCode(for: failure.kind), "\(failure.operation): \(describe(failure)); \(advice)"))
    }
    findings.append(lineFinding(role: "button", options.button, facts))
    if let led = options.led { findings.append(lineFinding(role: "LED", led, facts)) }
    return findings
}

/// Where `spec` is and who holds it.
private func lineFinding(role: String, _ spec: LineSpec, _ facts: CheckFacts) -> CheckFinding {
    let chips = facts.gpioScan.chips
    let subject = "\(role) \(spec.text)"
    if chips.isEmpty {
        let code = facts.gpioScan.failures.first.map { startupExitCode(for: $0.kind) } ?? .unavailable
        return .problem(code, "\(subject): not checked, no GPIO chip could be read (see above)")
    }
    let found: (chip: GPIOChipInfo, line: GPIOLineInfo)?
    switch spec {
    case .named(let name):
        found = chips.lazy.compactMap { chip in chip.lines.first { $0.name == name }.map { (chip, $0) } }.first
        if found == nil {
            let searched = chips.map { $0.summary }.joined(separator: ", ")
            return .problem(
                .unavailable,
                "\(subject): no line of that name; searched \(searched); list the lines with gpioinfo and pass --\(role.lowercased()) with a name or gpiochipN:OFFSET"
            )
        }
    case .chipOffset(let chipNumber, let offset):
        let path = LineSpec.location(chip: chipNumber, offset: offset).chipPath
        guard let chip = chips.first(where: { $0.path.hasSuffix("/gpiochip\(chipNumber)") }) else {
            let present = chips.map { $0.name }.joined(separator: ", ")
            return .problem(.unavailable, "\(subject): \(path) does not exist (chips: \(present))")
        }
        guard let line = chip.lines.first(where: { $0.offset == offset }) else {
            return .problem(.unavailable, "\(subject): \(chip.name) has \(chip.lines.count) lines (offsets 0-\(max(chip.lines.count - 1, 0)))")
        }
        found = (chip, line)
    }
    guard let (chip, line) = found else { preconditionFailure("lineFinding: every case finds a line or returns") }
    let place = "line \(line.offset) of \(chip.path) [\(chip.label)]" + (line.name.map { " named \($0)" } ?? "")
    guard line.isUsed else { return .ok("\(subject): \(place), free") }
    let holder = line.consumer.map { "\"\($0)\"" } ?? "a kernel driver or another program"
    var advice = "stop the program holding it or choose another line"
    if line.consumer == defaultConsumer { advice = "resend-button itself holds it: is the service running? (sudo systemctl stop resend-button)" }
    return .problem(.unavailable, "\(subject): \(place) is held by \(holder); \(advice)")
}

private func i2cFindings(_ options: CheckOptions, _ facts: CheckFacts) -> ([CheckFinding], I2CAddress?) {
    guard !facts.i2cBuses.isEmpty else {
        return ([.problem(.unavailable, "no I2C bus (/dev/i2c-*): " + Advice.enableI2C)], nil)
    }
    var findings: [CheckFinding] = []
    for bus in facts.i2cBuses {
        let name = bus.adapterName.map { " [\($0)]" } ?? ""
        if bus.node.exists {
            findings.append(
                .ok("I2C bus \(bus.number): \(bus.node.path)\(name)" + (bus.number == options.i2cBus ? ", clock \(clockText(bus.clockHz))" : "")))
            if bus.number == options.i2cBus, let warning = clockWarning(bus.clockHz) {
                findings.append(.note("I2C bus \(bus.number): \(warning)"))
            }
        } else if bus.number == options.i2cBus {
            findings.append(
                .problem(.unavailable, "I2C bus \(bus.number)\(name) has no \(bus.node.path): " + Advice.loadI2CDev(atBoot: facts.i2cDevAtBoot)))
        } else {
            findings.append(.note("I2C bus \(bus.number)\(name) has no \(bus.node.path) (i2c-dev not loaded)"))
        }
    }
    guard let chosen = facts.i2cBuses.first(where: { $0.number == options.i2cBus }) else {
        let present = facts.i2cBuses.map { String($0.number) }.joined(separator: ", ")
        findings.append(
            .problem(
                .unavailable,
                "I2C bus \(options.i2cBus): \(LinuxI2CBus.devicePath(busNumber: options.i2cBus)) does not exist (buses: \(present)); pass --i2c-bus with the LCD's, or "
                    + Advice.enableI2C))
        return (findings, nil)
    }
    guard chosen.node.exists else { return (findings, nil) }
    let path = chosen.node.path
    if !chosen.node.accessible {
        findings.append(.problem(.noPermission, "\(path) is not readable and writable by this user; \(accessAdvice(chosen.node))"))
    }
    if let error = facts.busError {
        let advice = error.kind == .permission ? accessAdvice(chosen.node) : Advice.wiring
        // The access line above already says it when the node is not accessible.
        if chosen.node.accessible || error.kind != .permission {
            findings.append(.problem(startupExitCode(for: error.kind), "\(error.operation): \(describe(error)); \(advice)"))
        }
    }
    guard let scan = facts.scan else { return (findings, nil) }
    for address in scan.claimed {
        let text =
            "\(hexAddress(address.rawValue)) on \(path) is claimed by a kernel driver (i2cdetect shows UU): "
            + Advice.kernelDriverOwns(address, client: facts.clients[address])
        if case .fixed(address) = options.address {
            findings.append(.problem(.unavailable, text))
            return (findings, nil)
        }
        findings.append(.note(text))
    }
    let answered = scan.answered.map { hexAddress($0.rawValue) }.joined(separator: ", ")
    switch options.address {
    case .auto:
        let backpacks = scan.answered.filter { PCF8574AddressRange.all.contains($0) }
        let oleds = scan.answered.filter { CheckFacts.oledAddresses.contains($0) }
        for oled in oleds {
            let address = hexAddress(oled.rawValue)
            findings.append(
                .note(
                    "\(address) is also the SSD1306/SH1106 OLED address: for an OLED put display: { kind: \"ssd1306\" (\"sh1106\" on most 1.3\" modules), address: \(address) } in \(DeviceConfig.defaultPath)"
                ))
        }
        switch backpacks.count {
        case 0:
            let claimed = scan.claimed.isEmpty ? "" : " (claimed: \(scan.claimed.map { hexAddress($0.rawValue) }.joined(separator: ", ")), see above)"
            findings.append(.problem(.unavailable, "no device answered on \(path) at \(Advice.backpackRanges)\(claimed); \(Advice.wiring)"))
            return (findings, nil)
        case 1:
            let address = hexAddress(backpacks[0].rawValue)
            findings.append(
                .ok(
                    "\(address) answers on \(path) (\(chipName(backpacks[0]))); a read cannot tell a backpack from another chip there (MCP23008, PCA95xx, BH1750, AHT20, OLED): confirm with --test-pattern --address \(address)"
                ))
            findings.append(
                .note(
                    "run writes only to the address you name: put \(configLine(backpacks[0], bus: options.i2cBus)) in \(DeviceConfig.defaultPath) (or pass run --address \(address)\(options.i2cBus == DeviceConfig.LCD.defaultBus ? "" : " --i2c-bus \(options.i2cBus)"))"
                ))
            return (findings, backpacks[0])
        default:
            findings.append(
                .problem(
                    .usage,
                    "several devices answered on \(path): \(answered); run writes only to the address you name: find the LCD with --test-pattern --address \(hexAddress(backpacks[0].rawValue)) (and the others), then put \(configLine(backpacks[0], bus: options.i2cBus)) with its address in \(DeviceConfig.defaultPath)"
                ))
            return (findings, nil)
        }
    case .fixed(let address):
        if scan.answered.contains(address) {
            findings.append(.ok("\(hexAddress(address.rawValue)) answers on \(path) (\(chipName(address)))"))
            return (findings, address)
        }
        let others = answered.isEmpty ? "nothing answered at \(Advice.backpackRanges) either" : "answered instead: \(answered)"
        findings.append(.problem(.unavailable, "no device answered at \(hexAddress(address.rawValue)) on \(path); \(others); \(Advice.wiring)"))
        return (findings, nil)
    }
}

/// The configuration line for a backpack at `address` on bus `bus`: `lcd: { address: 0x27 }`.
public func configLine(_ address: I2CAddress, bus: Int) -> String {
    bus == DeviceConfig.LCD.defaultBus
        ? "lcd: { address: \(hexAddress(address.rawValue)) }"
        : "lcd: { bus: \(bus), address: \(hexAddress(address.rawValue)) }"
}

/// "100 kHz", "400 kHz", "unknown (no device-tree clock-frequency)".
public func clockText(_ hz: Int?) -> String {
    guard let hz else { return "unknown (no device-tree clock-frequency)" }
    if hz % 1_000 == 0 { return "\(hz / 1_000) kHz" }
    return "\(hz) Hz"
}

/// The PCF8574 is rated for 100 kHz (PCF8574 datasheet); a faster bus gets a warning.
public func clockWarning(_ hz: Int?) -> String? {
    guard let hz, hz > PCF8574Backpack<LinuxI2CBus>.standardModeClockHz else { return nil }
    return
        "clock \(clockText(hz)) is above the PCF8574's rated 100 kHz (Pi 3-family boards may run SCL up to 1.6x the setting); the driver pads its bytes to keep the HD44780's timing, but for a reliable bus set dtparam=i2c_arm_baudrate=100000 in /boot/firmware/config.txt and reboot"
}

private func chipName(_ address: I2CAddress) -> String {
    if PCF8574AddressRange.pcf8574.contains(address.rawValue) { return "PCF8574 range" }
    if CheckFacts.oledAddresses.contains(address) { return "PCF8574A range, and the SSD1306/SH1106 OLED address" }
    if PCF8574AddressRange.pcf8574A.contains(address.rawValue) { return "PCF8574A range" }
    return "not a PCF8574 address"
}

/// What to do about a device node this user cannot open, from its group and the user's standing.
public func accessAdvice(_ node: DeviceNodeAccess?) -> String {
    guard let node, let group = node.group else { return Advice.joinGroups }
    if group.name == "root" {
        return
            "\(node.path) belongs to group root: install the udev rules that give it to the gpio/i2c group (Raspberry Pi OS has them), or run as root"
    }
    if group.userIsListed && !group.processHasGroup {
        return "you are in group \(group.name) but this login session is not yet: log out and in again (or reboot)"
    }
    return "add the user to group \(group.name): sudo usermod -aG \(group.name) $USER, then log in again"
}

/// The exit code of a list of findings: 0 when none is a problem, else the most basic (69, 77, 64).
public func checkExitCode(_ findings: [CheckFinding]) -> ExitCode {
    mostBasic(findings.compactMap { $0.code }) ?? .ok
}

/// The text of the test pattern's second screen: the address, bus and geometry, one item per row,
/// each cut to the width.
public func testPatternLines(address: I2CAddress, bus: Int, geometry: LCDGeometry) -> [String] {
    var lines = ["I2C \(hexAddress(address.rawValue)) bus \(bus)", "LCD \(geometry.name) OK"]
    while lines.count < geometry.rows { lines.append("row \(lines.count + 1) of \(geometry.rows)") }
    return lines.prefix(geometry.rows).map { line in
        String(line.prefix(geometry.columns)) + String(repeating: " ", count: max(0, geometry.columns - line.count))
    }
}

/// How long every cell stays dark before the text: long enough to judge the contrast.
public let testPatternHold = TimeSpan.seconds(2)

/// Initialises the LCD, darkens every cell (the A00 ROM's full block) for `testPatternHold`, then
/// shows `testPatternLines`. Blocks for about 2.1 s.
public func drawTestPattern<Bus: I2CBus, Wait: Delay>(bus: Bus, address: I2CAddress, busNumber: Int, geometry: LCDGeometry, delay: Wait)
    throws(HALError)
{
    var lcd = HD44780(port: PCF8574Backpack(bus: bus, address: address), delay: delay, geometry: geometry)
    try lcd.initialize()
    let rom = CharacterROM.a00
    guard let block = rom.code(for: "█"), let questionMark = rom.code(for: "?") else {
        preconditionFailure("the test pattern: the A00 ROM has a full block and a question mark")
    }
    try lcd.render(Array(repeating: Array(repeating: block, count: geometry.columns), count: geometry.rows))
    lcd.delay.delay(testPatternHold)
    try lcd.render(
        testPatternLines(address: address, bus: busNumber, geometry: geometry).map { line in
            line.unicodeScalars.map { rom.code(for: $0) ?? questionMark }
        })
}

/// `resend-button check`: prints one line per finding on `console.out`, then a summary, and
/// returns the exit code.
public func runCheck(_ options: CheckOptions, console: Console) -> ExitCode {
    let (facts, bus) = CheckFacts.gather(options)
    var (findings, lcd) = checkFindings(options, facts)
    findings += evdevCheck(options, console: console)
    if options.testPattern {
        if let lcd, let bus {
            do throws(HALError) {
                try drawTestPattern(bus: bus, address: lcd, busNumber: options.i2cBus, geometry: options.geometry, delay: SleepDelay())
                findings.append(
                    .ok(
                        "test pattern drawn at \(hexAddress(lcd.rawValue)) (\(options.geometry.name)): every cell dark, then the address and size; nothing visible? turn the contrast potentiometer on the backpack; garbled? check --geometry"
                    ))
            } catch {
                findings.append(.problem(startupExitCode(for: error.kind), "test pattern: \(error.operation): \(describe(error)); \(Advice.wiring)"))
            }
        } else {
            findings.append(.note("test pattern not drawn: no single LCD address (see above)"))
        }
    } else if lcd != nil {
        findings.append(.note("add --test-pattern to draw on the LCD"))
    }
    findings += matrixKeypadCheck(options, facts, console: console)
    findings += mqttCheck(options)
    if let state = stateFinding(StateDurability.assess(options.config.stateFile, keypad: options.config.keypad)) { findings.append(state) }
    for finding in findings { console.out(finding.line) }
    let code = checkExitCode(findings)
    let problems = findings.filter { $0.code != nil }.count
    console.out(problems == 0 ? "check: all OK" : "check: \(problems) problem\(problems == 1 ? "" : "s"); exit \(code.rawValue)")
    return code
}

/// The state file's medium (`StateDurability`): OK on a disk; on a medium that forgets at a power
/// cut a PROBLEM (exit 78, the configuration's to fix) when it closes code entry, else a NOTE; a
/// NOTE when it could not be told.
public func stateFinding(_ durability: StateDurability?) -> CheckFinding? {
    guard let durability else { return nil }
    let subject = "state file \(durability.path): \(durability.medium.summary)"
    switch durability.medium.verdict {
    case .durable:
        return .ok("\(subject), kept through a power cut")
    case .unknown:
        return .note("\(subject): cannot tell whether it survives a power cut; if that layer is in RAM, \(forgetfulStateAdvice)")
    case .forgets:
        let text = "\(subject), in RAM: \(durability.cost); \(forgetfulStateAdvice)"
        return durability.closesEntry ? .problem(.config, text) : .note(text)
    }
}
