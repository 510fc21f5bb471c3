import HAL

/// A 128x64 OLED module on the mock I2C bus: an SSD1306 or SH1106 controller, decoded from the
/// byte stream into the pixels a person would see, independently of the driver (its own reading of
/// the datasheets: SSD1306 Rev 1.1 sections 8.1.5 (I2C), 9 (command table), 10.1 (addressing);
/// the SH1106 command table).
///
/// Model:
/// - Every write starts with a control byte: bit 7 Co, bit 6 D/C#; Co = 0 makes the rest of the
///   write commands (D/C# = 0) or GDDRAM data (D/C# = 1); Co = 1 applies to one byte, then the
///   next byte is a control byte again. Bits 5...0 must be 0.
/// - Commands are parsed with their arguments, across writes if need be (flagged: a driver should
///   not cut a command).
/// - GDDRAM: 8 pages x 128 (SSD1306) or 132 (SH1106) columns. SSD1306 page addressing (0x20 0x02,
///   its reset mode), horizontal (0x00) and vertical (0x01) with the 0x21/0x22 windows and their
///   wrap-around; SH1106 page addressing only (0xB0+page, 0x00/0x10 column nibbles), its column
///   pointer stopping at 131.
/// - The segment remap (0xA0/0xA1) applies when a byte is written (SSD1306 10.1.8: data already in
///   RAM keep their place); the COM scan direction (0xC0/0xC8) when the glass is read. As modules
///   are mounted, 0xA1 with 0xC8 shows RAM column 0 (SH1106: column 2) at the left and page 0 at
///   the top.
/// - The glass is dark while the display is off (0xAE, the reset state) and, on the SSD1306,
///   when the charge pump was not enabled (0x8D 0x14) before 0xAF (no panel voltage on modules
///   without an external VCC).
public final class OLEDEmulator: I2CDevice {
    public enum Chip: Hashable, Sendable {
        case ssd1306
        case sh1106
    }

    /// A rule of the datasheets the byte stream broke, with when.
    public struct Violation: Hashable, Sendable, CustomStringConvertible {
        public var time: Instant
        public var message: String
        public var description: String { "\(Format.millis(time)): \(message)" }
    }

    public let chip: Chip
    public private(set) var violations: [Violation] = []
    /// Display data bytes written into GDDRAM so far.
    public private(set) var dataBytesWritten = 0
    /// Command bytes (with their arguments) received so far.
    public private(set) var commandBytesReceived = 0
    public private(set) var isDisplayOn = false
    public private(set) var contrast: UInt8 = 0x7F
    /// When the last 0xAF arrived (SEG/COM on 100 ms later).
    public private(set) var displayOnAt: Instant?

    public static let glassWidth = 128
    public static let glassHeight = 64

    private var ram: [[UInt8]]
    private let ramWidth: Int
    /// Where the glass's first segment sits in RAM: SH1106 modules centre 128 px on 132 columns.
    private let glassOffset: Int
    // Decoder state for the current write.
    private var atControlByte = true
    private var singleByteFollows = false
    private var streamIsData = false
    private var pendingCommand: [UInt8] = []
    // Controller registers.
    private enum Mode { case horizontal, vertical, page }
    private var mode: Mode = .page
    private var page = 0
    private var column = 0
    private var columnStart = 0
    private var columnEnd = 127
    private var pageStart = 0
    private var pageEnd = 7
    private var segmentsRemapped = false
    private var comReversed = false
    private var chargePumpOn = false
    private var inverse = false
    private var entireOn = false
    private var multiplex = 63
    private var startLine = 0
    private var displayOffset = 0
    private var comPins: UInt8 = 0x12

    public init(chip: Chip) {
        self.chip = chip
        ramWidth = chip == .ssd1306 ? 128 : 132
        glassOffset = chip == .ssd1306 ? 0 : 2
        // Power-on RAM content is undefined; model it as a pattern so a driver that never clears
        // it shows garbage.
        ram = (0..<8).map { p in (0..<(chip == .ssd1306 ? 128 : 132)).map { UInt8(truncatingIfNeeded: $0 * 37 + p * 11) } }
        // SH1106 powers up with its DC-DC on (reset value 0x8B); the SSD1306's charge pump is off.
        chargePumpOn = chip == .sh1106
    }

    public func transactionStarted(at time: Instant) {
        atControlByte = true
        singleByteFollows = false
    }

