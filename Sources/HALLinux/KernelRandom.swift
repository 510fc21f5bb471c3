import CLinuxOS
import HAL

/// The kernel's random source, getrandom(2): what codes made on the device are drawn from. Blocks
/// only at boot, until the kernel's pool is initialised.
public struct KernelRandom: RandomSource {
    public init() {}

    public mutating func fill(_ buffer: inout [UInt8]) throws(HALError) {
        let count = buffer.count
        _ = try Syscall.run("getrandom") {
            buffer.withUnsafeMutableBufferPointer { rb_getrandom($0.baseAddress, count) }
        }
    }
}
