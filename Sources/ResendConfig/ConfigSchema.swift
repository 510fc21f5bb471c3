import CharacterLCD
import HAL
import ResendCore

extension DeviceConfig {
    /// The file's `texts` keys and the `Texts` fields they read and set, in the order of `Texts`
    /// (closures, not key paths: Embedded Swift has no key paths).
    static var textKeys: [(key: String, get: (Texts) -> String, set: (inout Texts, String) -> Void)] {
        [
            ("title", { $0.title }, { $0.title = $1 }),
            ("sendLabel", { $0.sendLabel }, { $0.sendLabel = $1 }),
            ("sendingTitle", { $0.sendingTitle }, { $0.sendingTitle = $1 }),
            ("sentTitle", { $0.sentTitle }, { $0.sentTitle = $1 }),
            ("countdownLabel", { $0.countdownLabel }, { $0.countdownLabel = $1 }),
            ("resendLabel", { $0.resendLabel }, { $0.resendLabel = $1 }),
            ("failedTitle", { $0.failedTitle }, { $0.failedTitle = $1 }),
            ("tryLaterTitle", { $0.tryLaterTitle }, { $0.tryLaterTitle = $1 }),
            ("stoppedTitle", { $0.stoppedTitle }, { $0.stoppedTitle = $1 }),
            ("stoppedLabel", { $0.stoppedLabel }, { $0.stoppedLabel = $1 }),
            (lockoutLabelKey, { $0.lockoutLabel }, { $0.lockoutLabel = $1 }),
        ]
    }
    static let lockoutLabelKey = "lockoutLabel"

    /// Every key of the file, sections included, in schema order (`button`, `button.line`, ...).
    public static let schema: [ConfigSchemaKey] = {
        let reader = ConfigReader(fullSchema: nil)
        _ = read(.object([]), reader: reader)
        return reader.schema
    }()

    /// The keys that hold values (not sections): what the example file must show.
    public static var valueKeyPaths: [String] { schema.filter { !$0.isSection }.map { $0.path } }

