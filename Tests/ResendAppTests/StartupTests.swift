import HAL
import HALLinux
import ResendApp
import ResendDevice
import ResendSimulator
import Testing

struct StartupCase: Sendable, CustomTestStringConvertible {
    var error: HALError
    var resource: StartupResource
    var facts: StartupFacts
    var code: ExitCode
    var message: String
    var testDescription: String { "\(error.kind) \(resource)" }
}

let noHardware = StartupFacts(gpioChipCount: 0, i2cBusNumbers: [])
let piFacts = StartupFacts(gpioChipCount: 1, i2cBusNumbers: [1])
let groupAdvice = "add the user to the gpio/i2c group: sudo usermod -aG gpio,i2c $USER, then log in again"
let wiringAdvice = "check the wiring (SDA to GPIO2, SCL to GPIO3, VCC to 5 V, GND) and the address jumpers; 'resend-button check' lists what answers"
let enableI2C = "enable I2C: add dtparam=i2c_arm=on to /boot/firmware/config.txt (or raspi-config: Interface Options, I2C) and reboot"

struct StartupTests {
    static let cases: [StartupCase] = [
        StartupCase(
            error: HALError(.notFound, operation: "open /dev/i2c-1", errno: 2), resource: .i2cBus(1), facts: noHardware, code: .unavailable,
            message: "run: I2C bus 1: open /dev/i2c-1: ENOENT (2): no such file or directory; no I2C bus exists: \(enableI2C)"),
        StartupCase(
            error: HALError(.notFound, operation: "open /dev/i2c-1", errno: 2), resource: .i2cBus(1),
            facts: StartupFacts(gpioChipCount: 1, i2cBusNumbers: [0, 20]), code: .unavailable,
            message:
                "run: I2C bus 1: open /dev/i2c-1: ENOENT (2): no such file or directory; buses present: 0, 20; pass --i2c-bus with the LCD's, or for bus 1 \(enableI2C)"
        ),
        StartupCase(
            error: HALError(.permission, operation: "open /dev/i2c-1", errno: 13), resource: .i2cBus(1), facts: piFacts, code: .noPermission,
            message: "run: I2C bus 1: open /dev/i2c-1: EACCES (13): permission denied; \(groupAdvice)"),
        StartupCase(
            error: HALError(.notFound, operation: "find GPIO line \"GPIO17\": no GPIO chips were found", errno: 2),
            resource: .button(.named("GPIO17")), facts: noHardware, code: .unavailable,
            message:
                "run: button GPIO17: find GPIO line \"GPIO17\": no GPIO chips were found: ENOENT (2): no such file or directory; no GPIO chip (/dev/gpiochip*): this is not a Raspberry Pi, or the kernel lacks GPIO character device support (CONFIG_GPIO_CDEV)"
        ),
        StartupCase(
            error: HALError(.notFound, operation: "find GPIO line \"GPIO99\": searched gpiochip0 [pinctrl-bcm2711] (58 lines)", errno: 2),
            resource: .button(.named("GPIO99")), facts: piFacts, code: .unavailable,
            message:
                "run: button GPIO99: find GPIO line \"GPIO99\": searched gpiochip0 [pinctrl-bcm2711] (58 lines): ENOENT (2): no such file or directory; list the lines with gpioinfo and pass a line name like GPIO17 or gpiochipN:OFFSET"
        ),
        StartupCase(
            error: HALError(.busy, operation: "request button GPIO17 (line 17 of /dev/gpiochip0): held by \"pigpiod\"", errno: 16),
            resource: .button(.named("GPIO17")), facts: piFacts, code: .unavailable,
            message:
                "run: button GPIO17: request button GPIO17 (line 17 of /dev/gpiochip0): held by \"pigpiod\": EBUSY (16): in use by another program or driver; stop the program holding the line (gpioinfo names the consumer) or choose another line"
        ),
        StartupCase(
            error: HALError(.permission, operation: "open /dev/gpiochip0", errno: 13), resource: .led(.chipOffset(chip: 0, offset: 27)),
            facts: piFacts, code: .noPermission,
            message: "run: LED gpiochip0:27: open /dev/gpiochip0: EACCES (13): permission denied; \(groupAdvice)"),
        StartupCase(
            error: HALError(.permission, operation: "request button GPIO17", errno: 1), resource: .button(.named("GPIO17")), facts: piFacts,
            code: .noPermission,
            message: "run: button GPIO17: request button GPIO17: EPERM (1): operation not permitted; \(groupAdvice)"),
        StartupCase(
            error: HALError(.unsupported, operation: "request output line 27 of /dev/gpiochip0", errno: 95), resource: .led(.named("GPIO27")),
            facts: piFacts, code: .unavailable,
            message:
                "run: LED GPIO27: request output line 27 of /dev/gpiochip0: EOPNOTSUPP (95): operation not supported; this GPIO chip or kernel cannot do it; leave out the option that needs it"
        ),
        StartupCase(
            error: HALError(.noDevice, operation: "probe /dev/i2c-1 0x27", errno: 121), resource: .lcd(I2CAddress(0x27)!, bus: 1), facts: piFacts,
            code: .unavailable,
            message: "run: LCD at 0x27 on /dev/i2c-1: probe /dev/i2c-1 0x27: EREMOTEIO (121): no device answered; \(wiringAdvice)"),
        StartupCase(
            error: HALError(.io, operation: "probe /dev/i2c-1 0x20", errno: 5), resource: .i2cBus(1), facts: piFacts, code: .ioError,
            message: "run: I2C bus 1: probe /dev/i2c-1 0x20: EIO (5): input/output error on the bus or device; \(wiringAdvice)"),
        StartupCase(
            error: HALError(.timeout, operation: "probe /dev/i2c-1 0x20", errno: 110), resource: .i2cBus(1), facts: piFacts, code: .ioError,
            message: "run: I2C bus 1: probe /dev/i2c-1 0x20: ETIMEDOUT (110): timed out; \(wiringAdvice)"),
        StartupCase(
            error: HALError(.unsupported, operation: "/dev/i2c-3: adapter can neither write I2C messages nor send SMBus bytes"), resource: .i2cBus(3),
            facts: piFacts, code: .unavailable,
            message:
                "run: I2C bus 3: /dev/i2c-3: adapter can neither write I2C messages nor send SMBus bytes: not supported; this I2C adapter cannot talk to a PCF8574; use the Pi's I2C bus (dtparam=i2c_arm=on, bus 1)"
        ),
    ]

