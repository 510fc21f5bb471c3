import CharacterLCD
import HAL
import ResendCore

extension DeviceConfig {
    /// `keypad`: enter the received code on the device and have it verified. Off by default:
    /// then nothing of it applies and the device is the one button with its countdown.
    public struct Keypad: Hashable, Sendable {
        /// `keypad.enabled`.
        public var enabled = false
        /// `keypad.backend`: "matrix" (a key matrix on GPIO lines, scanned by this program, no
        /// kernel driver) or "evdev" (a Linux input device: the kernel's matrix-keypad or gpio-keys
        /// driver, or a USB numeric keypad).
        public var backend = Backend.matrix
        /// `keypad.rows`: matrix row lines (driven), top to bottom, by GPIO line name.
        public var rows = ["GPIO5", "GPIO6", "GPIO13", "GPIO19"]
        /// `keypad.columns`: matrix column lines (inputs with pull-ups), left to right.
        public var columns = ["GPIO12", "GPIO16", "GPIO20"]
        /// `keypad.keys`: the key map, one string per row, one character per column (`0`-`9`, `*`,
        /// `#`, `A`-`D`); nil: the common layout for 3 columns (`123`, `456`, `789`, `*0#`) or 4
        /// (`123A`, ..., `*0#D`).
        public var keys: [String]? = nil
        /// `keypad.diodes`: the keypad has a diode per key, so two keys held at once are never
        /// ambiguous (without diodes such a scan is rejected as a possible ghost key).
        public var diodes = false
        /// `keypad.settleMicroseconds`: how long a matrix scan waits after driving a row before it
        /// reads the columns (a column's pull-up charging the keypad's and the cable's capacitance).
        public var settleMicroseconds = 10
        /// `keypad.device`: the evdev device, e.g. "/dev/input/by-path/platform-keypad-event".
        public var device: String? = nil
        /// `keypad.debounceMs`: every keypad key's debounce window (the button keeps `button.debounceMs`).
        public var debounceMs = 20
        /// `keypad.sendKey`: the key that presses Send/Resend: "button" (the push-button) or a
        /// letter key "A"-"D" (a keypad alone runs the device).
        public var sendKey = Key.button
        /// `keypad.allowForgetfulState`: the operator accepts a state file on a medium that forgets
        /// at a power cut (tmpfs, an overlay root in RAM): code entry opens there, and a power cut
        /// forgets the wrong codes and the lockout (free tries). Off: code entry stays closed there.
        public var allowForgetfulState = false
        public var entry = Entry()
        public var code = Code()
        public var verify = Verify()
        public var output = Output()
        /// `keypad.texts`: every text of the code entry (`EntryTexts`), checked against the width
        /// and the ROM like `texts`.
        public var texts = EntryTexts()

        public init() {}

        public enum Backend: String, Hashable, Sendable {
            case matrix
            case evdev
        }

        public static let lineCountRange = 1...8
        public static let debounceRange = 1...1_000
        public static let settleRange = 1...1_000

        /// The matrix scan's settle time (`settleMicroseconds`).
        public var settle: TimeSpan { .microseconds(Int64(settleMicroseconds)) }
    }

    /// `keypad.entry`: the code-entry rules (`EntryConfig`).
    public struct Entry: Hashable, Sendable {
        /// `keypad.entry.minLength`, `maxLength`: digits `#` submits, and the field's size.
        public var minLength = 4
        public var maxLength = 8
        /// `keypad.entry.submitAtMaxLength`: the last digit submits, without `#`.
        public var submitAtMaxLength = false
        /// `keypad.entry.echo`: "masked", "shown", or "brief" (shown `echoMs`, then masked).
        public var echo = Echo.masked
        /// `keypad.entry.echoMs`: how long "brief" shows a digit.
        public var echoMs = 1_000
        /// `keypad.entry.holdToClearMs`: holding `*` this long clears the field.
        public var holdToClearMs = 1_000
        /// `keypad.entry.timeoutSeconds`: no key this long clears the field; nil: never.
        public var timeoutSeconds: Int? = 30
        /// `keypad.entry.validitySeconds`: how long after its send a code can be entered; nil: no
        /// limit (the backend's own expiry still applies).
        public var validitySeconds: Int? = 600
        /// `keypad.entry.maxAttempts`: wrong codes before a lockout; nil: unlimited (written
        /// `"unlimited"` in the file; null is refused).
        public var maxAttempts: Int? = 3
        /// `keypad.entry.lockoutSeconds`: the lockout of each round; the last repeats. Only an
        /// accepted code resets the rounds (a restart does not).
        public var lockoutSeconds = [30, 120, 600]
        /// `keypad.entry.successSeconds`: how long "Code accepted" shows.
        public var successSeconds = 3
        /// `keypad.entry.opensWithoutSend`: a key opens code entry without a send (a code from an
        /// authenticator app); `validitySeconds` does not apply, attempts and lockouts do.
        public var opensWithoutSend = false

