import Glibc
import HAL
import HALLinux
import Testing

@testable import ResendApp
@testable import ResendDevice
@testable import ResendSimulator

private func node(_ path: String) -> DeviceNodeAccess {
    DeviceNodeAccess(path: path, exists: true, accessible: true, group: nil)
}

private let keypadKeys = Key.digits + [.star, .pound]
private let usbKeypad = InputDeviceInfo(
    path: "/dev/input/event3",
    links: ["/dev/input/by-path/platform-xhci-hcd.0-usb-0:1:1.0-event-kbd", "/dev/input/by-id/usb-SIGMACHIP_USB_Keyboard-event-kbd"],
    name: "SIGMACHIP USB Keyboard", keys: keypadKeys, node: node("/dev/input/event3"))
private let hdmi = InputDeviceInfo(path: "/dev/input/event0", name: "vc4-hdmi-0", keys: [], node: node("/dev/input/event0"))

@Suite("check: input devices and the key test")
struct CheckEvdevTests {
    @Test func eachInputDeviceIsOneLineWithItsNameLinksAndDigitKeysAndTheKeypadIsMarked() {
        let findings = inputDeviceFindings([hdmi, usbKeypad], configured: "/dev/input/by-id/usb-SIGMACHIP_USB_Keyboard-event-kbd")
        #expect(
            findings.map(\.line) == [
                #"NOTE input device /dev/input/event0 "vc4-hdmi-0": no digit keys"#,
                #"OK input device /dev/input/event3 "SIGMACHIP USB Keyboard" (by-path/platform-xhci-hcd.0-usb-0:1:1.0-event-kbd, by-id/usb-SIGMACHIP_USB_Keyboard-event-kbd) [keypad.device]: digit keys (0-9, *, #)"#,
            ])
        #expect(checkExitCode(findings) == .ok)
    }

    @Test func withoutAKeypadDeviceNothingIsAProblem() {
        let denied = InputDeviceInfo(
            path: "/dev/input/event1", error: HALError(.permission, operation: "open /dev/input/event1", errno: EACCES),
            node: node("/dev/input/event1"))
        let findings = inputDeviceFindings([denied, usbKeypad], configured: nil)
        #expect(checkExitCode(findings) == .ok)
        #expect(
            findings.first?.line.hasPrefix(
                "NOTE input device /dev/input/event1: open /dev/input/event1: EACCES (13): permission denied; to list it: add the user to group ")
                == true)
        #expect(
            inputDeviceFindings([], configured: nil).map(\.line) == [
                "NOTE no input devices (/dev/input/event*): a USB keypad shows up when plugged in, a kernel keypad driver (matrix-keypad, gpio-keys) when its overlay is loaded"
            ])
    }

    @Test func aKeypadDeviceThatIsMissingUnreadableOrWithoutDigitsIsAProblem() {
        let missing = inputDeviceFindings([hdmi], configured: "/dev/input/by-id/usb-gone-event-kbd")
        #expect(
            missing.last?.line
                == "PROBLEM keypad.device '/dev/input/by-id/usb-gone-event-kbd': not found; plugged in? run waits for it and takes it when it appears; the devices present are listed above"
        )
        #expect(checkExitCode(missing) == .unavailable)

        let noDigits = inputDeviceFindings([hdmi], configured: "/dev/input/event0")
        #expect(
            noDigits.map(\.line) == [
                #"PROBLEM input device /dev/input/event0 "vc4-hdmi-0" [keypad.device]: no digit keys; a code cannot be typed on it: choose the keypad's device (ls -l /dev/input/by-id /dev/input/by-path)"#
            ])

        let denied = InputDeviceInfo(
            path: "/dev/input/event3", error: HALError(.permission, operation: "open /dev/input/event3", errno: EACCES),
            node: node("/dev/input/event3"))
        let unreadable = inputDeviceFindings([denied], configured: "/dev/input/event3")
        #expect(checkExitCode(unreadable) == .noPermission)
        #expect(
            unreadable.first?.line.hasPrefix(
                "PROBLEM input device /dev/input/event3 [keypad.device]: open /dev/input/event3: EACCES (13): permission denied; add the user to group "
            ) == true)
        #expect(unreadable.first?.line.contains("SupplementaryGroups=") == true)
    }

    @Test func theKeyTestReportsEachPressOnceInOrderAndNamesOtherCodes() {
        func code(_ code: UInt16, _ value: Int32) -> EvdevKeypad.KeyCode { .init(code: code, value: value, at: .origin) }
        let codes = [code(79, 1), code(79, 2), code(79, 0), code(3, 1), code(3, 0), code(55, 1), code(30, 1), code(30, 0), code(96, 1), code(30, 1)]
        #expect(
            keyTestFinding(codes, path: "/dev/input/event3", seconds: 5).line
                == "OK key test on /dev/input/event3: 4 keys pressed: 1 2 * #; other key codes (not keypad keys, ignored by run): 30")
        #expect(keyTestFinding([], path: "/dev/input/event3", seconds: 5).line == "NOTE key test on /dev/input/event3: no keypad key pressed in 5 s")
        let gone = keyTestFinding([code(2, 1)], path: "/dev/input/event3", seconds: 5, unplugged: true)
        #expect(gone.line == "PROBLEM key test on /dev/input/event3: the device went away (unplugged?) after 1 key")
        #expect(gone.code == .unavailable)
    }

    @Test func keyListsAreCompact() {
        #expect(keyList(Key.digits + [.star, .pound, .a, .b, .c, .d]) == "0-9, *, #, A-D")
        #expect(keyList([.digit1, .digit2, .a]) == "1, 2, A")
        #expect(keyList([]) == "")
    }

    @Test func theListReadsDevInputWithTheLinksThatLeadToEachNode() throws {
        let directory = TemporaryDirectory()
        directory.write("event0", "")
        directory.write("event7", "")
        directory.write("mouse0", "")
        directory.symlink("by-id/usb-Keypad-event-kbd", to: "../event7")
        directory.symlink("by-path/platform-usb-0:1-event-kbd", to: "../event7")
        directory.symlink("by-id/usb-Keypad-mouse", to: "../mouse0")
        let devices = Discovery.inputDevices(directory: directory.path)
        #expect(devices.map(\.path) == [directory.path + "/event0", directory.path + "/event7"])
        #expect(devices.last?.links == [directory.path + "/by-path/platform-usb-0:1-event-kbd", directory.path + "/by-id/usb-Keypad-event-kbd"])
        #expect(devices.first?.error == HALError(.unsupported, operation: "open \(directory.path)/event0", errno: ENOTTY))

        // Named by its link, the keypad is marked; a file is not an input device: a problem (78).
        var options = CheckOptions()
        options.keypadDevice = directory.path + "/by-id/usb-Keypad-event-kbd"
        let captured = CapturedConsole()
        let findings = evdevCheck(options, console: captured.console, directory: directory.path)
        #expect(
            findings.last?.line
                == "PROBLEM input device \(directory.path)/event7 (by-path/platform-usb-0:1-event-kbd, by-id/usb-Keypad-event-kbd) [keypad.device]: open \(directory.path)/event7: ENOTTY (25): not supported by this device: not an input event device; use a /dev/input/eventN node or a by-id/by-path link ending in -event-kbd"
        )
        #expect(checkExitCode(findings) == .config)
    }

    @Test func theKeyTestOnSomethingThatIsNotAnInputDeviceSaysSoAtOnce() {
        let directory = TemporaryDirectory()
        directory.write("event7", "")
        var options = CheckOptions()
        options.keypadDevice = directory.path + "/event7"
        options.keySeconds = 30
        let captured = CapturedConsole()
        let findings = evdevCheck(options, console: captured.console, directory: directory.path)
        #expect(captured.out == ["key test: press keys on \(directory.path)/event7 for 30 s (taken exclusively meanwhile)"])
        #expect(findings.last?.line.hasPrefix("PROBLEM key test on \(directory.path)/event7: open \(directory.path)/event7: ENOTTY (25)") == true)
    }

    @Test func withoutAKeypadDeviceTheKeyTestNeedsOneDeviceWithDigits() {
        #expect(keyTestDevice([hdmi, usbKeypad], configured: nil) == "/dev/input/event3")
        #expect(keyTestDevice([hdmi, usbKeypad, usbKeypad], configured: nil) == nil)
        #expect(keyTestDevice([hdmi], configured: "/dev/input/event9") == "/dev/input/event9")
        var options = CheckOptions()
        options.keypad.backend = .evdev
        options.keySeconds = 5
        let captured = CapturedConsole()
        let findings = evdevCheck(options, console: captured.console, directory: "/nonexistent/input")
        #expect(findings.map(\.line).last == "NOTE key test not run: name the keypad with --keypad-device (no single input device with digit keys)")
        #expect(captured.out.isEmpty)
    }

    @Test(
        "check's keypad flags",
        arguments: [
            (
                ["--keypad-device", "event3"],
                "check: --keypad-device: 'event3' is not an absolute path; use an input device such as /dev/input/by-id/usb-...-event-kbd"
            )
        ])
    func badFlags(arguments: [String], message: String) {
        EquivalenceCorpus.record(["check"] + arguments, files: [:], usageError: true)
        #expect(throws: ExitError.self) { _ = try CheckOptions.parse(arguments) }
        do {
            _ = try CheckOptions.parse(arguments)
        } catch {
            #expect(error.message == message)
            #expect(error.code == .usage)
        }
    }

    @Test func goodKeypadFlags() throws {
        let options = try CheckOptions.parse(["--keypad-device", "/dev/input/by-id/usb-kp-event-kbd", "--keys", "10"])
        #expect(options.keypadDevice == "/dev/input/by-id/usb-kp-event-kbd")
        #expect(options.keySeconds == 10)
    }
}
