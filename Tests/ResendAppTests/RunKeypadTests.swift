import HAL
import HALLinux
import Testing

@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

/// `run` with `keypad.enabled`: what it says when the keypad's lines are missing or busy, and how
/// the `started` line names the keypad. (The real lines are driven in the VM tests, vm/.)
@Suite("run with a keypad")
struct RunKeypadTests {
    static func keypad(rows: [String], columns: [String], output: String? = nil) -> DeviceConfig.Keypad {
        var keypad = DeviceConfig.Keypad()
        keypad.enabled = true
        keypad.rows = rows
        keypad.columns = columns
        keypad.output.line = output
        keypad.verify.command = ["/usr/local/bin/check-code"]
        return keypad
    }

    @Test func aKeypadLineThatDoesNotExistIsNamedWithItsRoleAndExits69() {
        var failures: [ExitError] = []
        let keypad = Self.keypad(rows: ["GPIO5", "NO_SUCH_ROW", "GPIO13", "GPIO19"], columns: ["GPIO12", "GPIO16", "NO_SUCH_COLUMN"])
        let acquired = acquireKeypad(keypad, facts: piFacts, failures: &failures)
        #expect(acquired == nil)
        let lines = failures.map { $0.message }
        #expect(lines.contains { $0.hasPrefix("run: keypad row 2 NO_SUCH_ROW: find GPIO line \"NO_SUCH_ROW\"") })
        #expect(lines.contains { $0.hasPrefix("run: keypad column 3 NO_SUCH_COLUMN: find GPIO line \"NO_SUCH_COLUMN\"") })
        #expect(
            lines.allSatisfy {
                $0.hasSuffix(
                    "list the lines with gpioinfo and name one in the configuration's keypad section (a line name like GPIO5, or gpiochipN:OFFSET)")
            })
        #expect(combine(failures)?.code == .unavailable)
    }

    @Test func aMatrixOnAMissingChipIsOneLineNamingTheFirstRow() {
        var failures: [ExitError] = []
        let keypad = Self.keypad(
            rows: ["gpiochip999:5", "gpiochip999:6", "gpiochip999:13", "gpiochip999:19"],
            columns: ["gpiochip999:12", "gpiochip999:16", "gpiochip999:20"])
        #expect(acquireKeypad(keypad, facts: piFacts, failures: &failures) == nil)
        #expect(
            failures.map { $0.message } == [
                "run: keypad matrix: request keypad row 1 line 5 of /dev/gpiochip999: ENOENT (2): no such file or directory; list the lines with gpioinfo and name one in the configuration's keypad section (a line name like GPIO5, or gpiochipN:OFFSET)"
            ])
        #expect(failures.first?.code == .unavailable)
    }

    @Test func aBusyMatrixLineNamesItsHolderAndExits69() {
        let error = HALError(.busy, operation: "request keypad column 2 GPIO16 (line 16 of /dev/gpiochip0): held by \"matrix-keypad\"", errno: 16)
        let failure = startupFailure(error, resource: .keypadMatrix, facts: piFacts)
        #expect(failure.code == .unavailable)
        #expect(
            failure.message
                == "run: keypad matrix: request keypad column 2 GPIO16 (line 16 of /dev/gpiochip0): held by \"matrix-keypad\": EBUSY (16): in use by another program or driver; stop the program holding the line (gpioinfo names the consumer) or choose another line"
        )
    }

    @Test func aKeypadLineWithoutPermissionExits77() {
        let error = HALError(.permission, operation: "open /dev/gpiochip0", errno: 13)
        let failure = startupFailure(error, resource: .keypadLine(role: "keypad output", .named("GPIO26")), facts: piFacts)
        #expect(failure.code == .noPermission)
        #expect(failure.message == "run: keypad output GPIO26: open /dev/gpiochip0: EACCES (13): permission denied; \(groupAdvice)")
    }

    @Test func anOutputLineThatDoesNotExistIsNamedToo() {
        var failures: [ExitError] = []
        let keypad = Self.keypad(rows: ["gpiochip999:5"], columns: ["gpiochip999:12"], output: "gpiochip998:26")
        _ = acquireKeypad(keypad, facts: piFacts, failures: &failures)
        #expect(
            failures.first?.message.hasPrefix("run: keypad output gpiochip998:26: request output line 26 of /dev/gpiochip998: ENOENT (2)") == true)
        #expect(failures.count == 2, "the output and the matrix, one line each")
    }

    @Test func withoutAnyGPIOChipTheKeypadAddsNothingToTheButtonsMessage() {
        var failures: [ExitError] = []
        #expect(acquireKeypad(Self.keypad(rows: ["GPIO5"], columns: ["GPIO12"]), facts: noHardware, failures: &failures) == nil)
        #expect(failures.isEmpty)
    }

    @Test func aKeypadThatIsOffAcquiresNothing() {
        var failures: [ExitError] = []
        var keypad = Self.keypad(rows: ["NO_SUCH_ROW"], columns: ["NO_SUCH_COLUMN"])
        keypad.enabled = false
        #expect(acquireKeypad(keypad, facts: piFacts, failures: &failures) == nil)
        #expect(failures.isEmpty)
    }

    @Test func theStartedLineNamesTheMatrixItsLinesAndDiodes() {
        let rows = [5, 6, 13, 19].map { GPIOLineLocation(chipPath: "/dev/gpiochip0", offset: UInt32($0), name: "GPIO\($0)") }
        let columns = [
            GPIOLineLocation(chipPath: "/dev/gpiochip0", offset: 12, name: "GPIO12"), GPIOLineLocation(chipPath: "/dev/gpiochip1", offset: 3),
        ]
        #expect(
            MatrixKeypadAttachment.summary(rows: rows, columns: columns, diodes: false)
                == "matrix 4x2 rows GPIO5,GPIO6,GPIO13,GPIO19 columns GPIO12,/dev/gpiochip1:3 diodes no")
        let record = LogRecord("started", [.string("keypad", MatrixKeypadAttachment.summary(rows: rows, columns: columns, diodes: true))])
        #expect(record.plainText == "started keypad=\"matrix 4x2 rows GPIO5,GPIO6,GPIO13,GPIO19 columns GPIO12,/dev/gpiochip1:3 diodes yes\"")
    }
}