        public init() {}

        public enum Echo: String, Hashable, Sendable {
            case masked
            case shown
            case brief
        }

        public static let lengthRange = 1...EntryConfig.maximumLength
        public static let millisecondsRange = 1...60_000
        public static let secondsRange = 1...EntryConfig.maximumSeconds
        public static let attemptsRange = 1...1_000
        /// The only way to allow unlimited wrong codes: `maxAttempts: "unlimited"`.
        public static let unlimitedAttempts = "unlimited"
        public static let lockoutCountRange = 1...16
    }

    /// `keypad.verify`: the command that checks a code, run like `send.command` (argv, no shell);
    /// the code goes to its standard input (one line), never to argv or the environment. Exit 0:
    /// accepted; 1: rejected; anything else or a time-out: an error ("Check failed").
    public struct Verify: CommandSection, Hashable, Sendable {
        /// `keypad.verify.command`: program and arguments; nil: none (which a keypad refuses).
        public var command: [String]? = nil
        /// `keypad.verify.timeoutSeconds`.
        public var timeoutSeconds = 10
        /// `keypad.verify.environment`: variables added to its environment.
        public var environment: [String: String] = [:]

        public init() {}
    }

    /// `keypad.code`: who makes and checks the code.
    public struct Code: Hashable, Sendable {
        /// `keypad.code.source`: "verify" (the default: the service makes the code, the verify
        /// command checks it) or "device" (this program draws a code from the kernel's random
        /// source at each send, gives it to the send command on standard input, and checks typed
        /// codes itself; no verify command).
        public var source = Source.verify
        /// `keypad.code.length`: the digits of a code made on the device (within
        /// keypad.entry.minLength...maxLength).
        public var length = 6

        public init() {}

        public enum Source: String, Hashable, Sendable {
            case verify
            case device
        }
    }

    /// `keypad.output`: a door strike or relay, pulsed on an accepted code; driven inactive at
    /// start and at stop, every pulse bounded by its deadline.
    public struct Output: Hashable, Sendable {
        /// `keypad.output.line`: the GPIO line's name; nil: no output.
        public var line: String? = nil
        /// `keypad.output.activeLow`: true when the relay or strike is on with the line low.
        public var activeLow = false
        /// `keypad.output.pulseMs`: how long it is active per accepted code.
        public var pulseMs = 3_000

        public init() {}

        public static let pulseRange = 1...600_000
    }

    // MARK: Reading

