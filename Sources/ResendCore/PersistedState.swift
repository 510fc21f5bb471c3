import HAL

/// What the status line (line 1) shows, apart from the stopped screen.
public enum StatusLine: Hashable, Sendable {
    /// `Texts.title`.
    case title
    /// `Texts.sendingTitle`: the send command runs, its outcome is not known yet.
    case sending
    /// `Texts.sentTitle`: the send command succeeded.
    case sent
    /// `Texts.failedTitle`: the send command failed, timed out or could not start.
    case failed
    /// `Texts.tryLaterTitle`: the send command exited 75 (EX_TEMPFAIL); the send did not count.
    case tryLater
}

/// The part of the controller's state that must survive a restart, with its instants on the clock
/// `Time`: `ControllerSnapshot` on the monotonic clock of the running process
/// (`ResendController.snapshot`), `PersistedState.controller` on the wall clock.
public struct ControllerRecord<Time: Hashable & Sendable>: Hashable, Sendable {
    public var status: StatusLine
    /// False before the first press ever (label `sendLabel`), true after (label `resendLabel`).
    public var used: Bool
    /// The end of the running countdown; nil when none runs.
    public var countdownEnd: Time?
    /// The full length of that countdown in whole seconds (0 when none runs): a restart never
    /// resumes it with more than this.
    public var countdownSeconds: Int
    /// Sends in the current run of sends (`ResendPolicy`); 0 before the first.
    public var run: Int
    /// When the current run ends if no send comes first; nil when no run is going.
    public var runEnds: Time?
    /// The sends that still count against the cap, oldest first (empty without a cap).
    public var sends: [Time]

    public init(
        status: StatusLine = .title, used: Bool = false, countdownEnd: Time? = nil, countdownSeconds: Int = 0,
        run: Int = 0, runEnds: Time? = nil, sends: [Time] = []
    ) {
        self.status = status
        self.used = used
        self.countdownEnd = countdownEnd
        self.countdownSeconds = countdownSeconds
        self.run = run
        self.runEnds = runEnds
        self.sends = sends
    }

    /// The same record with each instant converted by `convert` (from one clock to the other).
    public func convertingTimes<Other>(_ convert: (Time) -> Other) -> ControllerRecord<Other> {
        ControllerRecord<Other>(
            status: status, used: used, countdownEnd: countdownEnd.map(convert), countdownSeconds: countdownSeconds, run: run,
            runEnds: runEnds.map(convert), sends: sends.map(convert))
    }
}

/// The controller's record on the monotonic clock of the running process.
public typealias ControllerSnapshot = ControllerRecord<Instant>

/// The controller's state as written to the state file: `ControllerSnapshot` with every instant on
/// the wall clock, so that it means something to the next process (the monotonic clock restarts at
/// boot).
///
/// The file is JSON (`encoded()`), written whole and atomically on every change that matters
/// (press, send outcome, end of a countdown or lockout); times are Unix milliseconds (UTC):
///
/// ```
/// {
///   "version": 1,
///   "format": 2,
///   "status": "sent",
///   "used": true,
///   "countdownEndsUnixMs": 1718000060000,
///   "countdownSeconds": 60,
///   "run": 1,
///   "runEndsUnixMs": 1718000660000,
///   "sendsUnixMs": [1718000000000]
/// }
/// ```
///
/// With a code entry (a keypad) an `entry` object follows (see `PersistedEntryState`): the
/// attempts and the lockout of the code-entry flow, so a restart does not reset a lockout.
///
/// `status` is `title`, `sending`, `sent`, `failed` or `tryLater`; `countdownEndsUnixMs` and `runEndsUnixMs`
/// are null when no countdown or run is going.
///
/// Versions: `format` is the format the file was written in (`formatVersion`; a file without it,
/// from a program of format 1, is format 1), `version` the oldest format able to read it (the key
/// programs of format 1 check: they read only `"version": 1`). A program reads every file whose
/// `version` is at most its own format and ignores the keys it does not know, so a newer program
/// that only adds keys keeps `version` and an older one (a downgrade) resumes the countdown, the
/// wrong codes and the lockout from its file. A newer format that an older program would
/// misread (a key removed or changed in meaning, a new value of `status`, information that must
/// not be dropped when the older program writes the file again) raises `version`: an older
/// program then refuses the file (`StateFormatError.newer`) rather than misreading it. A missing
/// key or a wrong type makes the file unreadable.
public struct PersistedState: Hashable, Sendable {
    /// The format this program writes (`format`): format 1 and the `format` key. It reads every
    /// file whose `version` is at most this.
    public static let formatVersion: Int64 = 2
    /// The `version` this program writes: the oldest format that reads its files. Format 2 only
    /// added `format`, so programs of format 1 read them.
    public static let oldestReadingFormat: Int64 = 1

