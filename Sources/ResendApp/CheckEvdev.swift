import HAL
import HALLinux
import ResendConfig

/// `check`'s evdev part: the input devices with their names and whether they have digit keys, the
/// keypad device (`--keypad-device`) marked, and with `--keys SECONDS` a short key test on it (when it is the configured backend or named).
/// Prints the key test's prompt on `console.out` right away (the test blocks for that long).
func evdevCheck(_ options: CheckOptions, console: Console, directory: String = "/dev/input") -> [CheckFinding] {
    var devices = Discovery.inputDevices(directory: directory)
    if let configured = options.keypadDevice, !devices.contains(where: { $0.isNamed(configured) }),
        (try? FileType.target(of: configured)) != nil
    {
        devices.append(Discovery.inputDevice(path: configured))
    }
    var findings = inputDeviceFindings(devices, configured: options.keypadDevice)
    // `--keys` tests the matrix when that is the configured keypad (CheckKeypad.swift), else
    // the input device named by --keypad-device or keypad.device.
    guard let seconds = options.keySeconds, options.keypadDevice != nil || options.config.keypad.backend == .evdev,
        !(options.config.keypad.enabled && options.config.keypad.backend == .matrix)
    else { return findings }
    guard let path = keyTestDevice(devices, configured: options.keypadDevice) else {
        findings.append(.note("key test not run: name the keypad with --keypad-device (no single input device with digit keys)"))
        return findings
    }
    console.out("key test: press keys on \(path) for \(seconds) s (taken exclusively meanwhile)")
    findings.append(runKeyTest(path: path, seconds: seconds))
    return findings
}

/// One line per input device, and the keypad device's verdict. Pure.
func inputDeviceFindings(_ devices: [InputDeviceInfo], configured: String?) -> [CheckFinding] {
    var findings: [CheckFinding] = []
    if devices.isEmpty {
        findings.append(
            .note(
                "no input devices (/dev/input/event*): a USB keypad shows up when plugged in, a kernel keypad driver (matrix-keypad, gpio-keys) when its overlay is loaded"
            ))
    }
    for device in devices {
        let isKeypad = configured.map { device.isNamed($0) } ?? false
        var subject = "input device \(device.path)"
        if let name = device.name { subject += " \(jsonString(name))" }
        let names = device.links.map { link in link.split(separator: "/").suffix(2).joined(separator: "/") }
        if !names.isEmpty { subject += " (\(names.joined(separator: ", ")))" }
        if isKeypad { subject += " [keypad.device]" }
        if let error = device.error {
            let text = "\(subject): \(error.operation): \(describe(error))"
            if error.kind == .permission {
                let advice = inputAccessAdvice(path: device.path)
                findings.append(isKeypad ? .problem(.noPermission, "\(text); \(advice)") : .note("\(text); to list it: \(advice)"))
            } else {
                findings.append(isKeypad ? evdevProblem(error, subject: text) : .note(text))
            }
            continue
        }
        let keys = keyList(device.keys)
        if device.hasDigitKeys {
            findings.append(.ok("\(subject): digit keys (\(keys))"))
        } else if isKeypad {
            findings.append(
                .problem(
                    .unavailable,
                    "\(subject): no digit keys\(keys.isEmpty ? "" : " (only \(keys))"); a code cannot be typed on it: choose the keypad's device (ls -l /dev/input/by-id /dev/input/by-path)"
                ))
        } else {
            findings.append(.note("\(subject): no digit keys"))
        }
    }
    if let configured, !devices.contains(where: { $0.isNamed(configured) }) {
        findings.append(
            .problem(
                .unavailable,
                "keypad.device \(shown(configured)): not found; plugged in? run waits for it and takes it when it appears; the devices present are listed above"
            ))
    }
    return findings
}

