import HAL

/// A code made on the device (`EntryConfig.codeMadeOnDevice`): drawn from a `RandomSource`, held
/// in one fixed buffer that is overwritten in place when the code is replaced or dropped, and
/// compared with a typed code in constant time.
///
/// Digits are drawn by rejection sampling: a random byte below 250 stands for the digit
/// `byte % 10` (each digit from exactly 25 of the 250 bytes), a byte of 250-255 is dropped and
/// another drawn, so every digit is exactly equally likely (no modulo bias). A new code is never
/// the one it replaces (drawn again when it is).
public struct DeviceCode {
    /// The bytes at or above this are dropped: 250 is the largest multiple of 10 a byte holds.
    public static let rejectionBound: UInt8 = 250

    /// The ASCII digits in `digits[0..<length]`, zeros after; `capacity` bytes, never reallocated.
    private var digits: [UInt8]
    public private(set) var length = 0

    /// A buffer for codes of up to `capacity` digits, holding none.
    public init(capacity: Int) {
        digits = Array(repeating: 0, count: capacity)
    }

    /// True while a code is held.
    public var isSet: Bool { length > 0 }

    /// The digit a random byte stands for (0-9), or nil when the byte is dropped (250-255).
    @inline(__always)
    public static func digit(forByte byte: UInt8) -> UInt8? {
        byte < rejectionBound ? byte % 10 : nil
    }

    /// Replaces the held code with a new one of `length` digits from `random`, never equal to the
    /// one it replaces; returns a copy in storage of its own for the send command's standard input
    /// (the caller wipes it; the held code stays). The old code is overwritten first. Throws when the source fails; then no code is held.
    public mutating func draw<Random: RandomSource>(length: Int, from random: inout Random) throws(HALError) -> SecretCode {
        precondition(length >= 1 && length <= digits.count, "DeviceCode.draw: length out of range")
        var previous = digits
        let previousLength = self.length
        defer { for index in previous.indices { previous[index] = 0 } }
        wipe()
        var bytes = [UInt8](repeating: 0, count: 2 * length)
        defer { for index in bytes.indices { bytes[index] = 0 } }
        while true {
            var filled = 0
            while filled < length {
                try random.fill(&bytes)
                for byte in bytes where filled < length {
                    if let digit = DeviceCode.digit(forByte: byte) {
                        digits[filled] = UInt8(ascii: "0") + digit
                        filled += 1
                    }
                }
            }
            self.length = length
            if !DeviceCode.equal(digits, length: length, previous, length: previousLength) { break }
        }
        // A copy in storage of its own, element by element: `Array(digits[0..<length])` would share
        // this buffer when the code fills it, and the caller's wipe would then erase the held code.
        var copy = [UInt8](repeating: 0, count: length)
        for index in 0..<length { copy[index] = digits[index] }
        return SecretCode(digits: copy)
    }

    /// True when `typed[0..<typedLength]` is the held code; false when none is held. Constant
    /// time (`equal`).
    public func matches(_ typed: [UInt8], length typedLength: Int) -> Bool {
        isSet && DeviceCode.equal(typed, length: typedLength, digits, length: length)
    }

    /// Overwrites the held code with zeros and holds none.
    public mutating func wipe() {
        for index in digits.indices { digits[index] = 0 }
        length = 0
    }

    /// Whether `a[0..<aLength]` equals `b[0..<bLength]`, in a time that does not depend on where
    /// (or whether) they differ: every position up to the longer buffer is read in both (a missing
    /// byte reads as 0) and folded into one accumulator with XOR and OR, without an early exit;
    /// the lengths are folded in too. `examined` counts the positions read (for tests: the same
    /// for any two inputs of the same buffer sizes).
    public static func equal(_ a: [UInt8], length aLength: Int, _ b: [UInt8], length bLength: Int, examined: inout Int) -> Bool {
        let span = max(a.count, b.count)
        var difference = UInt(bitPattern: aLength ^ bLength)
        for index in 0..<span {
            let inA = UInt8(truncatingIfNeeded: (index - aLength) >> (Int.bitWidth - 1))  // 0xFF below aLength
            let inB = UInt8(truncatingIfNeeded: (index - bLength) >> (Int.bitWidth - 1))
            let x = (index < a.count ? a[index] : 0) & inA
            let y = (index < b.count ? b[index] : 0) & inB
            difference |= UInt(x ^ y)
            examined += 1
        }
        return difference == 0
    }

    /// `equal(_:length:_:length:examined:)` without the count.
    public static func equal(_ a: [UInt8], length aLength: Int, _ b: [UInt8], length bLength: Int) -> Bool {
        var examined = 0
        return equal(a, length: aLength, b, length: bLength, examined: &examined)
    }
}