    /// The controller's part: `ControllerSnapshot` on the wall clock.
    public var controller: ControllerRecord<WallTime>
    /// The code-entry flow's part (attempts, lockout, open field), for a device with a keypad;
    /// nil without one (the key is then not written, and a file without it reads as nil).
    public var entry: PersistedEntryState?

    public init(_ controller: ControllerRecord<WallTime> = ControllerRecord(), entry: PersistedEntryState? = nil) {
        self.controller = controller
        self.entry = entry
    }

    /// `snapshot` on the wall clock: each instant x becomes wallNow + (x - monotonicNow), with
    /// both clocks read at (about) the same moment.
    public init(_ snapshot: ControllerSnapshot, monotonicNow: Instant, wallNow: WallTime) {
        self.init(snapshot.convertingTimes { wallNow + ($0 - monotonicNow) })
    }

    /// The controller's state to resume with (`ControllerRecord.resumed`).
    public func resumed(monotonicNow: Instant, wallNow: WallTime, config: ControllerConfig) -> ControllerSnapshot {
        controller.resumed(monotonicNow: monotonicNow, wallNow: wallNow, config: config)
    }

    /// The state as the JSON text described above, ending in a new line.
    public func encoded() -> [UInt8] {
        func time(_ value: WallTime?) -> String { value.map { decimalDigits($0.millisecondsSinceEpoch) } ?? "null" }
        let statusName: String
        switch controller.status {
        case .title: statusName = "title"
        case .sending: statusName = "sending"
        case .sent: statusName = "sent"
        case .failed: statusName = "failed"
        case .tryLater: statusName = "tryLater"
        }
        var text = "{\n"
        text += "  \"version\": " + decimalDigits(PersistedState.oldestReadingFormat) + ",\n"
        text += "  \"format\": " + decimalDigits(PersistedState.formatVersion) + ",\n"
        text += "  \"status\": \"" + statusName + "\",\n"
        text += "  \"used\": " + (controller.used ? "true" : "false") + ",\n"
        text += "  \"countdownEndsUnixMs\": " + time(controller.countdownEnd) + ",\n"
        text += "  \"countdownSeconds\": " + decimalString(controller.countdownSeconds) + ",\n"
        text += "  \"run\": " + decimalString(controller.run) + ",\n"
        text += "  \"runEndsUnixMs\": " + time(controller.runEnds) + ",\n"
        text += "  \"sendsUnixMs\": [" + controller.sends.map { decimalDigits($0.millisecondsSinceEpoch) }.joined(separator: ", ") + "]"
        text += entry.map { ",\n  \"entry\": " + $0.encodedObject + "\n" } ?? "\n"
        text += "}\n"
        return Array(text.utf8)
    }