    public func transactionEnded(at time: Instant) {
        if atControlByte && singleByteFollows {
            flag(time, "a Co=1 control byte ended the write without its byte")
        }
        if !pendingCommand.isEmpty {
            flag(time, "command \(hex(pendingCommand[0])) is cut by the end of the write (\(pendingCommand.count) of its bytes)")
        }
    }

    public func receive(_ byte: UInt8, at time: Instant) {
        if atControlByte {
            if byte & 0x3F != 0 {
                flag(time, "control byte \(hex(byte)) has bits 5...0 set")
            }
            streamIsData = byte & 0x40 != 0
            singleByteFollows = byte & 0x80 != 0
            atControlByte = false
            return
        }
        if singleByteFollows { atControlByte = true }
        if streamIsData {
            if !pendingCommand.isEmpty {
                flag(time, "data while command \(hex(pendingCommand[0])) waits for its arguments")
                pendingCommand.removeAll()
            }
            writeData(byte, at: time)
        } else {
            commandBytesReceived += 1
            pendingCommand.append(byte)
            if pendingCommand.count == argumentCount(of: pendingCommand[0], at: time) + 1 {
                let command = pendingCommand
                pendingCommand.removeAll()
                execute(command, at: time)
            }
        }
    }

    // MARK: Reading the glass

    /// Whether the pixel at (x, y) of the glass (as mounted) is lit. Dark while off.
    public func pixel(x: Int, y: Int) -> Bool {
        precondition(x >= 0 && x < OLEDEmulator.glassWidth && y >= 0 && y < OLEDEmulator.glassHeight, "pixel off the glass")
        guard isDisplayOn && chargePumpOn else { return false }
        if entireOn { return true }
        let segment = glassOffset + x
        // Rows: with the COM scan reversed (as mounted) glass row y shows RAM row y.
        let row = comReversed ? y : OLEDEmulator.glassHeight - 1 - y
        let lit = ram[row / 8][segment] & (1 << UInt8(row % 8)) != 0
        return lit != inverse
    }

    /// The glass as text, one string per row: "#" lit, "." dark.
    public var rows: [String] {
        (0..<OLEDEmulator.glassHeight).map { y in
            String((0..<OLEDEmulator.glassWidth).map { pixel(x: $0, y: y) ? "#" : "." })
        }
    }

    /// A binary PGM (P5) of the glass, `scale` screen pixels per glass pixel: lit pixels light
    /// (as the usual white or blue OLED), dark ones black.
    public func pgm(scale: Int = 1) -> [UInt8] {
        precondition(scale >= 1 && scale <= 16, "pgm: scale 1...16")
        let width = OLEDEmulator.glassWidth * scale
        let height = OLEDEmulator.glassHeight * scale
        var bytes = Array("P5\n\(width) \(height)\n255\n".utf8)
        for y in 0..<height {
            for x in 0..<width {
                bytes.append(pixel(x: x / scale, y: y / scale) ? 0xFF : 0x00)
            }
        }
        return bytes
    }

    public func clearViolations() { violations.removeAll() }

    // MARK: Decoding

    private func argumentCount(of command: UInt8, at time: Instant) -> Int {
        switch (chip, command) {
        case (.ssd1306, 0x20), (.ssd1306, 0x8D): return 1
        case (.ssd1306, 0x21), (.ssd1306, 0x22): return 2
        case (.sh1106, 0xAD): return 1
        case (_, 0x81), (_, 0xA8), (_, 0xD3), (_, 0xD5), (_, 0xD9), (_, 0xDA), (_, 0xDB): return 1
        default: return 0
        }
    }