    /// Reads `tree` against the schema: the configuration with every valid value set (defaults
    /// elsewhere); problems go to `reader`.
    static func read(_ tree: JSONValue, reader: ConfigReader) -> DeviceConfig {
        var config = DeviceConfig()
        guard case .object = tree else {
            reader.report([], "expected an object { ... } at the top level, got \(describe(tree))")
            return config
        }
        let root = ConfigSection(reader: reader, path: [], value: tree)

        let button = root.section("button")
        if let line = button.string("line", what: "a GPIO line name such as \"GPIO17\" (see gpioinfo)", allowEmpty: false) {
            // The rules of --button (`lineNameProblem`): no spaces or control characters.
            if let problem = lineNameProblem(line) {
                reader.report(button.keyPath("line"), "\(jsonString(line)) \(problem)")
            } else {
                config.button.line = line
            }
        }
        if let bias = button.choice("bias", options: GPIOBias.choices) { config.button.bias = bias }
        if let activeLow = button.bool("activeLow") { config.button.activeLow = activeLow }
        if let debounce = button.integer("debounceMs", range: Button.debounceRange, unit: "whole milliseconds") {
            config.button.debounceMs = debounce
        }
        if let mode = button.choice("debounceMode", options: DebounceMode.choices) { config.button.debounceMode = mode }
        config.button.kernelDebounceMs = button.optionalInteger(
            "kernelDebounceMs", range: Button.kernelDebounceRange, unit: "null or whole milliseconds")
        button.finish()

        let led = root.section("led")
        config.led.line = led.optionalString("line", what: "a GPIO line name such as \"GPIO27\"", allowEmpty: false)
        if let line = config.led.line, let problem = lineNameProblem(line) {
            reader.report(led.keyPath("line"), "\(jsonString(line)) \(problem)")
            config.led.line = nil
        }
        if let activeLow = led.bool("activeLow") { config.led.activeLow = activeLow }
        led.finish()

        let lcd = root.section("lcd")
        if let bus = lcd.integer("bus", range: LCD.busRange, unit: "an I2C bus number (N of /dev/i2c-N)") { config.lcd.bus = bus }
        if let address = lcd.value("address") {
            if let parsed = readAddress(address, at: lcd.keyPath("address"), reader: reader) { config.lcd.address = parsed }
        }
        let supportedSizes = BehaviourSettings.geometries.map { quoted($0.name) }.joined(separator: ", ")
        var geometryIsValid = true
        if let text = lcd.string("geometry", what: "one of \(supportedSizes)") {
            let parsed = BehaviourSettings.geometry(parsing: text, quote: quoted)
            if let geometry = parsed.geometry {
                config.lcd.geometry = geometry
            } else {
                reader.report(lcd.keyPath("geometry"), "\(quoted(text)) \(parsed.problem)")
                geometryIsValid = false
            }
        } else if lcd.value("geometry") != nil {
            geometryIsValid = false
        }
        var romIsValid = true
        if let rom = lcd.choice("rom", options: CharacterROM.allCases.map { ($0.rawValue, $0) }) {
            config.lcd.rom = rom
        } else if lcd.value("rom") != nil {
            romIsValid = false
        }
        if let backlight = lcd.bool("backlight") { config.lcd.backlight = backlight }
        config.lcd.refreshSeconds = lcd.optionalInteger("refreshSeconds", range: LCD.refreshRange, unit: "null or whole seconds")
        let wiring = lcd.section("wiring")
        if let parsed = readWiring(wiring, reader: reader) { config.lcd.wiring = parsed }
        wiring.finish()
        lcd.finish()

        let display = root.section("display")
        config.display = readDisplay(display, reader: reader)
        // A kind the file got wrong: the texts are not judged against a ROM it may not mean.
        if display.value("kind") != nil && !config.display.isOLED, case .string(let kind)? = display.value("kind"), kind != "hd44780" {
            romIsValid = false
        }
        display.finish()

        let cooldown = root.section("cooldown")
        if let seconds = cooldown.integer("seconds", range: BehaviourSettings.durationRange, unit: "whole seconds") {
            config.cooldown.seconds = seconds
        }
        cooldown.finish()

        let texts = root.section("texts")
        for (key, _, set) in textKeys {
            if let text = texts.string(key, what: "a text for the display") { set(&config.texts, text) }
        }
        texts.finish()

        let send = root.section("send")
        readCommandSection(send, into: &config.send, reader: reader)
        if let bytes = send.integer("maxOutputBytes", range: Send.maxOutputRange, unit: "bytes") {
            config.send.maxOutputBytes = bytes
        }
        if let log = send.bool("logOutput") { config.send.logOutput = log }
        send.finish()

        if let path = root.string("stateFile", what: "an absolute path such as \(quoted(defaultStateFile))", allowEmpty: false) {
            if let problem = pathProblem(path) {
                // The rules of --state-file (`pathProblem`): no control characters.
                reader.report(root.keyPath("stateFile"), "\(jsonString(path)) \(problem)")
            } else if path.hasPrefix("/") && !path.hasSuffix("/") {
                config.stateFile = path
            } else {
                reader.report(
                    root.keyPath("stateFile"),
                    "\(quoted(path)) is not an absolute path to a file; allowed: a path such as \(quoted(defaultStateFile))")
            }
        }

        let policy = root.section("policy")
        if let enabled = policy.bool("enabled") { config.policy.enabled = enabled }
        if let cooldowns = policy.value("cooldowns") {
            if let parsed = readCooldowns(cooldowns, at: policy.keyPath("cooldowns"), reader: reader) { config.policy.cooldowns = parsed }
        }
        if let seconds = policy.integer("resetAfterSeconds", range: Policy.resetAfterRange, unit: "whole seconds") {
            config.policy.resetAfterSeconds = seconds
        }
        if let sends = policy.integer("maxSends", range: Policy.maxSendsRange, unit: "a number of sends") {
            config.policy.maxSends = sends
        }
        if let seconds = policy.integer("windowSeconds", range: Policy.windowRange, unit: "whole seconds") {
            config.policy.windowSeconds = seconds
        }
        policy.finish()

        let log = root.section("log")
        if let format = log.choice("format", options: Log.Format.allCases.map { ($0.rawValue, $0) }) {
            config.log.format = format
        }
        log.finish()

        let keypad = root.section("keypad")
        var lineOwners: [(line: String, key: String)] = [(config.button.line, "button.line")]
        if let led = config.led.line { lineOwners.append((led, "led.line")) }
        config.keypad = readKeypad(keypad, config: config, lineOwners: &lineOwners, reader: reader)
        reportSharedLines(lineOwners, reader: reader)
        keypad.finish()

        let mqtt = root.section("mqtt")
        config.mqtt = readMQTT(mqtt, reader: reader)
        // A remote command that could do nothing is refused here rather than ignored on the device.
        if config.mqtt.allowOpen && (!config.keypad.enabled || config.keypad.output.line == nil) {
            reader.report(
                mqtt.keyPath("allowOpen"),
                "the command open pulses keypad.output.line: enable the keypad and set its output line, or leave allowOpen false")
        }
        if config.mqtt.allowResetLockout && !config.keypad.enabled {
            reader.report(
                mqtt.keyPath("allowResetLockout"),
                "the command reset_lockout ends the keypad's lockout: enable the keypad, or leave allowResetLockout false")
        }
        mqtt.finish()

        root.finish()

        checkTexts(config, geometryIsValid: geometryIsValid, romIsValid: romIsValid, reader: reader)
        return config
    }

