import HAL

/// A 128x64 SSD1306 or SH1106 OLED on I2C, write-only, sending only what changed.
///
/// The driver keeps a shadow of what the glass shows (a `PixelFrame`) and, on the SSD1306, the
/// column/page window and where the RAM pointer is; `render` compares the new frame with the
/// shadow and writes only the damaged rectangles of pages x columns:
/// - changed columns of one page become runs; runs closer than `mergeGap` columns are joined (the
///   unchanged bytes between them cost less than a new window);
/// - SSD1306 (horizontal addressing): runs in adjacent pages join into one rectangle when that is
///   no dearer, so an 8x16 digit is one window of 2 pages x 8 columns and one data write; the
///   window commands (0x21 column start/end, 0x22 page start/end) are sent only when the window
///   differs from the last one, since after a whole window is written the pointer is back at its
///   start (SSD1306 Rev 1.1 10.1.3: both pointers reset to the start addresses);
/// - SH1106 (page addressing only): each run is set with 0xB0+page and the column's nibbles
///   (0x00+low, 0x10+high, column + 2 for the 132-column RAM), each sent only when the pointer is
///   not there already.
///
/// Up to three commands ride in front of the data in one transaction as Co=1 control bytes (0x80
/// cmd ... 0x40 data: for one or two commands fewer wire bytes than a command write of their own,
/// for three one byte more but one START/STOP and one write() fewer); more go as one command
/// transaction (0x00 ...) and then the data (0x40 ...). No
/// write is longer than `maxWriteLength` bytes (control byte included); longer data continue in
/// further 0x40 writes, which the pointer follows.
///
/// Failure model as `HD44780`: a thrown `HALError` leaves the controller's state unknown, so the
/// driver forgets the shadow and marks itself uninitialized; the next `render` initializes again
/// and repaints the whole frame.
///
/// Needs an adapter that does plain I2C writes (`bus.supportsMultiByteWrite`): every write starts
/// with its control byte. On an SMBus-only adapter `initialize` throws `.unsupported`.
public struct SSD130x<Bus: I2CBus, Wait: Delay> {
    /// The I2C master. Public so tests can read a recording bus.
    public var bus: Bus
    /// The waits of the power-on sequence. Public so tests can read a recording delay.
    public var delay: Wait
    public let address: I2CAddress
    public let controller: OLEDController
    /// The longest I2C write the adapter takes, in bytes after the address (Linux's i2c-dev cuts a
    /// write() at 8192 bytes, i2c-dev.c `i2cdev_write`; an adapter may take less).
    public let maxWriteLength: Int
    /// Contrast 0...255 (`setContrast`); sent at every initialisation.
    public private(set) var contrast: UInt8
    /// True when the picture is turned by 180 degrees (module mounted upside down).
    public private(set) var isFlipped: Bool
    /// True after `initialize()` succeeded and no write has failed since.
    public private(set) var isInitialized = false
    /// True while the panel is on (`setDisplayOn`).
    public private(set) var isDisplayOn = true

    /// What the glass shows; nil while unknown.
    private var shadow: PixelFrame?
    /// SSD1306: the column window (RAM columns) and page window set last; nil while unknown.
    private var window: Window?
    /// SH1106: the page and RAM column the pointer is at; nil while unknown.
    private var pagePointer: Int?
    private var columnPointer: Int?

    /// Two runs of one page closer than this many unchanged columns are written as one: the
    /// bytes between cost less than a second write. SSD1306: a second window (a command write
    /// and a data write, 7 bytes); SH1106: a second data write with its column (4 bytes).
    public var mergeGap: Int { controller == .ssd1306 ? SSD130x.separateRectangleCost : 4 }
    /// Both datasheets' contrast after reset (0x7F; ssd130x.c starts at 127).
    public static var defaultContrast: UInt8 { 0x7F }
    /// The smallest `maxWriteLength`: a control byte and one data byte.
    public static var minimumWriteLength: Int { 2 }

