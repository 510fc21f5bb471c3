import HAL
import HALLinux
import ResendConfig

/// What `run` was acquiring when a start-up step failed; names the thing in the message.
public enum StartupResource: Hashable, Sendable {
    /// The button's line, as the user gave it.
    case button(LineSpec)
    case led(LineSpec)
    /// /dev/i2c-N
    case i2cBus(Int)
    /// The backpack at an address on a bus.
    case lcd(I2CAddress, bus: Int)
    /// A keypad line (`role` e.g. "keypad row 1", "keypad output"), as the configuration names it.
    case keypadLine(role: String, LineSpec)
    /// The keypad's matrix lines as a whole (the failed request's operation names the line).
    case keypadMatrix

    var name: String {
        switch self {
        case .button(let line): return "button \(line.text)"
        case .led(let line): return "LED \(line.text)"
        case .i2cBus(let number): return "I2C bus \(number)"
        case .lcd(let address, let bus): return "LCD at \(hexAddress(address.rawValue)) on \(LinuxI2CBus.devicePath(busNumber: bus))"
        case .keypadLine(let role, let line): return "\(role) \(line.text)"
        case .keypadMatrix: return "keypad matrix"
        }
    }

    var isGPIO: Bool {
        switch self {
        case .button, .led, .keypadLine, .keypadMatrix: return true
        case .i2cBus, .lcd: return false
        }
    }
}

/// Facts about the machine that make a start-up message say the right thing.
public struct StartupFacts: Hashable, Sendable {
    /// /dev/gpiochipN nodes present.
    public var gpioChipCount: Int
    /// N of every /dev/i2c-N present.
    public var i2cBusNumbers: [Int]
    /// N of every I2C adapter the kernel registered (/sys/bus/i2c/devices/i2c-N), with or without
    /// a /dev node.
    public var i2cAdapterNumbers: [Int]
    /// The files that load i2c-dev at boot (`Discovery.i2cDevLoadedAtBoot`).
    public var i2cDevAtBoot: [String]

    public init(gpioChipCount: Int, i2cBusNumbers: [Int], i2cAdapterNumbers: [Int] = [], i2cDevAtBoot: [String] = []) {
        self.gpioChipCount = gpioChipCount
        self.i2cBusNumbers = i2cBusNumbers
        self.i2cAdapterNumbers = i2cAdapterNumbers
        self.i2cDevAtBoot = i2cDevAtBoot
    }

    /// Reads /dev and /sys and the modules-load files under `root` (no device is opened).
    public static func gather(deviceDirectory: String = "/dev", sysfs: String = "/sys", root: String = "") -> StartupFacts {
        StartupFacts(
            gpioChipCount: Discovery.deviceNodes(prefix: "gpiochip", in: deviceDirectory).count,
            i2cBusNumbers: Discovery.deviceNodes(prefix: "i2c-", in: deviceDirectory).compactMap { Int($0.split(separator: "-").last ?? "") },
            i2cAdapterNumbers: Discovery.i2cAdapterNumbers(sysfs: sysfs),
            i2cDevAtBoot: Discovery.i2cDevLoadedAtBoot(root: root))
    }
}

/// What to do, shared by `run` and `check`.
public enum Advice {
    public static let enableI2C =
        "enable I2C: add dtparam=i2c_arm=on to /boot/firmware/config.txt (or raspi-config: Interface Options, I2C) and reboot"
    public static let noGPIOChip =
        "no GPIO chip (/dev/gpiochip*): this is not a Raspberry Pi, or the kernel lacks GPIO character device support (CONFIG_GPIO_CDEV)"
    public static let joinGroups = "add the user to the gpio/i2c group: sudo usermod -aG gpio,i2c $USER, then log in again"
    public static let wiring =
        "check the wiring (SDA to GPIO2, SCL to GPIO3, VCC to 5 V, GND) and the address jumpers; 'resend-button check' lists what answers"
    public static let backpackRanges = "0x20-0x27 (PCF8574) and 0x38-0x3f (PCF8574A)"

    /// The adapter exists but /dev/i2c-N does not: the i2c-dev module is not loaded
    /// (CONFIG_I2C_CHARDEV=m on Raspberry Pi kernels; the dtparam line alone does not load it).
    /// `atBoot` names the files that load it at boot, if any.
    public static func loadI2CDev(atBoot: [String]) -> String {
        let boot =
            atBoot.isEmpty
            ? "to load it at every boot: echo i2c-dev | sudo tee /etc/modules-load.d/i2c-dev.conf (scripts/install and the .deb install \(Discovery.modulesLoadFile))"
            : "installed: \(atBoot.joined(separator: ", ")) loads it at the next boot"
        return "I2C is on but i2c-dev is not loaded: sudo modprobe i2c-dev (\(boot))"
    }

