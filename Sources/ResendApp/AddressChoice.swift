import HAL
import ResendConfig

/// `--address` and `lcd.address`: probe the backpack ranges, or a fixed 7-bit address.
public typealias AddressChoice = DeviceConfig.LCD.Address

extension AddressChoice {
    /// "auto", "0x27" (hex, `0x` or `0X`) or "39" (decimal). The address must be within
    /// 0x08-0x77 (`I2CAddress.validRange`). Throws a usage error naming `--address`.
    public static func parse(_ text: String, command: String) throws(ExitError) -> AddressChoice {
        if text == "auto" { return .auto }
        var value: UInt64?
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            let digits = text.dropFirst(2)
            if !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0.isHexDigit }) { value = UInt64(digits, radix: 16) }
        } else {
            value = parseDecimalDigits(Substring(text))
        }
        let range = "\(hexAddress(I2CAddress.validRange.lowerBound))-\(hexAddress(I2CAddress.validRange.upperBound))"
        guard let value else {
            throw ExitError(
                .usage, "\(command): --address: \(shown(text)) is not an address; use auto, 0xNN (hex) or a decimal number, within \(range)")
        }
        guard let byte = UInt8(exactly: value), let address = I2CAddress(byte) else {
            throw ExitError(
                .usage,
                "\(command): --address: \(shown(text)) is outside \(range), the 7-bit I2C addresses a device may use (PCF8574 backpacks: 0x20-0x27, PCF8574A: 0x38-0x3f)"
            )
        }
        return .fixed(address)
    }

    /// "auto" or "0x27".
    public var text: String {
        switch self {
        case .auto: return "auto"
        case .fixed(let address): return hexAddress(address.rawValue)
        }
    }
}

/// "0x27": two lower-case hex digits, as i2cdetect prints them.
public func hexAddress(_ value: UInt8) -> String {
    let digits = String(value, radix: 16, uppercase: false)
    return "0x" + (digits.count < 2 ? "0" + digits : digits)
}

/// Why `run` refuses `auto`: a read of a PCF8574 returns its port pins, which no other chip in the
/// backpack ranges is obliged to differ from, so a lone responder cannot be identified without
/// writing to it; and LCD bytes reconfigure a register-based chip (MCP23008/MCP23017/PCA95xx
/// direction and output registers, a BH1750's mode, an OLED's commands).
public let autoAddressRefusal =
    "run writes the LCD's bytes only to an address you name, since a lone device answering in 0x20-0x27 or 0x38-0x3f may be another chip (an MCP23008 or PCA95xx expander, a BH1750, an AHT20, an OLED) that those bytes would reconfigure; 'resend-button check' finds the backpack and prints the line to use (lcd: { address: 0x27 } in the config, or --address 0x27)"
