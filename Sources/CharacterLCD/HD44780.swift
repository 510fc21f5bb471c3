import HAL

/// An HD44780 character LCD in 4-bit mode, write-only, driven through a `Port`, with `Wait` for the
/// datasheet delays.
///
/// The driver keeps a shadow of DDRAM and the address counter, so `render` sends only the cells that
/// changed. It never reads the controller (R/W stays low; the busy flag is not polled): fast
/// instructions are spaced by the port (see `HD44780Port`), slow ones by `delay`.
///
/// Failure model: any thrown `HALError` from a transfer to the controller may have left it out of
/// nibble sync, so the driver forgets what the screen shows and marks itself uninitialized; the next
/// `render` (or an explicit `initialize()`) runs the whole initialisation again, re-uploads the
/// glyphs and repaints. A failed `setBacklight` does not touch the controller and changes nothing.
///
/// Text: `render` takes character codes. Turning strings into codes is `CharacterROM.encode`, left
/// to callers (the screen layout decides widths and padding).
public struct HD44780<Port: HD44780Port, Wait: Delay> {
    /// The transport. Public so tests can read a recording port's trace.
    public var port: Port
    /// The waits for the datasheet timings. Public so tests can read a recording delay.
    public var delay: Wait
    public let geometry: LCDGeometry

    /// True after `initialize()` succeeded and no transfer to the controller has failed since.
    public private(set) var isInitialized: Bool = false

    /// What DDRAM holds, per on-screen cell (row-major), nil where unknown.
    private var shadow: [UInt8?]
    /// The DDRAM address the controller's address counter holds; meaningful while initialized.
    private var addressCounter: UInt8 = 0
    /// The glyphs registered with `defineGlyph`, by character code 0...7.
    private var glyphs: [[UInt8]?]
    /// Where each cell is in DDRAM, and the frame diff over it: not generic, so the hot path is
    /// compiled once, specialised, whatever the port (see `DDRAMMap`).
    private let map: DDRAMMap

    /// Does no I/O; call `initialize()` (or `render`, which initializes on demand) to start the display.
    public init(port: Port, delay: Wait, geometry: LCDGeometry) {
        self.port = port
        self.delay = delay
        self.geometry = geometry
        self.shadow = Array(repeating: nil, count: geometry.cellCount)
        self.glyphs = Array(repeating: nil, count: HD44780Instruction.glyphCount)
        self.map = DDRAMMap(geometry: geometry)
    }

    /// The frame the driver believes the screen shows (rows x columns of character codes), or nil
    /// while that is unknown (before `initialize()`, after a failed transfer).
    public var shadowFrame: [[UInt8]]? {
        guard isInitialized else { return nil }
        var frame: [[UInt8]] = []
        for row in 0..<geometry.rows {
            var line: [UInt8] = []
            for column in 0..<geometry.columns {
                guard let code = shadow[row * geometry.columns + column] else { return nil }
                line.append(code)
            }
            frame.append(line)
        }
        return frame
    }

    /// The control lines at rest (`HD44780Port.writeIdle`: E, RS, R/W low), the power-up wait
    /// (>= 40 ms), the 4-bit init dance with the datasheet waits (0x3, 4.1 ms, 0x3,
    /// 100 us, 0x3, then 0x2), function set (2 lines or 1, 5x8), display off, clear (then 2 ms),
    /// entry mode increment without shift, the glyphs registered with `defineGlyph` (CGRAM is lost
    /// on re-init), DDRAM address 0, display on (cursor and blink off).
    ///
    /// Blocks for about 57 ms of waits plus the transfers (7 transactions, 36 wire bytes on a
    /// batching bus at 100 kHz). Afterwards the shadow is all spaces and
    /// the screen blank. Also the recovery from a lost nibble sync: it works whatever mode the
    /// controller was in. On a thrown error the display stays uninitialized.
    public mutating func initialize() throws(HALError) {
        invalidate()
        // Before the power-on wait: an expander that just powered up holds E and R/W high; any
        // cycle that dropping E ends is over long before the first nibble.
        try port.writeIdle()
        delay.delay(HD44780Timing.powerOnWait)
        try port.writeInitNibble(HD44780Instruction.initNibble8Bit)
        delay.delay(HD44780Timing.firstInitNibbleWait)
        try port.writeInitNibble(HD44780Instruction.initNibble8Bit)
        delay.delay(HD44780Timing.secondInitNibbleWait)
        try port.writeInitNibble(HD44780Instruction.initNibble8Bit)
        delay.delay(HD44780Timing.initInstructionWait)
        try port.writeInitNibble(HD44780Instruction.initNibble4Bit)
        delay.delay(HD44780Timing.initInstructionWait)

        let lines = geometry.usesTwoLineMode ? HD44780Instruction.twoLines : 0
        // 4-bit interface, 5x8 dots: DL and F stay clear.
        try port.write([
            .instruction(HD44780Instruction.functionSet | lines),
            .instruction(HD44780Instruction.displayControl),
            .instruction(HD44780Instruction.clearDisplay),
        ])
        delay.delay(HD44780Timing.clearDisplayWait)

        var setup: [HD44780Byte] = [
            .instruction(HD44780Instruction.entryModeSet | HD44780Instruction.entryIncrement)
        ]
        var uploadedGlyph = false
        for code in 0..<HD44780Instruction.glyphCount {
            if let rows = glyphs[code] {
                appendGlyphUpload(code: UInt8(code), rows: rows, to: &setup)
                uploadedGlyph = true
            }
        }
        if uploadedGlyph {
            // Clear left the address counter at DDRAM 0; the uploads moved it into CGRAM.
            setup.append(.instruction(HD44780Instruction.setDDRAMAddress))
        }
        setup.append(.instruction(HD44780Instruction.displayControl | HD44780Instruction.displayOn))
        try port.write(setup)

        shadow = Array(repeating: HD44780Instruction.blank, count: geometry.cellCount)
        addressCounter = 0
        isInitialized = true
    }