    /// Reads the `keypad` section; an enabled keypad adds the GPIO lines it takes (rows, columns,
    /// output line) to `lineOwners`, which the caller checks once for a line used twice.
    static func readKeypad(
        _ keypad: ConfigSection, config: DeviceConfig, lineOwners: inout [(line: String, key: String)], reader: ConfigReader
    ) -> Keypad {
        var result = Keypad()
        if let enabled = keypad.bool("enabled") { result.enabled = enabled }
        if let backend = keypad.choice("backend", options: [("matrix", Keypad.Backend.matrix), ("evdev", .evdev)]) {
            result.backend = backend
        }
        let lineCounts = Keypad.lineCountRange
        if let rows = keypad.value("rows") {
            if let list = readLines(rows, at: keypad.keyPath("rows"), reader: reader, what: "row") { result.rows = list }
        }
        if let columns = keypad.value("columns") {
            if let list = readLines(columns, at: keypad.keyPath("columns"), reader: reader, what: "column") { result.columns = list }
        }
        var keysGiven = false
        if let keys = keypad.value("keys"), keys != .null {
            keysGiven = true
            result.keys = readKeyMap(keys, at: keypad.keyPath("keys"), rows: result.rows.count, columns: result.columns.count, reader: reader)
        }
        if let diodes = keypad.bool("diodes") { result.diodes = diodes }
        if let settle = keypad.integer("settleMicroseconds", range: Keypad.settleRange, unit: "whole microseconds") {
            result.settleMicroseconds = settle
        }
        if let device = keypad.optionalString(
            "device", what: "an input device path such as \"/dev/input/by-path/platform-keypad-event\"", allowEmpty: false)
        {
            if device.hasPrefix("/") && !device.hasSuffix("/") {
                result.device = device
            } else {
                reader.report(
                    keypad.keyPath("device"),
                    "\(quoted(device)) is not an absolute path; allowed: null or a path such as \"/dev/input/by-id/usb-...-event-kbd\"")
            }
        }
        if let debounce = keypad.integer("debounceMs", range: Keypad.debounceRange, unit: "whole milliseconds") { result.debounceMs = debounce }
        if let key = keypad.choice("sendKey", options: [("button", Key.button), ("A", .a), ("B", .b), ("C", .c), ("D", .d)]) {
            result.sendKey = key
        }
        if let allow = keypad.bool("allowForgetfulState") { result.allowForgetfulState = allow }

        let entry = keypad.section("entry")
        result.entry = readEntry(entry, reader: reader)
        entry.finish()

        let code = keypad.section("code")
        if let source = code.choice("source", options: [("verify", Code.Source.verify), ("device", .device)]) { result.code.source = source }
        if let length = code.integer("length", range: Entry.lengthRange, unit: "a number of digits") { result.code.length = length }
        code.finish()

        let texts = keypad.section("texts")
        for (key, placeholder, _, set) in entryTextKeys {
            guard let text = texts.string(key, what: "a text for the display") else { continue }
            var problem: String?
            if let placeholder {
                let count = occurrences(of: placeholder, in: text)
                if count != 1 { problem = "\(quoted(text)) needs exactly one \(placeholder), found \(count)" }
            }
            if problem == nil, !config.display.isOLED, let rom = textROMProblem(text, rom: config.lcd.rom, romSetting: "lcd.rom") { problem = rom }
            if let problem {
                reader.report(texts.keyPath(key), problem)
            } else {
                set(&result.texts, text)
            }
        }
        texts.finish()

        let verify = keypad.section("verify")
        readCommandSection(verify, into: &result.verify, reader: reader)
        verify.finish()

        let output = keypad.section("output")
        result.output.line = output.optionalString("line", what: "a GPIO line name such as \"GPIO26\"", allowEmpty: false)
        if let activeLow = output.bool("activeLow") { result.output.activeLow = activeLow }
        if let pulse = output.integer("pulseMs", range: Output.pulseRange, unit: "whole milliseconds") { result.output.pulseMs = pulse }
        output.finish()

        // What only matters when the keypad is on.
        guard result.enabled else { return result }
        let columns = config.lcd.geometry.columns
        let fieldWidth = result.texts.fieldPrefix.count + result.entry.maxLength
        if result.entry.minLength > result.entry.maxLength {
            reader.report(
                entry.keyPath("minLength"),
                "\(result.entry.minLength) is more than keypad.entry.maxLength (\(result.entry.maxLength)); allowed: 1 to keypad.entry.maxLength")
        } else if fieldWidth > columns {
            reader.report(
                entry.keyPath("maxLength"),
                "\(result.entry.maxLength) digits and the field's prefix need \(fieldWidth) columns; the display has \(columns) (lcd.geometry \(quoted(config.lcd.geometry.name))); allowed: 1 to \(max(1, columns - result.texts.fieldPrefix.count))"
            )
        } else {
            // Anything else the flow would refuse (a text too wide at the longest lockout, say).
            // (The code's own rules are reported below, by key.)
            for problem in result.entryConfig(texts: result.texts, columns: columns).problems(columns: columns)
            where !problem.hasPrefix("codeLength") && !problem.hasPrefix("opensWithoutSend") {
                reader.report(entry.path, problem + " (lcd.geometry \(quoted(config.lcd.geometry.name)))")
            }
        }
        switch result.code.source {
        case .verify:
            if result.verify.command == nil && verify.value("command").map({ $0 == .null }) ?? true {
                reader.report(
                    verify.keyPath("command"),
                    "is null, but keypad.enabled is true: a keypad needs a command that checks the code; allowed: a list of strings, e.g. [\"/usr/local/bin/check-code\"] (the code arrives on its standard input), or keypad.code.source \"device\""
                )
            }
        case .device:
            if result.verify.command != nil {
                reader.report(
                    verify.keyPath("command"),
                    "is set, but keypad.code.source is \"device\": the program checks the code it made itself; allowed: null (remove it)")
            }
            if config.send.command == nil {
                reader.report(
                    code.keyPath("source"),
                    "is \"device\", but send.command is null: a code made on the device goes to the send command's standard input; allowed: set send.command, or \"verify\""
                )
            }
            if result.entry.opensWithoutSend {
                reader.report(
                    entry.keyPath("opensWithoutSend"),
                    "is true, but keypad.code.source is \"device\": a code made on the device must be sent to be typed; allowed: false, or keypad.code.source \"verify\" (e.g. an authenticator app checked by the verify command)"
                )
            }
            if result.code.length < result.entry.minLength || result.code.length > result.entry.maxLength {
                reader.report(
                    code.keyPath("length"),
                    "\(result.code.length) is outside keypad.entry.minLength...maxLength (\(result.entry.minLength)...\(result.entry.maxLength)); allowed: a length the field takes"
                )
            }
        }
        switch result.backend {
        case .matrix:
            guard lineCounts.contains(result.rows.count), lineCounts.contains(result.columns.count) else { break }
            if !keysGiven && result.layout == nil {
                reader.report(
                    keypad.keyPath("keys"),
                    "is null, but the common layouts are 4 rows of 3 or 4 columns, not \(result.rows.count)x\(result.columns.count); allowed: a key map with one string per row, e.g. [\"123\", \"456\", \"789\", \"*0#\"]"
                )
            }
            if result.sendKey != .button, let layout = result.layout, !layout.keys.joined().contains(result.sendKey) {
                reader.report(
                    keypad.keyPath("sendKey"),
                    "\(quoted(String(decoding: [result.sendKey.symbol], as: UTF8.self))) is not on the keypad (keypad.keys); allowed: \"button\" or a letter key the keypad has"
                )
            }
            for (index, line) in result.rows.enumerated() { lineOwners.append((line, "keypad.rows[\(index)]")) }
            for (index, line) in result.columns.enumerated() { lineOwners.append((line, "keypad.columns[\(index)]")) }
            if let line = result.output.line { lineOwners.append((line, "keypad.output.line")) }
        case .evdev:
            if result.device == nil {
                reader.report(
                    keypad.keyPath("device"),
                    "is null, but keypad.backend is \"evdev\"; allowed: the input device's path, e.g. \"/dev/input/by-id/usb-...-event-kbd\" (see ls -l /dev/input/by-id /dev/input/by-path)"
                )
            }
            if let line = result.output.line { lineOwners.append((line, "keypad.output.line")) }
        }
        return result
    }