    private func execute(_ command: [UInt8], at time: Instant) {
        let op = command[0]
        switch op {
        case 0x00...0x0F:
            guard mode == .page else { return flag(time, "column nibble \(hex(op)) outside page addressing mode") }
            column = (column & 0xF0) | Int(op & 0x0F)
        case 0x10...0x1F:
            guard mode == .page else { return flag(time, "column nibble \(hex(op)) outside page addressing mode") }
            let value = (Int(op & 0x0F) << 4) | (column & 0x0F)
            if value >= ramWidth { flag(time, "column \(value) is past the RAM's \(ramWidth) columns") }
            column = value
        case 0x20 where chip == .ssd1306:
            switch command[1] {
            case 0x00: mode = .horizontal
            case 0x01: mode = .vertical
            case 0x02: mode = .page
            default: flag(time, "memory addressing mode \(hex(command[1])) is invalid")
            }
            if mode != .page {
                column = columnStart
                page = pageStart
            }
        case 0x21 where chip == .ssd1306:
            let (start, end) = (Int(command[1]), Int(command[2]))
            guard start <= end, end < 128 else { return flag(time, "column window \(start)...\(end) is not inside 0...127") }
            if mode == .page { flag(time, "column window set in page addressing mode (it has no effect there)") }
            columnStart = start
            columnEnd = end
            column = start
        case 0x22 where chip == .ssd1306:
            let (start, end) = (Int(command[1]), Int(command[2]))
            guard start <= end, end < 8 else { return flag(time, "page window \(start)...\(end) is not inside 0...7") }
            if mode == .page { flag(time, "page window set in page addressing mode (it has no effect there)") }
            pageStart = start
            pageEnd = end
            page = start
        case 0x40...0x7F:
            startLine = Int(op & 0x3F)
            if startLine != 0 { flag(time, "display start line \(startLine): the emulator models line 0 only") }
        case 0x81: contrast = command[1]
        case 0x8D where chip == .ssd1306:
            if command[1] & 0xFB != 0x10 { flag(time, "charge pump argument \(hex(command[1])) is not 0x10 or 0x14") }
            chargePumpOn = command[1] & 0x04 != 0
        case 0xAD where chip == .sh1106:
            if command[1] & 0xFE != 0x8A { flag(time, "DC-DC argument \(hex(command[1])) is not 0x8A or 0x8B") }
            chargePumpOn = command[1] & 0x01 != 0
        case 0xA0, 0xA1: segmentsRemapped = op == 0xA1
        case 0xA4, 0xA5: entireOn = op == 0xA5
        case 0xA6, 0xA7: inverse = op == 0xA7
        case 0xA8:
            multiplex = Int(command[1])
            if multiplex != 63 { flag(time, "multiplex ratio \(multiplex + 1) on a 64-row glass") }
        case 0xAE: isDisplayOn = false
        case 0xAF:
            if !chargePumpOn { flag(time, "display on without the charge pump: the panel stays dark") }
            if multiplex != 63 || comPins != 0x12 { flag(time, "display on before the 128x64 multiplex and COM pins are set") }
            isDisplayOn = true
            displayOnAt = time
        case 0xB0...0xB7:
            guard mode == .page else { return flag(time, "page start \(hex(op)) outside page addressing mode") }
            page = Int(op & 0x07)
        case 0xC0, 0xC8: comReversed = op == 0xC8
        case 0xD3:
            displayOffset = Int(command[1])
            if displayOffset != 0 { flag(time, "display offset \(displayOffset): the emulator models 0 only") }
        case 0xD5, 0xD9, 0xDB: break
        case 0xDA:
            comPins = command[1]
            if comPins != 0x12 { flag(time, "COM pins \(hex(comPins)) interleave the rows of a 128x64 module wrongly") }
        default:
            flag(time, "command \(hex(op)) is not in the \(chip == .ssd1306 ? "SSD1306" : "SH1106") command table")
        }
    }

    private func writeData(_ byte: UInt8, at time: Instant) {
        dataBytesWritten += 1
        let target = segmentsRemapped ? ramWidth - 1 - column : column
        // The module's glass is mounted mirrored: segment s shows at x = last - s. Storing by
        // segment keeps `pixel` a plain lookup; with 0xA1 that is RAM column order again.
        let segment = ramWidth - 1 - target
        if column < ramWidth {
            ram[page][segment] = byte
        } else {
            flag(time, "data written past column \(ramWidth - 1)")
        }
        switch mode {
        case .page:
            if column < ramWidth - 1 || chip == .ssd1306 {
                column += 1
                if chip == .ssd1306 && column > 127 { column = 0 }  // SSD1306 10.1.3: wraps within the page
            } else {
                column = ramWidth  // SH1106: stops; further data are lost
            }
        case .horizontal:
            if column == columnEnd {
                column = columnStart
                page = page == pageEnd ? pageStart : page + 1
            } else {
                column += 1
            }
        case .vertical:
            if page == pageEnd {
                page = pageStart
                column = column == columnEnd ? columnStart : column + 1
            } else {
                page += 1
            }
        }
    }

    private func flag(_ time: Instant, _ message: String) {
        violations.append(Violation(time: time, message: message))
    }

    private func hex(_ byte: UInt8) -> String { "0x" + Format.hexByte(byte) }
}
