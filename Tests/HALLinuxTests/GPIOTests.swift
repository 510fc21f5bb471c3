import Glibc
import HAL
import Testing

@testable import HALLinux

@Suite("GPIO through libgpiod")
struct GPIOTests {
    static func line(_ offset: UInt32, _ name: String?, consumer: String? = nil) -> GPIOLineInfo {
        GPIOLineInfo(offset: offset, name: name, consumer: consumer, isUsed: consumer != nil, isOutput: false, isActiveLow: false)
    }

    static let chips = [
        GPIOChipInfo(
            path: "/dev/gpiochip0", name: "gpiochip0", label: "pinctrl-bcm2711",
            lines: [line(0, "ID_SDA"), line(17, "GPIO17"), line(18, "GPIO18")]),
        GPIOChipInfo(
            path: "/dev/gpiochip1", name: "gpiochip1", label: "raspberrypi-exp-gpio",
            lines: [line(0, "BT_ON"), line(1, nil)]),
    ]

    @Test("a line is found by name on its chip")
    func findByName() throws {
        #expect(try findLine(named: "GPIO17", in: Self.chips) == GPIOLineLocation(chipPath: "/dev/gpiochip0", offset: 17, name: "GPIO17"))
        #expect(try findLine(named: "BT_ON", in: Self.chips).chipPath == "/dev/gpiochip1")
    }

    @Test("a line name that does not exist lists the chips searched")
    func notFoundListsChips() {
        let error = thrownError { _ = try findLine(named: "GPIO99", in: Self.chips) }
        #expect(
            error
                == HALError(
                    .notFound,
                    operation:
                        "find GPIO line \"GPIO99\": searched gpiochip0 [pinctrl-bcm2711] (3 lines), gpiochip1 [raspberrypi-exp-gpio] (2 lines)",
                    errno: ENOENT))
    }

    @Test("with no GPIO chips at all the error says so")
    func noChips() {
        let error = thrownError { _ = try findLine(named: "GPIO17", in: []) }
        #expect(error?.operation == "find GPIO line \"GPIO17\": no GPIO chips were found")
    }

    @Test("scanning a device directory without chips finds none")
    func scanEmptyDirectory() {
        let dir = TemporaryDirectory()
        let error = thrownError { _ = try findLine(named: "GPIO17", deviceDirectory: dir.path) }
        #expect(error?.kind == .notFound)
        #expect(error?.operation.hasSuffix("no GPIO chips were found") == true)
    }

    @Test("an unreadable chip is named in the not-found error with its errno")
    func unreadableChipNamed() {
        let dir = TemporaryDirectory()
        dir.write("gpiochip0", "not a chip")
        let error = thrownError { _ = try findLine(named: "GPIO17", deviceDirectory: dir.path) }
        #expect(error?.operation.contains("could not read open \(dir.path)/gpiochip0") == true)
    }

    @Test(
        "kernel sequence gaps count as dropped events",
        arguments: [
            (UInt64(0), UInt64(1), UInt64(0)),
            (1, 2, 0),
            (1, 5, 3),
            (7, 9, 1),
            (0, 0, 0),  // v1: no sequence numbers
            (4, 4, 0),
        ])
    func droppedEvents(previous: UInt64, next: UInt64, dropped: UInt64) {
        #expect(GPIOButton.droppedEvents(after: previous, next: next) == dropped)
    }

    @Test("the compiled libgpiod generation matches the linked library's version")
    func generationMatchesLibrary() {
        #expect([1, 2].contains(LibGPIOD.apiGeneration))
        #expect(LibGPIOD.version.hasPrefix("\(LibGPIOD.apiGeneration)."))
        #expect(LibGPIOD.supportsKernelDebounce == (LibGPIOD.apiGeneration == 2))
    }

    @Test("a button on a missing chip is notFound naming the chip")
    func buttonMissingChip() {
        let line = GPIOLineLocation(chipPath: "/dev/gpiochip-missing", offset: 17, name: "GPIO17")
        let error = thrownError { _ = try GPIOButton(line: line) }
        #expect(error?.kind == .notFound)
        #expect(error?.operation == "request button GPIO17 (line 17 of /dev/gpiochip-missing)")
    }

    @Test("an LED on a missing chip is notFound naming the chip")
    func outputMissingChip() {
        let error = thrownError { _ = try GPIOOutput(line: GPIOLineLocation(chipPath: "/dev/gpiochip-missing", offset: 18)) }
        #expect(error?.kind == .notFound)
        #expect(error?.operation == "request output line 18 of /dev/gpiochip-missing")
    }

    @Test("kernel debounce needs libgpiod v2")
    func kernelDebounce() {
        let line = GPIOLineLocation(chipPath: "/dev/gpiochip-missing", offset: 17)
        let error = thrownError {
            _ = try GPIOButton(line: line, configuration: .init(kernelDebounce: .milliseconds(5)))
        }
        // v1 refuses before any I/O; v2 gets as far as opening the (missing) chip.
        #expect(error?.kind == (LibGPIOD.apiGeneration == 1 ? .unsupported : .notFound))
    }

    @Test("a busy line error names the consumer the kernel reports")
    func busyNamesConsumer() {
        // The request fails with EBUSY (scripted); the follow-up line-info read fails too on this
        // machine (no chip), so the message falls back to "another consumer".
        let line = GPIOLineLocation(chipPath: "/dev/gpiochip-missing", offset: 17, name: "GPIO17")
        let (error, _) = Syscall.withInjectedErrors([EBUSY]) {
            thrownError { _ = try GPIOButton(line: line) }
        }
        #expect(
            error == HALError(.busy, operation: "request button GPIO17 (line 17 of /dev/gpiochip-missing): held by another consumer", errno: EBUSY))
    }
}