    private struct Window: Hashable {
        var firstColumn: Int
        var lastColumn: Int
        var firstPage: Int
        var lastPage: Int
        var columns: Int { lastColumn - firstColumn + 1 }
        var pages: Int { lastPage - firstPage + 1 }
        var area: Int { columns * pages }

        func intersects(_ other: Window) -> Bool {
            firstPage <= other.lastPage && lastPage >= other.firstPage && firstColumn <= other.lastColumn && lastColumn >= other.firstColumn
        }

        func contains(_ other: Window) -> Bool {
            firstPage <= other.firstPage && lastPage >= other.lastPage && firstColumn <= other.firstColumn && lastColumn >= other.lastColumn
        }

        func joined(with other: Window) -> Window {
            Window(
                firstColumn: min(firstColumn, other.firstColumn), lastColumn: max(lastColumn, other.lastColumn),
                firstPage: min(firstPage, other.firstPage), lastPage: max(lastPage, other.lastPage))
        }
    }

    /// Does no I/O. `maxWriteLength` >= 2 (a control byte and a data byte).
    public init(
        bus: Bus, delay: Wait, address: I2CAddress, controller: OLEDController, maxWriteLength: Int = 8192,
        contrast: UInt8 = SSD130x.defaultContrast, flipped: Bool = false
    ) {
        precondition(maxWriteLength >= SSD130x.minimumWriteLength, "SSD130x: maxWriteLength must be at least 2")
        self.bus = bus
        self.delay = delay
        self.address = address
        self.controller = controller
        self.maxWriteLength = maxWriteLength
        self.contrast = contrast
        self.isFlipped = flipped
    }

    /// The frame the driver believes the glass shows, nil while unknown.
    public var shadowFrame: PixelFrame? { isInitialized ? shadow : nil }

    /// The datasheet's initialisation with the panel off, `frame` painted into the whole RAM, then
    /// display on and the 100 ms until SEG/COM are on (`SSD130xTiming.displayOnSettle`).
    ///
    /// SSD1306 (the order of Adafruit's library and luma.oled; values checked against ssd130x.c):
    /// 0xAE off, 0xD5 0x80 clock, 0xA8 0x3F multiplex (64 rows), 0xD3 0x00 offset, 0x40 start line
    /// 0, 0x8D 0x14 charge pump on, 0x20 0x00 horizontal addressing, 0xA1/0xA0 segment remap and
    /// 0xC8/0xC0 COM scan (flip), 0xDA 0x12 COM pins, 0x81 contrast, 0xD9 0xF1 pre-charge, 0xDB
    /// 0x20 VCOMH, 0xA4 follow RAM, 0xA6 normal, 0x21 0 127 and 0x22 0 7 (the whole RAM).
    /// SH1106: the same without 0x20/0x21/0x22 (page addressing is all it has) and with 0xAD 0x8B
    /// (DC-DC on) for the charge pump, 0xD5 0x50, 0xD9 0x22 and 0xDB 0x40 (ssd130x.c's SH1106
    /// defaults). One command transaction (29 or 25 bytes), the paint, one for 0xAF.
    public mutating func initialize(showing frame: PixelFrame = PixelFrame()) throws(HALError) {
        invalidate()
        guard bus.supportsMultiByteWrite else {
            throw HALError(
                .unsupported, operation: "\(controller.name) at i2c \(hexAddress): the adapter cannot send a control byte and data in one write")
        }
        typealias C = SSD130xCommand
        var commands: [UInt8] = [C.displayOff]
        switch controller {
        case .ssd1306:
            commands += [
                C.setClockDivide, C.clockDivideSSD1306, C.setMultiplexRatio, UInt8(OLEDGlass.height - 1),
                C.setDisplayOffset, 0, C.setDisplayStartLine, C.chargePumpSetting, C.chargePumpEnable,
                C.setMemoryAddressingMode, C.horizontalAddressing,
            ]
        case .sh1106:
            commands += [
                C.setClockDivide, C.clockDivideSH1106, C.setMultiplexRatio, UInt8(OLEDGlass.height - 1),
                C.setDisplayOffset, 0, C.setDisplayStartLine, C.dcdcControl, C.dcdcOn,
            ]
        }
        commands += orientationCommands(flipped: isFlipped)
        commands += [
            C.setCOMPins, C.comPinsAlternative, C.setContrast, contrast,
            C.setPrechargePeriod, controller == .ssd1306 ? C.prechargeInternalVCC : C.prechargeReset,
            C.setVCOMHDeselect, controller == .ssd1306 ? C.vcomhSSD1306 : C.vcomhSH1106,
            C.followRAM, C.normalDisplay,
        ]
        try guarded { (driver: inout Self) throws(HALError) in
            try driver.sendCommands(commands)
            try driver.paintAll(frame)
            if driver.isDisplayOn {
                try driver.sendCommands([C.displayOn])
                driver.delay.delay(SSD130xTiming.displayOnSettle)
            }
        }
        shadow = frame
        isInitialized = true
    }