    /// Every GPIO line once: two functions on one line would fight over it. Each later owner of a
    /// line is reported at its key, naming the first.
    static func reportSharedLines(_ owners: [(line: String, key: String)], reader: ConfigReader) {
        var seen: [String: String] = [:]
        for owner in owners {
            if let first = seen[owner.line] {
                reader.report(path(owner.key), "\(quoted(owner.line)) is also \(first); allowed: a GPIO line of its own")
            } else {
                seen[owner.line] = owner.key
            }
        }
    }

    /// "keypad.rows[2]" as path components.
    private static func path(_ dotted: String) -> [JSONPathComponent] {
        var components: [JSONPathComponent] = []
        for part in dotted.split(separator: ".") {
            if let open = part.firstIndex(of: "["), let index = Int(part[part.index(after: open)...].dropLast()) {
                components.append(.key(String(part[..<open])))
                components.append(.index(index))
            } else {
                components.append(.key(String(part)))
            }
        }
        return components
    }

    /// A list of 1 to 8 distinct GPIO line names.
    private static func readLines(_ value: JSONValue, at path: [JSONPathComponent], reader: ConfigReader, what: String) -> [String]? {
        let counts = Keypad.lineCountRange
        let allowed = "a list of \(counts.lowerBound) to \(counts.upperBound) GPIO line names, e.g. [\"GPIO5\", \"GPIO6\", \"GPIO13\", \"GPIO19\"]"
        guard let items = reader.items(value, at: path, counts: counts, allowed: allowed) else { return nil }
        var lines: [String] = []
        for (index, item) in items.enumerated() {
            guard let line = reader.string(item, at: path + [.index(index)], what: "a GPIO line name (one \(what))", allowEmpty: false) else {
                continue
            }
            if let first = lines.firstIndex(of: line) {
                reader.report(path + [.index(index)], "\(quoted(line)) is also [\(first)]; allowed: each \(what) on a line of its own")
            }
            lines.append(line)
        }
        return lines.count == items.count && Set(lines).count == lines.count ? lines : nil
    }

