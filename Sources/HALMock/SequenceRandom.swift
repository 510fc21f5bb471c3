import HAL

/// A deterministic random source for the simulator and tests: `bytes` in order, over and over (a
/// test picks the bytes a code is made from), or, with `seed`, a fixed pseudo-random sequence
/// (xorshift64*). Never for a real device. `failing` makes every fill throw.
public struct SequenceRandom: RandomSource {
    private var bytes: [UInt8]
    private var next = 0
    private var state: UInt64
    public var failing = false
    /// Bytes handed out so far.
    public private(set) var drawn = 0

    /// Hands out `bytes` in order, then again from the start; must not be empty.
    public init(bytes: [UInt8]) {
        precondition(!bytes.isEmpty, "SequenceRandom needs at least one byte")
        self.bytes = bytes
        state = 0
    }

    /// A fixed pseudo-random sequence from `seed` (the same seed, the same codes).
    public init(seed: UInt64) {
        bytes = []
        state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
    }

    public mutating func fill(_ buffer: inout [UInt8]) throws(HALError) {
        if failing { throw HALError(.injected, operation: "getrandom") }
        for index in buffer.indices {
            if bytes.isEmpty {
                state ^= state >> 12
                state ^= state << 25
                state ^= state >> 27
                buffer[index] = UInt8(truncatingIfNeeded: (state &* 0x2545_F491_4F6C_DD1D) >> 56)
            } else {
                buffer[index] = bytes[next]
                next = (next + 1) % bytes.count
            }
            drawn += 1
        }
    }
}
