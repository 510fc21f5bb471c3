import HAL
import HALLinux
import ResendCore
import Testing

@Suite("The kernel's random source")
struct KernelRandomTests {
    /// 100,000 codes of 6 digits (600,000 digits) from getrandom(2), counted per digit. Pearson's
    /// chi-square against the uniform distribution has 9 degrees of freedom; the test fails above
    /// 62.0, which a uniform source exceeds with probability 5.5e-10 (below 1e-9).
    @Test func codesFromGetrandomAreUniformOverTheirDigits() throws {
        var random = KernelRandom()
        var code = DeviceCode(capacity: 6)
        var counts = [Int](repeating: 0, count: 10)
        for _ in 0..<100_000 {
            var drawn = try code.draw(length: 6, from: &random)
            for digit in drawn.digits { counts[Int(digit - UInt8(ascii: "0"))] += 1 }
            drawn.wipe()
        }
        let expected = 60_000.0
        let chiSquare = counts.reduce(0.0) { $0 + (Double($1) - expected) * (Double($1) - expected) / expected }
        #expect(counts.reduce(0, +) == 600_000)
        #expect(chiSquare < 62.0, "chi-square \(chiSquare) over \(counts)")
    }

    @Test func aFillCoversTheWholeBuffer() throws {
        var random = KernelRandom()
        var buffer = [UInt8](repeating: 0, count: 4096)
        try random.fill(&buffer)
        // 4096 zero bytes from a working source: probability 2^-32768.
        #expect(buffer.contains { $0 != 0 })
    }
}
