// Secrets on their way to a command, and the random source a code made on the device is drawn
// from. Protocols and value types only; HALLinux reads the kernel's random source, HALMock is
// deterministic.

/// The digits of a code, on their way to a command's standard input: a submitted code to the verify
/// command, or a code made on the device to the send command. Never
/// logged or persisted: `description` names only the length. The runner calls `wipe()` once the
/// digits are written. (Best effort: Swift may copy a buffer, and a copy made with its own storage
/// is not overwritten; the flow keeps its own field in one buffer and overwrites it, and a code's
/// copies share one storage, which `wipe()` overwrites in place.)
public struct SecretCode: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The ASCII digits.
    public private(set) var digits: [UInt8]

    public init(digits: [UInt8]) { self.digits = digits }

    public var count: Int { digits.count }

    /// Overwrites the digits with zeros in their storage, then empties this code. The storage is
    /// overwritten in place even when other copies of this code share it (the action that carried
    /// the request to the runner, say): deliberately, so every copy of the secret is zeroed, not a
    /// fresh copy made by copy-on-write.
    public mutating func wipe() {
        digits.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            UnsafeMutablePointer(mutating: base).update(repeating: 0, count: buffer.count)
        }
        digits = []
    }

    public var description: String {
        // The count in decimal, digit by digit (Embedded Swift has no integer formatting here).
        var count = digits.count
        var text: [UInt8] = []
        repeat {
            text.insert(UInt8(ascii: "0") + UInt8(count % 10), at: 0)
            count /= 10
        } while count > 0
        return "<code of " + String(decoding: text, as: UTF8.self) + " digits>"
    }
    public var debugDescription: String { description }
}

/// A source of random bytes fit for secrets: the kernel's getrandom(2) on Linux (`KernelRandom`),
/// a deterministic one in the mock.
public protocol RandomSource {
    /// Fills every byte of `buffer` with random bytes, or throws (never a partial fill).
    mutating func fill(_ buffer: inout [UInt8]) throws(HALError)
}

/// No random source: every `fill` fails. For loops that never make a code.
public struct NoRandomSource: RandomSource {
    public init() {}
    public mutating func fill(_ buffer: inout [UInt8]) throws(HALError) {
        throw HALError(.unsupported, operation: "draw a code: no random source")
    }
}
