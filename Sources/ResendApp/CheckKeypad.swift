import HAL
import HALLinux
import ResendConfig
import ResendCore

/// `check`'s GPIO matrix keypad part (`keypad.enabled` with `keypad.backend: "matrix"` in the
/// configuration file): where every row and column line is and who holds it; with `--keys
/// SECONDS`, a key test that prints every key pressed as it happens (`console.out`) and ends with
/// a finding naming the keys seen. The evdev backend has its own part.
func matrixKeypadCheck(_ options: CheckOptions, _ facts: CheckFacts, console: Console) -> [CheckFinding] {
    var findings: [CheckFinding] = []
    if let problem = options.configProblem {
        findings.append(.problem(.config, "configuration: \(problem); the keypad is not checked"))
        return findings
    }
    let keypad = options.config.keypad
    guard keypad.enabled, keypad.backend == .matrix else {
        if options.keySeconds != nil && !keypad.enabled && options.keypadDevice == nil {
            findings.append(
                .note(
                    "--keys: no keypad to test: keypad.enabled is not true in \(options.configPath) (an input device can be named with --keypad-device)"
                ))
        }
        return findings
    }
    var rows: [GPIOLineLocation] = []
    var columns: [GPIOLineLocation] = []
    for (index, name) in keypad.rows.enumerated() {
        let (finding, location) = matrixLineFinding(role: "keypad row \(index + 1)", name, facts)
        findings.append(finding)
        if let location { rows.append(location) }
    }
    for (index, name) in keypad.columns.enumerated() {
        let (finding, location) = matrixLineFinding(role: "keypad column \(index + 1)", name, facts)
        findings.append(finding)
        if let location { columns.append(location) }
    }
    guard let seconds = options.keySeconds else {
        if rows.count == keypad.rows.count && columns.count == keypad.columns.count {
            findings.append(.note("add --keys 10 to test the keypad's keys"))
        }
        return findings
    }
    guard rows.count == keypad.rows.count, columns.count == keypad.columns.count, let layout = keypad.layout else {
        findings.append(.note("keypad key test not run: a line is missing or held (see above)"))
        return findings
    }
    findings.append(matrixKeyTest(rows: rows, columns: columns, layout: layout, keypad: keypad, seconds: seconds, console: console))
    return findings
}

/// One keypad line: where it is and whether it is free (its location when it is).
private func matrixLineFinding(role: String, _ name: String, _ facts: CheckFacts) -> (CheckFinding, GPIOLineLocation?) {
    let spec = LineSpec(parsing: name) ?? .named(name)
    let subject = "\(role) \(spec.text)"
    let chips = facts.gpioScan.chips
    guard !chips.isEmpty else {
        let code = facts.gpioScan.failures.first.map { startupExitCode(for: $0.kind) } ?? .unavailable
        return (.problem(code, "\(subject): not checked, no GPIO chip could be read (see above)"), nil)
    }
    var found: (chip: GPIOChipInfo, line: GPIOLineInfo)?
    switch spec {
    case .named(let lineName):
        found = chips.lazy.compactMap { chip in chip.lines.first { $0.name == lineName }.map { (chip, $0) } }.first
    case .chipOffset(let chipNumber, let offset):
        if let chip = chips.first(where: { $0.path.hasSuffix("/gpiochip\(chipNumber)") }),
            let line = chip.lines.first(where: { $0.offset == offset })
        {
            found = (chip, line)
        }
    }
    guard let (chip, line) = found else {
        let searched = chips.map { $0.summary }.joined(separator: ", ")
        return (
            .problem(
                .unavailable,
                "\(subject): no such line; searched \(searched); list the lines with gpioinfo and name one in the configuration's keypad section"),
            nil
        )
    }
    let place = "line \(line.offset) of \(chip.path) [\(chip.label)]" + (line.name.map { " named \($0)" } ?? "")
    guard line.isUsed else {
        return (.ok("\(subject): \(place), free"), GPIOLineLocation(chipPath: chip.path, offset: line.offset, name: line.name))
    }
    let holder = line.consumer.map { "\"\($0)\"" } ?? "a kernel driver or another program"
    var advice = "stop the program holding it or choose another line"
    if line.consumer == defaultConsumer { advice = "resend-button itself holds it: is the service running? (sudo systemctl stop resend-button)" }
    return (.problem(.unavailable, "\(subject): \(place) is held by \(holder); \(advice)"), nil)
}

