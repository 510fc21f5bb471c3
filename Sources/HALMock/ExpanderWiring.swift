/// Which PCF8574 port bit (P0...P7) drives which HD44780 pin on a backpack.
///
/// The HD44780 data lines D0-D3 are not connected on a backpack; the controller is used in 4-bit
/// mode over D4-D7.
public struct ExpanderWiring: Hashable, Sendable {
    /// Port bit of RS (register select: 0 = instruction, 1 = data).
    public var rs: Int
    /// Port bit of R/W (0 = write, 1 = read).
    public var rw: Int
    /// Port bit of E (enable: data is latched on its falling edge).
    public var e: Int
    /// Port bit of the backlight transistor.
    public var backlight: Int
    /// Port bits of D4, D5, D6, D7, in that order.
    public var data: [Int]
    /// True when a high backlight bit lights the backlight (the common boards).
    public var backlightActiveHigh: Bool

    public init(rs: Int, rw: Int, e: Int, backlight: Int, d4: Int, d5: Int, d6: Int, d7: Int, backlightActiveHigh: Bool = true) {
        let bits = [rs, rw, e, backlight, d4, d5, d6, d7]
        precondition(bits.allSatisfy { (0...7).contains($0) }, "PCF8574 port bits are P0...P7")
        precondition(Set(bits).count == bits.count, "two signals wired to one PCF8574 port bit")
        self.rs = rs
        self.rw = rw
        self.e = e
        self.backlight = backlight
        self.data = [d4, d5, d6, d7]
        self.backlightActiveHigh = backlightActiveHigh
    }

    /// The common backpack wiring (HARDWARE.md): P0=RS, P1=RW, P2=E, P3=backlight (high = on),
    /// P4..P7=D4..D7.
    public static let common = ExpanderWiring(rs: 0, rw: 1, e: 2, backlight: 3, d4: 4, d5: 5, d6: 6, d7: 7)

    func isHigh(_ bit: Int, in port: UInt8) -> Bool {
        port & (1 << UInt8(bit)) != 0
    }

    /// The nibble on D7..D4 of `port` (D4 is bit 0 of the result).
    func nibble(in port: UInt8) -> UInt8 {
        var value: UInt8 = 0
        for (index, bit) in data.enumerated() where isHigh(bit, in: port) {
            value |= 1 << UInt8(index)
        }
        return value
    }

    /// The port bits the HD44780 samples on E falling: RS, RW and D4-D7.
    var sampledMask: UInt8 {
        ([rs, rw] + data).reduce(0) { $0 | (1 << UInt8($1)) }
    }

    /// The port byte that puts `nibble` on D4-D7 with the given RS, RW, E and backlight levels.
    /// For tests that compute backpack bytes from the datasheet.
    public func port(nibble: UInt8, rs rsHigh: Bool, rw rwHigh: Bool = false, e eHigh: Bool, backlight on: Bool) -> UInt8 {
        precondition(nibble < 16, "a nibble is 4 bits")
        var value: UInt8 = 0
        for (index, bit) in data.enumerated() where nibble & (1 << UInt8(index)) != 0 {
            value |= 1 << UInt8(bit)
        }
        if rsHigh { value |= 1 << UInt8(rs) }
        if rwHigh { value |= 1 << UInt8(rw) }
        if eHigh { value |= 1 << UInt8(e) }
        if on == backlightActiveHigh { value |= 1 << UInt8(backlight) }
        return value
    }
}
