import HAL

/// Text helpers for traces and violation messages (no Foundation).
enum Format {
    /// Two upper-case hex digits: 0x3C -> "3C".
    static func hexByte(_ value: UInt8) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }

    /// An I2C address as people write it: "0x27".
    static func address(_ address: I2CAddress) -> String {
        "0x" + hexByte(address.rawValue)
    }

    /// A span in whole microseconds: "37 us".
    static func micros(_ span: TimeSpan) -> String {
        "\(span.microseconds) us"
    }

    /// An instant in milliseconds with three decimals: "40.090 ms".
    static func millis(_ instant: Instant) -> String {
        let micros = instant.nanoseconds / 1_000
        let sign = micros < 0 ? "-" : ""
        let magnitude = micros < 0 ? -micros : micros
        let fraction = String(magnitude % 1_000)
        let padded = String(repeating: "0", count: 3 - fraction.count) + fraction
        return "\(sign)\(magnitude / 1_000).\(padded) ms"
    }
}