    /// Reads the JSON text written by `encoded()` or by a program of another format (see the type).
    /// Throws a `StateFormatError` saying what is wrong (not JSON, a missing key, a wrong type), or
    /// that the file needs a newer program (`newer`).
    public init(decoding bytes: [UInt8]) throws(StateFormatError) {
        var parser = JSONParser(bytes: bytes)
        let root = try parser.parseDocument()
        guard case .object(let members) = root else { throw StateFormatError("the state is not a JSON object") }
        func member(_ key: String) throws(StateFormatError) -> JSONValue {
            guard let value = members.last(where: { $0.key == key })?.value else {
                throw StateFormatError("missing key \"" + key + "\"")
            }
            return value
        }
        func integer(_ key: String, minimum: Int64 = 0) throws(StateFormatError) -> Int64 {
            guard case .integer(let value) = try member(key), value >= minimum else {
                throw StateFormatError("\"" + key + "\" must be an integer of at least " + decimalDigits(minimum))
            }
            return value
        }
        func optionalTime(_ key: String) throws(StateFormatError) -> WallTime? {
            switch try member(key) {
            case .null: return nil
            case .integer(let ms) where PersistedState.unixMillisecondsRange.contains(ms): return WallTime(millisecondsSinceEpoch: ms)
            default: throw StateFormatError("\"" + key + "\" must be Unix milliseconds " + unixMillisecondsRangeText + " or null")
            }
        }
        let version = try integer("version", minimum: 1)
        var format = version
        if members.contains(where: { $0.key == "format" }) {
            format = try integer("format", minimum: version)
        }
        guard version <= PersistedState.formatVersion else {
            throw StateFormatError(newer: StateFormatVersions(format: format, readableFrom: version))
        }
        var controller = ControllerRecord<WallTime>()
        switch try member("status") {
        case .string("title"): controller.status = .title
        case .string("sending"): controller.status = .sending
        case .string("sent"): controller.status = .sent
        case .string("failed"): controller.status = .failed
        case .string("tryLater"): controller.status = .tryLater
        default: throw StateFormatError("\"status\" must be \"title\", \"sending\", \"sent\", \"failed\" or \"tryLater\"")
        }
        guard case .bool(let used) = try member("used") else { throw StateFormatError("\"used\" must be true or false") }
        controller.used = used
        controller.countdownEnd = try optionalTime("countdownEndsUnixMs")
        controller.countdownSeconds = Int(min(try integer("countdownSeconds"), Int64(ControllerConfig.maximumDurationSeconds)))
        controller.run = Int(min(try integer("run"), Int64(Int32.max)))
        controller.runEnds = try optionalTime("runEndsUnixMs")
        guard case .array(let list) = try member("sendsUnixMs") else { throw StateFormatError("\"sendsUnixMs\" must be an array") }
        var sends: [WallTime] = []
        for item in list {
            guard case .integer(let ms) = item, PersistedState.unixMillisecondsRange.contains(ms) else {
                throw StateFormatError("\"sendsUnixMs\" must hold Unix milliseconds " + unixMillisecondsRangeText)
            }
            sends.append(WallTime(millisecondsSinceEpoch: ms))
        }
        controller.sends = sends
        self.controller = controller
        if let value = members.last(where: { $0.key == "entry" })?.value {
            entry = try PersistedEntryState(decoding: value)
        } else {
            entry = nil
        }
    }
}

extension ControllerRecord where Time == WallTime {
    /// The state to resume with in a process started at `monotonicNow` = `wallNow`, under
    /// `config`. Every time is clamped, so that no wall-clock change can stretch anything:
    /// - the countdown resumes with clamp(end - wallNow, 0, its length) left, its length capped by
    ///   the longest cooldown `config` allows; a wall clock set backwards cannot extend it past its
    ///   length, set forward it ends it. A countdown that was still waiting for the send command's
    ///   outcome resumes with the plain title: the outcome died with the old process.
    /// - sends count against the cap for at most the cap's window from now (a send time in the
    ///   future counts as now); without a cap none are kept.
    /// - a run of sends ends at most `runResetAfter` (plus the resumed countdown) from now.
    public func resumed(monotonicNow: Instant, wallNow: WallTime, config: ControllerConfig) -> ControllerSnapshot {
        var snapshot = ControllerSnapshot(status: status, used: used, run: max(0, run))
        if snapshot.status == .sending { snapshot.status = .title }

        let longest = min(max(0, countdownSeconds), config.longestCooldownSeconds)
        if let end = countdownEnd {
            let remaining = clamp(end - wallNow, upTo: .seconds(Int64(longest)))
            if remaining > .zero {
                snapshot.countdownEnd = monotonicNow + remaining
                snapshot.countdownSeconds = longest
            }
        }
        if snapshot.countdownEnd == nil && snapshot.status == .sent { snapshot.status = .title }

        if snapshot.run > 0, let runEnds {
            let bound = config.policy.runResetAfter + .seconds(Int64(snapshot.countdownSeconds))
            let remaining = clamp(runEnds - wallNow, upTo: bound)
            if remaining > .zero {
                snapshot.runEnds = monotonicNow + remaining
            } else {
                snapshot.run = 0
            }
        } else {
            snapshot.run = 0
        }

        if let window = config.policy.cap?.window {
            snapshot.sends = sends.sorted().compactMap { send in
                let age = clamp(wallNow - send, upTo: window)
                return age < window ? monotonicNow - age : nil
            }
        }
        return snapshot
    }
}

/// Why a state file could not be read, for the log.
public struct StateFormatError: Error, Hashable, Sendable {
    public var message: String
    /// Set when the file is well formed but needs a newer program (its `version` is above
    /// `PersistedState.formatVersion`): after a downgrade. Nil for a damaged file.
    public var newer: StateFormatVersions?

    public init(_ message: String) { self.message = message }

    /// A file that needs a newer program.
    public init(newer versions: StateFormatVersions) {
        message = versions.description
        newer = versions
    }
}

/// The two numbers at the head of a state file: the format it was written in (`format`) and the
/// oldest format able to read it (`version`).
public struct StateFormatVersions: Hashable, Sendable {
    public var format: Int64
    public var readableFrom: Int64

