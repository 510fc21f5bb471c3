import Foundation
import Testing

/// The `resend-button` executable of this build (`executablePath()`) as a file URL.
func builtBinary() -> URL? {
    executablePath().map { URL(fileURLWithPath: $0) }
}

/// True on a machine like the development container: no GPIO chip and no I2C bus at all. Where
/// they exist `run` would take the real hardware, so these tests do not run there.
let machineHasNoGPIOOrI2C: Bool = {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
    return !entries.contains { $0.hasPrefix("gpiochip") || $0.hasPrefix("i2c-") }
}()

struct ProcessResult {
    var status: Int32
    var out: String
    var err: String
}

/// Runs the built binary with `arguments`; a run longer than 20 s is killed and fails the test.
func runBinary(_ arguments: [String]) throws -> ProcessResult {
    let binary = try #require(
        builtBinary(),
        "resend-button was not found next to the test bundle or in .build/debug; build it first (scripts/test runs swift build --build-tests)")
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
    DispatchQueue.global().asyncAfter(deadline: .now() + 20, execute: watchdog)
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    watchdog.cancel()
    #expect(process.terminationReason == .exit, "resend-button \(arguments.joined(separator: " ")) did not exit by itself")
    return ProcessResult(
        status: process.terminationStatus, out: String(decoding: outData, as: UTF8.self), err: String(decoding: errData, as: UTF8.self))
}

@Suite(.enabled(if: machineHasNoGPIOOrI2C, "this machine has GPIO chips or I2C buses"))
struct BinaryTests {
    @Test("the built binary's run, without GPIO chips and I2C buses, says what is missing and how to enable it and exits 69")
    func run() throws {
        let result = try runBinary(["run"])
        #expect(result.status == 69)
        #expect(result.out.isEmpty)
        let lines = result.err.split(separator: "\n")
        #expect(lines.count == 2, "\(result.err)")
        #expect(lines.first?.hasPrefix("run: button GPIO17: ") == true)
        #expect(result.err.contains("no GPIO chip (/dev/gpiochip*): this is not a Raspberry Pi"))
        #expect(lines.last?.hasPrefix("run: I2C bus 1: open /dev/i2c-1: ENOENT (2)") == true)
        #expect(result.err.contains("enable I2C: add dtparam=i2c_arm=on to /boot/firmware/config.txt"))
    }

    @Test("the built binary's check, without GPIO chips and I2C buses, lists the problems with what to do and exits 69")
    func check() throws {
        let result = try runBinary(["check"])
        #expect(result.status == 69)
        #expect(result.err.isEmpty)
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("OK libgpiod ") == true)
        #expect(lines.contains { $0.hasPrefix("PROBLEM no GPIO chip (/dev/gpiochip*): this is not a Raspberry Pi") })
        #expect(lines.contains { $0.hasPrefix("PROBLEM no I2C bus (/dev/i2c-*): enable I2C: add dtparam=i2c_arm=on") })
        #expect(lines.last == "check: 2 problems; exit 69")
    }

    @Test("the built binary's output off, without GPIO chips, names the output line, says no chip exists and exits 69; without an output it exits 0")
    func outputOff() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("output-off-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let withOutput = directory.appendingPathComponent("door.json5")
        try #"{keypad: {enabled: true, verify: {command: ["/bin/true"]}, output: {line: "GPIO26"}}}"#.write(
            to: withOutput, atomically: true, encoding: .utf8)
        let result = try runBinary(["output", "off", "--config", withOutput.path])
        #expect(result.status == 69)
        #expect(result.out.isEmpty)
        #expect(result.err.split(separator: "\n").count == 1, "\(result.err)")
        #expect(result.err.hasPrefix("output off: keypad output GPIO26: "))
        #expect(result.err.contains("no GPIO chip (/dev/gpiochip*)"))

        let without = directory.appendingPathComponent("button.json5")
        try "{}".write(to: without, atomically: true, encoding: .utf8)
        let nothing = try runBinary(["output", "off", "--config", without.path])
        #expect(nothing.status == 0)
        #expect(nothing.out == "output off: nothing to drive: no keypad.output.line in \(without.path)\n")
        #expect(nothing.err.isEmpty)
    }

    @Test(
        "the built binary rejects a bad flag before any I/O with one line and exit 64",
        arguments: [
            (["run", "--address", "0x78"], "run: --address: '0x78' is outside 0x08-0x77"),
            (["check", "--address", "0x07"], "check: --address: '0x07' is outside 0x08-0x77"),
            (["run", "--button-bias", "up"], "run: --button-bias: 'up' is not a bias"),
        ])
    func badFlag(arguments: [String], prefix: String) throws {
        let result = try runBinary(arguments)
        #expect(result.status == 64)
        #expect(result.err.split(separator: "\n").count == 1)
        #expect(result.err.hasPrefix(prefix))
    }
}