    /// Makes the glass show `frame`, writing only the damaged rectangles (see the type). Initializes
    /// first (painting `frame` whole) when needed. An identical frame sends nothing.
    public mutating func render(_ frame: PixelFrame) throws(HALError) {
        guard isInitialized, let shown = shadow else {
            try initialize(showing: frame)
            return
        }
        let rectangles = damage(from: shown, to: frame)
        guard !rectangles.isEmpty else { return }
        try guarded { (driver: inout Self) throws(HALError) in
            for rectangle in rectangles {
                try driver.write(rectangle, of: frame)
            }
        }
        shadow = frame
    }

    /// 0xAF / 0xAE. RAM keeps the picture while off. Turning on waits the 100 ms until SEG/COM are
    /// on. A failure leaves the display uninitialized.
    public mutating func setDisplayOn(_ on: Bool) throws(HALError) {
        isDisplayOn = on
        guard isInitialized else { return }
        try guarded { (driver: inout Self) throws(HALError) in
            try driver.sendCommands([on ? SSD130xCommand.displayOn : SSD130xCommand.displayOff])
            if on { driver.delay.delay(SSD130xTiming.displayOnSettle) }
        }
    }

    /// 0x81 and the level (0...255).
    public mutating func setContrast(_ level: UInt8) throws(HALError) {
        contrast = level
        guard isInitialized else { return }
        try guarded { (driver: inout Self) throws(HALError) in try driver.sendCommands([SSD130xCommand.setContrast, level]) }
    }

    /// Turns the picture by 180 degrees: segment remap and COM scan direction, then a repaint of
    /// the whole frame (the SSD1306 applies a segment remap to data written after it only,
    /// SSD1306 Rev 1.1 10.1.8).
    public mutating func setFlipped(_ flipped: Bool) throws(HALError) {
        guard flipped != isFlipped else { return }
        isFlipped = flipped
        guard isInitialized, let frame = shadow else { return }
        try guarded { (driver: inout Self) throws(HALError) in
            try driver.sendCommands(driver.orientationCommands(flipped: flipped))
            try driver.paintAll(frame)
        }
    }

    // MARK: Damage