/// Requests the matrix, scans it as `run` does for `seconds` (SIGINT ends it early) and names the
/// keys pressed, each also printed as it is seen.
private func matrixKeyTest(
    rows: [GPIOLineLocation], columns: [GPIOLineLocation], layout: KeypadLayout,
    keypad: DeviceConfig.Keypad, seconds: Int, console: Console
) -> CheckFinding {
    do throws(HALError) {
        let lines = try GPIOMatrixLines(rows: rows, columns: columns)
        var source = try LinuxEventSource(button: nil)
        let matrix = try MatrixKeypadAttachment(lines: lines, layout: layout, diodes: keypad.diodes, settle: keypad.settle, source: &source)
        defer { matrix.stop() }
        console.out("keypad key test: press keys for \(seconds) s (Ctrl-C ends it)")
        let result = try keyTest(source: &source, clock: SystemClock(), seconds: seconds, debounceMs: keypad.debounceMs, print: console.out)
        return keyTestFinding(result, seconds: seconds, ambiguousScans: matrix.ambiguousScans)
    } catch {
        return .problem(startupExitCode(for: error.kind), "keypad key test: \(error.operation): \(describe(error))")
    }
}

/// What a key test saw: the keys pressed (debounced), in order, and whether it was stopped early.
struct KeyTestResult: Hashable, Sendable {
    var pressed: [Key] = []
    var stoppedEarly = false
}

/// Waits on `source` for `seconds`, feeding its `.key` inputs through a debouncer of
/// `debounceMs`; prints `key 5` for every debounced press. A `.stop` (SIGINT) ends it early.
func keyTest<Source: EventSource, Clock: MonotonicClock>(
    source: inout Source, clock: Clock, seconds: Int, debounceMs: Int, print: (String) -> Void
) throws(HALError) -> KeyTestResult {
    var keys = KeyDebouncer(window: .milliseconds(Int64(debounceMs)))
    var result = KeyTestResult()
    let end = clock.now() + .seconds(Int64(seconds))
    func report(_ events: [KeyEvent]) {
        for event in events where event.isPress {
            result.pressed.append(event.key)
            print("key " + keySymbol(event.key))
        }
    }
    while clock.now() < end {
        let inputs = try source.wait(until: earliest(end, keys.nextDeadline))
        for input in inputs {
            switch input {
            case .key(let event): report(keys.feed(event))
            case .stop: result.stoppedEarly = true
            default: break
            }
        }
        report(keys.advance(to: clock.now()))
        if result.stoppedEarly { break }
    }
    return result
}

/// The finding that ends the key test.
func keyTestFinding(_ result: KeyTestResult, seconds: Int, ambiguousScans: Int) -> CheckFinding {
    let span = result.stoppedEarly ? "stopped early" : "\(seconds) s"
    var ghosts = ""
    if ambiguousScans > 0 {
        ghosts =
            "; \(ambiguousScans) scan\(ambiguousScans == 1 ? " was" : "s were") ambiguous (three keys held on the corners of a rectangle without diodes): those presses were ignored"
    }
    guard !result.pressed.isEmpty else {
        return .note(
            "keypad key test (\(span)): no key seen; if you pressed some, check the wiring: the rows on keypad.rows and the columns on keypad.columns, in order"
                + ghosts)
    }
    let count = result.pressed.count
    return .ok(
        "keypad key test (\(span)): \(count) key\(count == 1 ? "" : "s") pressed: " + result.pressed.map(keySymbol).joined(separator: " ") + ghosts)
}

private func keySymbol(_ key: Key) -> String {
    key == .button ? "button" : String(decoding: [key.symbol], as: UTF8.self)
}