    // MARK: Values with rules of their own

    /// "auto", a number (`0x27`, `39`) or a hex string (`"0x27"`), within 0x08-0x77.
    static func readAddress(_ value: JSONValue, at path: [JSONPathComponent], reader: ConfigReader) -> LCD.Address? {
        let allowed =
            "\"auto\" or a 7-bit address from \(hexAddress(Int(I2CAddress.validRange.lowerBound))) to \(hexAddress(Int(I2CAddress.validRange.upperBound))) (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
        let number: Int
        switch value {
        case .string("auto"):
            return .auto
        case .string(let text):
            let digits = text.dropFirst(2)
            guard text.lowercased().hasPrefix("0x"), !digits.isEmpty,
                digits.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) || ("a"..."f").contains($0) || ("A"..."F").contains($0) })
            else {
                reader.report(path, "\(quoted(text)) is not an address; allowed: \(allowed)")
                return nil
            }
            guard let parsed = Int32(digits, radix: 16) else {
                // As for a number beyond 32 bits (below), the same on every architecture.
                reader.report(path, "\(text) is not a 7-bit address; allowed: \(allowed)")
                return nil
            }
            number = Int(parsed)
        case .integer(let parsed):
            number = parsed
        case .number(let other) where other.isWhole:
            // Beyond 32 bits (0x100000000, 99999999999999999999): kept as written.
            reader.report(path, "\(other.text) is not a 7-bit address; allowed: \(allowed)")
            return nil
        default:
            reader.report(path, "expected \(allowed), got \(describe(value))")
            return nil
        }
        guard number >= 0, number <= Int(UInt8.max), let address = I2CAddress(UInt8(number)) else {
            var message = "\(number >= 0 ? hexAddress(number) : String(number)) is "
            message += number >= 0 && number < sevenBitAddressCount ? "reserved by the I2C specification" : "not a 7-bit address"
            message += "; allowed: \(allowed)"
            if number >= sevenBitAddressCount, number <= Int(UInt8.max), number % 2 == 0 {
                // Some sellers quote the 8-bit write address: the 7-bit address shifted left once.
                message += " (\(hexAddress(number)) looks like an 8-bit address; the 7-bit one would be \(hexAddress(number / 2)))"
            }
            reader.report(path, message)
            return nil
        }
        return .fixed(address)
    }

    /// 7-bit addressing has 128 addresses.
    static let sevenBitAddressCount = 128

    /// "0x27"; any non-negative Int (no narrowing: a file may give 0x100000000).
    static func hexAddress(_ value: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 2 - digits.count)) + digits
    }

    /// The eight port bits and the backlight polarity; every bit 0-7 and used once.
    static func readWiring(_ wiring: ConfigSection, reader: ConfigReader) -> PCF8574Wiring? {
        let names = ["rs", "rw", "enable", "backlight", "d4", "d5", "d6", "d7"]
        var bits: [String: UInt8] = [:]
        var owner: [UInt8: String] = [:]
        var given: Set<String> = []
        var allValid = true
        for name in names {
            guard let value = wiring.value(name) else {
                bits[name] = defaultBit(name)
                continue
            }
            guard let bit = reader.integer(value, at: wiring.keyPath(name), range: 0...7, unit: "a PCF8574 port bit") else {
                allValid = false
                continue
            }
            bits[name] = UInt8(bit)
            given.insert(name)
        }
        let activeHigh = wiring.bool("backlightActiveHigh")
        guard allValid else { return nil }
        // Report a clash at the later key the file gives, naming the other one: either may be the
        // typo. A key the file leaves out has its bit from the common wiring.
        for name in names {
            guard let bit = bits[name] else { continue }
            if let first = owner[bit] {
                let (here, other) = given.contains(name) ? (name, first) : (first, name)
                var message = "bit \(bit) is also used by \(renderPath(wiring.keyPath(other)))"
                if !given.contains(other) { message += " (its default; a wiring other than the common one must give all eight bits)" }
                reader.report(wiring.keyPath(here), message + "; rs, rw, enable, backlight, d4, d5, d6 and d7 each need a bit of their own (0-7)")
                allValid = false
            } else {
                owner[bit] = name
            }
        }
        guard allValid else { return nil }
        guard let rs = bits["rs"], let rw = bits["rw"], let enable = bits["enable"], let backlight = bits["backlight"],
            let d4 = bits["d4"], let d5 = bits["d5"], let d6 = bits["d6"], let d7 = bits["d7"],
            let built = PCF8574Wiring(
                rs: rs, rw: rw, enable: enable, backlight: backlight, d4: d4, d5: d5, d6: d6, d7: d7,
                backlightActiveHigh: activeHigh ?? PCF8574Wiring.common.backlightActiveHigh)
        else {
            preconditionFailure("readWiring: distinct bits 0-7 were refused by PCF8574Wiring")
        }
        return built
    }

    private static func defaultBit(_ name: String) -> UInt8 {
        let common = PCF8574Wiring.common
        switch name {
        case "rs": return common.rs
        case "rw": return common.rw
        case "enable": return common.enable
        case "backlight": return common.backlight
        case "d4": return common.d4
        case "d5": return common.d5
        case "d6": return common.d6
        case "d7": return common.d7
        default: preconditionFailure("defaultBit: no wiring key \(name)")
        }
    }

    /// The keys every command section has (`send`, `keypad.verify`): `command`, `timeoutSeconds`
    /// and `environment`, read into `section`'s fields; the section's other keys are the caller's.
    static func readCommandSection(_ keys: ConfigSection, into section: inout some CommandSection, reader: ConfigReader) {
        if let command = keys.value("command"), command != .null {
            section.command = readCommand(command, at: keys.keyPath("command"), reader: reader)
        }
        if let timeout = keys.integer("timeoutSeconds", range: Send.timeoutRange, unit: "whole seconds") {
            section.timeoutSeconds = timeout
        }
        if let environment = keys.value("environment"), environment != .null {
            section.environment = readEnvironment(environment, at: keys.keyPath("environment"), reader: reader)
        }
    }

    static let commandExample = "[\"/usr/local/bin/send-code\", \"--to\", \"+491701234567\"]"

    /// A non-empty list of strings, the first one the program.
    static func readCommand(_ value: JSONValue, at path: [JSONPathComponent], reader: ConfigReader) -> [String]? {
        let allowed = "null or a list of strings, the program and its arguments, run without a shell, e.g. \(commandExample)"
        guard let items = reader.items(value, at: path, counts: 1...Int.max, allowed: allowed) else { return nil }
        var command: [String] = []
        for (index, item) in items.enumerated() {
            let what = index == 0 ? "the program to run (a path or a name on PATH)" : "an argument (a string)"
            guard let argument = reader.string(item, at: path + [.index(index)], what: what, allowEmpty: index > 0) else { continue }
            command.append(argument)
        }
        return command.count == items.count ? command : nil
    }

    /// An object of environment variables: names of letters, digits and `_`, not starting with a
    /// digit; string values.
    static func readEnvironment(_ value: JSONValue, at path: [JSONPathComponent], reader: ConfigReader) -> [String: String] {
        guard case .object(let members) = value else {
            reader.report(path, "expected null or an object of variables, e.g. { SMS_GATEWAY: \"https://...\" }, got \(describe(value))")
            return [:]
        }
        var environment: [String: String] = [:]
        for member in members {
            let memberPath = path + [.key(member.key)]
            guard isEnvironmentName(member.key) else {
                reader.report(
                    memberPath, "\(quoted(member.key)) is not an environment variable name; allowed: letters, digits and _, not starting with a digit"
                )
                continue
            }
            if let text = reader.string(member.value, at: memberPath, what: "a string (write numbers in quotes)", allowEmpty: true) {
                environment[member.key] = text
            }
        }
        return environment
    }

    static func isEnvironmentName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_"
        }
    }

    /// A non-empty list of whole seconds.
    static func readCooldowns(_ value: JSONValue, at path: [JSONPathComponent], reader: ConfigReader) -> [Int]? {
        readSecondsList(
            value, at: path, reader: reader, range: BehaviourSettings.durationRange,
            counts: Policy.cooldownCountRange, noun: "cooldowns", example: "[60, 120, 300]")
    }

    /// A list of `counts` whole seconds, each within `range` (cooldowns, lockouts); every wrong item
    /// is reported, and nil comes back when anything was wrong.
    static func readSecondsList(
        _ value: JSONValue, at path: [JSONPathComponent], reader: ConfigReader,
        range: ClosedRange<Int>, counts: ClosedRange<Int>, noun: String, example: String
    ) -> [Int]? {
        let allowed =
            "a list of \(counts.lowerBound) to \(counts.upperBound) \(noun) in whole seconds from \(range.lowerBound) to \(range.upperBound), e.g. \(example)"
        guard let items = reader.items(value, at: path, counts: counts, allowed: allowed) else { return nil }
        var seconds: [Int] = []
        for (index, item) in items.enumerated() {
            if let entry = reader.integer(item, at: path + [.index(index)], range: range, unit: "whole seconds") { seconds.append(entry) }
        }
        return seconds.count == items.count ? seconds : nil
    }

    // MARK: Texts against the display

    /// Each text against the ROM (every character shown) and the geometry (width, `{s}`).
    /// Width is not judged against a geometry the file got wrong, nor characters against a ROM
    /// it got wrong: that would only repeat the one mistake.
    static func checkTexts(_ config: DeviceConfig, geometryIsValid: Bool, romIsValid: Bool, reader: ConfigReader) {
        let columns = config.lcd.geometry.columns
        let problems = config.texts.problems(
            columns: columns, maxSeconds: config.longestCooldownSeconds, maxLockoutSeconds: config.policy.windowSeconds)
        let fields = textKeys.map { ($0.key, $0.get(config.texts)) }
        for (key, text) in fields {
            let path: [JSONPathComponent] = [.key("texts"), .key(key)]
            // An OLED's characters and widths are checked against its font (`glyphProblems`).
            if romIsValid, !config.display.isOLED, let message = textROMProblem(text, rom: config.lcd.rom, romSetting: "lcd.rom") {
                reader.report(path, message)
            }
            for problem in problems where problem.field == key {
                if problem.kind == .tooWide && (!geometryIsValid || config.display.isOLED) { continue }
                reader.report(path, textProblemMessage(problem, config: config))
            }
        }
    }

    static func textProblemMessage(_ problem: TextProblem, config: DeviceConfig) -> String {
        let text = quoted(problem.value)
        let placeholder = Texts.secondsPlaceholder
        switch problem.kind {
        case .tooWide:
            var message = "\(text) is \(problem.width) characters wide"
            if let seconds = problem.seconds {
                let source =
                    problem.field == lockoutLabelKey ? "policy.windowSeconds" : (config.policy.enabled ? "the longest cooldown" : "cooldown.seconds")
                message += " at \(seconds) s (\(source))"
            }
            return message + "; the display has \(problem.limit) columns (lcd.geometry \(quoted(config.lcd.geometry.name)))"
        case .placeholderCount(let found, let expected):
            if expected == 0 {
                return "\(text) must not contain \(placeholder): only texts.countdownLabel and texts.lockoutLabel show the seconds"
            }
            return "\(text) needs exactly one \(placeholder) for the seconds, found \(found)"
        }
    }
}