    /// The rectangles (glass columns, pages) whose bytes differ, in page-then-column order.
    private func damage(from old: PixelFrame, to new: PixelFrame) -> [Window] {
        var rectangles: [Window] = []
        for page in 0..<OLEDGlass.pages {
            var run: Window?
            var lastChanged = -1
            for x in 0..<OLEDGlass.width where old.byte(page: page, x: x) != new.byte(page: page, x: x) {
                if var current = run, x - lastChanged - 1 < mergeGap {
                    current.lastColumn = x
                    run = current
                } else {
                    if let current = run { rectangles.append(current) }
                    run = Window(firstColumn: x, lastColumn: x, firstPage: page, lastPage: page)
                }
                lastChanged = x
            }
            if let current = run { rectangles.append(current) }
        }
        guard controller == .ssd1306 else { return rectangles }
        // Join a rectangle with one just below it (and whatever the union then covers) when the
        // union costs no more bytes than the rectangles' own windows and writes.
        var merged = true
        while merged {
            merged = false
            search: for i in rectangles.indices {
                for j in rectangles.indices where j != i && rectangles[j].firstPage == rectangles[i].lastPage + 1 {
                    var union = Window(
                        firstColumn: min(rectangles[i].firstColumn, rectangles[j].firstColumn),
                        lastColumn: max(rectangles[i].lastColumn, rectangles[j].lastColumn),
                        firstPage: rectangles[i].firstPage, lastPage: rectangles[j].lastPage)
                    // Grow the union over every rectangle it touches, until none sticks out.
                    var covered: [Int] = []
                    var grew = true
                    while grew {
                        grew = false
                        covered = rectangles.indices.filter { union.intersects(rectangles[$0]) }
                        for k in covered where !union.contains(rectangles[k]) {
                            union = union.joined(with: rectangles[k])
                            grew = true
                        }
                    }
                    let separate = covered.reduce(0) { $0 + rectangles[$1].area } + (covered.count - 1) * SSD130x.separateRectangleCost
                    if union.area <= separate {
                        for k in covered.sorted(by: >) { rectangles.remove(at: k) }
                        rectangles.append(union)
                        merged = true
                        break search
                    }
                }
            }
        }
        return rectangles.sorted { ($0.firstPage, $0.firstColumn) < ($1.firstPage, $1.firstColumn) }
    }

    /// The least a rectangle of its own costs beyond its data on the SSD1306: a window command
    /// transaction (address, 0x00, 0x21 s e or 0x22 s e) and the data write's address and 0x40.
    private static var separateRectangleCost: Int { 7 }

    // MARK: Writing

    private mutating func write(_ rectangle: Window, of frame: PixelFrame) throws(HALError) {
        let offset = controller.columnOffset
        switch controller {
        case .ssd1306:
            var ram = rectangle
            ram.firstColumn += offset
            ram.lastColumn += offset
            var data: [UInt8] = []
            data.reserveCapacity(rectangle.area)
            for page in rectangle.firstPage...rectangle.lastPage {
                for x in rectangle.firstColumn...rectangle.lastColumn {
                    data.append(frame.byte(page: page, x: x))
                }
            }
            var commands: [UInt8] = []
            if window?.firstColumn != ram.firstColumn || window?.lastColumn != ram.lastColumn {
                commands += [SSD130xCommand.setColumnAddress, UInt8(ram.firstColumn), UInt8(ram.lastColumn)]
            }
            if window?.firstPage != ram.firstPage || window?.lastPage != ram.lastPage {
                commands += [SSD130xCommand.setPageAddress, UInt8(ram.firstPage), UInt8(ram.lastPage)]
            }
            // Unknown until the write is done; the whole window written leaves the pointer at its start.
            window = nil
            try send(commands: commands, data: data)
            window = ram
        case .sh1106:
            let page = rectangle.firstPage
            let column = rectangle.firstColumn + offset
            var data: [UInt8] = []
            data.reserveCapacity(rectangle.columns)
            for x in rectangle.firstColumn...rectangle.lastColumn {
                data.append(frame.byte(page: page, x: x))
            }
            var commands: [UInt8] = []
            if pagePointer != page {
                commands.append(SSD130xCommand.setPageStart | UInt8(page))
            }
            let low = UInt8(column & 0x0F)
            let high = UInt8(column >> 4)
            if let at = columnPointer, at == column {
            } else {
                if columnPointer.map({ $0 & 0x0F }) != column & 0x0F { commands.append(SSD130xCommand.setLowerColumn | low) }
                if columnPointer.map({ $0 >> 4 }) != column >> 4 { commands.append(SSD130xCommand.setHigherColumn | high) }
            }
            pagePointer = nil
            columnPointer = nil
            try send(commands: commands, data: data)
            pagePointer = page
            columnPointer = column + data.count
        }
    }