private func evdevProblem(_ error: HALError, subject: String) -> CheckFinding {
    if error.kind == .unsupported {
        return .problem(.config, "\(subject): not an input event device; use a /dev/input/eventN node or a by-id/by-path link ending in -event-kbd")
    }
    if error.kind == .busy {
        return .problem(
            .unavailable, "\(subject): another program has taken it exclusively (another resend-button? sudo systemctl stop resend-button)")
    }
    return .problem(startupExitCode(for: error.kind), subject)
}

/// "0-9, *, #, A-D": the keypad's keys compactly.
func keyList(_ keys: [Key]) -> String {
    var parts: [String] = []
    if Key.digits.allSatisfy({ keys.contains($0) }) {
        parts.append("0-9")
    } else {
        parts += keys.filter { $0.digitValue != nil }.map { String(UnicodeScalar($0.symbol)) }
    }
    for key in [Key.star, .pound] where keys.contains(key) { parts.append(String(UnicodeScalar(key.symbol))) }
    let letters = [Key.a, .b, .c, .d].filter { keys.contains($0) }
    if letters.count == 4 {
        parts.append("A-D")
    } else {
        parts += letters.map { String(UnicodeScalar($0.symbol)) }
    }
    return parts.joined(separator: ", ")
}

/// The device the key test reads: the keypad device, else the only device with digit keys.
func keyTestDevice(_ devices: [InputDeviceInfo], configured: String?) -> String? {
    if let configured { return configured }
    let candidates = devices.filter { $0.error == nil && $0.hasDigitKeys }
    return candidates.count == 1 ? candidates[0].path : nil
}

/// Reads `path` (grabbed) for `seconds` and judges what came.
private func runKeyTest(path: String, seconds: Int) -> CheckFinding {
    let device: EvdevKeypad
    do throws(HALError) {
        device = try EvdevKeypad(path: path, grab: true)
    } catch {
        return keyTestFailure(error, path: path)
    }
    let clock = SystemClock()
    let end = clock.now() + .seconds(Int64(seconds))
    var codes: [EvdevKeypad.KeyCode] = []
    var gone = false
    while !gone {
        let left = end - clock.now()
        if left <= .zero { break }
        do throws(HALError) {
            guard try device.waitReadable(milliseconds: Int32(clamping: max(left.milliseconds, 1))) else { continue }
            if let read = try device.readKeyCodes() { codes += read } else { gone = true }
        } catch {
            return keyTestFailure(error, path: path)
        }
    }
    return keyTestFinding(codes, path: path, seconds: seconds, unplugged: gone)
}

private func keyTestFailure(_ error: HALError, path: String) -> CheckFinding {
    let subject = "key test on \(path): \(error.operation): \(describe(error))"
    if error.kind == .permission { return .problem(.noPermission, "\(subject); \(inputAccessAdvice(path: path))") }
    return evdevProblem(error, subject: subject)
}

/// The key test's line: the keypad's keys pressed (in order, each press once: autorepeat is not a
/// press), other key codes by number. Pure.
func keyTestFinding(_ codes: [EvdevKeypad.KeyCode], path: String, seconds: Int, unplugged: Bool = false) -> CheckFinding {
    var pressed: [String] = []
    var others: [UInt16] = []
    for code in codes where code.value == EvdevKeys.valuePressed {
        if let key = EvdevKeys.key(forCode: code.code) {
            pressed.append(String(UnicodeScalar(key.symbol)))
        } else if !others.contains(code.code) {
            others.append(code.code)
        }
    }
    let other = others.isEmpty ? "" : "; other key codes (not keypad keys, ignored by run): " + others.map(String.init).joined(separator: ", ")
    if unplugged {
        return .problem(
            .unavailable, "key test on \(path): the device went away (unplugged?) after \(pressed.count) key\(pressed.count == 1 ? "" : "s")\(other)")
    }
    if pressed.isEmpty {
        return .note("key test on \(path): no keypad key pressed in \(seconds) s\(other)")
    }
    return .ok("key test on \(path): \(pressed.count) key\(pressed.count == 1 ? "" : "s") pressed: \(pressed.joined(separator: " "))\(other)")
}
