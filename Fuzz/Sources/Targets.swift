import CharacterLCD
import HAL
import HALMock
import ResendApp
import ResendConfig
import ResendCore
import ResendDevice
import ResendSimulator

/// The text of an input: its bytes as UTF-8, invalid sequences replaced (as the program reads files).
func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// A console that reads nothing from the file system and prints nothing.
func quietConsole(file: String? = nil) -> Console {
    Console(out: { _ in }, err: { _ in }, readFile: { _ in file }, readConfig: { _ in file.map { .text($0) } ?? .missing })
}

/// The configuration file: the entry point of `config check FILE`, on the input's bytes as the
/// file's (not UTF-8 included: the reader gives those a line and column).
func fuzzConfig(_ bytes: [UInt8]) {
    var failed: ExitError?
    let console = Console(
        out: { _ in }, err: { _ in }, readFile: { _ in nil }, readConfig: { _ in .missing }, readText: { _, _, _ in .bytes(bytes) })
    do throws(ExitError) {
        try runConfigCommand(["check", "fuzz.json5"], console: console)
    } catch {
        failed = error
    }
    if let failed {
        precondition(failed.code == .config, "config check: a bad file must exit 78, got \(failed.code.rawValue): \(failed.message)")
        precondition(!failed.message.isEmpty, "config check: an error without a message")
    }
}

/// The headless script: parsed, and when it is short, run on virtual time with a scripted send
/// command and a resend policy (cooldowns, cap), as `simulate --headless` would.
func fuzzScript(_ bytes: [UInt8]) {
    let script: [ScriptItem]
    do throws(ExitError) {
        script = try parseScript(text(bytes), command: "simulate")
    } catch {
        precondition(error.code == .usage && !error.message.contains("\n"), "script: one usage line, got \(error.message)")
        return
    }
    guard script.count <= 40 else { return }
    var settings = BehaviourSettings()
    settings.durationSeconds = 5
    var services = SimulationServices()
    services.mockSend = [.succeeds(after: .milliseconds(300)), .init(after: .seconds(2), .exited(code: 1))]
    services.policy = ResendPolicy(cooldowns: [.seconds(3), .seconds(7)], cap: .init(maxSends: 3, window: .seconds(30)))
    services.virtualWallStart = WallTime(millisecondsSinceEpoch: 1_764_547_200_000)
    // Key items need the keypad: such a script runs with one (a short lockout and validity, a
    // scripted verify command and an output line), as `simulate --config` with keypad.enabled.
    if script.contains(where: { $0.needsKeypad }) || bytesHaveKeypadFlag(bytes) {
        var keypad = DeviceConfig.Keypad()
        keypad.enabled = true
        keypad.entry.maxAttempts = 2
        keypad.entry.lockoutSeconds = [2, 4]
        keypad.entry.validitySeconds = 20
        keypad.entry.echo = .brief
        keypad.output.line = "GPIO26"
        keypad.output.pulseMs = 500
        services.keypad = keypad
        services.mockVerify = [
            .init(after: .milliseconds(200), .exited(code: 1)), .init(after: .milliseconds(100), .exited(code: 0)),
            .init(after: .seconds(3), .timedOut(after: .seconds(3), killed: false)),
        ]
    }
    var violations: [String] = []
    do throws(ExitError) {
        try runHeadless(settings: settings, services: services, script: script, events: true) { line in
            if line.hasPrefix("violation") { violations.append(line) }
        }
    } catch {
        preconditionFailure("script: the simulation failed: \(error.message)")
    }
    precondition(violations.isEmpty, "script: LCD protocol violations: \(violations)")
}

/// A script whose first byte is odd also runs with the keypad (button items only, too).
func bytesHaveKeypadFlag(_ bytes: [UInt8]) -> Bool { (bytes.first ?? 0) & 1 == 1 }

