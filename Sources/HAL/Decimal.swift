/// `value` in decimal, with a minus sign for negatives. Written out because Embedded Swift has no
/// `description` for integers to lean on; every layer's messages and files use this one.
public func decimalDigits<Integer: BinaryInteger>(_ value: Integer) -> String {
    // Work on the magnitude so the most negative value does not overflow.
    var magnitude = value.magnitude
    var digits: [UInt8] = []
    repeat {
        digits.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10))
        magnitude /= 10
    } while magnitude > 0
    if value < 0 { digits.append(UInt8(ascii: "-")) }
    return String(decoding: digits.reversed(), as: UTF8.self)
}
