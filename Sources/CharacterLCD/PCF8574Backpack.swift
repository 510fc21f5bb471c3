import HAL

/// Which PCF8574 port bit (P0...P7) drives each LCD line on a backpack board.
///
/// Validation: build custom wirings with the failable `init?(rs:rw:enable:backlight:d4:d5:d6:d7:backlightActiveHigh:)`,
/// which returns nil unless all eight positions are distinct and in 0...7 (`isValid`). The
/// properties stay mutable for convenience; `PCF8574Backpack.init` checks `isValid` again as a
/// precondition, so a wiring made invalid by mutation is caught as a programming error.
public struct PCF8574Wiring: Hashable, Sendable {
    public var rs: UInt8
    public var rw: UInt8
    public var enable: UInt8
    public var backlight: UInt8
    public var d4: UInt8
    public var d5: UInt8
    public var d6: UInt8
    public var d7: UInt8
    /// True when a high port bit switches the backlight on (the transistor on most boards).
    public var backlightActiveHigh: Bool

    /// The usual board (PCF8574T "LCM1602" backpacks): P0=RS P1=RW P2=E P3=BL (high = on), P4..P7=D4..D7.
    public static let common = PCF8574Wiring(
        unchecked: 0, rw: 1, enable: 2, backlight: 3, d4: 4, d5: 5, d6: 6, d7: 7, backlightActiveHigh: true)

    /// Returns nil unless the eight bit positions are distinct and each in 0...7.
    public init?(
        rs: UInt8, rw: UInt8, enable: UInt8, backlight: UInt8,
        d4: UInt8, d5: UInt8, d6: UInt8, d7: UInt8, backlightActiveHigh: Bool
    ) {
        self.init(
            unchecked: rs, rw: rw, enable: enable, backlight: backlight,
            d4: d4, d5: d5, d6: d6, d7: d7, backlightActiveHigh: backlightActiveHigh)
        guard isValid else { return nil }
    }

    private init(
        unchecked rs: UInt8, rw: UInt8, enable: UInt8, backlight: UInt8,
        d4: UInt8, d5: UInt8, d6: UInt8, d7: UInt8, backlightActiveHigh: Bool
    ) {
        self.rs = rs
        self.rw = rw
        self.enable = enable
        self.backlight = backlight
        self.d4 = d4
        self.d5 = d5
        self.d6 = d6
        self.d7 = d7
        self.backlightActiveHigh = backlightActiveHigh
    }

    /// The PCF8574 has eight port bits.
    private static let portWidth: UInt8 = 8

    /// True when all eight positions are distinct and each in 0...7.
    public var isValid: Bool {
        var used: UInt8 = 0
        for position in [rs, rw, enable, backlight, d4, d5, d6, d7] {
            guard position < PCF8574Wiring.portWidth else { return false }
            let bit: UInt8 = 1 << position
            guard used & bit == 0 else { return false }
            used |= bit
        }
        return true
    }
}