/// The state file: decoded; what decodes survives a round trip and resumes at any wall time.
func fuzzState(_ bytes: [UInt8]) {
    let state: PersistedState
    do throws(StateFormatError) {
        state = try PersistedState(decoding: bytes)
    } catch {
        return
    }
    do throws(StateFormatError) {
        let again = try PersistedState(decoding: state.encoded())
        precondition(again == state, "state: encoded() does not decode to the same state")
    } catch {
        preconditionFailure("state: encoded() is unreadable: \(error.message)")
    }
    let policies = [
        ResendPolicy.off,
        ResendPolicy(
            cooldowns: [.seconds(60), .seconds(86_400)], runResetAfter: .seconds(604_800), cap: .init(maxSends: 2, window: .seconds(86_400))),
    ]
    let wallTimes = [Int64.min, -1, 0, 1_764_547_200_000_000_000, Int64.max].map(WallTime.init(nanosecondsSinceEpoch:))
    let instants = [Instant.origin, Instant(nanoseconds: Int64.max / 2), Instant(nanoseconds: Int64.max)]
    for policy in policies {
        let config = ControllerConfig(duration: .seconds(86_400), policy: policy)
        for wallNow in wallTimes {
            for monotonicNow in instants {
                let snapshot = state.resumed(monotonicNow: monotonicNow, wallNow: wallNow, config: config)
                precondition(snapshot.countdownSeconds <= config.longestCooldownSeconds, "state: resumed a countdown longer than the config allows")
                _ = PersistedState(snapshot, monotonicNow: monotonicNow, wallNow: wallNow).encoded()
            }
        }
    }
    // The keypad's entry object: resumed at any wall time, never a lockout longer than configured.
    guard let entry = state.entry else { return }
    var limited = EntryConfig()
    limited.lockouts = [.seconds(86_400)]
    for config in [EntryConfig(), limited] {
        for wallNow in wallTimes {
            for monotonicNow in instants {
                let snapshot = entry.resumed(monotonicNow: monotonicNow, wallNow: wallNow, config: config)
                precondition(snapshot.lockoutSeconds <= config.longestLockoutSeconds, "state: resumed a lockout longer than the config allows")
                // At most maxAttempts: a count at the limit is a last try written before its check whose
                // answer never came (a power cut); CodeEntry starts that round's lockout from it.
                precondition(snapshot.failures <= (config.maxAttempts ?? 0), "state: resumed more wrong codes than allowed")
                _ = PersistedState(entry: PersistedEntryState(snapshot, monotonicNow: monotonicNow, wallNow: wallNow)).encoded()
            }
        }
    }
}

/// The command line: arguments split from the input at NUL bytes, parsed as `runCommandLine`
/// does (the configuration and script files are absent), nothing run.
func fuzzCommandLine(_ bytes: [UInt8]) {
    let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map { text(Array($0)) }
    do throws(ExitError) {
        if case .config(let rest) = try parseCommandLine(arguments, console: quietConsole()) {
            try runConfigCommand(rest, console: quietConsole())
        }
    } catch {
        precondition(error.code != .ok, "cli: an error with exit code 0")
        for line in error.message.split(separator: "\n") {
            precondition(!line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "cli: a raw control character in \(line)")
        }
    }
}

/// The LCD driver and the emulator: random frames (any character codes, short rows), glyphs and
/// backlight changes on a random geometry; the emulated screen must show exactly each frame, with
/// no protocol violation.
func fuzzDriverAndEmulator(_ bytes: [UInt8]) {
    var input = bytes[...]
    func next() -> UInt8? { input.popFirst() }
    guard let setup = next() else { return }
    let geometry = LCDGeometry.supported[Int(setup) % LCDGeometry.supported.count]
    let clock = ManualClock()
    let bus = RecordingI2CBus(clock: clock, supportsMultiByteWrite: setup & 0x80 != 0, blocking: true)
    let emulator = HD44780Emulator(columns: geometry.columns, rows: geometry.rows, clock: clock)
    let address = I2CAddress(constant: 0x27)
    bus.attach(emulator, at: address)
    var lcd = HD44780(port: PCF8574Backpack(bus: bus, address: address), delay: VirtualDelay(clock: clock), geometry: geometry)
    do throws(HALError) {
        try lcd.initialize()
        while let operation = next() {
            switch operation % 8 {
            case 0:
                try lcd.setBacklight(operation & 0x08 != 0)
            case 1:
                var rows: [UInt8] = []
                for _ in 0..<8 { rows.append((next() ?? 0) & 0x1F) }
                try lcd.defineGlyph(operation >> 5, rows: rows)
            default:
                var frame: [[UInt8]] = []
                let rowCount = Int(next() ?? 0) % (geometry.rows + 1)
                for _ in 0..<rowCount {
                    let length = Int(next() ?? 0) % (geometry.columns + 1)
                    var row: [UInt8] = []
                    for _ in 0..<length { row.append(next() ?? 0x20) }
                    frame.append(row)
                }
                try lcd.render(frame)
                for row in 0..<geometry.rows {
                    for column in 0..<geometry.columns {
                        let expected = row < frame.count && column < frame[row].count ? frame[row][column] : 0x20
                        let shown = emulator.ddramAddress(row: row, column: column).map(emulator.ddramCode(at:))
                        precondition(shown == expected, "lcd: row \(row) column \(column) shows \(String(describing: shown)), expected \(expected)")
                    }
                }
            }
            precondition(emulator.violations.isEmpty, "lcd: protocol violations: \(emulator.violations)")
        }
    } catch {
        preconditionFailure("lcd: the emulated bus failed: \(error.operation)")
    }
    precondition(emulator.violations.isEmpty, "lcd: protocol violations: \(emulator.violations)")
}