    /// Stores glyph `code` (0...7) as 8 rows of 5 bits (bit 4 = leftmost dot; row 7 is the cursor
    /// line) and, if initialized, uploads it to CGRAM in one `port.write`, then restores the DDRAM
    /// address. Redefining a glyph with the rows it already has sends nothing. Cells showing `code`
    /// change at once (the controller reads CGRAM while scanning). Preconditions: `code < 8`,
    /// `rows.count == 8`, every row < 0x20.
    public mutating func defineGlyph(_ code: UInt8, rows: [UInt8]) throws(HALError) {
        precondition(Int(code) < HD44780Instruction.glyphCount, "defineGlyph: code must be 0...7")
        precondition(rows.count == HD44780Instruction.glyphRows, "defineGlyph: a glyph has 8 rows")
        precondition(
            rows.allSatisfy { $0 & ~HD44780Instruction.glyphRowMask == 0 }, "defineGlyph: rows are 5 bits")
        if isInitialized && glyphs[Int(code)] == rows { return }
        glyphs[Int(code)] = rows
        guard isInitialized else { return }
        var bytes: [HD44780Byte] = []
        appendGlyphUpload(code: code, rows: rows, to: &bytes)
        bytes.append(.instruction(HD44780Instruction.setDDRAMAddress | addressCounter))
        do {
            try port.write(bytes)
        } catch {
            invalidate()
            throw error
        }
    }

    /// Makes the screen show `frame` (rows x columns of character codes, codes 0...7 being the
    /// CGRAM glyphs; shorter lines and missing rows are padded with spaces, 0x20; more rows or
    /// columns than the geometry is a precondition failure).
    ///
    /// Keeps a shadow of DDRAM and writes only the cells that changed, with the fewest bytes: cells
    /// go in the order the address counter walks them starting where it points; a set-DDRAM-address
    /// instruction is sent only when the counter does not already point at the next changed cell,
    /// and an unchanged 1-cell gap is rewritten instead (same cost, one byte). Everything goes in ONE
    /// `port.write`. Never uses clear. An identical frame sends nothing.
    ///
    /// `focus` (a row and column on the glass: where the key the user just pressed shows) lets the
    /// caller put some cells first, since the bytes of one `port.write` reach the controller in
    /// order and each cell is on the glass as soon as its byte is latched: first the focus cell if
    /// it changed, then the other changed cells of its row from the row's start, then the rest as
    /// above (from where the counter then points). Same cells, same final screen, still one
    /// `port.write`; the jumps may cost a set-DDRAM-address or two more. Without `focus` the bytes
    /// are exactly those described above.
    ///
    /// If the display is not initialized (never was, or a transfer failed), runs `initialize()`
    /// first, so the call then blocks for its waits and paints every non-blank cell. On a thrown
    /// error the shadow is unknown and the display uninitialized.
    public mutating func render(_ frame: [[UInt8]], focus: (row: Int, column: Int)? = nil) throws(HALError) {
        precondition(frame.count <= geometry.rows, "render: more rows than the display has")
        var target = [UInt8](repeating: HD44780Instruction.blank, count: geometry.cellCount)
        for (row, line) in frame.enumerated() {
            precondition(line.count <= geometry.columns, "render: a row is longer than the display")
            for (column, code) in line.enumerated() {
                target[row * geometry.columns + column] = code
            }
        }
        if !isInitialized {
            try initialize()
        }

        if let focus {
            precondition(
                focus.row >= 0 && focus.row < geometry.rows && focus.column >= 0 && focus.column < geometry.columns,
                "render: the focus is not on the display")
        }
        let (bytes, counter) = map.writes(showing: target, over: shadow, counter: addressCounter, focus: focus)
        guard !bytes.isEmpty else { return }
        do {
            try port.write(bytes)
        } catch {
            invalidate()
            throw error
        }
        for cell in 0..<target.count {
            shadow[cell] = target[cell]
        }
        addressCounter = counter
    }

    /// Switches the backlight through the port. Does not strobe the controller, so a failure
    /// leaves the shadow and `isInitialized` as they were.
    public mutating func setBacklight(_ on: Bool) throws(HALError) {
        try port.setBacklight(on)
    }