/// An HD44780 behind a PCF8574 (or PCF8574A) I2C port expander, in 4-bit mode.
///
/// Each nibble is two expander bytes: the nibble with E high, then the same nibble with E low (the
/// HD44780 latches on E's falling edge), so one HD44780 byte is at least four expander bytes, high
/// nibble first. R/W is always low; the backlight bit is carried in every byte. The PCF8574 drives
/// its port at the acknowledge of each byte it receives (PCF8574 datasheet, "write mode"), so one
/// expander byte lasts 9 SCL clocks: 90 us at 100 kHz, 22.5 us at 400 kHz.
///
/// Address set-up (HD44780U bus timing, tAS >= 40 ns): RS and R/W must be stable before E rises.
/// Where RS changes (instruction <-> data), or the port's state is unknown (a new backpack value,
/// after a failed transfer), a byte with the new RS and E low goes out first; it costs one expander
/// byte per change. The same order as Linux's GPIO driver: drivers/auxdisplay/hd44780.c
/// (`hd44780_write_gpio4` presents RS and data, then `hd44780_strobe_gpio` raises E).
/// `writeIdle` puts the control lines at rest before an initialisation: the PCF8574 powers up with
/// every port bit high (PCF8574 datasheet: quasi-bidirectional I/Os, high after power-on), i.e.
/// E=1 and R/W=1, so without it the first strobe would have no rising edge after RS/R/W were set.
///
/// Spacing (the `HD44780Port` contract): after a byte is latched the controller is busy for
/// `HD44780Timing.instructionExecution` (37 us); the next byte's E must not rise before then. At
/// `busClockHz` <= 243 kHz one expander byte already lasts longer; faster buses get idle bytes (E
/// low, same RS) before the next byte's first strobe, only as many as needed. The E pulse (PWEH >=
/// 230 ns) and the enable cycle (tcycE >= 500 ns) are always met: one expander byte lasts at least
/// 9 us up to 1 MHz.
///
/// When `bus.supportsMultiByteWrite` is true, each `write` is one I2C transaction (one address byte,
/// then every expander byte); otherwise each expander byte is its own transaction (its address byte
/// doubles the spacing, which the padding takes into account).
public struct PCF8574Backpack<Bus: I2CBus>: HD44780Port {
    /// The I2C master. Public so tests and diagnostics can inspect a recording bus.
    public var bus: Bus
    public let address: I2CAddress
    public let wiring: PCF8574Wiring
    /// The fastest SCL frequency the bus may run at, in Hz; the spacing padding is computed for it.
    public let busClockHz: Int
    /// The backlight state carried in every expander byte. Starts on. Updated by `setBacklight`
    /// before its write, so it holds the requested state even if that write failed.
    public private(set) var isBacklightOn: Bool = true
    /// The port byte the expander drives now, nil when unknown (never written, or a transfer failed).
    public private(set) var portState: UInt8?
    /// Expander-byte times the controller needs between a latch and the next rising E.
    private let executionSlots: Int

    /// Standard-mode I2C, the PCF8574's rated clock (PCF8574 datasheet: 100 kHz I2C-bus interface).
    public static var standardModeClockHz: Int { 100_000 }

    /// Preconditions: `wiring.isValid`, `busClockHz` in 1...5_000_000.
    public init(bus: Bus, address: I2CAddress, wiring: PCF8574Wiring = .common, busClockHz: Int = standardModeClockHz) {
        precondition(wiring.isValid, "PCF8574Wiring: positions must be distinct and in 0...7")
        precondition((1...5_000_000).contains(busClockHz), "PCF8574Backpack: busClockHz must be 1 Hz to 5 MHz")
        self.bus = bus
        self.address = address
        self.wiring = wiring
        self.busClockHz = busClockHz
        self.executionSlots = PCF8574Backpack.slots(for: HD44780Timing.instructionExecution, busClockHz: busClockHz)
    }

    /// The largest value a 4-bit nibble can have; also the mask of the low nibble.
    private static var nibbleMax: UInt8 { 0x0F }
    /// Two nibbles per HD44780 byte, two expander bytes (E high, E low) per nibble: the floor when
    /// RS does not change and the bus is slow enough to need no padding.
    public static var expanderBytesPerLCDByte: Int { 4 }
    /// SCL clocks per byte on the wire: 8 data bits and the acknowledge.
    public static var clocksPerByte: Int { 9 }

    /// The wire time of one byte at `busClockHz`, rounded up to whole nanoseconds.
    public static func byteTime(busClockHz: Int) -> TimeSpan {
        let clocks = Int64(clocksPerByte) * 1_000_000_000
        let hz = Int64(busClockHz)
        return TimeSpan(nanoseconds: (clocks + hz - 1) / hz)
    }

    /// How many byte times cover `span` (at least 1).
    static func slots(for span: TimeSpan, busClockHz: Int) -> Int {
        let byte = byteTime(busClockHz: busClockHz).nanoseconds
        return max(1, Int((span.nanoseconds + byte - 1) / byte))
    }

    /// Idle bytes (E low) this backpack puts before the first strobe of each HD44780 byte, beyond
    /// any RS set-up byte, so that E rises at least 37 us after the previous latch: 0 up to 243 kHz
    /// on a batching bus.
    public var paddingBytesPerLCDByte: Int { lowBytesNeeded(afterLatch: true, atTransactionStart: false) }

    /// Two expander bytes (E high, E low) for one nibble with RS=0, as a transaction of their own
    /// (two when the bus is single-byte only); preceded by an RS set-up byte when the port state is
    /// unknown or RS was high.
    public mutating func writeInitNibble(_ nibble: UInt8) throws(HALError) {
        precondition(nibble <= PCF8574Backpack.nibbleMax, "writeInitNibble: nibble must be 0...15")
        var expander: [UInt8] = []
        expander.reserveCapacity(3)
        var state = portState
        appendStrobe(nibble: nibble, register: .instruction, lowBytes: 0, state: &state, to: &expander)
        try send(expander, endState: state)
    }