    /// `address` is bound to a kernel driver (I2C_SLAVE gives EBUSY; i2cdetect shows UU).
    public static func kernelDriverOwns(_ address: I2CAddress, client: I2CClientInfo?) -> String {
        var owner = "a kernel driver"
        if let client {
            owner = client.driver.map { "the kernel driver \"\($0)\"" } ?? owner
            if let name = client.deviceName { owner += " (device \"\(name)\", /sys/bus/i2c/devices/\(client.sysfsName))" }
        }
        return
            "\(owner) owns \(hexAddress(address.rawValue)); if it is the LCD, the Raspberry Pi overlay dtoverlay=hd44780-i2c-lcd binds it to /dev/lcd: remove that line from /boot/firmware/config.txt and reboot"
    }
}

/// The exit code a start-up failure of `kind` gets (sysexits): missing hardware 69, permission 77,
/// a line held by another program 69, a bus that misbehaves 74.
public func startupExitCode(for kind: HALError.Kind) -> ExitCode {
    switch kind {
    case .notFound, .noDevice, .busy, .unsupported: return .unavailable
    case .permission: return .noPermission
    case .timeout, .io: return .ioError
    case .invalidArgument: return .usage
    case .injected: return .software
    }
}

/// One line for a failed start-up step: the thing, the failed operation, the errno's meaning
/// (`describe`) and what to do; with the exit code for the error's kind.
public func startupFailure(_ error: HALError, resource: StartupResource, facts: StartupFacts, command: String = "run") -> ExitError {
    let advice: String
    switch (error.kind, resource) {
    case (.permission, _):
        advice = Advice.joinGroups
    case (.notFound, .i2cBus(let number)) where facts.i2cAdapterNumbers.contains(number) && !facts.i2cBusNumbers.contains(number):
        advice = Advice.loadI2CDev(atBoot: facts.i2cDevAtBoot)
    case (.notFound, .i2cBus(let number)):
        if facts.i2cBusNumbers.isEmpty {
            advice = "no I2C bus exists: " + Advice.enableI2C
        } else {
            let present = facts.i2cBusNumbers.map(String.init).joined(separator: ", ")
            advice = "buses present: \(present); pass --i2c-bus with the LCD's, or for bus \(number) " + Advice.enableI2C
        }
    case (.notFound, .keypadLine), (.notFound, .keypadMatrix):
        advice =
            facts.gpioChipCount == 0
            ? Advice.noGPIOChip
            : "list the lines with gpioinfo and name one in the configuration's keypad section (a line name like GPIO5, or gpiochipN:OFFSET)"
    case (.notFound, .button), (.notFound, .led):
        advice =
            facts.gpioChipCount == 0
            ? Advice.noGPIOChip
            : "list the lines with gpioinfo and pass a line name like GPIO17 or gpiochipN:OFFSET"
    case (.noDevice, _), (.timeout, _), (.io, _):
        advice = Advice.wiring
    case (.busy, .i2cBus), (.busy, .lcd):
        advice =
            "a kernel driver owns the address (i2cdetect shows UU); if it is the LCD, the Raspberry Pi overlay dtoverlay=hd44780-i2c-lcd binds it to /dev/lcd: remove that line from /boot/firmware/config.txt and reboot"
    case (.busy, _):
        advice = "stop the program holding the line (gpioinfo names the consumer) or choose another line"
    case (.unsupported, .i2cBus), (.unsupported, .lcd):
        advice = "this I2C adapter cannot talk to a PCF8574; use the Pi's I2C bus (dtparam=i2c_arm=on, bus 1)"
    case (.unsupported, _):
        advice = "this GPIO chip or kernel cannot do it; leave out the option that needs it"
    case (.notFound, .lcd), (.invalidArgument, _), (.injected, _):
        advice = "this is a bug if it persists; please report it"
    }
    return ExitError(startupExitCode(for: error.kind), "\(command): \(resource.name): \(error.operation): \(describe(error)); \(advice)")
}

/// Several failures at once (e.g. neither GPIO nor I2C exists): one line each, and the exit code
/// of the most basic (`mostBasic`).
public func combine(_ failures: [ExitError]) -> ExitError? {
    guard let code = mostBasic(failures.map { $0.code }) else { return nil }
    return ExitError(code, failures.map { $0.message }.joined(separator: "\n"))
}

/// The code to exit with when several things are wrong: missing hardware (69) first, then
/// permission (77), then an ambiguity the user must settle with a flag (64), then the rest.
/// Nil for no codes.
public func mostBasic(_ codes: [ExitCode]) -> ExitCode? {
    let order: [ExitCode] = [.unavailable, .noPermission, .usage, .config, .ioError, .software, .failure]
    return order.first { codes.contains($0) } ?? codes.first
}