    /// Forgets what the screen shows: the next `render` initializes and repaints.
    private mutating func invalidate() {
        isInitialized = false
        for cell in 0..<shadow.count {
            shadow[cell] = nil
        }
    }

    /// Set CGRAM address of glyph `code`, then its 8 rows as data.
    private func appendGlyphUpload(code: UInt8, rows: [UInt8], to bytes: inout [HD44780Byte]) {
        let firstRowAddress = code * UInt8(HD44780Instruction.glyphRows)
        bytes.append(.instruction(HD44780Instruction.setCGRAMAddress | firstRowAddress))
        for row in rows {
            bytes.append(.data(row))
        }
    }

    /// Where the address counter goes after a DDRAM write at `address` (entry mode: increment).
}

/// The cells' DDRAM addresses for one geometry and the frame diff over them. A plain value with no
/// generic parameter: `HD44780` is generic over its port and delay, and its generic code is not
/// specialised across modules (resend-bench and the app call it unspecialised), so the per-cell
/// work lives here, where it is compiled once and specialised (callgrind: the diff inside the
/// generic driver cost about 29k instructions per frame, most of them type-metadata look-ups and
/// copies of the driver value made by a closure capturing it).
struct DDRAMMap {
    /// DDRAM address of each on-screen cell (row-major).
    let cellAddresses: [UInt8]
    /// Cell indices sorted by DDRAM address: the order the address counter walks them.
    let cellsInAddressOrder: [Int]
    /// The on-screen cell at each DDRAM address, nil for addresses not on the glass.
    let cellAtAddress: [Int?]
    let usesTwoLineMode: Bool
    let columns: Int

    /// DDRAM has a 7-bit address space.
    private static var ddramAddressSpace: Int { 128 }

    init(geometry: LCDGeometry) {
        var addresses: [UInt8] = []
        addresses.reserveCapacity(geometry.cellCount)
        var cellAt: [Int?] = Array(repeating: nil, count: DDRAMMap.ddramAddressSpace)
        for row in 0..<geometry.rows {
            for column in 0..<geometry.columns {
                let address = geometry.ddramAddress(row: row, column: column)
                cellAt[Int(address)] = addresses.count
                addresses.append(address)
            }
        }
        cellAddresses = addresses
        cellAtAddress = cellAt
        cellsInAddressOrder = cellAt.compactMap { $0 }
        usesTwoLineMode = geometry.usesTwoLineMode
        columns = geometry.columns
    }

    /// The bytes that make the glass show `target` where `shadow` is what it shows, the address
    /// counter at `counter`, and the counter after them: with a focus, its cell first, then the
    /// rest of its row, then every other changed cell in address order from the counter on.
    func writes(showing target: [UInt8], over shadow: [UInt8?], counter start: UInt8, focus: (row: Int, column: Int)?) -> (
        bytes: [HD44780Byte], counter: UInt8
    ) {
        var bytes: [HD44780Byte] = []
        var counter = start
        // What the glass shows as the bytes go out: the shadow, then each cell as it is written.
        var glass = shadow
        if let focus {
            let rowStart = focus.row * columns
            appendWrite(of: rowStart + focus.column, target: target, glass: &glass, counter: &counter, to: &bytes)
            for cell in rowStart..<(rowStart + columns) {
                appendWrite(of: cell, target: target, glass: &glass, counter: &counter, to: &bytes)
            }
        }
        let count = cellsInAddressOrder.count
        var first = 0
        while first < count && cellAddresses[cellsInAddressOrder[first]] < counter { first += 1 }
        if first == count { first = 0 }
        for step in 0..<count {
            appendWrite(of: cellsInAddressOrder[(first + step) % count], target: target, glass: &glass, counter: &counter, to: &bytes)
        }
        return (bytes, counter)
    }

    /// Appends the bytes that make `cell` show `target[cell]` when the glass does not show it yet:
    /// a set-DDRAM-address unless the counter already points there (or an unchanged 1-cell gap can
    /// be rewritten instead: same cost, one byte), then the data. Moves `counter` past the cell.
    private func appendWrite(
        of cell: Int, target: [UInt8], glass: inout [UInt8?], counter: inout UInt8, to bytes: inout [HD44780Byte]
    ) {
        guard glass[cell] != target[cell] else { return }
        let address = cellAddresses[cell]
        if counter != address {
            if nextAddress(after: counter) == address, let gap = cellAtAddress[Int(counter)],
                let shown = glass[gap], shown == target[gap]
            {
                bytes.append(.data(shown))
            } else {
                bytes.append(.instruction(HD44780Instruction.setDDRAMAddress | address))
            }
        }
        bytes.append(.data(target[cell]))
        glass[cell] = target[cell]
        counter = nextAddress(after: address)
    }

    func nextAddress(after address: UInt8) -> UInt8 {
        if usesTwoLineMode {
            switch address {
            case HD44780Instruction.firstLineLastAddress: return HD44780Instruction.secondLineFirstAddress
            case HD44780Instruction.secondLineLastAddress: return 0
            default: return address + 1
            }
        }
        return address == HD44780Instruction.oneLineLastAddress ? 0 : address + 1
    }
}