    @Test("a start-up failure names the thing, the errno's meaning and what to do, with its sysexits code", arguments: cases)
    func mapping(_ startup: StartupCase) {
        let failure = startupFailure(startup.error, resource: startup.resource, facts: startup.facts)
        #expect(failure.code == startup.code)
        #expect(failure.message == startup.message)
    }

    @Test(
        "exit codes by error kind",
        arguments: [
            (HALError.Kind.notFound, ExitCode.unavailable), (.noDevice, .unavailable), (.busy, .unavailable), (.unsupported, .unavailable),
            (.permission, .noPermission), (.timeout, .ioError), (.io, .ioError), (.invalidArgument, .usage), (.injected, .software),
        ])
    func exitCodes(kind: HALError.Kind, code: ExitCode) {
        #expect(startupExitCode(for: kind) == code)
    }

    @Test(
        "several start-up failures: one line each, missing hardware before permission before the rest",
        arguments: [
            ([ExitCode.noPermission, .unavailable], ExitCode.unavailable), ([.noPermission], .noPermission),
            ([.usage, .noPermission], .noPermission),
            ([.ioError, .usage], .usage), ([.unavailable, .unavailable], .unavailable),
        ])
    func combined(codes: [ExitCode], expected: ExitCode) {
        let failures = codes.enumerated().map { ExitError($0.element, "line \($0.offset)") }
        let combined = combine(failures)
        #expect(combined?.code == expected)
        #expect(combined?.message == codes.indices.map { "line \($0)" }.joined(separator: "\n"))
    }

    @Test("no failures combine to none")
    func noFailures() {
        #expect(combine([]) == nil)
    }
}