    /// One string per row, one key character per column, every key at most once.
    private static func readKeyMap(_ value: JSONValue, at path: [JSONPathComponent], rows: Int, columns: Int, reader: ConfigReader) -> [String]? {
        let allowed =
            "null or one string per row (\(rows)), each with one key per column (\(columns)) of 0-9, *, #, A-D, e.g. [\"123\", \"456\", \"789\", \"*0#\"]"
        guard case .array(let items) = value else {
            reader.report(path, "expected \(allowed), got \(describe(value))")
            return nil
        }
        guard items.count == rows else {
            reader.report(path, "the list has \(items.count) rows, keypad.rows has \(rows); allowed: \(allowed)")
            return nil
        }
        var map: [String] = []
        var seen: Set<Key> = []
        var valid = true
        for (index, item) in items.enumerated() {
            guard let text = reader.string(item, at: path + [.index(index)], what: "a row of keys", allowEmpty: false) else {
                valid = false
                continue
            }
            let bytes = Array(text.utf8)
            guard bytes.count == columns, text.unicodeScalars.count == columns else {
                reader.report(path + [.index(index)], "\(quoted(text)) has \(text.count) keys, keypad.columns has \(columns); allowed: \(allowed)")
                valid = false
                continue
            }
            for byte in bytes {
                guard let key = Key(symbol: byte) else {
                    reader.report(
                        path + [.index(index)],
                        "\(quoted(text)) has \(quoted(String(decoding: [byte], as: UTF8.self))), which is no key; allowed: 0-9, *, #, A-D")
                    valid = false
                    break
                }
                if !seen.insert(key).inserted {
                    reader.report(
                        path + [.index(index)],
                        "\(quoted(text)) repeats \(quoted(String(decoding: [key.symbol], as: UTF8.self))); allowed: every key once")
                    valid = false
                    break
                }
            }
            map.append(text)
        }
        return valid ? map : nil
    }

    /// The `keypad.texts` keys, the placeholder each needs exactly once (nil: none), and the
    /// `EntryTexts` fields they read and set, in the order of `EntryTexts`.
    static var entryTextKeys: [(key: String, placeholder: String?, get: (EntryTexts) -> String, set: (inout EntryTexts, String) -> Void)] {
        [
            ("promptTitle", nil, { $0.promptTitle }, { $0.promptTitle = $1 }),
            ("fieldPrefix", nil, { $0.fieldPrefix }, { $0.fieldPrefix = $1 }),
            ("verifyingTitle", nil, { $0.verifyingTitle }, { $0.verifyingTitle = $1 }),
            ("acceptedTitle", nil, { $0.acceptedTitle }, { $0.acceptedTitle = $1 }),
            ("acceptedLabel", nil, { $0.acceptedLabel }, { $0.acceptedLabel = $1 }),
            ("wrongCode", EntryTexts.countPlaceholder, { $0.wrongCode }, { $0.wrongCode = $1 }),
            ("wrongCodeUnlimited", nil, { $0.wrongCodeUnlimited }, { $0.wrongCodeUnlimited = $1 }),
            ("tooShort", nil, { $0.tooShort }, { $0.tooShort = $1 }),
            ("tooLong", EntryTexts.countPlaceholder, { $0.tooLong }, { $0.tooLong = $1 }),
            ("verifyFailedTitle", nil, { $0.verifyFailedTitle }, { $0.verifyFailedTitle = $1 }),
            ("verifyTimedOutTitle", nil, { $0.verifyTimedOutTitle }, { $0.verifyTimedOutTitle = $1 }),
            ("tryLaterTitle", nil, { $0.tryLaterTitle }, { $0.tryLaterTitle = $1 }),
            ("lockedTitle", nil, { $0.lockedTitle }, { $0.lockedTitle = $1 }),
            ("lockedLabel", Texts.secondsPlaceholder, { $0.lockedLabel }, { $0.lockedLabel = $1 }),
            ("expiredTitle", nil, { $0.expiredTitle }, { $0.expiredTitle = $1 }),
            ("expiredLabel", nil, { $0.expiredLabel }, { $0.expiredLabel = $1 }),
            ("closedTitle", nil, { $0.closedTitle }, { $0.closedTitle = $1 }),
            ("closedLabel", nil, { $0.closedLabel }, { $0.closedLabel = $1 }),
        ]
    }

