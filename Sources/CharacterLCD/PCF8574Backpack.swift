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
/// HD44780 latches on E's falling edge), so one HD44780 byte is four expander bytes, high nibble
/// first. RS, data and E change in the same expander write (four writes per byte is the floor; a
/// separate set-up write would cost a fifth): where a batch switches between instruction and data,
/// RS rises with E rather than 40 ns before it as the HD44780U timing diagram draws, which is the
/// common practice of batching backpack drivers; the data is latched when E falls, one expander
/// byte (about 90 us at 100 kHz) later. R/W is always low.
/// The backlight bit is carried in every byte.
///
/// Spacing: the next nibble latches two expander bytes (18 SCL clocks: 180 us at 100 kHz, 45 us at
/// 400 kHz) after the previous one, which exceeds the 37 us instruction execution time, so batches
/// of fast instructions need no extra waits (the `HD44780Port` contract).
///
/// When `bus.supportsMultiByteWrite` is true, each `write` is one I2C transaction (one address byte,
/// then every expander byte); otherwise each expander byte is its own transaction.
public struct PCF8574Backpack<Bus: I2CBus>: HD44780Port {
    /// The I2C master. Public so tests and diagnostics can inspect a recording bus.
    public var bus: Bus
    public let address: I2CAddress
    public let wiring: PCF8574Wiring
    /// The backlight state carried in every expander byte. Starts on. Updated by `setBacklight`
    /// before its write, so it holds the requested state even if that write failed.
    public private(set) var isBacklightOn: Bool = true

    /// Precondition: `wiring.isValid`.
    public init(bus: Bus, address: I2CAddress, wiring: PCF8574Wiring = .common) {
        precondition(wiring.isValid, "PCF8574Wiring: positions must be distinct and in 0...7")
        self.bus = bus
        self.address = address
        self.wiring = wiring
    }

    /// The largest value a 4-bit nibble can have; also the mask of the low nibble.
    private static var nibbleMax: UInt8 { 0x0F }
    /// Two nibbles per HD44780 byte, two expander bytes (E high, E low) per nibble.
    public static var expanderBytesPerLCDByte: Int { 4 }

    /// Two expander bytes (E high, E low) for one nibble with RS=0, as a transaction of their own
    /// (two when the bus is single-byte only).
    public mutating func writeInitNibble(_ nibble: UInt8) throws(HALError) {
        precondition(nibble <= PCF8574Backpack.nibbleMax, "writeInitNibble: nibble must be 0...15")
        var expander: [UInt8] = []
        expander.reserveCapacity(2)
        appendStrobe(nibble: nibble, register: .instruction, to: &expander)
        try send(expander)
    }

    /// Four expander bytes per HD44780 byte, all in one transaction when the bus allows.
    /// An empty `bytes` sends nothing.
    public mutating func write(_ bytes: [HD44780Byte]) throws(HALError) {
        guard !bytes.isEmpty else { return }
        var expander: [UInt8] = []
        expander.reserveCapacity(bytes.count * PCF8574Backpack.expanderBytesPerLCDByte)
        for byte in bytes {
            appendStrobe(nibble: byte.value >> 4, register: byte.register, to: &expander)
            appendStrobe(nibble: byte.value & PCF8574Backpack.nibbleMax, register: byte.register, to: &expander)
        }
        try send(expander)
    }

    /// One expander byte with E low (the HD44780 ignores it), RS/R/W low, data lines low, and the
    /// backlight bit for `on`.
    public mutating func setBacklight(_ on: Bool) throws(HALError) {
        isBacklightOn = on
        try send([portByte(nibble: 0, register: .instruction, enable: false)])
    }

    /// The port value for one nibble on D7..D4 with the given RS and E, plus the backlight bit.
    func portByte(nibble: UInt8, register: HD44780Register, enable: Bool) -> UInt8 {
        var port: UInt8 = 0
        if register == .data { port |= 1 << wiring.rs }
        if enable { port |= 1 << wiring.enable }
        if isBacklightOn == wiring.backlightActiveHigh { port |= 1 << wiring.backlight }
        let dataLines = [wiring.d4, wiring.d5, wiring.d6, wiring.d7]
        for bit in 0..<dataLines.count where nibble & (1 << UInt8(bit)) != 0 {
            port |= 1 << dataLines[bit]
        }
        return port
    }

    private func appendStrobe(nibble: UInt8, register: HD44780Register, to expander: inout [UInt8]) {
        expander.append(portByte(nibble: nibble, register: register, enable: true))
        expander.append(portByte(nibble: nibble, register: register, enable: false))
    }

    private mutating func send(_ expander: [UInt8]) throws(HALError) {
        if bus.supportsMultiByteWrite {
            try bus.write(expander, to: address)
        } else {
            for byte in expander {
                try bus.write([byte], to: address)
            }
        }
    }
}
