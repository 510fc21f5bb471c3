import CharacterLCD
import HAL

// Small test doubles of this target's own (HALMock is being written elsewhere). They share one
// `Trace`, so the order of bus writes and waits is visible, and render it in a readable form.

/// Everything the doubles saw, in order, plus the fault to inject.
final class Trace {
    enum Event: Equatable {
        /// One I2C transaction: the 7-bit address and the data bytes after the address byte.
        case i2c(address: UInt8, bytes: [UInt8])
        case wait(TimeSpan)
        /// `HD44780Port.writeInitNibble` on a `RecordingPort`.
        case initNibble(UInt8)
        /// `HD44780Port.write` on a `RecordingPort`.
        case port([HD44780Byte])
        /// `HD44780Port.setBacklight` on a `RecordingPort`.
        case backlight(Bool)
        /// `HD44780Port.writeIdle` on a `RecordingPort`.
        case idle
    }

    var events: [Event] = []
    /// The ordinal (0-based, counting bus transactions or port calls) of the first call that fails;
    /// every later call fails too (a device that went away). nil: nothing fails.
    var failFromCall: Int?
    private var calls = 0

    /// Counts a call and throws if it is meant to fail (a failed call records nothing).
    func admit(_ operation: String) throws(HALError) {
        defer { calls += 1 }
        if let first = failFromCall, calls >= first {
            throw HALError(.injected, operation: operation)
        }
    }

    // MARK: Readable views

    /// "i2c 27 <- 3C 38", "wait 4500us", "nibble 3", "I28 I08 I01", "D41 D42", "backlight off".
    var lines: [String] { events.map(Trace.describe) }

    /// The I2C transactions only, each as "3C 38 ...".
    var transactions: [String] {
        events.compactMap { event in
            if case .i2c(_, let bytes) = event { return hex(bytes) }
            return nil
        }
    }
    /// Data bytes summed over all transactions.
    var dataBytes: Int {
        events.reduce(0) { total, event in
            if case .i2c(_, let bytes) = event { return total + bytes.count }
            return total
        }
    }
    /// What goes over SDA: one address byte per transaction plus the data bytes.
    var wireBytes: Int { dataBytes + transactions.count }
    /// The waits requested, in order.
    var waits: [TimeSpan] {
        events.compactMap { event in
            if case .wait(let span) = event { return span }
            return nil
        }
    }
    /// The port writes only, each as "I80 D41 ...".
    var portWrites: [String] {
        events.compactMap { event in
            if case .port(let bytes) = event { return portText(bytes) }
            return nil
        }
    }

    func clear() { events.removeAll() }

    static func describe(_ event: Event) -> String {
        switch event {
        case .i2c(let address, let bytes): return "i2c \(hex([address])) <- \(hex(bytes))"
        case .wait(let span): return "wait \(span.microseconds)us"
        case .initNibble(let nibble): return "nibble \(nibble)"
        case .port(let bytes): return portText(bytes)
        case .backlight(let on): return on ? "backlight on" : "backlight off"
        case .idle: return "idle"
        }
    }
}

/// "3C 38": upper-case hex, two digits per byte, space-separated.
func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789ABCDEF")
    return bytes.map { String([digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]]) }.joined(separator: " ")
}

/// "I80 D41": I for the instruction register (RS=0), D for data (RS=1), then the byte in hex.
func portText(_ bytes: [HD44780Byte]) -> String {
    bytes.map { ($0.register == .instruction ? "I" : "D") + hex([$0.value]) }.joined(separator: " ")
}

/// Data bytes for the ASCII characters of `text`, as `portText` prints them ("D48 D69").
func dataBytes(_ text: String) -> String {
    portText(text.utf8.map { HD44780Byte.data($0) })
}

/// A frame from ASCII lines (test text only uses ASCII, where code == scalar value).
func frame(_ lines: String...) -> [[UInt8]] {
    lines.map { Array($0.utf8) }
}

/// An I2C master that records each transaction.
struct RecordingBus: I2CBus {
    let trace: Trace
    var supportsMultiByteWrite: Bool

    init(trace: Trace, multiByte: Bool = true) {
        self.trace = trace
        self.supportsMultiByteWrite = multiByte
    }

    mutating func write(_ bytes: [UInt8], to address: I2CAddress) throws(HALError) {
        precondition(supportsMultiByteWrite || bytes.count == 1, "single-byte bus got \(bytes.count) bytes")
        try trace.admit("write i2c \(hex([address.rawValue]))")
        trace.events.append(.i2c(address: address.rawValue, bytes: bytes))
    }

    mutating func probe(_ address: I2CAddress) throws(HALError) -> Bool { true }
}

/// A `Delay` that only records the spans asked for (virtual time: nothing sleeps).
struct RecordingDelay: Delay {
    let trace: Trace
    mutating func delay(_ span: TimeSpan) { trace.events.append(.wait(span)) }
}

/// An `HD44780Port` that records the calls, to test the driver without a backpack.
struct RecordingPort: HD44780Port {
    let trace: Trace
    mutating func writeIdle() throws(HALError) {
        try trace.admit("idle")
        trace.events.append(.idle)
    }
    mutating func writeInitNibble(_ nibble: UInt8) throws(HALError) {
        try trace.admit("init nibble")
        trace.events.append(.initNibble(nibble))
    }
    mutating func write(_ bytes: [HD44780Byte]) throws(HALError) {
        try trace.admit("write")
        trace.events.append(.port(bytes))
    }
    mutating func setBacklight(_ on: Bool) throws(HALError) {
        try trace.admit("backlight")
        trace.events.append(.backlight(on))
    }
}

let backpackAddress = I2CAddress(0x27)!

/// A driver on a recording port.
func portLCD(_ geometry: LCDGeometry = .lcd16x2) -> (HD44780<RecordingPort, RecordingDelay>, Trace) {
    let trace = Trace()
    let lcd = HD44780(port: RecordingPort(trace: trace), delay: RecordingDelay(trace: trace), geometry: geometry)
    return (lcd, trace)
}

/// A driver on a PCF8574 backpack (common wiring, address 0x27) on a recording bus.
func busLCD(_ geometry: LCDGeometry = .lcd16x2, multiByte: Bool = true)
    -> (HD44780<PCF8574Backpack<RecordingBus>, RecordingDelay>, Trace)
{
    let trace = Trace()
    let backpack = PCF8574Backpack(bus: RecordingBus(trace: trace, multiByte: multiByte), address: backpackAddress)
    let lcd = HD44780(port: backpack, delay: RecordingDelay(trace: trace), geometry: geometry)
    return (lcd, trace)
}