    /// How often `needle` occurs in `text` (not overlapping).
    private static func occurrences(of needle: String, in text: String) -> Int {
        let bytes = Array(text.utf8)
        let pattern = Array(needle.utf8)
        var count = 0
        var index = 0
        while index + pattern.count <= bytes.count {
            if bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                count += 1
                index += pattern.count
            } else {
                index += 1
            }
        }
        return count
    }

    private static func readEntry(_ entry: ConfigSection, reader: ConfigReader) -> Entry {
        var result = Entry()
        if let value = entry.integer("minLength", range: Entry.lengthRange, unit: "a number of digits") { result.minLength = value }
        if let value = entry.integer("maxLength", range: Entry.lengthRange, unit: "a number of digits") { result.maxLength = value }
        if let value = entry.bool("submitAtMaxLength") { result.submitAtMaxLength = value }
        if let value = entry.choice("echo", options: [("masked", Entry.Echo.masked), ("shown", .shown), ("brief", .brief)]) { result.echo = value }
        if let value = entry.integer("echoMs", range: Entry.millisecondsRange, unit: "whole milliseconds") { result.echoMs = value }
        if let value = entry.integer("holdToClearMs", range: Entry.millisecondsRange, unit: "whole milliseconds") { result.holdToClearMs = value }
        if entry.value("timeoutSeconds") != nil {
            result.timeoutSeconds = entry.optionalInteger("timeoutSeconds", range: Entry.secondsRange, unit: "null or whole seconds")
        }
        if entry.value("validitySeconds") != nil {
            result.validitySeconds = entry.optionalInteger("validitySeconds", range: Entry.secondsRange, unit: "null or whole seconds")
        }
        if let value = entry.value("maxAttempts") {
            // Unlimited guesses only when the file says so in words: a null (or a key left
            // empty by an edit) must not open the door to brute force.
            switch value {
            case .string(Entry.unlimitedAttempts):
                result.maxAttempts = nil
            case .null:
                reader.report(
                    entry.keyPath("maxAttempts"),
                    "is null; allowed: a number of wrong codes from \(Entry.attemptsRange.lowerBound) to \(Entry.attemptsRange.upperBound) before a lockout, or \"\(Entry.unlimitedAttempts)\" to allow unlimited guesses on purpose"
                )
            case .integer, .number:
                if let attempts = entry.integer("maxAttempts", range: Entry.attemptsRange, unit: "a number of wrong codes") {
                    result.maxAttempts = attempts
                }
            default:
                reader.report(
                    entry.keyPath("maxAttempts"),
                    "expected a number of wrong codes from \(Entry.attemptsRange.lowerBound) to \(Entry.attemptsRange.upperBound) or \"\(Entry.unlimitedAttempts)\", got \(describe(value))"
                )
            }
        }
        if let value = entry.value("lockoutSeconds") {
            if let list = readLockouts(value, at: entry.keyPath("lockoutSeconds"), reader: reader) { result.lockoutSeconds = list }
        }
        if let value = entry.integer("successSeconds", range: 1...60, unit: "whole seconds") { result.successSeconds = value }
        if let value = entry.bool("opensWithoutSend") { result.opensWithoutSend = value }
        return result
    }

    private static func readLockouts(_ value: JSONValue, at path: [JSONPathComponent], reader: ConfigReader) -> [Int]? {
        DeviceConfig.readSecondsList(
            value, at: path, reader: reader, range: Entry.secondsRange,
            counts: Entry.lockoutCountRange, noun: "lockouts", example: "[30, 120, 600]")
    }
}