    public init(format: Int64, readableFrom: Int64) {
        self.format = format
        self.readableFrom = readableFrom
    }

    /// `format 3, readable from format 3 on; this program reads up to format 2`.
    public var description: String {
        "format " + decimalDigits(format) + ", readable from format " + decimalDigits(readableFrom)
            + " on; this program reads up to format " + decimalDigits(PersistedState.formatVersion)
    }
}

extension PersistedState {
    /// The times a state file may hold: 1970-01-01 (a Pi without a real-time clock starts there
    /// before NTP) to 2200-01-01. Anything else was not written by this program (the file is then
    /// unreadable and moved aside). Within it, the differences the resume computes (a time minus
    /// the wall clock, which `WallTime` holds from 1678 to 2262) stay far inside Int64 nanoseconds.
    public static let unixMillisecondsRange: ClosedRange<Int64> = 0...7_258_118_400_000
}

let unixMillisecondsRangeText = "from 0 to 7258118400000 (1970 to 2200)"

/// `span` limited to 0...upper.
func clamp(_ span: TimeSpan, upTo upper: TimeSpan) -> TimeSpan {
    max(.zero, min(span, upper))
}

/// The JSON values the state file uses. Numbers are integers only.
indirect enum JSONValue: Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])
}

struct JSONMember: Hashable {
    var key: String
    var value: JSONValue
    init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// A strict, small JSON reader (RFC 8259 without fractions or exponents), enough for the state
/// file. Nesting is limited so a hostile file cannot exhaust the stack.
struct JSONParser {
    let bytes: [UInt8]
    var index = 0
    static let maximumDepth = 16

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseDocument() throws(StateFormatError) -> JSONValue {
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected text after the JSON value") }
        return value
    }

    private func error(_ what: String) -> StateFormatError {
        StateFormatError("not valid JSON at byte " + decimalString(index) + ": " + what)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func expect(_ literal: String) throws(StateFormatError) {
        for byte in literal.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw error("expected " + literal) }
            index += 1
        }
    }

    private mutating func parseValue(depth: Int) throws(StateFormatError) -> JSONValue {
        guard depth <= JSONParser.maximumDepth else { throw error("nested too deeply") }
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end of the text") }
        switch bytes[index] {
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "["):
            index += 1
            var items: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            while true {
                items.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw error("unterminated array") }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                guard bytes[index] == UInt8(ascii: ",") else { throw error("expected , or ] in an array") }
                index += 1
            }
        case UInt8(ascii: "{"):
            index += 1
            var members: [JSONMember] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key") }
                let key = try parseString()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected : after a key") }
                index += 1
                members.append(JSONMember(key, try parseValue(depth: depth + 1)))
                skipWhitespace()
                guard index < bytes.count else { throw error("unterminated object") }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                guard bytes[index] == UInt8(ascii: ",") else { throw error("expected , or } in an object") }
                index += 1
            }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .integer(try parseInteger())
        default:
            throw error("unexpected character")
        }
    }

    private mutating func parseInteger() throws(StateFormatError) -> Int64 {
        var negative = false
        if bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
        let start = index
        var value: Int64 = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            let digit = Int64(bytes[index] - UInt8(ascii: "0"))
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { throw error("number too large") }
            value = sum
            index += 1
        }
        guard index > start else { throw error("expected digits") }
        guard !(bytes[start] == UInt8(ascii: "0") && index - start > 1) else { throw error("leading zero") }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) {
            throw error("only whole numbers are allowed")
        }
        return negative ? -value : value
    }

    private mutating func parseString() throws(StateFormatError) -> String {
        index += 1  // the opening quote
        var result: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: result, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw error("unterminated escape") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): result.append(escaped)
                case UInt8(ascii: "n"): result.append(0x0A)
                case UInt8(ascii: "t"): result.append(0x09)
                case UInt8(ascii: "r"): result.append(0x0D)
                case UInt8(ascii: "b"): result.append(0x08)
                case UInt8(ascii: "f"): result.append(0x0C)
                case UInt8(ascii: "u"):
                    // Keys and values of the state file are ASCII: a \u escape only needs to be
                    // skipped correctly; it is kept as U+FFFD.
                    guard index + 4 <= bytes.count else { throw error("short \\u escape") }
                    index += 4
                    result += Array("\u{FFFD}".utf8)
                default: throw error("unknown escape")
                }
            case 0x00..<0x20:
                throw error("control character in a string")
            default:
                result.append(byte)
            }
        }
        throw error("unterminated string")
    }
}