    /// Every byte of the glass: SSD1306 one window over the whole RAM; SH1106 each page from the
    /// glass's first column.
    private mutating func paintAll(_ frame: PixelFrame) throws(HALError) {
        window = nil
        pagePointer = nil
        columnPointer = nil
        switch controller {
        case .ssd1306:
            try write(Window(firstColumn: 0, lastColumn: OLEDGlass.width - 1, firstPage: 0, lastPage: OLEDGlass.pages - 1), of: frame)
        case .sh1106:
            for page in 0..<OLEDGlass.pages {
                try write(Window(firstColumn: 0, lastColumn: OLEDGlass.width - 1, firstPage: page, lastPage: page), of: frame)
            }
        }
    }

    /// Segment remap and COM scan direction: upright 0xA1 0xC8 (column 0 at the left, page 0 at
    /// the top as modules are mounted), flipped 0xA0 0xC0.
    private func orientationCommands(flipped: Bool) -> [UInt8] {
        flipped
            ? [SSD130xCommand.segmentRemapNormal, SSD130xCommand.comScanNormal]
            : [SSD130xCommand.segmentRemapMirrored, SSD130xCommand.comScanReversed]
    }

    /// The most commands sent as Co=1 pairs in front of data (see the type).
    private static var commandsBeforeData: Int { 3 }

    /// Commands then data (see the type).
    private mutating func send(commands: [UInt8], data: [UInt8]) throws(HALError) {
        var position = 0
        if !commands.isEmpty && commands.count <= SSD130x.commandsBeforeData && !data.isEmpty && 2 * commands.count + 2 <= maxWriteLength {
            var first: [UInt8] = []
            for command in commands {
                first += [SSD130xControl.singleCommand, command]
            }
            first.append(SSD130xControl.dataStream)
            let take = min(data.count, maxWriteLength - first.count)
            first += data[0..<take]
            try bus.write(first, to: address)
            position = take
        } else if !commands.isEmpty {
            try sendCommands(commands)
        }
        while position < data.count {
            let take = min(data.count - position, maxWriteLength - 1)
            try bus.write([SSD130xControl.dataStream] + data[position..<(position + take)], to: address)
            position += take
        }
    }

    /// One 0x00 command transaction (more when longer than `maxWriteLength`; a command's
    /// arguments never cross a write).
    private mutating func sendCommands(_ commands: [UInt8]) throws(HALError) {
        var chunk: [UInt8] = [SSD130xControl.commandStream]
        var index = 0
        while index < commands.count {
            let length = SSD130x.commandLength(commands[index])
            if chunk.count + length > maxWriteLength && chunk.count > 1 {
                try bus.write(chunk, to: address)
                chunk = [SSD130xControl.commandStream]
            }
            chunk += commands[index..<min(commands.count, index + length)]
            index += length
        }
        if chunk.count > 1 { try bus.write(chunk, to: address) }
    }

    /// A command byte with its arguments.
    private static func commandLength(_ command: UInt8) -> Int {
        typealias C = SSD130xCommand
        switch command {
        case C.setColumnAddress, C.setPageAddress: return 3
        case C.setMemoryAddressingMode, C.setContrast, C.chargePumpSetting, C.setMultiplexRatio, C.dcdcControl,
            C.setDisplayOffset, C.setClockDivide, C.setPrechargePeriod, C.setCOMPins, C.setVCOMHDeselect:
            return 2
        default: return 1
        }
    }

    /// Runs `body`; on a thrown error forgets everything the controller holds.
    private mutating func guarded(_ body: (inout Self) throws(HALError) -> Void) throws(HALError) {
        do {
            try body(&self)
        } catch {
            invalidate()
            throw error
        }
    }

    private mutating func invalidate() {
        isInitialized = false
        shadow = nil
        window = nil
        pagePointer = nil
        columnPointer = nil
    }

    private var hexAddress: String {
        let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
        return "0x" + String(digits[Int(address.rawValue >> 4)]) + String(digits[Int(address.rawValue & 0x0F)])
    }
}