    /// Four expander bytes per HD44780 byte, plus one set-up byte where RS changes and any padding
    /// the bus speed needs; all in one transaction when the bus allows. An empty `bytes` sends nothing.
    public mutating func write(_ bytes: [HD44780Byte]) throws(HALError) {
        guard !bytes.isEmpty else { return }
        var expander: [UInt8] = []
        expander.reserveCapacity(bytes.count * PCF8574Backpack.expanderBytesPerLCDByte + 2)
        var state = portState
        for (index, byte) in bytes.enumerated() {
            let padding = lowBytesNeeded(afterLatch: true, atTransactionStart: index == 0)
            appendStrobe(nibble: byte.value >> 4, register: byte.register, lowBytes: padding, state: &state, to: &expander)
            appendStrobe(nibble: byte.value & PCF8574Backpack.nibbleMax, register: byte.register, lowBytes: 0, state: &state, to: &expander)
        }
        try send(expander, endState: state)
    }

    /// One expander byte with E low (the HD44780 ignores it), RS/R/W low, data lines low, and the
    /// backlight bit for `on`.
    public mutating func setBacklight(_ on: Bool) throws(HALError) {
        isBacklightOn = on
        try writeIdle()
    }

    /// One expander byte with E, RS, R/W and the data lines low and the backlight as set: the
    /// control lines at rest, without strobing the controller.
    public mutating func writeIdle() throws(HALError) {
        let idle = portByte(nibble: 0, register: .instruction, enable: false)
        try send([idle], endState: idle)
    }

    /// The port value for one nibble on D7..D4 with the given RS and E, plus the backlight bit.
    func portByte(nibble: UInt8, register: HD44780Register, enable: Bool) -> UInt8 {
        var port: UInt8 = 0
        if register == .data { port |= 1 << wiring.rs }
        if enable { port |= 1 << wiring.enable }
        if isBacklightOn == wiring.backlightActiveHigh { port |= 1 << wiring.backlight }
        // No array of the four lines: this runs for every expander byte.
        if nibble & 0b0001 != 0 { port |= 1 << wiring.d4 }
        if nibble & 0b0010 != 0 { port |= 1 << wiring.d5 }
        if nibble & 0b0100 != 0 { port |= 1 << wiring.d6 }
        if nibble & 0b1000 != 0 { port |= 1 << wiring.d7 }
        return port
    }

    /// E-low bytes needed before a strobe so that E rises `executionSlots` byte times after the
    /// previous latch: the bytes in between, counting address bytes (one per transaction).
    private func lowBytesNeeded(afterLatch: Bool, atTransactionStart: Bool) -> Int {
        guard afterLatch else { return 0 }
        if bus.supportsMultiByteWrite {
            // k low bytes give k + 1 byte times from the latch to the rising E, + 1 for an address byte.
            let free = atTransactionStart ? 2 : 1
            return max(0, executionSlots - free)
        }
        // One transaction per expander byte: each is an address byte and a data byte.
        return max(0, (executionSlots + 1) / 2 - 1)
    }

    /// E-low set-up bytes (at least one when RS/R/W differ from the port state or it is unknown;
    /// at least `lowBytes` for spacing), then E high, then E low.
    private func appendStrobe(nibble: UInt8, register: HD44780Register, lowBytes: Int, state: inout UInt8?, to expander: inout [UInt8]) {
        let low = portByte(nibble: nibble, register: register, enable: false)
        let controlMask: UInt8 = 1 << wiring.rs | 1 << wiring.rw | 1 << wiring.enable
        let setUp = state.map { $0 & controlMask != low & controlMask } ?? true
        for _ in 0..<max(lowBytes, setUp ? 1 : 0) {
            expander.append(low)
        }
        expander.append(portByte(nibble: nibble, register: register, enable: true))
        expander.append(low)
        state = low
    }

    private mutating func send(_ expander: [UInt8], endState: UInt8?) throws(HALError) {
        do throws(HALError) {
            if bus.supportsMultiByteWrite {
                try bus.write(expander, to: address)
            } else {
                for byte in expander {
                    try bus.write([byte], to: address)
                }
            }
        } catch {
            // A transaction may have stopped anywhere: the pins are unknown.
            portState = nil
            throw error
        }
        portState = endState
    }
}
