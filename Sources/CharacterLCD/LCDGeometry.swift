/// The size of a character LCD in characters, and where each row lives in the HD44780's DDRAM.
///
/// Only the four layouts below exist: their row start addresses are fixed by how the module maker
/// wires the HD44780 (and its segment extenders) to the glass, so an arbitrary size cannot be
/// addressed correctly and is rejected.
///
/// | geometry | display lines (function set N) | row start DDRAM addresses |
/// |---|---|---|
/// | 8x1  | 1 | 0x00 |
/// | 16x2 | 2 | 0x00, 0x40 |
/// | 20x4 | 2 | 0x00, 0x40, 0x14, 0x54 (rows 0 and 2 are one 40-character DDRAM line, rows 1 and 3 the other) |
/// | 40x2 | 2 | 0x00, 0x40 |
public struct LCDGeometry: Hashable, Sendable {
    public let columns: Int
    public let rows: Int

    public static let lcd8x1 = LCDGeometry(unchecked: 8, 1)
    public static let lcd16x2 = LCDGeometry(unchecked: 16, 2)
    public static let lcd20x4 = LCDGeometry(unchecked: 20, 4)
    public static let lcd40x2 = LCDGeometry(unchecked: 40, 2)

    /// Every geometry this driver can address, smallest first.
    public static let supported: [LCDGeometry] = [.lcd8x1, .lcd16x2, .lcd20x4, .lcd40x2]

    private init(unchecked columns: Int, _ rows: Int) {
        self.columns = columns
        self.rows = rows
    }

    /// Returns nil unless `columns` x `rows` is one of `supported`.
    public init?(columns: Int, rows: Int) {
        for geometry in LCDGeometry.supported where geometry.columns == columns && geometry.rows == rows {
            self = geometry
            return
        }
        return nil
    }

    /// Parses "<columns>x<rows>" as written on a module's data sheet ("16x2", "20x4", "8x1", "40x2";
    /// an upper-case "X" and leading zeros are accepted too). Returns nil for any other text,
    /// including surrounding spaces, signs or a size that is not `supported`.
    public init?(parsing text: String) {
        let separatorLower = UInt8(ascii: "x")
        let separatorUpper = UInt8(ascii: "X")
        var numbers: [Int] = [0]
        var digitsInCurrent = 0
        for byte in text.utf8 {
            if byte == separatorLower || byte == separatorUpper {
                guard numbers.count == 1, digitsInCurrent > 0 else { return nil }
                numbers.append(0)
                digitsInCurrent = 0
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                // Three digits are more than any supported size; refusing more avoids overflow.
                guard digitsInCurrent < 3 else { return nil }
                numbers[numbers.count - 1] = numbers[numbers.count - 1] * 10 + Int(byte - UInt8(ascii: "0"))
                digitsInCurrent += 1
            } else {
                return nil
            }
        }
        guard numbers.count == 2, digitsInCurrent > 0 else { return nil }
        self.init(columns: numbers[0], rows: numbers[1])
    }

    /// "16x2": columns, a lower-case x, rows. `LCDGeometry(parsing: g.name) == g`.
    public var name: String { "\(columns)x\(rows)" }

    /// The number of character cells, `columns * rows`.
    public var cellCount: Int { columns * rows }

    /// True when the controller must run in 2-line mode (function set N = 1): every geometry with
    /// more than one row. In 2-line mode DDRAM is 0x00-0x27 and 0x40-0x67; in 1-line mode 0x00-0x4F.
    public var usesTwoLineMode: Bool { rows > 1 }

    /// DDRAM address of the first cell of `row`. Precondition: `0 <= row < rows`.
    public func rowStartAddress(_ row: Int) -> UInt8 {
        precondition(row >= 0 && row < rows, "LCDGeometry: row out of range")
        // HD44780U: the second DDRAM line starts at 0x40 in 2-line mode; 20x4 modules fold each
        // 40-character line into two rows of 20, so rows 2 and 3 continue rows 0 and 1.
        let firstLine: UInt8 = 0x00
        let secondLine: UInt8 = 0x40
        switch row {
        case 0: return firstLine
        case 1: return secondLine
        case 2: return firstLine + UInt8(columns)
        default: return secondLine + UInt8(columns)
        }
    }

    /// DDRAM address of (row, column): row starts 0x00, 0x40, 0x14, 0x54 (20x4), 0x00/0x40 for 40x2
    /// and 16x2, 0x00 for 8x1. Precondition: the cell is on the screen.
    public func ddramAddress(row: Int, column: Int) -> UInt8 {
        precondition(column >= 0 && column < columns, "LCDGeometry: column out of range")
        return rowStartAddress(row) + UInt8(column)
    }
}