extension DeviceConfig.Keypad {
    /// The entry rules as `CodeEntry` takes them (with `texts`), the output pulse only with an
    /// output line.
    public func entryConfig(texts: EntryTexts, columns: Int = EntryConfig().columns) -> EntryConfig {
        var config = EntryConfig()
        config.columns = columns
        config.minLength = entry.minLength
        config.maxLength = entry.maxLength
        config.submitAtMaxLength = entry.submitAtMaxLength
        switch entry.echo {
        case .masked: config.echo = .masked
        case .shown: config.echo = .shown
        case .brief: config.echo = .shownBriefly(.milliseconds(Int64(entry.echoMs)))
        }
        config.holdToClear = .milliseconds(Int64(entry.holdToClearMs))
        config.entryTimeout = entry.timeoutSeconds.map { .seconds(Int64($0)) }
        config.validity = entry.validitySeconds.map { .seconds(Int64($0)) }
        config.maxAttempts = entry.maxAttempts
        config.lockouts = entry.lockoutSeconds.map { .seconds(Int64($0)) }
        config.successDuration = .seconds(Int64(entry.successSeconds))
        config.pulse = output.line == nil ? nil : .milliseconds(Int64(output.pulseMs))
        config.texts = texts
        config.codeMadeOnDevice = code.source == .device
        config.codeLength = code.length
        config.opensWithoutSend = entry.opensWithoutSend
        return config
    }

    /// The key bindings: `sendKey` presses Send/Resend.
    public var keyBindings: KeyBindings { KeyBindings(send: [sendKey]) }

    /// The matrix's key map: `keys`, or the common layout for 4 rows of 3 or 4; nil when neither
    /// applies (the configuration check reports it).
    public var layout: KeypadLayout? {
        if let keys {
            return KeypadLayout(keys: keys.map { row in row.utf8.compactMap { Key(symbol: $0) } })
        }
        guard rows.count == 4 else { return nil }
        switch columns.count {
        case 3: return .threeByFour
        case 4: return .fourByFour
        default: return nil
        }
    }

    /// For `config check`: "keypad matrix 4x3, settle 10 us, send key button, verify /usr/local/bin/check-code (timeout 10 s), output GPIO26 3000 ms".
    var summary: String {
        var text = "keypad "
        switch backend {
        case .matrix: text += "matrix \(rows.count)x\(columns.count)" + (diodes ? " with diodes" : "") + ", settle \(settleMicroseconds) us"
        case .evdev: text += "evdev \(device ?? "-")"
        }
        text += ", send key " + (sendKey == .button ? "button" : String(decoding: [sendKey.symbol], as: UTF8.self))
        if code.source == .device {
            text += ", code made on the device (\(code.length) digits, checked here)"
        } else {
            text += ", verify " + (verify.command.map { "\($0[0]) (timeout \(verify.timeoutSeconds) s)" } ?? "none")
        }
        if entry.opensWithoutSend { text += ", entry opens without a send" }
        text += ", output " + (output.line.map { "\($0) \(output.pulseMs) ms" } ?? "none")
        // What a guesser faces: the code space and the attempts before each lockout.
        let lengths = entry.minLength == entry.maxLength ? "\(entry.maxLength)" : "\(entry.minLength)-\(entry.maxLength)"
        let space = entry.minLength == entry.maxLength ? "10^\(entry.maxLength)" : "10^\(entry.minLength) to 10^\(entry.maxLength)"
        text += ", code \(lengths) digits (\(space) codes)"
        if let attempts = entry.maxAttempts {
            text += ", \(attempts) wrong codes then lockouts of \(entry.lockoutSeconds.map(String.init).joined(separator: "/")) s"
        } else {
            text += ", UNLIMITED wrong codes (no lockout)"
        }
        return text
    }
}
