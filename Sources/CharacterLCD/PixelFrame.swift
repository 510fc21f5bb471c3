/// A 128x64 monochrome picture in the controllers' own layout: 8 pages of 128 bytes, page-major;
/// byte `page * 128 + x` is column x of that page, bit n is row `page * 8 + n` (bit 0 at the top).
public struct PixelFrame: Hashable, Sendable {
    /// `OLEDGlass.pages * OLEDGlass.width` bytes.
    public private(set) var bytes: [UInt8]

    /// An all-dark frame.
    public init() {
        bytes = [UInt8](repeating: 0, count: OLEDGlass.pages * OLEDGlass.width)
    }

    /// Whether (x, y) is lit. Precondition: on the glass.
    public func pixel(x: Int, y: Int) -> Bool {
        precondition(x >= 0 && x < OLEDGlass.width && y >= 0 && y < OLEDGlass.height, "PixelFrame: pixel off the glass")
        return bytes[(y / OLEDGlass.rowsPerPage) * OLEDGlass.width + x] & (1 << UInt8(y % OLEDGlass.rowsPerPage)) != 0
    }

    /// Lights or darkens (x, y); a pixel off the glass is ignored (text clipped at the edge).
    public mutating func set(x: Int, y: Int, _ lit: Bool) {
        guard x >= 0 && x < OLEDGlass.width && y >= 0 && y < OLEDGlass.height else { return }
        let index = (y / OLEDGlass.rowsPerPage) * OLEDGlass.width + x
        let bit: UInt8 = 1 << UInt8(y % OLEDGlass.rowsPerPage)
        if lit { bytes[index] |= bit } else { bytes[index] &= ~bit }
    }

    /// The byte of column `x` in `page`.
    public func byte(page: Int, x: Int) -> UInt8 { bytes[page * OLEDGlass.width + x] }
}
